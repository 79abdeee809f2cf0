"""The stock LIO tools (targetcli, targetctl, Debian's restore service) on a
mixed configuration with vaai LUNs, through the rtslib hook
(vaai-rtslib.pth; tests/vm/guest-env.sh puts it in the user site): every
LUN, mapping and byte present before is present after.  Without the vaai
package the hook's guard stops them before they change anything."""

import json
import os
import re
import shlex
import subprocess

import pytest
from conftest import SCRATCH, MiB, sh
from rtslib_fb import (
    LUN,
    TPG,
    ALUATargetPortGroup,
    BlockStorageObject,
    FabricModule,
    FileIOStorageObject,
    MappedLUN,
    NetworkPortal,
    NodeACL,
    RDMCPStorageObject,
    RTSRoot,
    Target,
)
from rtslib_fb.tcm import bs_cache
from scsi import clear_unit_attention, expect_good, read_blocks, write_blocks
from vaai import VaaiStorageObject
from vaai.export import find_disk, sg_of

import fabrics

STOCK_UNIT = "/lib/systemd/system/rtslib-fb-targetctl.service"
STOCK_SAVE = "/etc/rtslib-fb-target/saveconfig.json"
IQN_A = "iqn.2026-11.org.vaai:stock-a"
IQN_B = "iqn.2026-11.org.vaai:stock-b"
HOST_1 = "iqn.1998-01.com.vmware:esxi01-0a1b2c3d"
HOST_2 = "iqn.1991-05.com.microsoft:hyperv02"
DATA_LBA = 64


@pytest.fixture(autouse=True)
def no_fabric_topologies():
    """These tests clear all of LIO's configuration: the suite's iSCSI and
    FC topologies go first and are set up again when next needed."""
    fabrics.close_all()


def stock(*argv, vaai=True, check=True, env=None, stdin=None):
    """A stock tool in a process of its own: (exit status, stdout, stderr).
    vaai=False: the vaai package cannot be imported there (the hook stays);
    env: variables to set; stdin: its standard input."""
    env = dict(os.environ, **(env or {}))
    if not vaai:
        env.pop("PYTHONPATH", None)
    p = subprocess.run(argv, capture_output=True, text=True, env=env, input=stdin, check=False)
    bs_cache.clear()  # rtslib's cache of where backstores are
    if check and p.returncode:
        raise AssertionError(f"{' '.join(argv)}: exit {p.returncode}: {p.stdout}{p.stderr}")
    return p.returncode, p.stdout, p.stderr


def running():
    """The running configuration as targetctl saves it, lists in a
    canonical order so two dumps compare equal when configfs matches."""
    bs_cache.clear()
    return _canonical(RTSRoot().dump())


def _canonical(node):
    if isinstance(node, dict):
        return {k: _canonical(v) for k, v in node.items()}
    if isinstance(node, list):
        return sorted((_canonical(v) for v in node), key=lambda v: json.dumps(v, sort_keys=True))
    return node


