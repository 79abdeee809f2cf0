"""Linearizability torture for COMPARE AND WRITE, across two initiators
(tcm_loop and an open-iscsi session to the same LUN): concurrent
read-CAW-retry incrementers on a shared counter and on private counters,
beside a plain writer on the neighbouring blocks.  Every counter must end
equal to the CAWs that succeeded on it, and the neighbours intact."""

import struct
import threading

import pytest
from scsi import CHECK_CONDITION, GOOD, MISCOMPARE, compare_and_write, read_blocks, write_blocks

# also on a file on XFS: the direct I/O path
pytestmark = pytest.mark.stores("file", "bdev", "xfs")

SHARED = 1000
PRIVATE = [2000 + 16 * i for i in range(4)]
NEIGHBOURS = [SHARED - 1, SHARED + 1] + [lba + 1 for lba in PRIVATE]


def block(n):
    return struct.pack(">Q", n) * 64


def value(sg, lba):
    res = read_blocks(sg, lba, 1, 512)
    assert res.status == GOOD, str(res)
    return res.data


def incrementer(sg, lba, times, counts, errors):
    done = 0
    while done < times and not errors:
        cur = value(sg, lba)
        n = struct.unpack(">Q", cur[:8])[0]
        res = compare_and_write(sg, lba, cur, block(n + 1), 512)
        if res.status == GOOD:
            done += 1
        elif res.status != CHECK_CONDITION or res.decoded().key != MISCOMPARE:
            errors.append(f"CAW on {lba}: {res}")
    counts.append((lba, done))


def writer(sgs, stop, last, errors):
    i = 0
    while not stop.is_set():
        for k, lba in enumerate(NEIGHBOURS):
            data = bytes([(i + k) % 256]) * 512
            if write_blocks(sgs[k % 2], lba, data, 512).status != GOOD:
                errors.append(f"write to {lba} failed")
            last[lba] = data
        i += 1


def test_counters_across_tcm_loop_and_iscsi(lun, over_iscsi):
    sgs = [lun.sg, over_iscsi(lun)]
    for lba in [SHARED, *PRIVATE]:
        assert write_blocks(sgs[0], lba, block(0), 512).status == GOOD
    counts, errors, last = [], [], {}
    stop = threading.Event()
    workers = [
        threading.Thread(target=incrementer, args=(sgs[i % 2], SHARED, 15, counts, errors))
        for i in range(8)
    ]
    workers += [
        threading.Thread(target=incrementer, args=(sgs[i % 2], lba, 30, counts, errors))
        for i, lba in enumerate(PRIVATE)
    ]
    w = threading.Thread(target=writer, args=(sgs, stop, last, errors))
    w.start()
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    stop.set()
    w.join()

    assert not errors, errors[:3]
    expected = {}
    for lba, done in counts:
        expected[lba] = expected.get(lba, 0) + done
    assert expected[SHARED] == 8 * 15
    for lba, n in expected.items():
        for sg in sgs:
            assert value(sg, lba) == block(n), f"counter at {lba}"
    for lba, data in last.items():
        assert value(sgs[0], lba) == data, f"neighbour {lba}"
