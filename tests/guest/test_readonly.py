"""A read-only LUN serves its data and refuses every write."""

import os

from scsi import (
    DATA_PROTECT,
    cdb_sync_cache10,
    expect_good,
    expect_sense,
    read_blocks,
    sg_io,
    write_blocks,
)
from sense_codes import WRITE_PROTECTED


def test_readonly_lun_reads_existing_data(make_lun):
    data = os.urandom(64 * 1024)
    lun = make_lun(size=16 << 20, readonly=True, fill=data)
    assert lun.so.readonly
    assert expect_good(read_blocks(lun.sg, 0, 128, 512)).data == data


def test_readonly_lun_refuses_writes_with_write_protected(make_lun):
    data = os.urandom(8192)
    lun = make_lun(size=16 << 20, readonly=True, fill=data)
    for lba in (0, lun.last_lba):
        res = write_blocks(lun.sg, lba, os.urandom(512), 512)
        expect_sense(res, DATA_PROTECT, *WRITE_PROTECTED)
    assert expect_good(read_blocks(lun.sg, 0, 16, 512)).data == data
    expect_good(sg_io(lun.sg, cdb_sync_cache10()))
