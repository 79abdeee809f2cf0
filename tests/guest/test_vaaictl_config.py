"""vaaictl save/restore (idempotent, finishing a partial configuration,
failing only the LUNs whose store is gone or shrank, taking a grown store
at its new size) and targetcli driving a vaai backstore."""

import json
import os
import re

import pytest
from conftest import INITIATOR, SCRATCH, sh
from ctl import refused, vaaictl
from rtslib_fb import ALUATargetPortGroup, FabricModule, RTSRoot, Target
from scsi import (
    clear_unit_attention,
    expect_good,
    last_lba,
    read_blocks,
    read_capacity16,
    write_blocks,
)
from vaai import VaaiStorageObject
from vaai.export import export_iscsi, find_disk, sg_of

import fabrics

IQN = "iqn.2026-11.org.vaai:ctl"
ESX = "iqn.1998-01.com.vmware:esx01-4c2f1b7e"


@pytest.fixture(autouse=True)
def clean_slate():
    """These tests wipe all of LIO's configuration: the shared iSCSI and FC
    topologies go first (they come back when next needed), and whatever a
    test leaves is wiped after it, backing files included."""
    fabrics.close_all()
    made = []
    yield made
    RTSRoot().clear_existing(confirm=True)
    for path in made:
        if os.path.exists(path):
            os.unlink(path)


def dump():
    """The running configuration, its lists in a fixed order (configfs lists
    directories in creation order, which a restore need not repeat)."""
    d = RTSRoot().dump()
    d["storage_objects"].sort(key=lambda so: (so["plugin"], so["name"]))
    d["targets"].sort(key=lambda t: t["wwn"])
    for t in d["targets"]:
        t["tpgs"].sort(key=lambda tpg: tpg["tag"])
        for tpg in t["tpgs"]:
            tpg["luns"].sort(key=lambda lun: lun["index"])
            tpg["portals"].sort(key=lambda p: (p["ip_address"], p["port"]))
            tpg["node_acls"].sort(key=lambda a: a["node_wwn"])
            for acl in tpg["node_acls"]:
                acl["mapped_luns"].sort(key=lambda m: m["index"])
    return d


def build(made):
    """Two backstores, one exported over iSCSI with an ACL and CHAP, its
    LUN 0 in an ALUA group of its own, the other over tcm_loop; 64 KiB of
    data written into the second."""
    for name in ("ds1", "ds2"):
        path = os.path.join(SCRATCH, name + ".img")
        made.append(path)
        vaaictl("create", name, path, "--size", "32M")
    vaaictl(
        "export",
        "ds1",
        "iscsi",
        "--iqn",
        IQN,
        "--ip",
        "127.0.0.1",
        "--initiator",
        ESX,
        "--chap",
        "esx01:s3cret-s3cret",
    )
    vaaictl(
        "export",
        "ds1",
        "iscsi",
        "--iqn",
        IQN,
        "--ip",
        "127.0.0.1",
        "--lun",
        "1",
        "--initiator",
        ESX,
        "--chap",
        "esx01:s3cret-s3cret",
    )
    vaaictl("export", "ds2", "loopback")
    group = ALUATargetPortGroup(VaaiStorageObject("ds1"), "site_a", tag=11)
    group.preferred = 1
    lun0 = next(
        lun
        for t in RTSRoot().targets
        if t.wwn == IQN
        for tpg in t.tpgs
        for lun in tpg.luns
        if lun.lun == 0
    )
    lun0.alua_tg_pt_gp_name = "site_a"
    data = os.urandom(64 * 1024)
    sg = sg_of(find_disk(VaaiStorageObject("ds2")))
    clear_unit_attention(sg)
    expect_good(write_blocks(sg, 100, data, 512))
    return data


def test_save_wipe_restore_twice(clean_slate, tmp_path):
    data = build(clean_slate)
    saved = str(tmp_path / "saveconfig.json")
    assert vaaictl("save", saved)[1] == f"saved to {saved}\n"
    before = dump()
    assert {so["name"] for so in json.load(open(saved))["storage_objects"]} == {"ds1", "ds2"}

    RTSRoot().clear_existing(confirm=True)
    assert dump()["storage_objects"] == []
    _, out, err = vaaictl("restore", saved)
    assert len(err.splitlines()) == 4, err
    assert out == f"restored 4 objects from {saved}\n"
    wwns = [t["wwn"] for t in json.load(open(saved))["targets"]]
    names = [so["name"] for so in json.load(open(saved))["storage_objects"]]
    assert err.splitlines() == [
        f"restoring 1/4: backstore vaai/{names[0]}",
        f"restoring 2/4: backstore vaai/{names[1]}",
        f"restoring 3/4: target {wwns[0]}",
        f"restoring 4/4: target {wwns[1]}",
    ]
    assert dump() == before
    tpg = next(t for t in RTSRoot().targets if t.wwn == IQN).tpgs
    acl = next(iter(next(iter(tpg)).node_acls))
    assert (acl.chap_userid, acl.chap_password) == ("esx01", "s3cret-s3cret")

    sg = sg_of(find_disk(VaaiStorageObject("ds2")))
    clear_unit_attention(sg)
    assert expect_good(read_blocks(sg, 100, 128, 512)).data == data

    _, out, err = vaaictl("restore", saved)
    assert out == f"{saved} is restored already; nothing to do\n" and err == ""
    assert dump() == before


