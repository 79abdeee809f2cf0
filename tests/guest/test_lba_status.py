"""GET LBA STATUS: what is mapped and what is deallocated, from the store."""

import os
import re
import struct

import pytest
from conftest import MiB, sh
from scsi import (
    ILLEGAL_REQUEST,
    cdb_get_lba_status,
    cdb_write_same16,
    expect_good,
    expect_sense,
    get_lba_status,
    sg_io,
    unmap,
    write_blocks,
)
from sense_codes import LBA_OUT_OF_RANGE

MAPPED, DEALLOCATED = 0, 1


@pytest.mark.over_fabrics
def test_file_lun_reports_holes_and_data(make_lun, store):
    lun = make_lun(size=16 * MiB)
    if store == "bdev":
        descs, _ = get_lba_status(lun.sg, 0)
        assert descs == [(0, lun.nr_blocks, MAPPED)], "bdev: mapped-or-unknown"
        return
    descs, _res = get_lba_status(lun.sg, 0)
    assert descs == [(0, lun.nr_blocks, DEALLOCATED)]
    expect_good(write_blocks(lun.sg, 2048, os.urandom(MiB), 512))
    descs, _ = get_lba_status(lun.sg, 0)
    assert descs == [
        (0, 2048, DEALLOCATED),
        (2048, 2048, MAPPED),
        (4096, lun.nr_blocks - 4096, DEALLOCATED),
    ]
    expect_good(unmap(lun.sg, [(2048, 1024)]))
    descs, _ = get_lba_status(lun.sg, 2048)
    assert descs[0] == (2048, 1024, DEALLOCATED)
    assert descs[1] == (3072, 1024, MAPPED)


def test_fully_provisioned_lun_reports_every_block_mapped(make_lun, store):
    """LBPME 0 (SBC-4 4.7.2): the sparse backing file's holes stay hidden."""
    lun = make_lun(size=16 * MiB)
    expect_good(write_blocks(lun.sg, 2048, os.urandom(MiB), 512))
    lun.so.set_attribute("emulate_tpu", 0)
    lun.so.set_attribute("emulate_tpws", 0)
    try:
        descs, _ = get_lba_status(lun.sg, 0)
        assert descs == [(0, lun.nr_blocks, MAPPED)]
        descs, _ = get_lba_status(lun.sg, 4096)
        assert descs == [(4096, lun.nr_blocks - 4096, MAPPED)]
    finally:
        lun.so.set_attribute("emulate_tpu", 1)
    if store == "file":  # thin again: the holes show
        descs, _ = get_lba_status(lun.sg, 0)
        assert descs[0] == (0, 2048, DEALLOCATED)


def test_zeroing_with_unmap_shows_as_deallocated(make_lun, store):
    lun = make_lun(size=8 * MiB)
    if store == "bdev":
        return
    expect_good(write_blocks(lun.sg, 0, os.urandom(2 * MiB), 512))
    expect_good(sg_io(lun.sg, cdb_write_same16(0, 4096, unmap=True), data_out=bytes(512)))
    descs, _ = get_lba_status(lun.sg, 0)
    assert descs[0] == (0, lun.nr_blocks, DEALLOCATED)


def test_sg_get_lba_status_decodes_our_answer(lun):
    out = sh("sg_get_lba_status", "--lba=0", lun.sg)
    assert re.search(r"(?i)(deallocated|mapped)", out)


def test_small_allocation_length_truncates_to_whole_descriptors(make_lun, store):
    lun = make_lun(size=16 * MiB)
    expect_good(write_blocks(lun.sg, 2048, os.urandom(MiB), 512))
    descs, res = get_lba_status(lun.sg, 0, alloc_len=24)
    assert len(descs) == 1 and len(res.data) == 24


@pytest.mark.parametrize("alloc_len", [9, 16, 23])
def test_allocation_length_short_of_one_descriptor_says_one_exists(lun, alloc_len):
    """SPC-4 4.2.5.6: truncation does not change PARAMETER DATA LENGTH, so
    the host learns that a descriptor follows and asks with room for it."""
    res = expect_good(sg_io(lun.sg, cdb_get_lba_status(0, alloc_len), data_in_len=alloc_len))
    assert len(res.data) == 8
    assert struct.unpack(">I", res.data[:4])[0] == 4 + 16


def carried(disk):
    """The most data one command can carry to this disk, from its queue's
    limits (a user buffer's pages are not contiguous: 4 KiB a segment)."""
    q = f"/sys/block/{os.path.basename(disk)}/queue/"
    with open(q + "max_segments") as segs, open(q + "max_hw_sectors_kb") as kb:
        return min(int(segs.read()) * 4096, int(kb.read()) * 1024)


@pytest.mark.over_fabrics
def test_allocation_length_past_any_reply_gets_the_whole_reply(make_lun, store):
    """An ALLOCATION LENGTH far past any reply, up to 8 MiB where the fabric
    carries it (iSCSI and FC do; tcm_loop's 256 segments stop at 1 MiB):
    the reply is what the extents need, the rest residual.  The module once
    allocated all of it: at 8 MiB the page allocator warned (a panic with
    panic_on_warn) and every retry was answered TASK SET FULL."""
    lun = make_lun(size=16 * MiB)
    expect_good(write_blocks(lun.sg, 2048, os.urandom(MiB), 512))
    alloc = min(8 * MiB, carried(lun.disk))
    descs, res = get_lba_status(lun.sg, 0, alloc_len=alloc)
    expect_good(res)
    assert sum(nb for _, nb, _ in descs) == lun.nr_blocks
    assert descs[0][0] == 0
    reply = 8 + 16 * len(descs)
    if lun.fabric.name == "fc":
        # the initiator reports no residual: the rest reads as zeros
        assert res.data[reply:] == bytes(len(res.data) - reply)
    else:
        assert len(res.data) == reply


@pytest.mark.over_fabrics
def test_starting_lba_past_the_end_is_refused(lun):
    _, res = get_lba_status(lun.sg, lun.nr_blocks)
    expect_sense(res, ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)
