"""EXTENDED COPY with several commands in flight, as ESXi's data mover sends
them: copies of 2 MiB each, eight and more at once, across LUNs and within
one, from two initiators at once (tcm_loop and open-iscsi), over ranges that
cross each other, with COMPARE AND WRITE heartbeats beside them.  Every
command must end GOOD, every destination read back equal to its source
block for block, what no copy targets untouched, and every heartbeat that
ended GOOD counted in its block."""

import struct
import threading

import pytest
from conftest import MiB, fill, read, write
from scsi import (
    CHECK_CONDITION,
    GOOD,
    MISCOMPARE,
    compare_and_write,
    cscd_e4,
    expect_good,
    naa_of,
    read_blocks,
    seg_b2b,
    write_blocks,
    xcopy,
    xcopy_list,
)

pytestmark = pytest.mark.stores("file", "bdev", "xfs", "ext4", "btrfs")

BS = 512
PIECE = 2 * MiB  # one command's copy: eight chunks of the copy engine
N = PIECE // BS  # blocks per piece
HEARTBEAT = (31 * MiB) // BS  # far from every copy's ranges


def pieces(k):
    """k pieces, in blocks."""
    return k * N


def at_once(jobs):
    """Run each job in a thread of its own, all released together; each
    one's result (or the exception it raised), in order."""
    go = threading.Barrier(len(jobs))
    results = [None] * len(jobs)

    def run(i, job):
        go.wait()
        try:
            results[i] = job()
        except Exception as e:  # reported by the caller
            results[i] = e

    threads = [threading.Thread(target=run, args=(i, j)) for i, j in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def copy(sg, src_lun, dst_lun, src_lba, dst_lba, n=N):
    """One EXTENDED COPY as ESXi sends it: two identification CSCDs and one
    block-to-block segment, sent on sg; a job for at_once."""
    params = xcopy_list(
        [cscd_e4(naa_of(src_lun.sg), BS), cscd_e4(naa_of(dst_lun.sg), BS)],
        [seg_b2b(0, 1, n, src_lba, dst_lba)],
    )
    return lambda: xcopy(sg, params)


def good(r):
    """r: a Result that ended GOOD, with no transport error."""
    return hasattr(r, "status") and r.status == GOOD and not r.host_status and not r.driver_status


def assert_all_good(results):
    bad = [str(r) for r in results if not good(r)]
    assert not bad, bad[:3]


def counter(n):
    return struct.pack(">Q", n) * (BS // 8)


class Heartbeats:
    """COMPARE AND WRITE incrementers on one block, one thread per SCSI
    node, until stopped: read, CAW the value to value + 1, again on
    MISCOMPARE (another beat got there first).  The block must end at the
    number of beats that ended GOOD.  With touch=[(sg, lba), ...], each
    of those blocks also gets COMPARE AND WRITEs of its own data onto
    itself from a thread of its own: an exclusive range lock waiting among
    the copies' shared ones, the data unchanged.  Started, the beats and
    touches are under way before the with block runs."""

    def __init__(self, sgs, touch=()):
        self.sgs = sgs
        self.good = 0
        self.errors = []
        self.stop = threading.Event()
        self.lock = threading.Lock()
        expect_good(write_blocks(sgs[0], HEARTBEAT, counter(0), BS))
        jobs = [(self.beat, sg) for sg in sgs] + [(self.touch, *t) for t in touch]
        self.started = [threading.Event() for _ in jobs]
        self.threads = [
            threading.Thread(target=self.run, args=(e, *job))
            for e, job in zip(self.started, jobs, strict=True)
        ]

    def run(self, started, fn, *args):
        try:
            while not self.stop.is_set() and not self.errors:
                fn(*args)
                started.set()
        except Exception as e:  # the thread's end, reported by __exit__
            self.errors.append(repr(e))
        finally:
            started.set()

    def beat(self, sg):
        cur = expect_good(read_blocks(sg, HEARTBEAT, 1, BS)).data
        n = struct.unpack(">Q", cur[:8])[0]
        res = compare_and_write(sg, HEARTBEAT, cur, counter(n + 1), BS)
        if good(res):
            with self.lock:
                self.good += 1
        elif res.status != CHECK_CONDITION or res.decoded().key != MISCOMPARE:
            self.errors.append(f"heartbeat: {res}")

    def touch(self, sg, lba):
        cur = expect_good(read_blocks(sg, lba, 1, BS)).data
        res = compare_and_write(sg, lba, cur, cur, BS)
        if not good(res):
            self.errors.append(f"COMPARE AND WRITE on {lba}: {res}")

    def __enter__(self):
        for t in self.threads:
            t.start()
        for e in self.started:
            e.wait()
        return self

    def __exit__(self, exc_type, *exc):
        self.stop.set()
        for t in self.threads:
            t.join()
        if exc_type:
            return  # the with block's own failure is the one to report
        assert not self.errors, self.errors[:3]
        value = read_blocks(self.sgs[0], HEARTBEAT, 1, BS)
        assert expect_good(value).data == counter(self.good)
        assert self.good > 0


def test_copies_in_flight_across_luns_both_ways(make_lun):
    """Eight copies from a to b and four from b to a at once, each range
    a copy reads also written by another copy's same data, beside
    COMPARE AND WRITEs inside those ranges on both LUNs: with two LUNs a
    copy holds range locks on both, and these take them in both orders."""
    a = make_lun(size=32 * MiB)
    b = make_lun(size=32 * MiB, beside=a)
    data = fill(a, 0, pieces(8))
    dst = pieces(2)
    write(b, dst, data[: 4 * PIECE])  # what the b-to-a copies read
    jobs = [copy(a.sg, a, b, i * N, dst + i * N) for i in range(8)]
    jobs += [copy(a.sg, b, a, dst + i * N, i * N) for i in range(4)]
    touch = [(a.sg, N // 2), (b.sg, dst + N // 2), (a.sg, pieces(3) + 1)]
    with Heartbeats([a.sg], touch):
        assert_all_good(at_once(jobs))
    assert read(a, 0, pieces(8)) == data
    assert read(b, dst, pieces(8)) == data
    # the pieces on either side: untouched
    assert read(b, dst - N, N) == read(b, dst + pieces(8), N) == bytes(PIECE)


def test_copies_in_flight_within_a_lun_cross_each_other(lun):
    """Two regions that hold the same data copied onto each other at once,
    piece for piece in both directions, beside four plain copies of fresh
    data and COMPARE AND WRITEs inside the copied ranges: nothing waits
    forever, and every region holds its data afterwards."""
    p, q, r, s = 0, pieces(2), pieces(4), pieces(8)
    same = fill(lun, p, pieces(2))
    write(lun, q, same)
    fresh = fill(lun, r, pieces(4))
    jobs = []
    for i in range(2):
        jobs += [copy(lun.sg, lun, lun, p + i * N, q + i * N)]
        jobs += [copy(lun.sg, lun, lun, q + i * N, p + i * N)]
    jobs += [copy(lun.sg, lun, lun, r + i * N, s + i * N) for i in range(4)]
    with Heartbeats([lun.sg], [(lun.sg, p + 1), (lun.sg, q + N + 7), (lun.sg, r + 3)]):
        assert_all_good(at_once(jobs))
    assert read(lun, p, pieces(2)) == same
    assert read(lun, q, pieces(2)) == same
    assert read(lun, r, pieces(4)) == fresh
    assert read(lun, s, pieces(4)) == fresh
    assert read(lun, s + pieces(4), N) == bytes(PIECE)


def test_two_initiators_copy_at_once(lun, over_iscsi):
    """tcm_loop and an open-iscsi session each copy one source into a
    destination of their own, four pieces each, and both the source's first
    piece into one shared destination (the same data written twice at
    once), with heartbeats from both."""
    sgs = [lun.sg, over_iscsi(lun)]
    src = fill(lun, 0, pieces(4))
    mine = [pieces(4), pieces(8)]
    shared = pieces(12)
    jobs = []
    for k, sg in enumerate(sgs):
        jobs += [copy(sg, lun, lun, i * N, mine[k] + i * N) for i in range(4)]
        jobs += [copy(sg, lun, lun, 0, shared)]
    with Heartbeats(sgs):
        assert_all_good(at_once(jobs))
    for where in mine:
        assert read(lun, where, pieces(4)) == src
    assert read(lun, shared, N) == src[:PIECE]
    assert read(lun, shared + N, N) == bytes(PIECE)
