"""The device under a LUN fails while the LUN is in use, and is mended.

While it fails, every primitive answers with the sense of what failed
(MEDIUM ERROR for the blocks, COPY ABORTED for a copy) and nothing hangs;
afterwards every write that was acknowledged as durable reads back: with
the write cache off every write that returned GOOD, with it on every FUA
write and every write before a SYNCHRONIZE CACHE that returned GOOD.

The block-device store sits on FaultDev directly; the file store in a file
on XFS on a FaultDev, which is unmounted after the fault and mounted again
(log recovery) before the backing file is read, so that what comes back is
what reached the device, not what stayed in the page cache."""

import os
import subprocess
import time

import pytest
from conftest import MiB, sh, unload_and_reload
from faultdev import FaultDev
from scsi import (
    COPY_ABORTED,
    MEDIUM_ERROR,
    cdb_sync_cache10,
    cdb_write_same16,
    compare_and_write,
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
from sense_codes import THIRD_PARTY_DEVICE_FAILURE, UNRECOVERED_READ_ERROR, WRITE_ERROR
from vaai.export import unexport

BS = 512


@pytest.fixture
def fault_dev():
    dev = FaultDev("rec", 320 * MiB)  # mkfs.xfs wants 300 MB
    yield dev
    dev.remove()


def acknowledge(sg, write_cache):
    """Write 1 MiB in 64 KiB pieces, as durable as the write cache allows:
    {lba: data} of what was acknowledged as durable."""
    acked, pending = {}, {}
    for i in range(16):
        lba, data = i * 128, os.urandom(64 * 1024)
        fua = write_cache and i % 2 == 0
        expect_good(write_blocks(sg, lba, data, BS, fua=fua))
        (pending if write_cache and not fua else acked)[lba] = data
    if write_cache:
        expect_good(sg_io(sg, cdb_sync_cache10()))
        acked.update(pending)
    return acked


def every_primitive_fails(sg, write_cache=False):
    """While the device fails: the sense for each primitive (a write with
    FUA where the write cache is on: it must reach the device; off, every
    write does, and FUA is refused)."""
    expect_sense(read_blocks(sg, 0, 8, BS), MEDIUM_ERROR, *UNRECOVERED_READ_ERROR)
    expect_sense(
        write_blocks(sg, 8, os.urandom(4096), BS, fua=write_cache), MEDIUM_ERROR, *WRITE_ERROR
    )
    expect_sense(
        sg_io(sg, cdb_write_same16(0, 2048), data_out=b"\xa5" * BS), MEDIUM_ERROR, *WRITE_ERROR
    )
    expect_sense(
        compare_and_write(sg, 0, bytes(BS), bytes(BS), BS), MEDIUM_ERROR, *UNRECOVERED_READ_ERROR
    )
    naa = naa_of(sg)
    params = xcopy_list(
        [cscd_e4(naa, BS)], [seg_b2b(0, 0, 0, 0, 4096), seg_b2b(0, 0, 128, 0, 4096)]
    )
    s = expect_sense(xcopy(sg, params), COPY_ABORTED, *THIRD_PARTY_DEVICE_FAILURE)
    assert s.csi == 1  # the first, empty segment completed


@pytest.mark.parametrize("write_cache", [False, True], ids=["wc-off", "wc-on"])
def test_bdev_acknowledged_writes_survive_a_failing_device(fault_dev, exported, write_cache):
    _so, sg = exported("recbd", fault_dev.path, write_cache=write_cache)
    acked = acknowledge(sg, write_cache)
    fault_dev.fail()
    every_primitive_fails(sg, write_cache)
    fault_dev.mend()
    for lba, data in acked.items():
        assert expect_good(read_blocks(sg, lba, len(data) // BS, BS)).data == data


@pytest.fixture
def xfs_on_fault_dev(fault_dev, tmp_path):
    sh("mkfs.xfs", "-q", "-f", fault_dev.path)
    mnt = str(tmp_path / "mnt")
    os.mkdir(mnt)
    sh("mount", fault_dev.path, mnt)
    yield fault_dev, mnt
    sh("umount", mnt, check=False)


@pytest.mark.parametrize("write_cache", [False, True], ids=["wc-off", "wc-on"])
def test_file_acknowledged_writes_survive_a_failing_device(xfs_on_fault_dev, exported, write_cache):
    dev, mnt = xfs_on_fault_dev
    image = os.path.join(mnt, "lun.img")
    so, sg = exported("recfile", image, size=64 * MiB, write_cache=write_cache)
    acked = acknowledge(sg, write_cache)
    dev.fail()
    res = write_blocks(sg, 8, os.urandom(4096), BS)
    if write_cache and res.status == 0:
        # it stayed in the page cache: the flush cannot take it further
        expect_sense(sg_io(sg, cdb_sync_cache10()), MEDIUM_ERROR, *WRITE_ERROR)
    else:
        expect_sense(res, MEDIUM_ERROR, *WRITE_ERROR)
    unexport(so)  # the LUN goes with its store failing: no hang
    so.delete()
    sh("umount", mnt)
    dev.mend()
    sh("mount", dev.path, mnt)  # replays the log of what reached the device
    with open(image, "rb") as f:
        for lba, data in acked.items():
            f.seek(lba * BS)
            assert f.read(len(data)) == data, f"acknowledged write at LBA {lba} lost"


def test_device_that_disappears_fails_commands_and_lets_the_lun_go(fault_dev, exported):
    so, sg = exported("gone", fault_dev.path)
    expect_good(write_blocks(sg, 0, os.urandom(4096), BS))
    # What a pulled disk looks like from above: dm swaps in the error
    # target and removes the device once the last opener lets go.
    sh("dmsetup", "remove", "--force", "--deferred", fault_dev.name)
    every_primitive_fails(sg)
    unexport(so)
    so.delete()
    # the LUN let go of it: device-mapper has removed it
    for _ in range(50):
        if subprocess.run(
            ["dmsetup", "info", fault_dev.name], capture_output=True, check=False
        ).returncode:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"{fault_dev.name} still there after the LUN went")


def test_module_unloads_after_device_faults():
    unload_and_reload()
