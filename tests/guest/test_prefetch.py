"""PRE-FETCH (10) and (16): the blocks read into the page cache a buffered
file store serves READs from, CONDITION MET once all of them are there
(IMMED or not);
GOOD where there is no such cache (the block store, direct I/O) or when
they do not all fit; the medium never changed; bad ranges refused."""

import os
import struct

import pytest
from conftest import MiB, cached_bytes, drop_caches
from scsi import GOOD, ILLEGAL_REQUEST, expect_good, expect_sense, read_blocks, sg_io, write_blocks
from sense_codes import LBA_OUT_OF_RANGE

# the file store on XFS, whose page cache (unlike tmpfs') can be emptied
pytestmark = pytest.mark.stores("xfs", "bdev")

CONDITION_MET = 0x04
IMMED = 0x02


def cdb_prefetch10(lba, nblocks, flags=0):
    return struct.pack(">BBIBHB", 0x34, flags, lba, 0, nblocks, 0)


def cdb_prefetch16(lba, nblocks, flags=0):
    return struct.pack(">BBQIBB", 0x90, flags, lba, nblocks, 0, 0)


def buffered(lun):
    lun.so.set_attribute("io_mode", "buffered")
    drop_caches()


@pytest.mark.parametrize("cdb", [cdb_prefetch10, cdb_prefetch16])
def test_blocks_cached_condition_met(make_lun, store, cdb):
    lun = make_lun(size=32 * MiB)
    data = os.urandom(MiB)
    expect_good(write_blocks(lun.sg, 2048, data, 512))
    if store == "bdev":
        # no cache READs go through: a hint with nothing to do
        assert sg_io(lun.sg, cdb(2048, 2048)).status == GOOD
        return
    buffered(lun)
    before = cached_bytes(lun.backing.image)
    res = sg_io(lun.sg, cdb(2048, 2048))
    assert res.status == CONDITION_MET, res
    assert cached_bytes(lun.backing.image) >= before + MiB
    assert expect_good(read_blocks(lun.sg, 2048, 2048, 512)).data == data


@pytest.mark.stores("xfs")
def test_immed_is_answered_once_the_blocks_are_in(make_lun):
    lun = make_lun(size=32 * MiB)
    buffered(lun)
    before = cached_bytes(lun.backing.image)
    res = sg_io(lun.sg, cdb_prefetch16(4096, 2048, IMMED))
    assert res.status == CONDITION_MET, res
    assert cached_bytes(lun.backing.image) >= before + MiB


def test_more_than_fits_is_good(make_lun, store):
    """At most 8 MiB (one READ's worth) is taken into the cache."""
    lun = make_lun(size=32 * MiB)
    if store == "xfs":
        buffered(lun)
    before = cached_bytes(lun.backing.image) if store == "xfs" else 0
    assert sg_io(lun.sg, cdb_prefetch16(0, 16 * MiB // 512)).status == GOOD
    # PREFETCH LENGTH 0: from the LBA through the last block
    assert sg_io(lun.sg, cdb_prefetch10(0, 0)).status == GOOD
    last = lun.last_lba
    res = sg_io(lun.sg, cdb_prefetch10(last - 7, 0))
    assert res.status == (CONDITION_MET if store == "xfs" else GOOD), res
    if store == "xfs":
        assert before + 8 * MiB <= cached_bytes(lun.backing.image) < 16 * MiB


@pytest.mark.stores("xfs")
def test_direct_io_has_no_cache(make_lun):
    lun = make_lun()
    lun.so.set_attribute("io_mode", "direct")
    drop_caches()
    assert sg_io(lun.sg, cdb_prefetch16(0, 2048)).status == GOOD
    assert cached_bytes(lun.backing.image) < MiB


def test_out_of_range(lun):
    last = lun.last_lba
    for cdb in (
        cdb_prefetch16(last, 2),
        cdb_prefetch16(last + 1, 0),
        cdb_prefetch16(2**64 - 1, 1),
        cdb_prefetch16(2**63, 1),
        cdb_prefetch10(last + 1, 1),
        cdb_prefetch10(2**32 - 1, 0),
    ):
        expect_sense(sg_io(lun.sg, cdb), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)
