"""Tests of rtslib-fb with rtslib-fb-out-of-tree-backends.patch applied.

They run on any host, without LIO: rtslib is pointed at a fake configfs
tree in tmp_path (CFSNode.configfs_dir), with directories and attribute
files laid out as the kernel has them, and rmdir behaving as configfs'
does (an item goes with its attributes and default groups, not while it
still holds a link).  Run them with docs/upstream/run-tests.sh, which puts
the patched tree first on PYTHONPATH.
"""

import errno
import json
import os
import pathlib
import shutil
import sys
import textwrap

import pytest
import rtslib
from rtslib import fabric, node, root, tcm
from rtslib.utils import RTSLibError

GROUP = "rtslib_fb.storage_objects"
BACKEND_MODULE = "rtslib_oot_test_backend"

RAMDISK_INFO = (
    "Status: ACTIVATED  Max Queue Depth: 128  SectorSize: 512  HwMaxSectors: 1024\n"
    "        RAMDISK ID: 0  RAMDISK MCP: 0x0  PAGES/PAGE_SIZE: 2048*4096  "
    "SG_table_count: 1  nullio: 0\n"
)
OOT_INFO = (
    "Status: ACTIVATED  Max Queue Depth: 128  SectorSize: 512  HwMaxSectors: 2048\n"
    "        Store: file  Path: /srv/ds1.img  Bytes: 1073741824  Readonly: 0\n"
)
DEMO_INFO = (
    "Status: DEACTIVATED  Max Queue Depth: 0  SectorSize: 512  HwMaxSectors: 1024\n"
    "        Bytes: 4096\n"
)

IQN1 = "iqn.2003-01.org.example:t1"
IQN2 = "iqn.2003-01.org.example:t2"

# A backend's rtslib support, as an installed package would provide it.
BACKEND_SOURCE = """
from rtslib.tcm import StorageObject


class DemoStorageObject(StorageObject):
    def __init__(self, name, size=None, wwn=None, index=None):
        if size is None:
            super().__init__(name, "lookup", index)
            return
        super().__init__(name, "create", index)
        self._control("size=%d" % size)
        self._enable()

    @property
    def size(self):
        return int(self._parse_info("Bytes"))

    def dump(self):
        d = super().dump()
        d["size"] = self.size
        return d


class NotAStorageObject:
    pass
"""


class DemoStorageObject(tcm.StorageObject):
    """An out-of-tree backend's class, registered through the API."""

    def __init__(self, name, index=None):
        super().__init__(name, "lookup", index)


class OtherStorageObject(tcm.StorageObject):
    def __init__(self, name, index=None):
        super().__init__(name, "lookup", index)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


