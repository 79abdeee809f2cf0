"""A file store on a file system whose fallocate() refuses to punch holes
(vfat here; ntfs3, NFS before 4.2 and some FUSE file systems alike): the
LUN is fully provisioned, UNMAP is not offered, and zeroing WRITE SAME
writes zeros instead of answering a medium error."""

import os
import subprocess

import pytest
from conftest import SCRATCH, MiB, sh
from rtslib_fb.utils import RTSLibError
from scsi import (
    ILLEGAL_REQUEST,
    cdb_unmap,
    cdb_write_same16,
    expect_good,
    expect_sense,
    read_blocks,
    sg_io,
    unmap_list,
    write_blocks,
)
from sense_codes import INVALID_COMMAND_OPERATION_CODE, INVALID_FIELD_IN_CDB
from test_thin_vpd import field

SIZE = 16 * MiB
BS = 512


@pytest.fixture
def vfat(tmp_path):
    image = os.path.join(SCRATCH, "vfat.img")
    with open(image, "wb") as f:
        f.truncate(64 * MiB)
    sh("mkfs.vfat", image)
    loop = sh("losetup", "--find", "--show", image).strip()
    mnt = tmp_path / "vfat"
    mnt.mkdir()
    sh("mount", "-t", "vfat", loop, str(mnt))
    yield str(mnt)
    subprocess.run(["umount", str(mnt)], check=False)
    sh("losetup", "-d", loop)
    os.unlink(image)


@pytest.fixture
def lun(vfat, exported):
    path = os.path.join(vfat, "lun.img")
    so, sg = exported("nopunch", path, size=SIZE)
    return path, so, sg


def test_fully_provisioned(lun):
    path, so, sg = lun
    assert "lbpme=0" in sh("sg_readcap", "-l", sg)
    out = sh("sg_vpd", "-p", "lbpv", sg)
    assert field(out, "LBPU") == 0 and field(out, "LBPWS") == 0
    assert field(out, "LBPWS10") == 0
    # the probe punched past the end and kept the size
    assert os.path.getsize(path) == SIZE
    # and UNMAP cannot be turned on where it would fail
    with pytest.raises(RTSLibError):
        so.set_attribute("emulate_tpu", 1)
    assert so.get_attribute("emulate_tpu") == "0"


def test_unmap_is_not_supported(lun):
    _, _, sg = lun
    data = os.urandom(8 * BS)
    expect_good(write_blocks(sg, 100, data, BS))
    res = sg_io(sg, cdb_unmap(24), data_out=unmap_list([(100, 8)]))
    expect_sense(res, ILLEGAL_REQUEST, *INVALID_COMMAND_OPERATION_CODE)
    assert expect_good(read_blocks(sg, 100, 8, BS)).data == data


def test_write_same_zeroes_by_writing(lun):
    path, _, sg = lun
    data = os.urandom(MiB)
    expect_good(write_blocks(sg, 0, data, BS))
    expect_good(sg_io(sg, cdb_write_same16(8, 1024), data_out=bytes(BS)))
    assert (
        expect_good(read_blocks(sg, 0, 2048, BS)).data
        == data[: 8 * BS] + bytes(1024 * BS) + data[1032 * BS :]
    )
    with open(path, "rb") as f:
        f.seek(8 * BS)
        assert f.read(1024 * BS) == bytes(1024 * BS)


def test_write_same_unmap_bit_refused(lun):
    _, _, sg = lun
    data = os.urandom(16 * BS)
    expect_good(write_blocks(sg, 0, data, BS))
    res = sg_io(sg, cdb_write_same16(0, 16, unmap=True), data_out=bytes(BS))
    expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)
    assert expect_good(read_blocks(sg, 0, 16, BS)).data == data
