"""Store failures become the sense the standard gives them, and what was
acknowledged before the failure stays readable."""

import os

import pytest
from conftest import MiB, sh
from scsi import (
    DATA_PROTECT,
    MEDIUM_ERROR,
    cdb_write_same16,
    cscd_e4,
    expect_good,
    expect_sense,
    naa_of,
    read_blocks,
    seg_b2b,
    sg_io,
    write_blocks,
    xcopy,
    xcopy_list,
)
from sense_codes import SPACE_ALLOCATION_FAILED, UNRECOVERED_READ_ERROR, WRITE_ERROR


def test_full_file_system_answers_space_allocation_failed(small_fs, exported):
    _so, sg = exported("enospc", os.path.join(small_fs[1], "thin.img"), 64 * MiB)
    written = {}
    for i in range(16):  # 16 MiB into an 8 MiB file system
        data = os.urandom(MiB)
        res = write_blocks(sg, i * 2048, data, 512)
        if res.status:
            expect_sense(res, DATA_PROTECT, *SPACE_ALLOCATION_FAILED)
            break
        written[i] = data
    else:
        pytest.fail("16 MiB fitted into an 8 MiB file system")
    assert written, "not even the first MiB was written"
    for i, data in written.items():
        assert expect_good(read_blocks(sg, i * 2048, 2048, 512)).data == data


def test_write_same_filling_the_file_system_answers_space_allocation_failed(small_fs, exported):
    _so, sg = exported("wsfull", os.path.join(small_fs[1], "thin.img"), 64 * MiB)
    kept = os.urandom(MiB)
    expect_good(write_blocks(sg, 0, kept, 512))
    # 16 MiB of a pattern (zeros would deallocate) into what is left of 8 MiB
    res = sg_io(sg, cdb_write_same16(4096, 32768), data_out=b"\xa5" * 512)
    expect_sense(res, DATA_PROTECT, *SPACE_ALLOCATION_FAILED)
    assert expect_good(read_blocks(sg, 0, 2048, 512)).data == kept


def test_copy_filling_the_file_system_answers_space_allocation_failed(small_fs, exported):
    """Splice and bounce copies allocate the destination (ext2 cannot share
    extents); when it fills, the copy answers what a write would."""
    _so, sg = exported("xcfull", os.path.join(small_fs[1], "thin.img"), 64 * MiB)
    kept = os.urandom(4 * MiB)
    for i in range(4):
        expect_good(write_blocks(sg, i * 2048, kept[i * MiB : (i + 1) * MiB], 512))
    naa = naa_of(sg)
    segs = [seg_b2b(0, 0, 8192, 0, 8192 * (i + 1)) for i in range(3)]  # 12 MiB
    res = xcopy(sg, xcopy_list([cscd_e4(naa, 512)], segs))
    expect_sense(res, DATA_PROTECT, *SPACE_ALLOCATION_FAILED)
    assert expect_good(read_blocks(sg, 0, 8192, 512)).data == kept


@pytest.fixture
def error_dev():
    """A device-mapper device whose every sector fails with EIO."""
    sh("dmsetup", "create", "vaai_err", "--table", "0 16384 error")
    yield "/dev/mapper/vaai_err"
    sh("dmsetup", "remove", "vaai_err")


def test_device_io_errors_answer_medium_error(error_dev, exported):
    _so, sg = exported("eio", error_dev)
    expect_sense(read_blocks(sg, 0, 8, 512), MEDIUM_ERROR, *UNRECOVERED_READ_ERROR)
    expect_sense(write_blocks(sg, 8, os.urandom(4096), 512), MEDIUM_ERROR, *WRITE_ERROR)