class FakeConfigfs:
    """/sys/kernel/config/target, as far as rtslib reads it."""

    def __init__(self, top):
        self.top = top
        self.core = top / "core"
        self.core.mkdir(parents=True)
        for name, value in (
            ("enforce_discovery_auth", "0"),
            ("userid", "NULL"),
            ("password", "NULL"),
            ("userid_mutual", "NULL"),
            ("password_mutual", "NULL"),
            ("authenticate_target", "0"),
        ):
            write(top / "iscsi" / "discovery_auth" / name, value + "\n")

    def storage_object(self, dirprefix, index, name, info, wwn, udev_path=""):
        hba = self.core / (f"{dirprefix}_{index}")
        if not hba.is_dir():
            write(hba / "hba_info", f"HBA Index: {index} plugin: {dirprefix} version: v5.0\n")
            write(hba / "hba_mode", "0\n")
        so = hba / name
        so.mkdir()
        write(so / "info", info)
        write(so / "enable", "1\n")
        write(so / "udev_path", udev_path + "\n")
        write(so / "wwn" / "vpd_unit_serial", f"T10 VPD Unit Serial Number: {wwn}\n")
        write(so / "attrib" / "block_size", "512\n")
        write(so / "attrib" / "emulate_tpu", "0\n")
        write(so / "attrib" / "hw_block_size", "512\n")
        (so / "attrib" / "hw_block_size").chmod(0o444)
        gp = so / "alua" / "default_tg_pt_gp"
        for name_, value in (
            ("tg_pt_gp_id", "0"),
            ("alua_access_state", "0"),
            ("alua_access_status", "None"),
            ("alua_access_type", "Implicit and Explicit"),
            ("alua_write_metadata", "0"),
            ("preferred", "0"),
            ("nonop_delay_msecs", "100"),
            ("trans_delay_msecs", "0"),
            ("implicit_trans_secs", "0"),
            ("members", ""),
            ("alua_support_offline", "1"),
            ("alua_support_standby", "1"),
            ("alua_support_transitioning", "1"),
            ("alua_support_active_nonoptimized", "1"),
            ("alua_support_unavailable", "1"),
            ("alua_support_active_optimized", "1"),
            ("alua_support_lba_dependent", "0"),
        ):
            write(gp / name_, value + "\n")
        (so / "pr").mkdir()
        return so

    def ramdisk(self, name="r1", index=0):
        return self.storage_object(
            "rd_mcp", index, name, RAMDISK_INFO, "11111111-2222-3333-4444-555555555555"
        )

    def oot(self, name="ds1", index=0):
        """A storage object of the out-of-tree backend "oot"."""
        return self.storage_object(
            "oot", index, name, OOT_INFO, "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "/srv/ds1.img"
        )

    def iscsi_target(self, iqn, luns):
        """A target with TPG 1 exporting {lun index: storage object path}."""
        tpg = self.top / "iscsi" / iqn / "tpgt_1"
        write(tpg / "enable", "1\n")
        for sub in ("attrib", "param", "auth", "acls", "np", "lun"):
            (tpg / sub).mkdir(exist_ok=True)
        for index, so in luns.items():
            lun = tpg / "lun" / (f"lun_{index}")
            lun.mkdir()
            write(lun / "alua_tg_pt_gp", "TG Port Alias: default_tg_pt_gp\n")
            os.symlink(so, lun / (f"alias{index}"))
        return tpg.parent

    def tree(self):
        """Every path under the tree, links included, and file contents."""
        found = {}
        for dirpath, dirnames, filenames in os.walk(self.top):
            for name in dirnames + filenames:
                path = pathlib.Path(dirpath, name)
                rel = str(path.relative_to(self.top))
                if path.is_symlink():
                    found[rel] = "-> " + os.readlink(path)
                elif path.is_file():
                    found[rel] = path.read_text()
                else:
                    found[rel] = None
        return found


def _no_modprobe(module):
    raise AssertionError(f"rtslib tried to load kernel module {module}")


@pytest.fixture
def cfs(tmp_path, monkeypatch):
    top = tmp_path / "configfs" / "target"
    fake = FakeConfigfs(top)
    monkeypatch.setattr(node.CFSNode, "configfs_dir", str(top))
    monkeypatch.setattr(root, "mount_configfs", lambda: None)
    monkeypatch.setattr(root, "modprobe", _no_modprobe)
    monkeypatch.setattr(fabric, "modprobe", _no_modprobe)
    monkeypatch.setattr(tcm, "lock_file", str(tmp_path / "rtslib_backstore.lock"))

    real_rmdir = pathlib.Path.rmdir

    def configfs_rmdir(path):
        path = pathlib.Path(os.path.abspath(path))
        if top not in path.parents:
            return real_rmdir(path)
        for dirpath, dirnames, filenames in os.walk(path):
            if any(os.path.islink(os.path.join(dirpath, n)) for n in dirnames + filenames):
                raise OSError(errno.ENOTEMPTY, os.strerror(errno.ENOTEMPTY), str(path))
        shutil.rmtree(path)
        return None

    monkeypatch.setattr(pathlib.Path, "rmdir", configfs_rmdir)

    so_mapping = dict(tcm.so_mapping)
    bs_params = dict(tcm.bs_params)
    load = getattr(tcm, "_load_storage_object_entry_points", None)
    if load is not None:
        load.cache_clear()
    tcm.bs_cache.clear()
    yield fake
    tcm.bs_cache.clear()
    if load is not None:
        load.cache_clear()
    tcm.so_mapping.clear()
    tcm.so_mapping.update(so_mapping)
    tcm.bs_params.clear()
    tcm.bs_params.update(bs_params)
    sys.modules.pop(BACKEND_MODULE, None)


