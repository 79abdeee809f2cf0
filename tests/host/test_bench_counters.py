"""bench/guest_bench.py reads the guest's counters (busy CPU, context
switches) from /proc/stat, as the host's has them too, and turns them into
figures per I/O; bench/guestlib.py checks the clocks of the CPUs against
each other."""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))

import guest_bench


def test_the_counters_are_read_and_move_forward():
    before = guest_bench.guest_counters()
    assert set(before) == {"busy", "ctxt"}
    time.sleep(0.05)  # a sleep is a context switch at least
    after = guest_bench.guest_counters()
    assert after["ctxt"] > before["ctxt"]
    assert all(after[k] >= before[k] for k in before)


def test_busy_leaves_out_idle_and_iowait(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    stat.write_text(
        "cpu  10 1 20 500 7 2 3 0 0 0\ncpu0 10 1 20 500 7 2 3 0 0 0\n"
        "intr 1234 0 5 6\nctxt 99\nbtime 1\n"
    )
    real_open = open
    monkeypatch.setattr(
        guest_bench,
        "open",
        lambda path, *a: real_open(stat if path == "/proc/stat" else path, *a),
        raising=False,
    )
    assert guest_bench.guest_counters() == {"busy": 36, "ctxt": 99}


def test_per_io_divides_the_window_by_the_ios_the_disk_completed(monkeypatch):
    counters = iter([{"busy": 100, "ctxt": 1000}, {"busy": 150, "ctxt": 1800}])
    disk = iter([4096 * 10, 4096 * 210])
    monkeypatch.setattr(guest_bench, "fio_started", lambda d, bs, proc: True)
    monkeypatch.setattr(guest_bench, "guest_counters", lambda: next(counters))
    monkeypatch.setattr(guest_bench, "disk_bytes", lambda d: next(disk))
    monkeypatch.setattr(guest_bench.time, "sleep", lambda s: None)
    monkeypatch.setattr(guest_bench.os, "sysconf", lambda name: 100)
    got = guest_bench.per_io("/dev/sdx", "4k", 3, None)
    # 50 jiffies of 10 ms over 200 I/Os; 800 switches over 200 I/Os
    assert got == {"cpu_us_per_io": 2500.0, "ctxt_per_io": 4.0}


def test_per_io_is_none_when_fio_never_started(monkeypatch):
    monkeypatch.setattr(guest_bench, "fio_started", lambda d, bs, proc: False)
    assert guest_bench.per_io("/dev/sdx", "4k", 3, None) == {
        "cpu_us_per_io": None,
        "ctxt_per_io": None,
    }


class TwoClocks:
    """Two CPUs whose monotonic clocks differ by offset_ns (the second
    ahead), each read 1 µs after the one before."""

    def __init__(self, offset_ns):
        self.t, self.cpu, self.offset = 0, 0, offset_ns

    def affinity(self, pid, cpus):
        self.cpu = min(cpus)

    def read(self):
        self.t += 1000
        return self.t + (self.offset if self.cpu == 1 else 0)


def fake_cpus(monkeypatch, clocks, cpus=(0, 1)):
    import guestlib

    monkeypatch.setattr(guestlib.os, "sched_getaffinity", lambda pid: set(cpus))
    monkeypatch.setattr(guestlib.os, "sched_setaffinity", clocks.affinity)
    monkeypatch.setattr(guestlib.time, "monotonic_ns", clocks.read)
    return guestlib


def test_the_clock_check_bounds_how_far_the_clocks_differ(monkeypatch):
    guestlib = fake_cpus(monkeypatch, TwoClocks(5000))
    got = guestlib.clock_check(0.001)
    # a move forward sees 1 + 5 µs, a move back 1 - 5: the clock went back
    assert got["moves"] >= 2
    assert got["back_ns"] == 4000 and got["skew_bound_ns"] == 6000


def test_the_clock_check_of_clocks_that_agree(monkeypatch):
    guestlib = fake_cpus(monkeypatch, TwoClocks(0))
    got = guestlib.clock_check(0.001)
    assert got["back_ns"] == 0 and got["skew_bound_ns"] == 1000


def test_the_clock_check_needs_two_cpus(monkeypatch):
    guestlib = fake_cpus(monkeypatch, TwoClocks(0), cpus=(3,))
    assert guestlib.clock_check(0.001) is None


def test_the_clock_check_restores_the_affinity():
    import guestlib

    before = os.sched_getaffinity(0)
    guestlib.clock_check(0.02)
    assert os.sched_getaffinity(0) == before