class Mixed:
    """vaai (file and block device), fileio, block and ramdisk backstores;
    a loopback target with the vaai and fileio LUNs (data written through
    them); two iSCSI targets with portals, ACLs, CHAP, mapped LUNs (one
    read-only); an ALUA group holding the vaai LUN."""

    def __init__(self):
        self.files = []
        self.loops = []
        self.vaai = VaaiStorageObject("mix_vaai", self._file("mix_vaai.img"), 32 * MiB)
        self.vaai_bdev = VaaiStorageObject("mix_vaai_bdev", self._loop("mix_vb.img"))
        self.fileio = FileIOStorageObject("mix_fileio", self._file("mix_fileio.img"), 16 * MiB)
        self.block = BlockStorageObject("mix_block", self._loop("mix_block.img"))
        self.ram = RDMCPStorageObject("mix_ram", 8 * MiB)
        group = ALUATargetPortGroup(self.vaai, "ao_group", tag=7)
        group.preferred = 1

        loop = Target(FabricModule("loopback"))
        tpg = TPG(loop, 1)
        self.loop_luns = [LUN(tpg, 0, self.vaai), LUN(tpg, 1, self.fileio)]
        self.loop_luns[0].alua_tg_pt_gp_name = "ao_group"

        a = TPG(Target(FabricModule("iscsi"), IQN_A), 1)
        NetworkPortal(a, "127.0.0.1", 3260)
        a_luns = [LUN(a, 0, self.vaai), LUN(a, 1, self.vaai_bdev), LUN(a, 2, self.block)]
        acl = NodeACL(a, HOST_1)
        acl.chap_userid, acl.chap_password = "esxi01", "s3cret-esxi01"
        for i, lun in enumerate(a_luns):
            MappedLUN(acl, i, lun)
        acl2 = NodeACL(a, HOST_2)
        MappedLUN(acl2, 0, a_luns[2], write_protect=True)
        a.set_attribute("authentication", "1")
        a.enable = True

        b = TPG(Target(FabricModule("iscsi"), IQN_B), 1)
        NetworkPortal(b, "127.0.0.1", 3261)
        LUN(b, 0, self.ram)
        LUN(b, 3, self.fileio)
        b.set_attribute("generate_node_acls", "1")
        b.set_attribute("demo_mode_write_protect", "0")
        b.set_attribute("authentication", "0")
        b.enable = True

        self.data = {}
        for so in (self.vaai, self.fileio):
            self.data[so.name] = os.urandom(64 * 512)
            sg = sg_of(find_disk(so, "tcm_loopback"))
            clear_unit_attention(sg)
            expect_good(write_blocks(sg, DATA_LBA, self.data[so.name], 512))

    def _file(self, name):
        path = os.path.join(SCRATCH, name)
        self.files.append(path)
        return path

    def _loop(self, name):
        path = self._file(name)
        with open(path, "wb") as f:
            f.truncate(16 * MiB)
        dev = sh("losetup", "--find", "--show", path).strip()
        self.loops.append(dev)
        return dev

    def assert_serving(self, names=("mix_vaai", "mix_fileio")):
        """The data written before reads back through the loopback LUNs."""
        classes = {"mix_vaai": VaaiStorageObject, "mix_fileio": FileIOStorageObject}
        for name, cls in ((n, classes[n]) for n in names):
            sg = sg_of(find_disk(cls(name), "tcm_loopback"))
            clear_unit_attention(sg)
            got = expect_good(read_blocks(sg, DATA_LBA, 64, 512)).data
            assert got == self.data[name], f"{name}: data differs after the restore"

    def remove(self):
        RTSRoot().clear_existing(confirm=True)
        for dev in self.loops:
            sh("losetup", "-d", dev)
        for path in self.files:
            if os.path.exists(path):
                os.unlink(path)


@pytest.fixture
def mixed():
    m = Mixed()
    yield m
    m.remove()


def test_plain_targetcli_lists_every_backstore(mixed):
    _, out, err = stock("targetcli", "ls")
    assert err == ""
    vaai = re.search(r"o- vaai \.+ \[Storage Objects: 2\]", out)
    assert vaai, out
    assert re.search(
        rf"o- mix_vaai \.+ \[{re.escape(mixed.vaai.path_name)} \(32\.0MiB\) file activated\]", out
    ), out
    for name in ("mix_vaai_bdev", "mix_fileio", "mix_block", "mix_ram", IQN_A, IQN_B):
        assert f"o- {name} " in out, name


def test_plain_targetcli_creates_and_deletes_a_vaai_backstore(mixed, tmp_path):
    """The commands typed at targetcli's prompt (one Python start, seconds
    in the emulated guest), its preferences in tmp_path, no save on exit."""
    path = os.path.join(SCRATCH, "tcli.img")
    try:
        _, out, err = stock(
            "targetcli",
            env={"TARGETCLI_HOME": str(tmp_path)},
            stdin=f"set global auto_save_on_exit=false\n"
            f"/backstores/vaai create tcli {path} 16M\n"
            "ls /backstores/vaai\n"
            "/backstores/vaai delete tcli\n",
        )
        assert f"Created vaai tcli on {path}" in out, out + err
        assert re.search(rf"o- tcli \.+ \[{re.escape(path)} \(16\.0MiB\) file deactivated\]", out)
        assert "Deleted storage object tcli." in out, out + err
        assert "tcli" not in {so.name for so in RTSRoot().storage_objects}
    finally:
        if os.path.exists(path):
            os.unlink(path)


def test_targetctl_save_clear_restore_round_trips(mixed, tmp_path):
    saved = str(tmp_path / "saveconfig.json")
    before = running()
    stock("targetctl", "save", saved)
    plugins = {so["plugin"] for so in json.load(open(saved))["storage_objects"]}
    assert plugins == {"vaai", "fileio", "block", "ramdisk"}

    stock("targetctl", "clear")
    assert running() == {
        "storage_objects": [],
        "targets": [],
        "fabric_modules": before["fabric_modules"],
    }
    assert all(os.path.exists(f) for f in mixed.files), "clearing kept the data"

    _, out, err = stock("targetctl", "restore", saved)
    assert (out, err) == ("", "")
    assert running() == before
    mixed.assert_serving()


