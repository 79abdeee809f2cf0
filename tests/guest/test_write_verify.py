"""WRITE AND VERIFY (10), (12) and (16): the blocks written and read back,
BYTCHK 00b and 01b taken, every field the backend does not support refused
with the medium left as it was."""

import os
import struct

import pytest
from conftest import read
from scsi import DATA_PROTECT, ILLEGAL_REQUEST, expect_good, expect_sense, sg_io, write_blocks
from sense_codes import INVALID_FIELD_IN_CDB, LBA_OUT_OF_RANGE, WRITE_PROTECTED

pytestmark = pytest.mark.stores("file", "bdev", "xfs")

BYTCHK_01, BYTCHK_10, BYTCHK_11 = 0x02, 0x04, 0x06
DPO = 0x10


def cdb_wav(size, lba, nblocks, flags=0):
    if size == 10:
        return struct.pack(">BBIBHB", 0x2E, flags, lba, 0, nblocks, 0)
    if size == 12:
        return struct.pack(">BBIIBB", 0xAE, flags, lba, nblocks, 0, 0)
    return struct.pack(">BBQIBB", 0x8E, flags, lba, nblocks, 0, 0)


def wav(lun, size, lba, data, flags=0):
    return sg_io(lun.sg, cdb_wav(size, lba, len(data) // lun.block_size, flags), data_out=data)


@pytest.mark.parametrize("size", [10, 12, 16])
@pytest.mark.parametrize("bytchk", [0, BYTCHK_01])
def test_written_and_read_back(make_lun, size, bytchk):
    lun = make_lun()
    data = os.urandom(64 * 1024)
    expect_good(wav(lun, size, 100, data, bytchk))
    assert read(lun, 100, 128) == data
    # the last block
    last = os.urandom(512)
    expect_good(wav(lun, size, lun.last_lba, last, bytchk))
    assert read(lun, lun.last_lba, 1) == last


@pytest.mark.parametrize("size", [10, 12, 16])
def test_refusals_leave_the_medium(lun, size):
    old = os.urandom(8 * 512)
    expect_good(write_blocks(lun.sg, 0, old, 512))
    new = os.urandom(8 * 512)
    lun.so.set_attribute("emulate_write_cache", 0)  # DPOFUA 0
    for flags in (BYTCHK_10, BYTCHK_11, 0x08, 0x20, 0xE0, DPO):
        expect_sense(wav(lun, size, 0, new, flags), ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)
    expect_sense(wav(lun, size, lun.last_lba - 6, new), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)
    expect_sense(sg_io(lun.sg, cdb_wav(size, lun.nr_blocks, 0)), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)
    # no blocks: nothing written, GOOD
    expect_good(sg_io(lun.sg, cdb_wav(size, 0, 0)))
    assert read(lun, 0, 8) == old
    assert read(lun, lun.last_lba - 6, 7) == bytes(7 * 512)


def test_dpo_with_the_write_cache_on(lun):
    lun.so.set_attribute("emulate_write_cache", 1)
    data = os.urandom(4096)
    expect_good(wav(lun, 12, 8, data, DPO | BYTCHK_01))
    assert read(lun, 8, 8) == data


def test_read_only_lun(make_lun):
    data = os.urandom(64 * 1024)
    lun = make_lun(readonly=True, fill=data)
    expect_sense(wav(lun, 12, 0, os.urandom(512)), DATA_PROTECT, *WRITE_PROTECTED)
    assert read(lun, 0, 128) == data
