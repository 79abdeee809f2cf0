"""COMPARE AND WRITE (ATS): every case SBC-4 5.3 defines, with the data on
the medium checked afterwards, and reads never seeing a torn CAW.  The
concurrent incrementers are in test_caw_torture.py."""

import os
import threading

import pytest
from conftest import MiB, read, sh, write
from scsi import (
    DATA_PROTECT,
    ILLEGAL_REQUEST,
    MISCOMPARE,
    cdb_compare_and_write,
    compare_and_write,
    expect_good,
    expect_sense,
    sg_io,
)
from sense_codes import (
    INVALID_FIELD_IN_CDB,
    INVALID_FIELD_IN_COMMAND_IU,
    LBA_OUT_OF_RANGE,
    MISCOMPARE_DURING_VERIFY,
    WRITE_PROTECTED,
)
from thin import stat


@pytest.mark.parametrize(
    "block_size, nblocks", [(512, 1), (512, 8), (512, 255), (4096, 1), (4096, 64)]
)
@pytest.mark.over_fabrics
def test_match_writes_the_new_data(make_lun, block_size, nblocks):
    lun = make_lun(block_size=block_size)
    old, new = os.urandom(nblocks * block_size), os.urandom(nblocks * block_size)
    for lba in (0, lun.nr_blocks - nblocks):
        write(lun, lba, old)
        ats = stat(lun, "ats")
        expect_good(compare_and_write(lun.sg, lba, old, new, block_size))
        assert read(lun, lba, nblocks) == new
        assert stat(lun, "ats") == ats + 1


@pytest.mark.over_fabrics
@pytest.mark.parametrize("where", [0, 511, 3 * 512 + 100, 8 * 512 - 1])
def test_miscompare_reports_the_first_differing_byte_and_writes_nothing(lun, where):
    old = os.urandom(8 * 512)
    write(lun, 40, old)
    verify = bytearray(old)
    verify[where] ^= 0xFF
    verify[-1] ^= 0x01 if where != len(old) - 1 else 0
    failed = stat(lun, "ats_miscompare")
    res = compare_and_write(lun.sg, 40, bytes(verify), os.urandom(len(old)), 512)
    s = expect_sense(res, MISCOMPARE, *MISCOMPARE_DURING_VERIFY)
    assert s.info == where, "INFORMATION must be the offset of the first difference"
    assert res.sense[0] & 0x80 or res.sense[0] & 0x7F == 0x72, "VALID bit"
    assert read(lun, 40, 8) == old
    assert stat(lun, "ats_miscompare") == failed + 1


def test_zero_blocks_transfers_nothing_and_is_good(lun):
    before = read(lun, 0, 1)
    expect_good(sg_io(lun.sg, cdb_compare_and_write(0, 0)))
    assert read(lun, 0, 1) == before


def test_beyond_capacity_is_refused(lun):
    data = bytes(2 * 512)
    for lba in (lun.last_lba, lun.nr_blocks, 2**64 - 1):
        expect_sense(
            compare_and_write(lun.sg, lba, data, data, 512), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE
        )


@pytest.mark.over_fabrics
def test_data_out_length_must_be_twice_the_blocks(lun):
    old = os.urandom(1024)
    write(lun, 0, old)
    res = sg_io(lun.sg, cdb_compare_and_write(0, 2), data_out=old + os.urandom(1024) + bytes(512))
    expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_COMMAND_IU)
    res = sg_io(lun.sg, cdb_compare_and_write(0, 2), data_out=old)
    expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_COMMAND_IU)
    assert read(lun, 0, 2) == old


def test_wrprotect_is_refused(lun):
    old = os.urandom(512)
    write(lun, 0, old)
    res = compare_and_write(lun.sg, 0, old, os.urandom(512), 512, flags=0x20)
    expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)
    assert read(lun, 0, 1) == old


def test_readonly_lun_refuses(make_lun):
    data = os.urandom(MiB)
    lun = make_lun(size=16 * MiB, readonly=True, fill=data)
    res = compare_and_write(lun.sg, 0, data[:512], bytes(512), 512)
    expect_sense(res, DATA_PROTECT, *WRITE_PROTECTED)
    assert read(lun, 0, 1) == data[:512]


def test_block_limits_report_255(lun):
    out = sh("sg_vpd", "-p", "bl", lun.disk)
    assert "Maximum compare and write length: 255 blocks" in out


@pytest.mark.over_fabrics
def test_reads_never_see_half_a_compare_and_write(lun):
    """8-block CAWs of uniform data while another thread reads the range:
    every read returns the data of one CAW or the next, never a mix."""
    write(lun, 200, bytes(8 * 512))
    stop = threading.Event()
    bad = []

    def caw_loop():
        for i in range(60):
            cur = read(lun, 200, 8)
            compare_and_write(lun.sg, 200, cur, bytes([i % 256]) * 4096, 512)

    def read_loop():
        while not stop.is_set():
            data = read(lun, 200, 8)
            if data != bytes([data[0]]) * 4096:
                bad.append(data)

    threads = [threading.Thread(target=read_loop) for _ in range(2)]
    for t in threads:
        t.start()
    caw_loop()
    stop.set()
    for t in threads:
        t.join()
    assert not bad, "a read saw a torn range"
