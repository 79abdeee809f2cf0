"""WRITE ATOMIC (16): untorn writes where the store makes them.

A block device with atomic write units (here scsi_debug with atomic_wr=1,
standing in for an NVMe or SCSI device that has them) gets each command as
one REQ_ATOMIC bio, which sd sends on as WRITE ATOMIC (16): the device's
command log shows it.  The Block Limits VPD page reports the device's units
in the LUN's blocks; every limit is enforced with INVALID FIELD IN CDB and
nothing written.  A file LUN, a device without the units, or a kernel
without REQ_ATOMIC (6.1) reports none, and the command is not supported."""

import glob
import os
import struct
import subprocess
import time

import pytest
from conftest import sh
from rsoc import SUPPORTED, report_one
from scsi import ILLEGAL_REQUEST, expect_good, expect_sense, read_blocks, sg_io
from sense_codes import INVALID_COMMAND_OPERATION_CODE, INVALID_FIELD_IN_CDB, LBA_OUT_OF_RANGE

WRPROTECT = 0x20
SDEBUG = "/sys/bus/pseudo/drivers/scsi_debug"
BIO_MAX = 256 * 4096  # one bio of pages: the module's own cap


def cdb_write_atomic(lba, nblocks, flags=0, boundary=0):
    return struct.pack(">BBQHHBB", 0x9C, flags, lba, boundary, nblocks, 0, 0)


