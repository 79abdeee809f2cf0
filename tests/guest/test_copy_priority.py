"""The copy engine's workers run at the priority vaai_copy.c gives them.

The copy queue is WQ_HIGHPRI for workers apart from the ordinary unbound
pool (vaai_main.c): they sit at nice -20 and every copy work item sets its own
priority on entry and puts the pool's back when it returns.  A copy
between block devices moves its chunks as background work (SCHED_IDLE);
a copy on a file store runs as ordinary work (SCHED_NORMAL, nice 0), not
at the pool's -20.  Checked from /proc while the copies run: a worker
running a work item of the queue "vaai_copy" is named
kworker/...+vaai_copy, one whose last work item was of it
kworker/...-vaai_copy."""

import glob
import re
import threading
import time

import pytest
from conftest import MiB
from scsi import cscd_e4, expect_good, naa_of, seg_b2b, xcopy, xcopy_list
from slowdev import copy_status, in_background, kept_zero_luns, reset_stops_copy, whole_lun_copy

SCHED_NORMAL = 0
SCHED_IDLE = 5
POOL_NICE = -20  # a WQ_HIGHPRI pool's
RUNNING = 0x00  # COPY STATUS: operation in progress
SAMPLES = 200  # observations of running copy workers the file test wants
FILE_COPIES_S = 120  # ... and how long it copies to get them

kept = kept_zero_luns("psrc", "pdst")
QUEUE = re.compile(r"([+-])vaai_copy\b")  # what a worker runs now (+) or ran last (-)


def copy_workers():
    """[(pid, comm, policy, nice)] of every worker whose comm names the
    queue vaai_copy, as /proc/PID/stat shows them (fields 2, 41, 19)."""
    seen = []
    for path in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(path) as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        if not QUEUE.search(comm):
            continue
        rest = stat[stat.rindex(")") + 2 :].split()
        seen.append((int(stat.split()[0]), comm, int(rest[38]), int(rest[16])))
    return seen


def running(workers):
    """[(pid, policy, nice)] of those running a copy's work item now."""
    return [(pid, policy, nice) for pid, comm, policy, nice in workers if now(comm)]


def now(comm):
    return QUEUE.search(comm).group(1) == "+"


def back_in_the_pool():
    """Every worker whose last work item was a copy's has the pool's
    priority back."""
    done = [w for w in copy_workers() if not now(w[1])]
    assert done, "no worker has run a copy"
    for _, comm, policy, nice in done:
        assert (policy, nice) == (SCHED_NORMAL, POOL_NICE), f"{comm}: policy {policy} nice {nice}"


def test_block_copy_moves_in_background(kept):
    """A copy between block LUNs: its four workers (the command's and three
    helpers) are SCHED_IDLE while they move chunks, and back at the pool's
    nice -20 once the copy ends.  Between two of its segments (256 MiB
    each) the command's worker is ordinary for a moment and the helpers
    end and start: at most one observation in ten."""
    with kept.each() as (a, b):
        th, out = in_background(
            lambda: xcopy(a.sg, whole_lun_copy(a, b, list_id=21, usage=0), timeout_ms=300000)
        )
        state, _ = copy_status(a, 21)
        assert state == RUNNING
        looks = []
        for _ in range(20):
            looks.append(running(copy_workers()))
            time.sleep(0.05)
        assert any(
            len(look) == 4 and all(policy == SCHED_IDLE for _, policy, _ in look) for look in looks
        ), looks
        seen = [w for look in looks for w in look]
        idle = sum(1 for _, policy, _ in seen if policy == SCHED_IDLE)
        assert idle * 10 >= len(seen) * 9, looks
        reset_stops_copy(a, b, th, out, 21)
    back_in_the_pool()


@pytest.mark.stores("file")
def test_file_copy_runs_as_ordinary_work(make_lun):
    """Copies on a file store, one after another while /proc is watched:
    their workers run as ordinary work at nice 0, never in the background
    and not at the pool's -20 (bar the instant a worker takes a work item
    before it sets its priority, and the one after it puts the pool's
    back: at most one observation in ten), and are back at -20 after."""
    bs = 4096
    n = (128 * MiB) // bs
    lun = make_lun(size=256 * MiB, block_size=bs)
    params = xcopy_list([cscd_e4(naa_of(lun.sg), bs)], [seg_b2b(0, 0, n, 0, n)])
    stop = threading.Event()
    seen = []

    def watch():
        while not stop.is_set():
            seen.extend(running(copy_workers()))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        end = time.monotonic() + FILE_COPIES_S
        while len(seen) < SAMPLES and time.monotonic() < end:
            expect_good(xcopy(lun.sg, params))
    finally:
        stop.set()
        watcher.join()
    assert len(seen) >= SAMPLES, f"{len(seen)} observations of running copy workers"
    assert all(policy == SCHED_NORMAL for _, policy, _ in seen), seen
    ordinary = sum(1 for _, _, nice in seen if nice == 0)
    assert ordinary * 10 >= len(seen) * 9, f"{ordinary} of {len(seen)} at nice 0"
    back_in_the_pool()
