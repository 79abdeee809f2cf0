"""CHAP secrets kept off the command line (vaai/credentials.py, vaaictl
export --chap-file)."""

import io
import os

import pytest
from cli_run import run
from vaai import backstore, export
from vaai.credentials import read_chap
from vaai.errors import VaaiError

SECRET = "s3cret:for-esx01"  # noqa: S105 - made up for the tests


def secret_file(tmp_path, text, mode=0o600, name="chap"):
    path = tmp_path / name
    path.write_text(text)
    path.chmod(mode)
    return str(path)


def test_a_private_file_gives_user_and_secret(tmp_path):
    path = secret_file(tmp_path, f"esx01:{SECRET}\r\nignored:second-line-secret\n")
    assert read_chap(path) == ("esx01", SECRET)


def test_standard_input_gives_user_and_secret():
    assert read_chap("-", stdin=io.StringIO(f"esx01:{SECRET}\n")) == ("esx01", SECRET)


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620])
def test_a_file_others_may_open_is_refused(tmp_path, mode):
    path = secret_file(tmp_path, f"esx01:{SECRET}\n", mode)
    with pytest.raises(VaaiError) as e:
        read_chap(path)
    assert f"mode {mode:04o}" in str(e.value) and f"chmod 600 {path}" in str(e.value)


@pytest.mark.parametrize("text", [SECRET.replace(":", "") + "\n", ":" + SECRET, "esx01:\n", ""])
def test_a_malformed_file_is_refused_without_showing_it(tmp_path, text):
    path = secret_file(tmp_path, text)
    with pytest.raises(VaaiError) as e:
        read_chap(path)
    assert str(e.value) == f"CHAP credentials in {path}: give them as USER:SECRET"


def test_a_short_secret_is_refused_without_naming_any_of_it(tmp_path):
    # a secret alone with a colon in it: the part before is no user name
    path = secret_file(tmp_path, "p@ss:word123\n")
    with pytest.raises(VaaiError) as e:
        read_chap(path)
    assert str(e.value).startswith(
        f"CHAP credentials in {path}: the secret is 7 characters; use at least 12"
    )
    assert "p@ss" not in str(e.value) and "word" not in str(e.value)


def test_a_file_another_user_owns_is_refused(tmp_path, monkeypatch):
    path = secret_file(tmp_path, f"esx01:{SECRET}\n")
    real = os.fstat
    monkeypatch.setattr(
        os, "fstat", lambda fd: os.stat_result((*real(fd)[:4], 1000, *real(fd)[5:]))
    )
    monkeypatch.setattr(os, "getuid", lambda: 1001)
    with pytest.raises(VaaiError) as e:
        read_chap(path)
    assert str(e.value) == (
        f"{path} belongs to user 1000, who could change its CHAP secret; 'chown root {path}'"
    )


def test_a_binary_file_is_refused(tmp_path):
    path = tmp_path / "chap"
    path.write_bytes(b"\xff\xfe esx01:secret\n")
    path.chmod(0o600)
    with pytest.raises(VaaiError, match="is not text; write USER:SECRET on its first line"):
        read_chap(str(path))


def test_a_terminal_is_asked_without_echo(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    asked = []
    monkeypatch.setattr(
        "getpass.getpass", lambda prompt, stream: asked.append(prompt) or f"esx01:{SECRET}"
    )
    assert read_chap("-", stdin=Terminal("typed ahead\n")) == ("esx01", SECRET)
    assert asked == ["CHAP credentials (USER:SECRET): "]


def test_a_missing_file_is_one_clear_line(tmp_path):
    with pytest.raises(VaaiError, match=r"cannot read CHAP credentials from .*/none: No such"):
        read_chap(str(tmp_path / "none"))


@pytest.fixture
def exported(monkeypatch):
    """What vaaictl export iscsi hands to export_iscsi()."""
    got = {}

    class FakeLun:
        lun = 0
        parent_tpg = type("T", (), {"parent_target": type("W", (), {"wwn": "iqn.x:t"})})

    def export_iscsi(so, iqn, **kw):
        got.update(kw)
        return FakeLun()

    monkeypatch.setattr(backstore, "find", lambda name: type("S", (), {"name": name}))
    monkeypatch.setattr(export, "export_iscsi", export_iscsi)
    return got


def test_export_takes_both_secrets_from_files(capsys, tmp_path, exported):
    chap = secret_file(tmp_path, f"esx01:{SECRET}\n")
    mutual = secret_file(tmp_path, "array:array-secret-42\n", name="mutual")
    argv = ["export", "ds1", "iscsi", "--initiator", "iqn.1998-01.com.vmware:esx01"]
    rc, out, err = run(capsys, *argv, "--chap-file", chap, "--mutual-chap-file", mutual)
    assert rc == 0 and err == "" and out.startswith("exported vaai/ds1 as iqn.x:t LUN 0")
    assert exported["chap"] == ("esx01", SECRET)
    assert exported["mutual_chap"] == ("array", "array-secret-42")


def test_export_refuses_an_open_secret_file_before_exporting(capsys, tmp_path, exported):
    chap = secret_file(tmp_path, f"esx01:{SECRET}\n", 0o644)
    rc, out, err = run(capsys, "export", "ds1", "iscsi", "--chap-file", chap)
    assert rc == 1 and out == "" and exported == {}
    assert err == (
        f"vaaictl: error: {chap} is open to other users (mode 0644); "
        f"'chmod 600 {chap}' to keep its CHAP secret one\n"
    )
    assert SECRET not in err


def test_one_standard_input_for_one_secret(capsys, exported):
    argv = ["export", "ds1", "iscsi", "--chap-file", "-", "--mutual-chap-file", "-"]
    rc, _, err = run(capsys, *argv)
    assert rc == 1 and exported == {}
    assert err == (
        "vaaictl: error: --chap-file and --mutual-chap-file cannot both read standard input\n"
    )


def test_a_secret_comes_from_one_place(capsys, tmp_path):
    chap = secret_file(tmp_path, f"esx01:{SECRET}\n")
    rc, _, err = run(
        capsys, "export", "ds1", "iscsi", "--chap", f"esx:{SECRET}", "--chap-file", chap
    )
    assert rc == 2 and "not allowed with argument" in err


@pytest.mark.parametrize("option", ["--chap-file", "--mutual-chap-file"])
def test_an_empty_file_name_is_refused_not_taken_for_no_chap(capsys, exported, option):
    rc, out, err = run(capsys, "export", "ds1", "iscsi", option, "")
    assert rc == 1 and out == "" and exported == {}
    assert err == "vaaictl: error: no file named for the CHAP credentials (an empty name)\n"
