"""Which vaaictl commands need root: what changes LIO, not what only reads
it (list, stats, the exporter)."""

import os

import pytest
from cli_run import run
from vaai import backstore


@pytest.mark.parametrize(
    "argv",
    [
        ("create", "ds1", "/srv/ds1.img"),
        ("delete", "ds1"),
        ("resize", "ds1"),
        ("export", "ds1", "loopback"),
        ("unexport", "ds1"),
        ("pair", "ds1", "active"),
        ("save",),
        ("restore",),
    ],
)
def test_what_changes_lio_needs_root(capsys, monkeypatch, argv):
    monkeypatch.setattr(backstore, "find", lambda name: pytest.fail("went on without root"))
    rc, out, err = run(capsys, *argv, euid=1000)
    assert rc == 1 and out == ""
    assert err == (
        f"vaaictl: error: {argv[0]} needs root (only list, stats, exporter run "
        "without it); run it with sudo\n"
    )


def test_what_only_reads_runs_as_anyone(capsys, monkeypatch):
    monkeypatch.setattr(backstore, "list_all", list)
    assert run(capsys, "list", "--json", euid=1000) == (0, "[]\n", "")


@pytest.mark.parametrize("euid, hint", [(1000, "; run it with sudo"), (0, "")])
def test_a_file_a_user_may_not_read_is_one_line(capsys, monkeypatch, euid, hint):
    """sudo is the hint for a user; root denied (a root-squashed NFS
    store) is told no more than the error."""

    def denied():
        raise PermissionError(13, "Permission denied", "/sys/kernel/config/target/core")

    monkeypatch.setattr(backstore, "list_all", denied)
    rc, out, err = run(capsys, "list", euid=euid)
    assert rc == 1 and out == ""
    assert err == f"vaaictl: error: /sys/kernel/config/target/core: Permission denied{hint}\n"


class FakeFabric:
    def __init__(self, root, name, directory):
        self.name, self.path = name, str(root / directory)
        self.exists = os.path.isdir(self.path)


def test_exports_are_found_by_reading_configfs_alone(tmp_path, monkeypatch):
    """list's exports come from the LUN links in a configfs tree (here a
    fake one), with no RTSRoot() to mount, load or write anything."""
    sos = {name: tmp_path / "core" / "vaai_0" / name for name in ("ds1", "ds2")}
    for d in sos.values():
        d.mkdir(parents=True)
    for where, so in [
        ("iscsi/iqn.2026-11.org.vaai:t1/tpgt_1/lun/lun_3/5a1b", "ds1"),
        ("fc/naa.20000025b500000f/tpgt_1/lun/lun_0/77c2", "ds1"),
        ("iscsi/iqn.2026-11.org.vaai:t1/tpgt_1/lun/lun_4/9e0d", "ds2"),
    ]:
        (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / where).symlink_to(sos[so])
    fabrics = [
        FakeFabric(tmp_path, "iscsi", "iscsi"),
        FakeFabric(tmp_path, "tcm_fc", "fc"),
        FakeFabric(tmp_path, "loopback", "loopback"),  # not loaded
    ]
    monkeypatch.setattr(backstore.FabricModule, "all", classmethod(lambda cls: iter(fabrics)))
    monkeypatch.setattr(backstore, "RTSRoot", lambda: pytest.fail("RTSRoot() called"))

    class SO:
        path = str(sos["ds1"])

    assert backstore.exports(SO()) == [
        "iscsi/iqn.2026-11.org.vaai:t1/tpg1/lun3",
        "tcm_fc/naa.20000025b500000f/tpg1/lun0",
    ]
