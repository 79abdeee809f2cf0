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


def assert_all_good(results):
    bad = [r for r in results if not (hasattr(r, "status") and r.status == GOOD)]
    assert not bad, bad[:3]


def counter(n):
    return struct.pack(">Q", n) * (BS // 8)


class Heartbeats:
    """COMPARE AND WRITE incrementers on one block, one thread per SCSI
    node, until stopped: read, CAW the value to value + 1, again on
    MISCOMPARE (another beat got there first).  The block must end at the
    number of beats that ended GOOD."""

    def __init__(self, sgs):
        self.sgs = sgs
        self.good = 0
        self.errors = []
        self.stop = threading.Event()
        self.lock = threading.Lock()
        expect_good(write_blocks(sgs[0], HEARTBEAT, counter(0), BS))
        self.threads = [threading.Thread(target=self.beat, args=(sg,)) for sg in sgs]

    def beat(self, sg):
        while not self.stop.is_set() and not self.errors:
            cur = expect_good(read_blocks(sg, HEARTBEAT, 1, BS)).data
            n = struct.unpack(">Q", cur[:8])[0]
            res = compare_and_write(sg, HEARTBEAT, cur, counter(n + 1), BS)
            if res.status == GOOD:
                with self.lock:
                    self.good += 1
            elif res.status != CHECK_CONDITION or res.decoded().key != MISCOMPARE:
                self.errors.append(str(res))

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join()
        assert not self.errors, self.errors[:3]
        value = read_blocks(self.sgs[0], HEARTBEAT, 1, BS)
        assert expect_good(value).data == counter(self.good)
        assert self.good > 0


def test_eight_copies_in_flight_across_luns(make_lun):
    a = make_lun(size=32 * MiB)
    b = make_lun(size=32 * MiB, beside=a)
    data = fill(a, 0, pieces(8))
    dst = pieces(2)
    jobs = [copy(a.sg, a, b, i * N, dst + i * N) for i in range(8)]
    with Heartbeats([a.sg]):
        assert_all_good(at_once(jobs))
    assert read(b, dst, pieces(8)) == data
    # the pieces on either side: untouched
    assert read(b, dst - N, N) == read(b, dst + pieces(8), N) == bytes(PIECE)


def test_copies_in_flight_within_a_lun_cross_each_other(lun):
    """Two regions that hold the same data copied onto each other at once,
    piece for piece in both directions (their range locks taken in opposite
    orders), beside four plain copies of fresh data: nothing waits forever,
    and every region holds its data afterwards."""
    p, q, r, s = 0, pieces(2), pieces(4), pieces(8)
    same = fill(lun, p, pieces(2))
    write(lun, q, same)
    fresh = fill(lun, r, pieces(4))
    jobs = []
    for i in range(2):
        jobs += [copy(lun.sg, lun, lun, p + i * N, q + i * N)]
        jobs += [copy(lun.sg, lun, lun, q + i * N, p + i * N)]
    jobs += [copy(lun.sg, lun, lun, r + i * N, s + i * N) for i in range(4)]
    with Heartbeats([lun.sg]):
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