@pytest.fixture
def install_backend(tmp_path, monkeypatch):
    """install_backend(entry point lines): a throwaway distribution whose
    dist-info declares them in the group, and BACKEND_MODULE, on sys.path."""

    def install(*entry_points, source=BACKEND_SOURCE):
        site = tmp_path / "site"
        write(site / (BACKEND_MODULE + ".py"), source)
        dist = site / "rtslib_oot_test-1.0.dist-info"
        write(dist / "METADATA", "Metadata-Version: 2.1\nName: rtslib-oot-test\nVersion: 1.0\n")
        write(dist / "entry_points.txt", "[{}]\n{}\n".format(GROUP, "\n".join(entry_points)))
        monkeypatch.syspath_prepend(str(site))

    return install


def storage_objects():
    return {f"{so.plugin}/{so.name}": so for so in root.RTSRoot().storage_objects}


# Registration through the API


def test_api_fills_both_tables_and_builds_the_class(cfs):
    cfs.oot()
    tcm.register_storage_object(DemoStorageObject, "oot")
    assert tcm.so_mapping["oot"] is DemoStorageObject
    assert tcm.bs_params[DemoStorageObject] == {"name": "oot"}
    so = storage_objects()["oot/ds1"]
    assert type(so) is DemoStorageObject
    assert so.path == str(cfs.core / "oot_0" / "ds1")
    assert so.status == "activated"
    assert so.wwn == "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
    assert rtslib.register_storage_object is tcm.register_storage_object


def test_api_alt_dirprefix(cfs):
    cfs.storage_object("kdemo", 3, "d1", DEMO_INFO, "w1")
    tcm.register_storage_object(DemoStorageObject, "demo", alt_dirprefix="kdemo")
    assert tcm.so_mapping["demo"] is DemoStorageObject
    assert tcm.so_mapping["kdemo"] is DemoStorageObject
    assert tcm.bs_params[DemoStorageObject] == {"name": "demo", "alt_dirprefix": "kdemo"}
    so = storage_objects()["demo/d1"]
    assert type(so) is DemoStorageObject
    assert so.path == str(cfs.core / "kdemo_3" / "d1")
    assert so.version == "v5.0"


def test_api_is_idempotent_and_refuses_conflicts(cfs):
    before = (dict(tcm.so_mapping), dict(tcm.bs_params))
    tcm.register_storage_object(DemoStorageObject, "demo")
    tcm.register_storage_object(DemoStorageObject, "demo")
    registered = (dict(tcm.so_mapping), dict(tcm.bs_params))
    assert registered[0] == dict(before[0], demo=DemoStorageObject)
    assert registered[1] == {**before[1], DemoStorageObject: {"name": "demo"}}

    refused = [
        (OtherStorageObject, "demo", None),  # the name is taken
        (DemoStorageObject, "demo2", None),  # the class is registered as demo
        (DemoStorageObject, "demo", "kdemo"),  # ... without alt_dirprefix
        (OtherStorageObject, "fileio", None),  # built-in plugin names
        (OtherStorageObject, "block", None),
        (OtherStorageObject, "other", "iblock"),  # built-in directory prefixes
        (OtherStorageObject, "rd_mcp", None),
        (tcm.FileIOStorageObject, "fileio", None),  # a built-in class
        (tcm.FileIOStorageObject, "fileio2", None),
        (dict, "other", None),  # not a StorageObject
        (tcm.UnknownStorageObject, "other", None),
        (OtherStorageObject, "a/b", None),  # not a configfs name
        (OtherStorageObject, "", None),
    ]
    for cls, plugin, alt in refused:
        with pytest.raises(RTSLibError):
            tcm.register_storage_object(cls, plugin, alt_dirprefix=alt)
        assert (dict(tcm.so_mapping), dict(tcm.bs_params)) == registered, (cls, plugin, alt)
    assert tcm.so_mapping["fileio"] is tcm.FileIOStorageObject
    assert tcm.so_mapping["iblock"] is tcm.BlockStorageObject