def write_atomic(sg, lba, data, flags=0, boundary=0, page_offset=None):
    return sg_io(
        sg,
        cdb_write_atomic(lba, len(data) // 512, flags, boundary),
        data_out=data,
        page_offset=page_offset,
    )


def read(sg, lba, nblocks):
    return expect_good(read_blocks(sg, lba, nblocks, 512)).data


def atomic_limits(sg):
    """(MAXIMUM ATOMIC TRANSFER LENGTH, ATOMIC ALIGNMENT, ATOMIC TRANSFER
    LENGTH GRANULARITY, the two boundary fields) of Block Limits."""
    page = expect_good(sg_io(sg, struct.pack(">BBBHB", 0x12, 1, 0xB0, 64, 0), data_in_len=64)).data
    assert page[1] == 0xB0 and len(page) == 64
    return struct.unpack(">IIIII", page[44:64])


def listed(sg):
    """Does REPORT SUPPORTED OPERATION CODES say WRITE ATOMIC (16) is there?"""
    return report_one(sg, 1, 0x9C)[0] == SUPPORTED


def queue_attr(name, attr):
    path = f"/sys/block/{name}/queue/{attr}"
    return int(open(path).read()) if os.path.exists(path) else 0


@pytest.fixture
def atomic_disk():
    """(path, (granularity, maximum) in 512-byte blocks, or None): a
    scsi_debug disk with atomic write units where the kernel has them (6.1's
    scsi_debug ignores atomic_wr, its queues have no such limits)."""
    sh("modprobe", "scsi_debug", "atomic_wr=1", "dev_size_mb=32")
    sh("udevadm", "settle")
    disks = glob.glob(SDEBUG + "/adapter*/host*/target*/*:*/block/*")
    assert len(disks) == 1, disks
    name = os.path.basename(disks[0])
    umin = queue_attr(name, "atomic_write_unit_min_bytes")
    umax = queue_attr(name, "atomic_write_unit_max_bytes")
    units = (umin // 512, min(umax, BIO_MAX) // 512) if umax else None
    # REQ_ATOMIC and scsi_debug's atomic_wr came with 6.11
    release = tuple(int(x) for x in os.uname().release.split(".")[:2])
    assert (units is not None) == (release >= (6, 11)), (release, umin, umax)
    yield "/dev/" + name, units
    # the LUN's last reference to the disk goes a moment after it does
    for _ in range(50):
        sh("udevadm", "settle")
        if not subprocess.run(["modprobe", "-r", "scsi_debug"], check=False).returncode:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("scsi_debug still in use after the test")


def device_commands(fn):
    """Run fn with scsi_debug logging each command: the opcodes it got.
    The kernel log is read from a mark of ours on: after a long run the
    ring buffer is full and drops its oldest lines as new ones come."""
    mark = f"test_write_atomic: mark {time.monotonic_ns()}"
    with open("/dev/kmsg", "w") as f:
        f.write(mark + "\n")
    with open(SDEBUG + "/opts", "w") as f:
        f.write("1")
    try:
        fn()
    finally:
        with open(SDEBUG + "/opts", "w") as f:
            f.write("0")
    log = sh("dmesg")
    new = log[log.rindex(mark) :]
    return [
        line.split("cmd ", 1)[1].split()
        for line in new.splitlines()
        if "scsi_debug" in line and "cmd " in line
    ]


def test_units_of_the_device_in_block_limits(atomic_disk, exported):
    path, units = atomic_disk
    _so, sg = exported("atomic", path)
    if not units:
        assert atomic_limits(sg) == (0, 0, 0, 0, 0)
        assert not listed(sg)
        return
    gran, top = units
    assert atomic_limits(sg) == (top, gran, gran, 0, 0)
    assert listed(sg)


def test_write_atomic_reaches_the_device_whole(atomic_disk, exported):
    path, units = atomic_disk
    _so, sg = exported("atomic", path)
    if not units:
        expect_sense(
            write_atomic(sg, 0, bytes(1024)), ILLEGAL_REQUEST, *INVALID_COMMAND_OPERATION_CODE
        )
        return
    gran, top = units
    data = os.urandom(top * 512)
    sent = device_commands(lambda: expect_good(write_atomic(sg, 2 * top, data)))
    atomic = [c for c in sent if c[0] == "9c"]
    assert len(atomic) == 1, sent
    lba, nblocks = int("".join(atomic[0][2:10]), 16), int("".join(atomic[0][12:14]), 16)
    assert (lba, nblocks) == (2 * top, top)
    assert read(sg, 2 * top, top) == data
    for lba, n in ((0, gran), (gran, 3 * gran), (40 * gran, top // 2)):
        expect_good(write_atomic(sg, lba, data[: n * 512]))
        assert read(sg, lba, n) == data[: n * 512]
    expect_good(write_atomic(sg, 1, b""))  # 0 blocks: no error
    # Data 512 bytes into a page: tcm_loop hands over the pages as the
    # block layer mapped them, the first entry part of a page; the module
    # copies them into whole pages, and the device still gets one command.
    data = os.urandom(top * 512)
    sent = device_commands(lambda: expect_good(write_atomic(sg, 3 * top, data, page_offset=512)))
    assert [c[0] for c in sent].count("9c") == 1, sent
    assert read(sg, 3 * top, top) == data


def test_atomic_limits_answer_invalid_field_and_write_nothing(atomic_disk, exported):
    path, units = atomic_disk
    _so, sg = exported("atomic", path)
    if not units:  # 6.1: every one is an unsupported command
        expect_sense(
            write_atomic(sg, 1, bytes(1024)), ILLEGAL_REQUEST, *INVALID_COMMAND_OPERATION_CODE
        )
        return
    gran, top = units
    assert gran > 1, "scsi_debug's granularity: 2 blocks"
    before = read(sg, 0, top + gran)
    last = int(sh("blockdev", "--getsz", path)) - 1
    cases = [
        ((1, gran), {}, INVALID_FIELD_IN_CDB),  # misaligned
        ((0, gran + 1), {}, INVALID_FIELD_IN_CDB),  # not of the granularity
        ((0, top + gran), {}, INVALID_FIELD_IN_CDB),  # over the maximum
        ((0, gran), {"boundary": gran}, INVALID_FIELD_IN_CDB),  # no boundary sizes
        ((0, gran), {"flags": WRPROTECT}, INVALID_FIELD_IN_CDB),
        ((last - 1, 4), {}, LBA_OUT_OF_RANGE),
        ((last + 1, 0), {}, LBA_OUT_OF_RANGE),
    ]
    for (lba, n), kw, sense in cases:
        res = sg_io(sg, cdb_write_atomic(lba, n, **kw), data_out=os.urandom(n * 512) or None)
        expect_sense(res, ILLEGAL_REQUEST, *sense)
    assert read(sg, 0, top + gran) == before


def test_lun_without_units_has_no_atomic_writes(lun):
    assert atomic_limits(lun.sg) == (0, 0, 0, 0, 0)
    assert not listed(lun.sg)
    expect_sense(
        write_atomic(lun.sg, 0, bytes(1024)), ILLEGAL_REQUEST, *INVALID_COMMAND_OPERATION_CODE
    )
