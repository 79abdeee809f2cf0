"""bench/guest_bench.py reads the guest's counters (busy CPU, context
switches, interrupts) from /proc/stat; the host's /proc/stat has the same
format."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))

import guest_bench  # noqa: E402


def test_the_counters_are_read_and_move_forward():
    before = guest_bench.guest_counters()
    assert set(before) == {"busy", "ctxt", "intr"}
    time.sleep(0.05)             # a sleep is a context switch at least
    after = guest_bench.guest_counters()
    assert after["ctxt"] > before["ctxt"]
    assert all(after[k] >= before[k] for k in before)


def test_busy_leaves_out_idle_and_iowait(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    stat.write_text("cpu  10 1 20 500 7 2 3 0 0 0\ncpu0 10 1 20 500 7 2 3 0 0 0\n"
                    "intr 1234 0 5 6\nctxt 99\nbtime 1\n")
    real_open = open
    monkeypatch.setattr(guest_bench, "open", lambda path, *a: real_open(
        stat if path == "/proc/stat" else path, *a), raising=False)
    assert guest_bench.guest_counters() == {"busy": 36, "ctxt": 99, "intr": 1234}


def test_the_clock_check_moves_between_cpus_and_restores_the_affinity():
    import guestlib
    before = os.sched_getaffinity(0)
    moves, worst = guestlib.clock_steps_back(0.05)
    assert moves >= 1 and worst == 0
    assert os.sched_getaffinity(0) == before
