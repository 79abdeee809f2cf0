"""LIO's dbroot gets the pr/ and alua/ directories LIO writes persistent
reservations and ALUA state into, wherever configfs says it is; without
pr/, PERSISTENT RESERVE OUT is answered NOT READY."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from vaai import storage


def test_pr_and_alua_are_made_where_the_dbroot_points(tmp_path, monkeypatch):
    root = tmp_path / "target"
    root.mkdir()
    (root / "pr").mkdir(mode=0o755)  # one already there is kept
    dbroot = tmp_path / "dbroot"
    dbroot.write_text(f"{root}\n")
    monkeypatch.setattr(storage, "DBROOT", str(dbroot))
    storage.ensure_dbroot()
    assert (root / "pr").is_dir() and (root / "alua").is_dir()
    assert (root / "alua").stat().st_mode & 0o777 == 0o700
    storage.ensure_dbroot()  # a second time changes nothing


def test_no_configfs_makes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(storage, "DBROOT", str(tmp_path / "absent"))
    storage.ensure_dbroot()
    assert os.listdir(tmp_path) == []