@pytest.fixture
def cleared(mixed, tmp_path):
    """The mixed configuration saved with targetctl, then cleared with it:
    (the saved file, the configuration before)."""
    saved = str(tmp_path / "saveconfig.json")
    stock("targetctl", "save", saved)
    before = running()
    stock("targetctl", "clear")
    return saved, before


def test_targetctl_restore_without_a_store_restores_the_rest(mixed, cleared):
    saved, before = cleared
    away = mixed.files[0] + ".away"
    os.rename(mixed.files[0], away)
    try:
        _, _, err = stock("targetctl", "restore", saved)
    finally:
        os.rename(away, mixed.files[0])
    assert f"vaai/mix_vaai: {mixed.files[0]} does not exist" in err
    assert not any(
        "does not exist" in line for line in err.splitlines() if "mix_vaai:" not in line
    ), err
    now = running()
    assert {so["name"] for so in now["storage_objects"]} == {
        so["name"] for so in before["storage_objects"]
    } - {"mix_vaai"}
    luns = {
        (t["wwn"], lun["index"]) for t in now["targets"] for tpg in t["tpgs"] for lun in tpg["luns"]
    }
    assert luns == {
        (t["wwn"], lun["index"])
        for t in before["targets"]
        for tpg in t["tpgs"]
        for lun in tpg["luns"]
        if not lun["storage_object"].endswith("/mix_vaai")
    }
    mixed.assert_serving(["mix_fileio"])


def test_targetctl_restores_a_grown_store_at_its_new_size(mixed, cleared):
    saved, before = cleared
    os.truncate(mixed.files[0], 48 * MiB)
    _, out, err = stock("targetctl", "restore", saved)
    assert (out, err) == ("", "")
    assert VaaiStorageObject("mix_vaai").size == 48 * MiB
    after = running()
    for d in (before, after):
        for so in d["storage_objects"]:
            so.pop("min_size", None)
    assert after == before
    mixed.assert_serving()


def _unit_commands(key):
    """The command lines of the stock unit's ExecStart= or ExecStop=."""
    with open(STOCK_UNIT) as f:
        return [shlex.split(line.split("=", 1)[1]) for line in f if line.startswith(key + "=")]


@pytest.fixture
def stock_save_file():
    """Debian's default save file, put back as it was afterwards."""
    kept = open(STOCK_SAVE).read() if os.path.exists(STOCK_SAVE) else None
    yield STOCK_SAVE
    if kept is None:
        if os.path.exists(STOCK_SAVE):
            os.unlink(STOCK_SAVE)
    else:
        with open(STOCK_SAVE, "w") as f:
            f.write(kept)


def test_the_stock_service_restart_keeps_every_lun(mixed, stock_save_file):
    """What python3-rtslib-fb's postinst does on upgrade: restart
    rtslib-fb-targetctl.service, i.e. its ExecStop= then its ExecStart=."""
    stop, start = _unit_commands("ExecStop"), _unit_commands("ExecStart")
    assert ["/usr/bin/targetctl", "clear"] in stop
    assert ["/usr/bin/targetctl", "restore"] in start
    before = running()
    stock("targetctl", "save")
    for argv in stop + start:
        stock(*argv)
    assert running() == before
    mixed.assert_serving()


def test_without_vaai_the_stock_tools_change_nothing(mixed, tmp_path):
    saved = str(tmp_path / "saveconfig.json")
    stock("targetctl", "save", saved)
    before = running()
    line = (
        "cannot read storage object vaai/%s: the vaai Python package cannot be "
        "loaded (No module named 'vaai'); nothing was changed"
    )
    for argv in (
        ["targetctl", "clear"],
        ["targetctl", "restore", saved],
        ["targetctl", "save", str(tmp_path / "other.json")],
    ):
        rc, out, err = stock(*argv, vaai=False, check=False)
        assert rc == 1, (argv, out, err)
        assert re.fullmatch(
            "targetctl: " + re.escape(line).replace("%s", r"mix_vaai\w*") + "\n", err
        ), (argv, err)
        assert running() == before, argv
    assert not os.path.exists(tmp_path / "other.json")
    mixed.assert_serving()
