"""closed_store(): what the module will read of a block device when it
opens it, read from sysfs without opening it (DRBD's secondary refuses
every open), so that a LUN enabled with its store closed reports the
capacity, Block Limits and provisioning it will have once opened."""

import os
import stat
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from vaai.errors import VaaiError
from vaai.storage import closed_store

DEV = (147, 0)  # DRBD's major


def device(tmp_path, queue, sectors=2048):
    """A block device node for DEV and a sysfs whose queue says queue."""
    node = tmp_path / "devices" / "drbd0"
    (node / "queue").mkdir(parents=True)
    (node / "size").write_text(f"{sectors}\n")
    for name, value in queue.items():
        (node / "queue" / name).write_text(f"{value}\n")
    (tmp_path / "dev" / "block").mkdir(parents=True)
    os.symlink(str(node), str(tmp_path / "dev" / "block" / "{}:{}".format(*DEV)))
    path = tmp_path / "drbd0"
    # a block device node (as root, as the suite runs): the device itself
    # is never opened, only stat()ed
    os.mknod(path, 0o600 | stat.S_IFBLK, os.makedev(*DEV))
    return str(path), str(tmp_path)


def test_a_device_that_zeroes_is_thin_with_lbprz(tmp_path):
    path, sysfs = device(
        tmp_path,
        {
            "logical_block_size": 512,
            "discard_granularity": 4096,
            "discard_max_bytes": 1 << 30,
            "write_zeroes_max_bytes": 1 << 20,
        },
    )
    assert closed_store(path, sysfs) == (1 << 20, 4096, True, 512)


def test_a_device_that_only_discards_is_thin_without_lbprz(tmp_path):
    path, sysfs = device(
        tmp_path,
        {
            "logical_block_size": 4096,
            "discard_granularity": 512,
            "discard_max_bytes": 1 << 30,
            "write_zeroes_max_bytes": 0,
        },
    )
    assert closed_store(path, sysfs) == (1 << 20, 4096, False, 4096)


def test_a_device_that_cannot_deallocate_is_thick(tmp_path):
    path, sysfs = device(
        tmp_path,
        {"logical_block_size": 512, "discard_max_bytes": 0, "write_zeroes_max_bytes": 0},
    )
    assert closed_store(path, sysfs) == (1 << 20, 0, False, 512)


def test_a_file_is_not_closed(tmp_path):
    f = tmp_path / "lun.img"
    f.write_bytes(b"")
    with pytest.raises(VaaiError, match="not a block device"):
        closed_store(str(f), str(tmp_path))
