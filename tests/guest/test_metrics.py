"""Per-LUN I/O metrics (attrib/stats_io_<kind>, stats_lock_wait,
stats_ats_worst_us): each command counted once under its kind, with the
bytes it moved and its latency in the histogram; a refusal counted as a
failure; reading them changes nothing."""

import json
import os

from conftest import MiB, read, sh
from scsi import (
    ILLEGAL_REQUEST,
    MISCOMPARE,
    cdb_read16,
    cdb_write_same16,
    compare_and_write,
    cscd_e4,
    expect_good,
    expect_sense,
    make_token,
    naa_of,
    read_blocks,
    seg_b2b,
    sg_io,
    unmap,
    write_blocks,
    write_using_token,
    xcopy,
    xcopy_list,
)

KINDS = ("read", "write", "ats", "zero", "unmap", "clone", "odx")
BUCKETS = 24
LBA_OUT_OF_RANGE = (0x21, 0x00)
MISCOMPARE_DURING_VERIFY = (0x1D, 0x00)


def attrib(lun, name):
    with open(os.path.join(lun.so.path, "attrib", name)) as f:
        return [int(v) for v in f.read().split()]


def metrics(lun):
    """{kind: (commands, failed, bytes, latency sum µs, histogram)}."""
    out = {}
    for kind in KINDS:
        v = attrib(lun, f"stats_io_{kind}")
        assert len(v) == 4 + BUCKETS, (kind, v)
        assert sum(v[4:]) == v[0], f"{kind}: the histogram holds every command"
        out[kind] = (v[0], v[1], v[2], v[3], v[4:])
    return out


def moved(before, after):
    """{kind: (commands, failed, bytes)} done between two readings, and
    the latencies' sum and histogram moved with them."""
    out = {}
    for kind in KINDS:
        b, a = before[kind], after[kind]
        hist = [y - x for x, y in zip(b[4], a[4])]
        assert min(hist) >= 0 and sum(hist) == a[0] - b[0]
        assert a[3] >= b[3]
        out[kind] = (a[0] - b[0], a[1] - b[1], a[2] - b[2])
    return out


def cscd(lun):
    return cscd_e4(naa_of(lun.sg), lun.block_size)


def test_each_command_counted_once_under_its_kind(make_lun):
    a = make_lun(size=16 * MiB)
    b = make_lun(size=16 * MiB, beside=a)
    bs = a.block_size
    sh("udevadm", "settle")  # the scan's own reads done
    before, waits = metrics(a), attrib(a, "stats_lock_wait")
    block0 = os.urandom(bs)
    expect_good(write_blocks(a.sg, 0, block0 + os.urandom(7 * bs), bs))
    assert expect_good(read_blocks(a.sg, 0, 16, bs)).data[:bs] == block0
    expect_good(compare_and_write(a.sg, 0, block0, os.urandom(bs), bs))
    expect_good(sg_io(a.sg, cdb_write_same16(100, 32), data_out=bytes(bs)))
    expect_good(unmap(a.sg, [(200, 64)]))
    expect_good(xcopy(a.sg, xcopy_list([cscd(a), cscd(b)], [seg_b2b(0, 1, 128, 0, 0)])))
    token = make_token(a.sg, [(0, 64)], list_id=1)
    expect_good(write_using_token(a.sg, token, [(1000, 64)], list_id=2))
    assert read(a, 1000, 64) == read(a, 0, 64)
    assert moved(before, metrics(a)) == {
        "read": (1 + 2, 0, (16 + 64 + 64) * bs),  # and the two reads checking the copy
        "write": (1, 0, 8 * bs),
        "ats": (1, 0, bs),
        "zero": (1, 0, 32 * bs),
        "unmap": (1, 0, 64 * bs),
        "clone": (1, 0, 128 * bs),
        # POPULATE TOKEN counts the bytes its token stands for
        "odx": (2, 0, 64 * bs + 64 * bs),
    }
    # commands, one at a time, never wait for each other's blocks
    assert attrib(a, "stats_lock_wait") == waits


