"""Every bad `control`/`enable` input is refused with its errno, and leaves
nothing behind: no device half-made, no file we created."""

import errno
import os

import pytest
from conftest import SCRATCH
from vaai import VaaiError, VaaiStorageObject

CORE = "/sys/kernel/config/target/core"


@pytest.fixture
def raw_dev():
    """An unconfigured vaai device directory in configfs."""
    hba = os.path.join(CORE, "vaai_900")
    dev = os.path.join(hba, "raw")
    os.makedirs(dev)
    yield dev
    os.rmdir(dev)
    os.rmdir(hba)


def write_errno(path, text):
    try:
        with open(path, "w") as f:
            f.write(text)
        return 0
    except OSError as e:
        return e.errno


def enable_errno(dev, control):
    err = write_errno(os.path.join(dev, "control"), control)
    return err or write_errno(os.path.join(dev, "enable"), "1")


@pytest.mark.parametrize(
    "control, err",
    [
        ("bogus=1", errno.EINVAL),
        ("path", errno.EINVAL),
        ("path=relative/file,size=1048576", errno.EINVAL),
        ("path=/x,size=100", errno.EINVAL),
        ("path=/x,size=12kb", errno.EINVAL),
        (f"path=/x,size={2**63}", errno.EFBIG),
        ("path=/x,readonly=2", errno.EINVAL),
        ("path=/x,online=yes", errno.EINVAL),
        ("path=/x,lbprz=2", errno.EINVAL),
        ("path=/x,unmap_unit=100", errno.EINVAL),
        ("path=/x,unmap_unit=lots", errno.EINVAL),
    ],
)
def test_bad_control_keys_and_values_are_refused(raw_dev, control, err):
    assert write_errno(os.path.join(raw_dev, "control"), control) == err


def test_enable_without_path_is_refused(raw_dev):
    assert write_errno(os.path.join(raw_dev, "enable"), "1") == errno.EINVAL


def test_missing_file_without_size_is_refused_and_not_created(raw_dev):
    path = os.path.join(SCRATCH, "absent.img")
    assert enable_errno(raw_dev, f"path={path}") == errno.ENOENT
    assert not os.path.exists(path)


def test_directory_is_refused(raw_dev):
    assert enable_errno(raw_dev, f"path={SCRATCH}") == errno.EISDIR


def test_char_device_is_refused(raw_dev):
    assert enable_errno(raw_dev, "path=/dev/null") == errno.EINVAL


def test_size_not_matching_an_existing_file_is_refused(raw_dev):
    path = os.path.join(SCRATCH, "existing.img")
    with open(path, "wb") as f:
        f.truncate(1 << 20)
    try:
        assert enable_errno(raw_dev, f"path={path},size={2 << 20}") == errno.EINVAL
        assert os.path.getsize(path) == 1 << 20
    finally:
        os.unlink(path)


def test_size_the_file_system_cannot_hold_is_refused_and_file_removed(raw_dev, small_fs):
    path = os.path.join(small_fs[1], "big.img")
    assert enable_errno(raw_dev, f"path={path},size={64 << 30}") == errno.EFBIG
    assert not os.path.exists(path)


def test_block_device_in_use_is_refused(raw_dev, small_fs):
    assert enable_errno(raw_dev, f"path={small_fs[0]}") == errno.EBUSY


def test_parameters_are_fixed_once_enabled(make_lun):
    lun = make_lun(size=1 << 20)
    ctl = os.path.join(lun.so.path, "control")
    assert write_errno(ctl, "readonly=1") == errno.EBUSY
    assert not lun.so.readonly


def test_python_layer_says_what_is_wrong_and_cleans_up():
    path = os.path.join(SCRATCH, "nothing-here.img")
    with pytest.raises(VaaiError, match="does not exist; give size="):
        VaaiStorageObject("pyerr", path=path)
    with pytest.raises(VaaiError, match="is a directory"):
        VaaiStorageObject("pyerr", path=SCRATCH)
    with pytest.raises(VaaiError, match="not a number of bytes"):
        VaaiStorageObject("pyerr", path=path, size="12 parsecs")
    assert not os.path.exists(path)
    assert not any(os.path.isdir(os.path.join(CORE, d, "pyerr")) for d in os.listdir(CORE))


@pytest.mark.parametrize(
    "control",
    ["path=/x,size=1048576,unmap_unit=4096", "path=/x,size=1048576,lbprz=1"],
)
def test_a_closed_stores_geometry_without_online_0_is_refused(raw_dev, control):
    """unmap_unit= and lbprz= say what a closed store will be: with the
    store opened at enable they would contradict it."""
    assert enable_errno(raw_dev, control) == errno.EINVAL


def test_online_0_needs_a_size(raw_dev):
    assert enable_errno(raw_dev, "path=/dev/vaai-absent,online=0") == errno.EINVAL


def test_opening_a_device_not_there_creates_nothing(raw_dev):
    """A closed LUN on a device node not there yet (DRBD not loaded): its
    online=1 fails and makes no file in the node's place."""
    path = os.path.join(SCRATCH, "absent-device")
    assert enable_errno(raw_dev, f"path={path},size=1048576,online=0") == 0
    try:
        assert write_errno(os.path.join(raw_dev, "control"), "online=1") == errno.ENOENT
        assert not os.path.exists(path)
        with open(path, "wb") as f:  # a file where a device was expected
            f.truncate(1 << 20)
        assert write_errno(os.path.join(raw_dev, "control"), "online=1") == errno.ENOTBLK
    finally:
        write_errno(os.path.join(raw_dev, "enable"), "0")
        if os.path.exists(path):
            os.unlink(path)
