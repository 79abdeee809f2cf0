"""Host-side tests of the attribute profiles applied on create."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from vaai.errors import VaaiError
from vaai.profiles import attributes, device_nonrot, is_nonrot


def fake_sysfs(tmp_path, dev, rotational, partition=False):
    """A /sys/dev/block/MAJ:MIN link to a device directory with a queue."""
    disk = tmp_path / "devices" / "sda"
    node = disk / "sda1" if partition else disk
    (disk / "queue").mkdir(parents=True)
    (disk / "queue" / "rotational").write_text(f"{rotational}\n")
    node.mkdir(exist_ok=True)
    (tmp_path / "dev" / "block").mkdir(parents=True)
    major, minor = dev
    os.symlink(str(node), str(tmp_path / "dev" / "block" / f"{major}:{minor}"))
    return str(tmp_path)


@pytest.mark.parametrize(
    "rotational, partition, want", [(1, False, 0), (0, False, 1), (1, True, 0), (0, True, 1)]
)
def test_device_nonrot_reads_the_queue_of_the_disk(tmp_path, rotational, partition, want):
    sysfs = fake_sysfs(tmp_path, (8, 1), rotational, partition)
    assert device_nonrot(8, 1, sysfs) == want


def test_device_without_a_queue_counts_as_rotating(tmp_path):
    assert device_nonrot(8, 1, str(tmp_path)) == 0


def test_ram_file_systems_have_no_device_and_count_as_non_rotational(tmp_path):
    assert device_nonrot(0, 51, str(tmp_path)) == 1


def test_is_nonrot_goes_by_the_file_system_device(tmp_path):
    f = tmp_path / "store.img"
    f.write_bytes(b"")
    st = os.stat(str(f))
    assert is_nonrot(str(f)) == device_nonrot(os.major(st.st_dev), os.minor(st.st_dev))


def test_esxi_profile_turns_on_the_primitives(tmp_path):
    attrs = attributes("esxi", "/dev/shm", can_unmap=True)
    assert attrs["block_size"] == 512
    assert attrs["emulate_caw"] == 1 and attrs["emulate_3pc"] == 1
    assert attrs["emulate_tpu"] == 1 and attrs["emulate_tpws"] == 1
    assert attrs["is_nonrot"] in (0, 1)


def test_esxi_profile_leaves_unmap_off_where_the_store_cannot():
    attrs = attributes("esxi", "/dev/shm", can_unmap=False)
    assert "emulate_tpu" not in attrs and "emulate_tpws" not in attrs


def test_plain_profile_is_lio_defaults_with_thin_provisioning_off():
    assert attributes("plain", "/dev/shm") == {"emulate_tpu": 0, "emulate_tpws": 0}
    assert attributes("plain", "/dev/shm", block_size=4096)["block_size"] == 4096


def test_block_size_override_and_refusals():
    assert attributes("esxi", "/dev/shm", block_size="4096")["block_size"] == 4096
    with pytest.raises(VaaiError, match="use 512 or 4096"):
        attributes("esxi", "/dev/shm", block_size=1024)
    with pytest.raises(VaaiError, match="unknown profile 'vmware'"):
        attributes("vmware", "/dev/shm")


def test_iscsi_tpg_profiles():
    from vaai.profiles import iscsi_tpg

    params, attrs = iscsi_tpg("esxi")
    assert params["FirstBurstLength"] == "262144" and params["InitialR2T"] == "No"
    assert attrs == {"default_cmdsn_depth": "128"}
    assert iscsi_tpg("plain") == ({}, {})
    params["InitialR2T"] = "Yes"  # a copy: the table is unchanged
    assert iscsi_tpg("esxi")[0]["InitialR2T"] == "No"
    with pytest.raises(VaaiError):
        iscsi_tpg("vmware")