def test_registering_after_a_miss_makes_the_type_known(cfs):
    cfs.oot()
    assert type(storage_objects()["oot/ds1"]) is tcm.UnknownStorageObject
    tcm.register_storage_object(DemoStorageObject, "oot")
    assert type(storage_objects()["oot/ds1"]) is DemoStorageObject


# Unknown types: listed read-only


def test_unknown_type_is_listed_read_only(cfs):
    cfs.ramdisk()
    cfs.oot()
    found = storage_objects()
    assert sorted(found) == ["oot/ds1", "ramdisk/r1"]
    so = found["oot/ds1"]
    assert isinstance(so, tcm.UnknownStorageObject)
    assert rtslib.UnknownStorageObject is tcm.UnknownStorageObject
    assert repr(so) == "<UnknownStorageObject oot/ds1>"
    assert so.name == "ds1"
    assert so.plugin == "oot"
    assert so.exists
    assert so.path == str(cfs.core / "oot_0" / "ds1")
    assert so.status == "activated"
    assert so.wwn == "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
    assert so.udev_path == "/srv/ds1.img"
    assert so.version == "v5.0"
    assert so.is_configured()
    assert so.list_attributes() == ["block_size", "emulate_tpu", "hw_block_size"]
    assert so.get_attribute("block_size") == "512"
    assert [gp.name for gp in so.alua_tpgs] == ["default_tg_pt_gp"]
    assert list(so.attached_luns) == []
    assert so.reason == "rtslib support for the 'oot' backend is not installed"
    assert type(found["ramdisk/r1"]) is tcm.RDMCPStorageObject


@pytest.mark.parametrize("change", ["delete", "delete_save", "set_attribute", "wwn", "dump"])
def test_unknown_object_refuses_changes(cfs, tmp_path, change, monkeypatch):
    cfs.oot()
    before = cfs.tree()
    save_file = tmp_path / "saveconfig.json"
    monkeypatch.setattr(root, "default_save_file", str(save_file))
    so = storage_objects()["oot/ds1"]
    with pytest.raises(RTSLibError) as e:
        if change == "delete":
            so.delete()
        elif change == "delete_save":
            so.delete(save=True)
        elif change == "set_attribute":
            so.set_attribute("block_size", "4096")
        elif change == "wwn":
            so.wwn = "ffffffff-0000-0000-0000-000000000000"
        else:
            so.dump()
    message = str(e.value)
    assert "\n" not in message
    assert "storage object oot/ds1:" in message
    assert "rtslib support for the 'oot' backend is not installed" in message
    assert cfs.tree() == before
    assert not save_file.exists()


def test_luns_on_unknown_objects_still_list(cfs):
    r1 = cfs.ramdisk()
    ds1 = cfs.oot()
    cfs.iscsi_target(IQN1, {0: ds1, 1: r1})
    rts = root.RTSRoot()
    luns = sorted(rts.luns, key=lambda lun: lun.lun)
    assert [repr(lun) for lun in luns] == ["<LUN 0 (oot/ds1)>", "<LUN 1 (ramdisk/r1)>"]
    assert isinstance(luns[0].storage_object, tcm.UnknownStorageObject)
    assert luns[0].storage_object.path == str(ds1)
    assert luns[0].alua_tg_pt_gp_name == "default_tg_pt_gp"
    assert [t.wwn for t in rts.targets] == [IQN1]
    so = storage_objects()["oot/ds1"]
    assert [(lun.parent_tpg.parent_target.wwn, lun.lun) for lun in so.attached_luns] == [(IQN1, 0)]


# Nothing is destroyed that cannot be read


