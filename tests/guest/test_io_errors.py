"""Store failures become the sense the standard gives them, and what was
acknowledged before the failure stays readable."""
import os

import pytest

from conftest import MiB, sh
from scsi import (DATA_PROTECT, MEDIUM_ERROR, expect_good, expect_sense,
                  read_blocks, write_blocks)
from vaai import VaaiStorageObject
from vaai.export import export_loopback, find_disk, sg_of, unexport

SPACE_ALLOCATION_FAILED = (0x27, 0x07)
UNRECOVERED_READ_ERROR = (0x11, 0x00)
WRITE_ERROR = (0x0C, 0x00)


@pytest.fixture
def exported():
    made = []

    def export(name, path, size=None):
        so = VaaiStorageObject(name, path=path, size=size)
        made.append(so)
        export_loopback(so)
        return so, sg_of(find_disk(so, "tcm_loopback"))

    yield export
    for so in made:
        unexport(so)
        so.delete()


def test_full_file_system_answers_space_allocation_failed(small_fs, exported):
    so, sg = exported("enospc", os.path.join(small_fs[1], "thin.img"), 64 * MiB)
    written = {}
    for i in range(16):                       # 16 MiB into an 8 MiB file system
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


@pytest.fixture
def error_dev():
    """A device-mapper device whose every sector fails with EIO."""
    sh("dmsetup", "create", "vaai_err", "--table", "0 16384 error")
    yield "/dev/mapper/vaai_err"
    sh("dmsetup", "remove", "vaai_err")


def test_device_io_errors_answer_medium_error(error_dev, exported):
    so, sg = exported("eio", error_dev)
    expect_sense(read_blocks(sg, 0, 8, 512), MEDIUM_ERROR, *UNRECOVERED_READ_ERROR)
    expect_sense(write_blocks(sg, 8, os.urandom(4096), 512), MEDIUM_ERROR, *WRITE_ERROR)
