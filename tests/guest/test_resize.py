"""vaaictl resize: a store grown under a live LUN (a file extended, a block
device grown) changes READ CAPACITY and raises CAPACITY DATA HAS CHANGED
on every I_T nexus (SBC-4 4.6); shrinking is refused and changes nothing."""

import os

import pytest
from conftest import MiB, fill, read, sh, udev_probed
from ctl import refused, vaaictl
from scsi import (
    UNIT_ATTENTION,
    clear_unit_attention,
    expect_good,
    expect_sense,
    last_lba,
    read_capacity16,
    sg_io,
)
from sense_codes import CAPACITY_DATA_HAS_CHANGED


def set_store_size(lun, size):
    """Change the store's size behind the LUN, as lvextend or truncate do."""
    os.truncate(lun.backing.image, size)
    if lun.backing.loop:
        sh("losetup", "--set-capacity", lun.backing.loop)


def tur(sg):
    return sg_io(sg, bytes(6))


def quiet(sg):
    """No command of udev's probe is left to take the unit attention (or
    to read past a store that shrank)."""
    block = os.listdir(f"/sys/class/scsi_generic/{os.path.basename(sg)}/device/block")
    udev_probed("/dev/" + block[0])


def test_growing_the_store_tells_every_nexus(make_lun, over_iscsi, store):
    lun = make_lun(size=64 * MiB)
    old_last = lun.last_lba
    data = fill(lun, old_last - 7, 8)
    second = over_iscsi(lun)
    clear_unit_attention(second)  # the new nexus's own, from LIO core
    quiet(lun.sg)
    quiet(second)

    if store == "file":
        _, out, _ = vaaictl("resize", lun.so.name, "96M")
    else:
        set_store_size(lun, 96 * MiB)
        _, out, _ = vaaictl("resize", lun.so.name)
    assert out == (
        f"vaai/{lun.so.name}: {64 * MiB} -> {96 * MiB} bytes; the hosts are told "
        "(CAPACITY DATA HAS CHANGED)\n"
    )

    for sg in (lun.sg, second):
        expect_sense(tur(sg), UNIT_ATTENTION, *CAPACITY_DATA_HAS_CHANGED)
        expect_good(tur(sg))
        assert last_lba(read_capacity16(sg)) == 96 * MiB // 512 - 1
    assert read(lun, old_last - 7, 8) == data
    lun.nr_blocks = 96 * MiB // 512
    data = fill(lun, lun.last_lba - 7, 8)
    assert read(lun, lun.last_lba - 7, 8) == data


def test_the_same_size_changes_nothing(lun):
    quiet(lun.sg)
    _, out, _ = vaaictl("resize", lun.so.name)
    assert out == f"vaai/{lun.so.name}: {64 * MiB} bytes, unchanged\n"
    expect_good(tur(lun.sg))


@pytest.mark.stores("file")
def test_a_smaller_size_is_refused(lun):
    refused(["resize", lun.so.name, "32M"], "a live LUN does not shrink")
    expect_good(tur(lun.sg))
    assert last_lba(read_capacity16(lun.sg)) == lun.last_lba
    assert os.path.getsize(lun.backing.path) == 64 * MiB


def test_a_store_that_shrank_is_refused(lun):
    quiet(lun.sg)
    set_store_size(lun, 32 * MiB)
    refused(
        ["resize", lun.so.name],
        f"now holds {32 * MiB} bytes, fewer than the LUN's {64 * MiB}; a live LUN does not shrink",
    )
    expect_good(tur(lun.sg))
    assert last_lba(read_capacity16(lun.sg)) == lun.last_lba


@pytest.mark.stores("bdev")
def test_a_block_device_is_grown_by_its_own_tools(lun):
    refused(["resize", lun.so.name, "128M"], "grow the device (lvextend")
    expect_good(tur(lun.sg))