def test_save_refuses_and_writes_nothing(cfs, tmp_path):
    cfs.ramdisk()
    cfs.oot()
    cfs.oot("ds2", index=1)
    new_file = tmp_path / "new.json"
    old_file = tmp_path / "old.json"
    old_file.write_text('{"storage_objects": [], "targets": []}\n')
    for save_file in (new_file, old_file):
        before = sorted(os.listdir(tmp_path))
        with pytest.raises(RTSLibError) as e:
            root.RTSRoot().save_to_file(str(save_file))
        message = str(e.value)
        assert "\n" not in message
        assert "oot/ds1, oot/ds2" in message
        assert "rtslib support for the 'oot' backend is not installed" in message
        assert f"nothing was written to {save_file}" in message
        assert sorted(os.listdir(tmp_path)) == before
    assert not new_file.exists()
    assert old_file.read_text() == '{"storage_objects": [], "targets": []}\n'
    with pytest.raises(RTSLibError, match="oot/ds1, oot/ds2"):
        root.RTSRoot().dump()


def test_save_of_one_object_refuses_only_for_an_unknown_one(cfs, tmp_path):
    r1 = cfs.ramdisk()
    ds1 = cfs.oot()
    cfs.iscsi_target(IQN1, {0: r1, 1: ds1})
    save_file = tmp_path / "saveconfig.json"
    saved = {"storage_objects": [{"plugin": "oot", "name": "ds1", "size": 1}], "targets": []}
    save_file.write_text(json.dumps(saved))
    with pytest.raises(RTSLibError, match=r"oot/ds1 .*nothing was written"):
        root.RTSRoot().save_to_file(str(save_file), "/backstores/oot/ds1")
    assert json.loads(save_file.read_text()) == saved

    root.RTSRoot().save_to_file(str(save_file), "/backstores/ramdisk/r1")
    conf = json.loads(save_file.read_text())
    assert [(so["plugin"], so["name"]) for so in conf["storage_objects"]] == [
        ("oot", "ds1"),
        ("ramdisk", "r1"),
    ]
    assert [t["wwn"] for t in conf["targets"]] == [IQN1]
    assert sorted(lun["storage_object"] for lun in conf["targets"][0]["tpgs"][0]["luns"]) == [
        "/backstores/oot/ds1",
        "/backstores/ramdisk/r1",
    ]


def test_clear_existing_refuses_before_deleting_anything(cfs):
    r1 = cfs.ramdisk()
    ds1 = cfs.oot()
    t1 = cfs.iscsi_target(IQN1, {0: r1})
    t2 = cfs.iscsi_target(IQN2, {0: ds1})
    before = cfs.tree()
    with pytest.raises(RTSLibError) as e:
        root.RTSRoot().clear_existing(confirm=True)
    message = str(e.value)
    assert "\n" not in message
    assert message == (
        "Cannot clear the configuration: storage object oot/ds1 of unknown "
        "type (rtslib support for the 'oot' backend is not installed); "
        "nothing was changed"
    )
    assert t1.is_dir()
    assert t2.is_dir()
    assert (t1 / "tpgt_1" / "lun" / "lun_0" / "alias0").is_symlink()
    assert r1.is_dir()
    assert ds1.is_dir()
    assert cfs.tree() == before


def test_restore_with_clear_existing_refuses_before_deleting_anything(cfs, tmp_path):
    r1 = cfs.ramdisk()
    ds1 = cfs.oot()
    cfs.iscsi_target(IQN1, {0: r1, 1: ds1})
    saved = tmp_path / "saveconfig.json"
    saved.write_text(json.dumps({"storage_objects": [], "targets": []}))
    before = cfs.tree()
    with pytest.raises(RTSLibError, match=r"^Cannot clear the configuration: .*oot/ds1"):
        root.RTSRoot().restore_from_file(str(saved))
    with pytest.raises(RTSLibError, match=r"^Cannot clear the configuration: .*oot/ds1"):
        root.RTSRoot().restore({"storage_objects": [], "targets": []}, clear_existing=True)
    assert cfs.tree() == before


