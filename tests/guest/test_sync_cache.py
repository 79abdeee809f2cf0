"""SYNCHRONIZE CACHE and the write cache setting."""

import os

import pytest
from conftest import sh
from scsi import (
    ILLEGAL_REQUEST,
    cdb_sync_cache10,
    expect_good,
    expect_sense,
    read_blocks,
    sg_io,
    write_blocks,
)
from sense_codes import LBA_OUT_OF_RANGE

# also on a file on XFS: the direct I/O path
pytestmark = pytest.mark.stores("file", "bdev", "xfs")


def mode_sense_wce(sg):
    """WCE bit of the Caching mode page (SBC-4 6.5.5)."""
    cdb = bytes([0x5A, 0x08, 0x08, 0, 0, 0, 0, 0, 0xFF, 0])  # DBD, page 08h
    data = expect_good(sg_io(sg, cdb, data_in_len=255)).data
    page = data[8:]
    assert page[0] & 0x3F == 0x08
    return bool(page[2] & 0x04)


def test_sync_cache_whole_lun_and_range(lun):
    expect_good(write_blocks(lun.sg, 0, os.urandom(4096), 512))
    expect_good(sg_io(lun.sg, cdb_sync_cache10()))
    expect_good(sg_io(lun.sg, cdb_sync_cache10(0, 8)))
    sh("sg_sync", lun.sg)


def test_sync_cache_beyond_capacity_is_refused(lun):
    expect_sense(
        sg_io(lun.sg, cdb_sync_cache10(lun.nr_blocks, 1)), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE
    )


def test_write_cache_follows_emulate_write_cache(lun):
    lun.so.set_attribute("emulate_write_cache", "1")
    assert mode_sense_wce(lun.sg)
    data = os.urandom(8192)
    expect_good(write_blocks(lun.sg, 64, data, 512))
    expect_good(sg_io(lun.sg, cdb_sync_cache10()))
    lun.so.set_attribute("emulate_write_cache", "0")
    assert not mode_sense_wce(lun.sg)
    assert expect_good(read_blocks(lun.sg, 64, 16, 512)).data == data


def test_fua_write_reaches_the_backing_store(lun):
    """With the write cache on; off, FUA is refused (test_dpofua.py)."""
    data = os.urandom(4096)
    lun.so.set_attribute("emulate_write_cache", "1")
    expect_good(write_blocks(lun.sg, 2048, data, 512, fua=True))
    with open(lun.backing.image, "rb") as f:
        f.seek(2048 * 512)
        assert f.read(len(data)) == data