def test_restore_finishes_a_partial_configuration(clean_slate, tmp_path):
    build(clean_slate)
    saved = str(tmp_path / "saveconfig.json")
    vaaictl("save", saved)
    before = dump()
    target = next(t for t in RTSRoot().targets if t.wwn == IQN)
    tpg = next(iter(target.tpgs))
    acl = next(iter(tpg.node_acls))
    next(m for m in acl.mapped_luns if m.mapped_lun == 1).delete()
    next(lun for lun in tpg.luns if lun.lun == 1).delete()
    loop_target = next(t for t in RTSRoot().targets if t.wwn != IQN)
    loop_target.delete()
    VaaiStorageObject("ds2").delete()
    assert dump() != before

    _, out, _ = vaaictl("restore", saved)
    assert out == f"restored 3 objects from {saved}\n"
    assert dump() == before


def test_restore_refuses_a_file_that_disagrees(clean_slate, tmp_path):
    build(clean_slate)
    saved = tmp_path / "saveconfig.json"
    vaaictl("save", saved)
    before = dump()
    config = json.loads(saved.read_text())
    next(so for so in config["storage_objects"] if so["name"] == "ds1")["path"] = (
        "/srv/elsewhere.img"
    )
    saved.write_text(json.dumps(config))
    refused(
        ["restore", saved],
        "vaai/ds1 is on {} here, /srv/elsewhere.img in the file".format(
            os.path.join(SCRATCH, "ds1.img")
        ),
    )
    assert dump() == before


def test_a_store_that_is_gone_fails_only_its_luns(clean_slate, tmp_path):
    data = build(clean_slate)
    saved = tmp_path / "saveconfig.json"
    vaaictl("save", saved)
    before = dump()
    RTSRoot().clear_existing(confirm=True)
    ds2 = os.path.join(SCRATCH, "ds2.img")
    os.rename(ds2, ds2 + ".away")
    rc, out, err = vaaictl("restore", saved, check=False)
    assert rc == 1 and out == ""
    loop_wwn = next(t["wwn"] for t in before["targets"] if t["fabric"] == "loopback")
    assert err.splitlines()[-1] == (
        f"vaaictl: error: {saved} is restored but for: vaai/ds2: {ds2} does not exist (a restore "
        "does not create a store: mount or attach what holds it, then restore "
        f"again); target {loop_wwn}: Could not find matching StorageObject for LUN 0"
    )
    assert not os.path.exists(ds2), "the restore made a store"
    now = dump()
    assert [so["name"] for so in now["storage_objects"]] == ["ds1"]
    assert [t for t in now["targets"] if t["wwn"] == IQN] == [
        t for t in before["targets"] if t["wwn"] == IQN
    ]

    os.rename(ds2 + ".away", ds2)  # the file system holding it is back
    _, out, _ = vaaictl("restore", saved)
    assert out == f"restored 2 objects from {saved}\n"
    assert dump() == before
    sg = sg_of(find_disk(VaaiStorageObject("ds2")))
    clear_unit_attention(sg)
    assert expect_good(read_blocks(sg, 100, 128, 512)).data == data


def test_a_grown_store_comes_back_at_its_new_size(clean_slate, tmp_path):
    data = build(clean_slate)
    saved = tmp_path / "saveconfig.json"
    vaaictl("save", saved)
    RTSRoot().clear_existing(confirm=True)
    os.truncate(os.path.join(SCRATCH, "ds2.img"), 48 << 20)
    vaaictl("restore", saved)
    so = VaaiStorageObject("ds2")
    assert so.size == 48 << 20
    sg = sg_of(find_disk(so))
    clear_unit_attention(sg)
    assert expect_good(read_blocks(sg, 100, 128, 512)).data == data
    assert last_lba(read_capacity16(sg)) == (48 << 20) // 512 - 1


def test_a_store_that_shrank_is_refused(clean_slate, tmp_path):
    build(clean_slate)
    saved = tmp_path / "saveconfig.json"
    vaaictl("save", saved)
    RTSRoot().clear_existing(confirm=True)
    ds2 = os.path.join(SCRATCH, "ds2.img")
    os.truncate(ds2, 16 << 20)
    rc, _, err = vaaictl("restore", saved, check=False)
    assert rc == 1
    assert (
        f"vaai/ds2: {ds2} holds {16 << 20} bytes, fewer than the {32 << 20} saved; "
        "a store that shrank is not restored"
    ) in err
    assert [so.name for so in RTSRoot().storage_objects] == ["ds1"]


