"""VERIFY with BYTCHK compares the data-out with the medium (upstream LIO
accepts any data there)."""

import os
import struct

import pytest
from conftest import MiB
from scsi import (
    ILLEGAL_REQUEST,
    MISCOMPARE,
    expect_good,
    expect_sense,
    read_blocks,
    sg_io,
    write_blocks,
)
from sense_codes import (
    INVALID_FIELD_IN_CDB,
    INVALID_FIELD_IN_COMMAND_IU,
    LBA_OUT_OF_RANGE,
    MISCOMPARE_DURING_VERIFY,
)

# also on a file on XFS: the medium read with direct I/O
pytestmark = pytest.mark.stores("file", "bdev", "xfs")


def cdb_verify(kind, lba, nblocks, bytchk, flags=0):
    b1 = flags | (bytchk << 1)
    if kind == 16:
        return struct.pack(">BBQIBB", 0x8F, b1, lba, nblocks, 0, 0)
    if kind == 12:
        return struct.pack(">BBIIBB", 0xAF, b1, lba, nblocks, 0, 0)
    return struct.pack(">BBIBHB", 0x2F, b1, lba, 0, nblocks, 0)


@pytest.mark.parametrize("kind", [10, 12, 16])
def test_bytchk_1_matching_data_is_good(lun, kind):
    data = os.urandom(64 * 512)
    expect_good(write_blocks(lun.sg, 300, data, 512))
    expect_good(sg_io(lun.sg, cdb_verify(kind, 300, 64, 1), data_out=data))


@pytest.mark.parametrize("where", [0, 5 * 512 + 17, 64 * 512 - 1])
def test_bytchk_1_difference_is_a_miscompare_at_its_offset(lun, where):
    data = os.urandom(64 * 512)
    expect_good(write_blocks(lun.sg, 300, data, 512))
    other = bytearray(data)
    other[where] ^= 0x40
    s = expect_sense(
        sg_io(lun.sg, cdb_verify(16, 300, 64, 1), data_out=bytes(other)),
        MISCOMPARE,
        *MISCOMPARE_DURING_VERIFY,
    )
    assert s.info == where
    assert expect_good(read_blocks(lun.sg, 300, 64, 512)).data == data


def test_bytchk_3_compares_one_block_with_every_block(lun):
    block = os.urandom(512)
    nblocks = 4 * MiB // 512  # several compare chunks
    expect_good(write_blocks(lun.sg, 0, block * nblocks, 512))
    expect_good(sg_io(lun.sg, cdb_verify(16, 0, nblocks, 3), data_out=block))
    bad_lba = 3 * MiB // 512 + 9
    expect_good(write_blocks(lun.sg, bad_lba, bytes(512), 512))
    s = expect_sense(
        sg_io(lun.sg, cdb_verify(16, 0, nblocks, 3), data_out=block),
        MISCOMPARE,
        *MISCOMPARE_DURING_VERIFY,
    )
    first = next(i for i in range(512) if block[i] != 0)
    assert s.info == bad_lba * 512 + first


@pytest.mark.parametrize(
    "cdb",
    [cdb_verify(16, 0, 8, 2), cdb_verify(16, 0, 8, 1, flags=0x20)],
    ids=["bytchk-10b-reserved", "vrprotect"],
)
def test_refused_fields(lun, cdb):
    expect_sense(
        sg_io(lun.sg, cdb, data_out=bytes(8 * 512)), ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB
    )


def test_past_the_end_and_wrong_data_out_length(lun):
    expect_sense(
        sg_io(lun.sg, cdb_verify(16, lun.last_lba, 2, 1), data_out=bytes(1024)),
        ILLEGAL_REQUEST,
        *LBA_OUT_OF_RANGE,
    )
    expect_sense(
        sg_io(lun.sg, cdb_verify(16, 0, 2, 1), data_out=bytes(512)),
        ILLEGAL_REQUEST,
        *INVALID_FIELD_IN_COMMAND_IU,
    )