def test_clear_existing_checks_only_what_it_deletes(cfs):
    r1 = cfs.ramdisk()
    r2 = cfs.ramdisk("r2", index=1)
    ds1 = cfs.oot()
    t1 = cfs.iscsi_target(IQN1, {0: ds1})
    t2 = cfs.iscsi_target(IQN2, {0: r2})

    with pytest.raises(RTSLibError, match="oot/ds1"):
        root.RTSRoot().clear_existing(storage_object="ds1", confirm=True)
    assert ds1.is_dir()
    assert t1.is_dir()

    # One target: no storage object is deleted, the LUN's object stays.
    root.RTSRoot().clear_existing(target=IQN1, confirm=True)
    assert not t1.exists()
    assert t2.is_dir()
    assert ds1.is_dir()

    # One known storage object.
    root.RTSRoot().clear_existing(storage_object="r1", confirm=True)
    assert not r1.exists()
    assert not r1.parent.exists()
    assert r2.is_dir()
    assert ds1.is_dir()
    assert t2.is_dir()


# Known types behave as before


def test_known_types_save_as_before(cfs, tmp_path):
    r1 = cfs.ramdisk()
    cfs.iscsi_target(IQN1, {0: r1})
    save_file = tmp_path / "saveconfig.json"
    root.RTSRoot().save_to_file(str(save_file))
    conf = json.loads(save_file.read_text())
    assert len(conf["storage_objects"]) == 1
    so = conf["storage_objects"][0]
    assert (so["plugin"], so["name"], so["size"], so["wwn"]) == (
        "ramdisk",
        "r1",
        2048 * 4096,
        "11111111-2222-3333-4444-555555555555",
    )
    assert so["attributes"] == {"block_size": 512, "emulate_tpu": 0}
    assert [gp["name"] for gp in so["alua_tpgs"]] == ["default_tg_pt_gp"]
    assert [(t["fabric"], t["wwn"]) for t in conf["targets"]] == [("iscsi", IQN1)]
    lun = conf["targets"][0]["tpgs"][0]["luns"][0]
    assert (lun["index"], lun["storage_object"], lun["alias"]) == (
        0,
        "/backstores/ramdisk/r1",
        "alias0",
    )
    assert root.RTSRoot().dump()["storage_objects"] == conf["storage_objects"]


def test_known_types_clear_as_before(cfs):
    r1 = cfs.ramdisk()
    r2 = cfs.ramdisk("r2", index=1)
    t1 = cfs.iscsi_target(IQN1, {0: r1, 1: r2})
    root.RTSRoot().clear_existing(confirm=True)
    assert not t1.exists()
    assert os.listdir(cfs.core) == []
    assert list(root.RTSRoot().storage_objects) == []
    assert list(root.RTSRoot().targets) == []


# Discovery through entry points


def test_entry_point_is_loaded_on_the_first_unknown_type(cfs, install_backend):
    install_backend(f"demo = {BACKEND_MODULE}:DemoStorageObject")
    cfs.ramdisk()
    # Known types only: no backend is imported.
    assert list(storage_objects()) == ["ramdisk/r1"]
    assert BACKEND_MODULE not in sys.modules
    assert "demo" not in tcm.so_mapping

    cfs.storage_object("demo", 0, "d1", DEMO_INFO, "w1")
    so = storage_objects()["demo/d1"]
    backend = sys.modules[BACKEND_MODULE]
    assert type(so) is backend.DemoStorageObject
    assert so.size == 4096
    assert so.status == "deactivated"
    assert tcm.so_mapping["demo"] is backend.DemoStorageObject
    assert tcm.bs_params[backend.DemoStorageObject] == {"name": "demo"}
    assert so.dump()["size"] == 4096