def test_restore_under_a_logged_in_initiator_keeps_its_session(clean_slate, tmp_path):
    """An iSCSI session on a target the file has, with one LUN missing: the
    restore adds the LUN and the session goes on (same session, its disk
    still answering)."""
    sh(INITIATOR, "start")
    me = sh(INITIATOR, "name").strip()
    for name in ("ds1", "ds2"):
        path = os.path.join(SCRATCH, name + ".img")
        clean_slate.append(path)
        vaaictl("create", name, path, "--size", "16M")
    for lun, name in enumerate(("ds1", "ds2")):
        export_iscsi(VaaiStorageObject(name), IQN, initiators=[me], lun=lun)
    saved = str(tmp_path / "saveconfig.json")
    vaaictl("save", saved)
    before = dump()
    tpg = next(iter(Target(FabricModule("iscsi"), IQN, mode="lookup").tpgs))
    for acl in tpg.node_acls:
        next(m for m in acl.mapped_luns if m.mapped_lun == 1).delete()
    next(lun for lun in tpg.luns if lun.lun == 1).delete()
    sh(INITIATOR, "login", IQN)
    try:
        sessions = sorted(os.listdir("/sys/class/iscsi_session"))
        sg = sg_of(find_disk(VaaiStorageObject("ds1"), "iscsi_tcp", target=IQN))
        clear_unit_attention(sg)

        _, out, _ = vaaictl("restore", saved)
        assert out == f"restored 1 object from {saved}\n"
        assert dump() == before
        assert sorted(os.listdir("/sys/class/iscsi_session")) == sessions
        clear_unit_attention(sg)  # REPORTED LUNS DATA HAS CHANGED (SPC-4 5.14)
        expect_good(read_blocks(sg, 0, 8, 512))
    finally:
        sh(INITIATOR, "logout", IQN)


def test_restore_without_the_fabric_module_says_so(clean_slate, tmp_path):
    saved = tmp_path / "saveconfig.json"
    saved.write_text(
        json.dumps(
            {
                "storage_objects": [],
                "targets": [
                    {"wwn": "naa.20000025b500000f", "fabric": "no_such_fabric", "tpgs": []}
                ],
            }
        )
    )
    refused(["restore", saved], "needs the no_such_fabric fabric module")


def targetcli(home, *lines):
    """`vaaictl targetcli` with lines typed at its prompt, one process for
    them all (a Python start with targetcli's imports costs 8-50 s in the
    emulated guest): its output.  Its preferences live in home, and it does
    not save the configuration on exit, as it would by default."""
    home.mkdir(exist_ok=True)
    script = "\n".join(("set global auto_save_on_exit=false", *lines)) + "\n"
    _, out, err = vaaictl(
        "targetcli", env={"TARGETCLI_HOME": str(home)}, own_process=True, stdin=script
    )
    return out + err


def test_targetcli_creates_exports_and_saves_a_vaai_backstore(clean_slate, tmp_path):
    path = os.path.join(SCRATCH, "tc.img")
    clean_slate.append(path)
    home = tmp_path / "targetcli"
    out = targetcli(
        home,
        f"/backstores/vaai create tc1 {path} size=64M",
        "ls /backstores/vaai",
        "/loopback create naa.5001405aaaaaaaaa",
        "/loopback/naa.5001405aaaaaaaaa/luns create /backstores/vaai/tc1",
    )
    assert f"Created vaai tc1 on {path}" in out
    # ls' line for it: "o- tc1 ..... [PATH (64.0MiB) file activated]"
    assert re.search(rf"o- tc1 [. ]*\[{re.escape(path)} \(64\.0MiB\)", out), out
    assert VaaiStorageObject("tc1").get_attribute("emulate_3pc") == "1"
    sg = sg_of(find_disk(VaaiStorageObject("tc1")))
    clear_unit_attention(sg)
    data = os.urandom(4096)
    expect_good(write_blocks(sg, 8, data, 512))

    saved = str(tmp_path / "tc.json")
    before = dump()
    targetcli(home, f"saveconfig {saved}", "clearconfig confirm=True")
    with open(saved) as f:
        sos = json.load(f)["storage_objects"]
    assert [(so["plugin"], so["name"], so["path"]) for so in sos] == [("vaai", "tc1", path)]
    assert dump()["storage_objects"] == []

    out = targetcli(home, f"restoreconfig {saved}", f"/backstores/vaai create tc1 {path}")
    assert dump() == before
    assert "backstore vaai/tc1 exists already" in out
    sg = sg_of(find_disk(VaaiStorageObject("tc1")))
    clear_unit_attention(sg)
    assert expect_good(read_blocks(sg, 8, 8, 512)).data == data
    assert [so.name for so in RTSRoot().storage_objects] == ["tc1"]
