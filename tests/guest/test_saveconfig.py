"""vaai backstores survive rtslib-fb's save_to_file / restore_from_file."""

import json
import os

import pytest
from conftest import MiB
from loopdev import claimed
from rtslib_fb import RTSRoot
from scsi import clear_unit_attention, expect_good, read_blocks, write_blocks
from vaai import VaaiStorageObject
from vaai.export import find_disk, sg_of

import fabrics


@pytest.fixture(autouse=True)
def no_fabric_topologies():
    """The iSCSI and FC test topologies go first: this test wipes all of
    LIO's configuration; they are set up again when next needed."""
    fabrics.close_all()


def vaai_dumps(root):
    return sorted(
        (so.dump() for so in root.storage_objects if so.plugin == "vaai"), key=lambda d: d["name"]
    )


def test_save_wipe_restore_round_trip(make_lun, tmp_path, store):
    lun_a = make_lun(size=32 * MiB)
    lun_b = make_lun(size=16 * MiB, block_size=4096)
    lun_b.so.set_attribute("emulate_write_cache", "1")
    data = os.urandom(64 * 1024)
    expect_good(write_blocks(lun_a.sg, 100, data, 512))

    root = RTSRoot()
    saved = tmp_path / "saveconfig.json"
    root.save_to_file(str(saved))
    before = vaai_dumps(root)
    plugins = {so["plugin"] for so in json.loads(saved.read_text())["storage_objects"]}
    assert plugins == {"vaai"}

    root.clear_existing(confirm=True)
    assert not list(RTSRoot().storage_objects)
    assert os.path.exists(lun_a.backing.path), "wiping the config kept the data"

    errors = RTSRoot().restore_from_file(str(saved))
    assert not errors
    after = vaai_dumps(RTSRoot())
    assert after == before
    assert after[1]["attributes"]["block_size"] == 4096

    sg = sg_of(find_disk(VaaiStorageObject(lun_a.so.name)))
    clear_unit_attention(sg)  # the LUN is new to the initiator: 3Fh/03h
    assert expect_good(read_blocks(sg, 100, 128, 512)).data == data


@pytest.mark.stores("bdev")
def test_a_closed_store_is_restored_closed(make_lun, tmp_path):
    """A pair's Standby half on single-primary DRBD, saved: restored at
    boot, while DRBD is still secondary, it must not need to open the
    device (it could not), and comes back closed, as big and as thin."""
    lun = make_lun(size=16 * MiB)
    data = os.urandom(64 * 1024)
    expect_good(write_blocks(lun.sg, 100, data, 512))
    lun.so.set_online(False)
    root = RTSRoot()
    saved = tmp_path / "saveconfig.json"
    root.save_to_file(str(saved))
    before = vaai_dumps(root)
    assert before[0]["online"] is False

    root.clear_existing(confirm=True)
    assert not claimed(lun.backing.loop)
    errors = RTSRoot().restore_from_file(str(saved))
    assert not errors
    assert vaai_dumps(RTSRoot()) == before
    so = VaaiStorageObject(lun.so.name)
    assert not so.online and not claimed(lun.backing.loop)

    so.set_online(True)
    sg = sg_of(find_disk(so))
    clear_unit_attention(sg)
    assert expect_good(read_blocks(sg, 100, 128, 512)).data == data