@pytest.mark.parametrize(
    ("entry_point", "source", "why"),
    [
        pytest.param(
            "oot = rtslib_oot_no_such_module:Cls",
            BACKEND_SOURCE,
            "No module named 'rtslib_oot_no_such_module'",
            id="no-module",
        ),
        pytest.param(
            f"oot = {BACKEND_MODULE}:NoSuchClass", BACKEND_SOURCE, "NoSuchClass", id="no-class"
        ),
        pytest.param(
            f"oot = {BACKEND_MODULE}:NotAStorageObject",
            BACKEND_SOURCE,
            "not a subclass of rtslib.tcm.StorageObject",
            id="not-a-storage-object",
        ),
        pytest.param(
            f"oot = {BACKEND_MODULE}:DemoStorageObject",
            "raise RuntimeError('boom')\n",
            "boom",
            id="import-raises",
        ),
        pytest.param(
            f"oot = {BACKEND_MODULE}:DemoStorageObject",
            "def broken(:\n",
            "invalid syntax",
            id="syntax-error",
        ),
    ],
)
def test_broken_entry_point_leaves_the_type_unknown(cfs, install_backend, entry_point, source, why):
    install_backend(entry_point, source=source)
    ds1 = cfs.oot()
    so = storage_objects()["oot/ds1"]
    assert type(so) is tcm.UnknownStorageObject
    assert so.reason.startswith(
        f"rtslib support for the 'oot' backend failed to load (entry point {entry_point}): "
    )
    assert why in so.reason
    with pytest.raises(RTSLibError) as e:
        so.delete()
    assert str(e.value) == "Cannot delete storage object oot/ds1: " + so.reason
    assert "\n" not in str(e.value)
    with pytest.raises(RTSLibError, match=r"oot/ds1.*failed to load"):
        root.RTSRoot().clear_existing(confirm=True)
    assert ds1.is_dir()
    assert "oot" not in tcm.so_mapping


def test_broken_entry_point_does_not_stop_the_others(cfs, install_backend):
    install_backend(
        "oot = rtslib_oot_no_such_module:Cls",
        f"demo = {BACKEND_MODULE}:DemoStorageObject",
        f"fileio = {BACKEND_MODULE}:DemoStorageObject",
    )
    cfs.oot()
    cfs.storage_object("demo", 0, "d1", DEMO_INFO, "w1")
    found = storage_objects()
    assert type(found["oot/ds1"]) is tcm.UnknownStorageObject
    assert type(found["demo/d1"]) is sys.modules[BACKEND_MODULE].DemoStorageObject
    # An entry point does not replace a built-in type.
    assert tcm.so_mapping["fileio"] is tcm.FileIOStorageObject


def test_restore_creates_objects_of_entry_point_backends(cfs, install_backend):
    install_backend(f"demo = {BACKEND_MODULE}:DemoStorageObject")
    config = {
        "storage_objects": [
            {"plugin": "demo", "name": "d9", "size": 8192},
            {"plugin": "oot", "name": "ds1"},
        ],
        "targets": [],
    }
    errors = root.RTSRoot().restore(config)
    assert errors == [
        (
            "Could not create StorageObject ds1: rtslib support for the 'oot' "
            "backend is not installed, skipped"
        )
    ]
    d9 = cfs.core / "demo_0" / "d9"
    assert (d9 / "control").read_text() == "size=8192"
    assert (d9 / "enable").read_text() == "1\n"
    assert not list(cfs.core.glob("oot_*"))


def test_backend_registered_by_its_module_with_alt_dirprefix(cfs, install_backend):
    source = BACKEND_SOURCE + textwrap.dedent("""
        from rtslib.tcm import register_storage_object
        register_storage_object(DemoStorageObject, "demo", alt_dirprefix="kdemo")
    """)
    install_backend(f"demo = {BACKEND_MODULE}:DemoStorageObject", source=source)
    cfs.storage_object("kdemo", 0, "d1", DEMO_INFO, "w1")
    so = storage_objects()["demo/d1"]
    backend = sys.modules[BACKEND_MODULE]
    assert type(so) is backend.DemoStorageObject
    assert tcm.bs_params[backend.DemoStorageObject] == {"name": "demo", "alt_dirprefix": "kdemo"}
    # Loading the entry point after the module registered itself is no error.
    assert tcm._load_storage_object_entry_points() == {}
