"""WRITE SAME (10)/(16): zeroing and unmapping as metadata operations,
patterns written and read back, and every field the standard refuses."""

import os

import pytest
from conftest import MiB, fill, read, sh
from scsi import (
    DATA_PROTECT,
    ILLEGAL_REQUEST,
    cdb_write_same10,
    cdb_write_same16,
    expect_good,
    expect_sense,
    sg_io,
)
from sense_codes import (
    INVALID_FIELD_IN_CDB,
    INVALID_FIELD_IN_COMMAND_IU,
    LBA_OUT_OF_RANGE,
    WRITE_PROTECTED,
)
from thin import allocated, stat

# also on a file on XFS: patterns written with direct I/O
pytestmark = pytest.mark.stores("file", "bdev", "xfs")


@pytest.mark.over_fabrics
@pytest.mark.parametrize("block_size", [512, 4096])
def test_esxi_zeroing_1mib_with_one_zero_block(make_lun, block_size):
    lun = make_lun(block_size=block_size)
    nblocks = MiB // block_size
    lba = 7 * nblocks
    fill(lun, lba - 1, MiB // block_size + 2)
    before = read(lun, lba - 1, 1), read(lun, lba + nblocks, 1)
    zeros0 = stat(lun, "zero")
    full = allocated(lun.backing.image)
    res = sg_io(lun.sg, cdb_write_same16(lba, nblocks), data_out=bytes(block_size))
    expect_good(res)
    assert read(lun, lba, nblocks) == bytes(MiB)
    # a thin LUN that reads zeros back leaves zeroed blocks deallocated
    assert allocated(lun.backing.image) <= full - MiB + 2 * 4096
    assert (read(lun, lba - 1, 1), read(lun, lba + nblocks, 1)) == before
    assert stat(lun, "zero") == zeros0 + 1
    assert stat(lun, "zero_blocks") >= nblocks


def test_zeros_stay_allocated_when_provisioning_is_off(lun):
    fill(lun, 0, 2 * MiB // 512)
    lun.so.set_attribute("emulate_tpu", "0")
    lun.so.set_attribute("emulate_tpws", "0")
    full = allocated(lun.backing.image)
    expect_good(sg_io(lun.sg, cdb_write_same16(0, 4096), data_out=bytes(512)))
    assert read(lun, 0, 4096) == bytes(2 * MiB)
    assert allocated(lun.backing.image) >= full


def test_zero_with_unmap_bit_deallocates(lun):
    fill(lun, 0, 4 * MiB // 512)
    full = allocated(lun.backing.image)
    expect_good(sg_io(lun.sg, cdb_write_same16(0, 8192, unmap=True), data_out=bytes(512)))
    assert read(lun, 0, 8192) == bytes(4 * MiB)
    assert allocated(lun.backing.image) <= full - 4 * MiB


@pytest.mark.over_fabrics
def test_ndob_zeroes_without_a_data_out_buffer(lun):
    fill(lun, 100, MiB // 512)
    expect_good(sg_io(lun.sg, cdb_write_same16(100, 2048, ndob=True)))
    assert read(lun, 100, 2048) == bytes(MiB)


def test_ndob_with_unmap_deallocates(lun):
    fill(lun, 0, 2 * MiB // 512)
    full = allocated(lun.backing.image)
    expect_good(sg_io(lun.sg, cdb_write_same16(0, 4096, ndob=True, unmap=True)))
    assert read(lun, 0, 4096) == bytes(2 * MiB)
    assert allocated(lun.backing.image) <= full - 2 * MiB


@pytest.mark.over_fabrics
@pytest.mark.parametrize("block_size", [512, 4096])
@pytest.mark.parametrize("cdb16", [True, False])
def test_pattern_is_written_to_every_block(make_lun, block_size, cdb16):
    lun = make_lun(block_size=block_size)
    pattern = os.urandom(block_size)
    nblocks = 3 * MiB // block_size + 3  # not a whole chunk
    cdb = (cdb_write_same16 if cdb16 else cdb_write_same10)(5, nblocks)
    expect_good(sg_io(lun.sg, cdb, data_out=pattern))
    assert read(lun, 5, nblocks) == pattern * nblocks
    assert read(lun, 4, 1) == bytes(block_size)
    assert read(lun, 5 + nblocks, 1) == bytes(block_size)


def test_pattern_with_unmap_bit_is_still_written(lun):
    pattern = b"\xa5" * 512
    expect_good(sg_io(lun.sg, cdb_write_same16(0, 64, unmap=True), data_out=pattern))
    assert read(lun, 0, 64) == pattern * 64


def test_first_and_last_block(lun):
    pattern = os.urandom(512)
    expect_good(sg_io(lun.sg, cdb_write_same16(0, 1), data_out=pattern))
    expect_good(sg_io(lun.sg, cdb_write_same16(lun.last_lba, 1), data_out=pattern))
    assert read(lun, 0, 1) == pattern and read(lun, lun.last_lba, 1) == pattern


@pytest.mark.parametrize(
    "cdb",
    [
        cdb_write_same16(0, 8, anchor=True),  # ANCHOR without ANC_SUP
        cdb_write_same16(0, 8, flags=0x02),  # LBDATA (obsolete)
        cdb_write_same16(0, 8, flags=0x04),  # PBDATA (obsolete)
        cdb_write_same10(0, 8, flags=0x01),  # reserved bit in (10)
        cdb_write_same16(0, 0),  # WSNZ = 1
        cdb_write_same10(0, 0),
        cdb_write_same16(0, 8, flags=0x20),  # WRPROTECT 1: no protection
        cdb_write_same16(0, 8, flags=0xE0),  # WRPROTECT 7  information
        cdb_write_same10(0, 8, flags=0x40),  # WRPROTECT 2  (SBC-4 5.49)
    ],
    ids=[
        "anchor",
        "lbdata",
        "pbdata",
        "ws10-bit0",
        "zero-blocks-16",
        "zero-blocks-10",
        "wrprotect-1-16",
        "wrprotect-7-16",
        "wrprotect-2-10",
    ],
)
def test_refused_cdb_fields_change_nothing(lun, cdb):
    data = fill(lun, 0, MiB // 512)
    expect_sense(sg_io(lun.sg, cdb, data_out=b"\x5a" * 512), ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)
    assert read(lun, 0, 2048) == data


def test_longer_than_maximum_write_same_length_is_refused(lun):
    maxlen = int(lun.so.get_attribute("max_write_same_len"))
    assert maxlen * 512 >= 1 << 30
    expect_sense(
        sg_io(lun.sg, cdb_write_same16(0, maxlen + 1), data_out=bytes(512)),
        ILLEGAL_REQUEST,
        *INVALID_FIELD_IN_CDB,
    )


@pytest.mark.over_fabrics
def test_range_past_the_end_is_refused(lun):
    before = read(lun, lun.last_lba, 1)
    for lba, n in ((lun.last_lba, 2), (lun.nr_blocks, 1), (2**64 - 1, 2)):
        expect_sense(
            sg_io(lun.sg, cdb_write_same16(lba, n), data_out=b"\x11" * 512),
            ILLEGAL_REQUEST,
            *LBA_OUT_OF_RANGE,
        )
    assert read(lun, lun.last_lba, 1) == before


@pytest.mark.over_fabrics
def test_data_out_not_one_block_is_refused(lun):
    data = fill(lun, 0, MiB // 512)
    expect_sense(
        sg_io(lun.sg, cdb_write_same16(0, 8), data_out=b"\x22" * 1024),
        ILLEGAL_REQUEST,
        *INVALID_FIELD_IN_COMMAND_IU,
    )
    assert read(lun, 0, 2048) == data


def test_unmap_bit_refused_when_tpws_is_off(lun):
    lun.so.set_attribute("emulate_tpws", "0")
    expect_sense(
        sg_io(lun.sg, cdb_write_same16(0, 8, unmap=True), data_out=bytes(512)),
        ILLEGAL_REQUEST,
        *INVALID_FIELD_IN_CDB,
    )


def test_readonly_lun_refuses_write_same(make_lun):
    data = os.urandom(MiB)
    lun = make_lun(size=16 * MiB, readonly=True, fill=data)
    expect_sense(
        sg_io(lun.sg, cdb_write_same16(0, 8), data_out=bytes(512)), DATA_PROTECT, *WRITE_PROTECTED
    )
    expect_sense(sg_io(lun.sg, cdb_write_same16(0, 8, ndob=True)), DATA_PROTECT, *WRITE_PROTECTED)
    assert read(lun, 0, 2048) == data


def test_sg_write_same_as_an_administrator_runs_it(lun, tmp_path):
    """sg3_utils' own encoding: --16 with a pattern file, --10, and -U."""
    pattern = tmp_path / "pattern"
    pattern.write_bytes(os.urandom(512))
    sh("sg_write_same", "--16", f"--in={pattern}", "--lba=64", "--num=128", lun.sg)
    assert read(lun, 64, 128) == pattern.read_bytes() * 128
    sh("sg_write_same", "--10", "--lba=64", "--num=64", lun.sg)
    assert read(lun, 64, 64) == bytes(64 * 512)
    sh("sg_write_same", "--16", "--unmap", "--lba=128", "--num=64", lun.sg)
    assert read(lun, 64, 128) == bytes(128 * 512)
