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
        ("save",),
        ("restore",),
    ],
)
def test_what_changes_lio_needs_root(capsys, monkeypatch, argv):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(backstore, "find", lambda name: pytest.fail("went on without root"))
    rc, out, err = run(capsys, *argv)
    assert rc == 1 and out == ""
    assert err == (
        f"vaaictl: error: {argv[0]} changes LIO's configuration through configfs, "
        "which needs root; run it with sudo\n"
    )


def test_what_only_reads_runs_as_anyone(capsys, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(backstore, "list_all", list)
    assert run(capsys, "list", "--json") == (0, "[]\n", "")


def test_a_file_a_user_may_not_read_is_one_line(capsys, monkeypatch):
    def denied():
        raise PermissionError(13, "Permission denied", "/sys/kernel/config/target/core")

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(backstore, "list_all", denied)
    rc, out, err = run(capsys, "list")
    assert rc == 1 and out == ""
    assert err == (
        "vaaictl: error: /sys/kernel/config/target/core: Permission denied; run it with sudo\n"
    )