def test_a_fio_run_is_counted_exactly(lun):
    """fio's sg engine, one SCSI command per I/O, of mixed sizes at queue
    depth 8: the reads and writes counted are fio's, command for command
    and byte for byte, and nothing else moved."""
    sh("udevadm", "settle")
    before = metrics(lun)
    out = sh(
        "fio",
        "--name=metrics",
        f"--filename={lun.sg}",
        "--ioengine=sg",
        "--rw=randrw",
        "--bssplit=4k/50:64k/30:512k/20",
        "--iodepth=8",
        f"--size={8 * MiB}",
        "--io_size=24M",
        "--randrepeat=0",
        "--output-format=json",
    )
    job = json.loads(out[out.index("{") :])["jobs"][0]
    assert job["error"] == 0
    want = dict.fromkeys(KINDS, (0, 0, 0))
    for kind in ("read", "write"):
        want[kind] = (job[kind]["total_ios"], 0, job[kind]["io_bytes"])
    assert want["read"][0] and want["write"][0]
    assert moved(before, metrics(lun)) == want


def test_refusals_are_failures_and_a_miscompare_an_answer(lun):
    bs = lun.block_size
    sh("udevadm", "settle")
    before = metrics(lun)
    expect_sense(unmap(lun.sg, [(lun.nr_blocks, 8)]), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)
    on_disk = read(lun, 0, 1)
    wrong = bytes(b ^ 0xFF for b in on_disk)
    expect_sense(
        compare_and_write(lun.sg, 0, wrong, os.urandom(bs), bs),
        MISCOMPARE,
        *MISCOMPARE_DURING_VERIFY,
    )
    assert read(lun, 0, 1) == on_disk
    # refused at its CDB (LIO core's check of the READ, ours of the WRITE
    # SAME): failures of their kind too
    expect_sense(
        sg_io(lun.sg, cdb_read16(lun.nr_blocks - 1, 2), data_in_len=2 * bs),
        ILLEGAL_REQUEST,
        *LBA_OUT_OF_RANGE,
    )
    expect_sense(
        sg_io(lun.sg, cdb_write_same16(lun.nr_blocks, 1), data_out=bytes(bs)),
        ILLEGAL_REQUEST,
        *LBA_OUT_OF_RANGE,
    )
    after = moved(before, metrics(lun))
    assert after["unmap"] == (1, 1, 0)
    assert after["ats"] == (1, 0, bs)  # compared, written nothing: not a failure
    assert after["read"] == (3, 1, 2 * bs)
    assert after["zero"] == (1, 1, 0)


def test_the_slowest_ats_of_the_last_minute(lun):
    bs = lun.block_size
    sh("udevadm", "settle")  # the scan's reads done: counts and buckets agree
    before = metrics(lun)["ats"]
    for _ in range(3):
        old = read(lun, 5, 1)
        expect_good(compare_and_write(lun.sg, 5, old, os.urandom(bs), bs))
    after = metrics(lun)["ats"]
    (worst,) = attrib(lun, "stats_ats_worst_us")
    assert 0 < worst <= after[3] - before[3], "one of the three, at most their sum"
    assert attrib(lun, "stats_ats_worst_us") == [worst], "reading changes nothing"


def test_io_stats_0_counts_nothing_until_set_again(lun):
    """attrib/io_stats, as the block layer's queue/iostats: 0 stops the
    counting (no clock read per command), 1 resumes it where it was."""
    bs = lun.block_size
    sh("udevadm", "settle")
    path = os.path.join(lun.so.path, "attrib", "io_stats")
    assert attrib(lun, "io_stats") == [1]
    before = metrics(lun)
    with open(path, "w") as f:
        f.write("0\n")
    try:
        old = read(lun, 3, 1)
        expect_good(compare_and_write(lun.sg, 3, old, os.urandom(bs), bs))
        expect_sense(unmap(lun.sg, [(lun.nr_blocks, 8)]), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)
        assert metrics(lun) == before
    finally:
        with open(path, "w") as f:
            f.write("1\n")
    expect_good(write_blocks(lun.sg, 3, os.urandom(bs), bs))
    assert moved(before, metrics(lun))["write"] == (1, 0, bs)
