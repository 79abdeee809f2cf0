"""vaaictl save keeps the default file's previous versions as targetcli
does: gzipped in backup/ beside it, only when changed, the newest ten."""

import datetime as dt
import gzip
import json
import os
import stat
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from vaai import config

T0 = dt.datetime(2026, 11, 26, 15, 0, 0)


def at(minutes):
    return T0 + dt.timedelta(minutes=minutes)


def saved(tmp_path, text):
    path = tmp_path / "saveconfig.json"
    path.write_text(text)
    return str(path)


def test_nothing_to_keep_before_the_first_save(tmp_path):
    assert config.back_up(str(tmp_path / "saveconfig.json")) is None
    assert not (tmp_path / "backup").exists()


def test_the_previous_version_is_kept_gzipped_for_root_only(tmp_path):
    path = saved(tmp_path, '{"targets": []}\n')
    made = config.back_up(path, now=at(0))
    assert made == str(tmp_path / "backup" / "saveconfig-20261126-15:00:00-json.gz")
    with gzip.open(made, "rb") as f:
        assert f.read() == b'{"targets": []}\n'
    assert stat.S_IMODE(os.stat(made).st_mode) == 0o600


def test_an_unchanged_file_is_not_kept_twice(tmp_path):
    path = saved(tmp_path, "{}\n")
    config.back_up(path, now=at(0))
    assert config.back_up(path, now=at(1)) is None
    assert len(os.listdir(tmp_path / "backup")) == 1


def test_the_newest_ten_are_kept(tmp_path):
    for i in range(13):
        path = saved(tmp_path, json.dumps({"n": i}) + "\n")
        config.back_up(path, now=at(i))
    kept = sorted(os.listdir(tmp_path / "backup"))
    assert len(kept) == config.MAX_BACKUPS == 10
    assert kept[0] == "saveconfig-20261126-15:03:00-json.gz"
    assert kept[-1] == "saveconfig-20261126-15:12:00-json.gz"


def test_a_plain_backup_of_targetcli_is_compared_too(tmp_path):
    path = saved(tmp_path, "{}\n")
    os.makedirs(tmp_path / "backup")
    (tmp_path / "backup" / "saveconfig-20261125-10:00:00.json").write_text("{}\n")
    assert config.back_up(path, now=at(0)) is None
