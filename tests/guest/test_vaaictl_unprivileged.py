"""vaaictl without root: what only reads (list, stats, the exporter) gives
root's answers to any user; what changes LIO is refused and changes
nothing; a saved configuration, which holds the CHAP secrets, is for root
alone."""

import json
import os
import stat
import subprocess
import sys
import urllib.request

import pytest
from conftest import SCRATCH
from ctl import REPO, sample, samples, vaai_names, vaaictl

NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--")
NAME = "unpriv"
# Counters the data path moves (udev reads a new disk): not compared.
MOVING = ("in_flight", "rw_deferred")


def nobody(*args, **kw):
    """`python3 -m vaai args` as user nobody, the way a monitoring user would."""
    return subprocess.Popen(
        [*NOBODY, sys.executable, "-m", "vaai", *args],
        text=True,
        env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")),
        **kw,
    )


def as_nobody(*args):
    p = nobody(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=120)
    return p.returncode, out, err


@pytest.fixture(scope="module")
def lun():
    path = os.path.join(SCRATCH, f"{NAME}.img")
    vaaictl("create", NAME, path, "--size", "16M")
    try:
        vaaictl("export", NAME, "loopback")
        yield NAME
    finally:
        vaaictl("delete", NAME)
        os.unlink(path)


def steady(counters):
    """What udev's reads of the new disk do not move: all but the data
    path's gauges and the reads' and writes' I/O metrics."""
    out = {}
    for name, c in counters.items():
        out[name] = {k: v for k, v in c.items() if k not in MOVING}
        io = c.get("io", {})
        out[name]["io"] = {kind: v for kind, v in io.items() if kind not in ("read", "write")}
    return out


def test_list_as_any_user_is_what_root_sees(lun):
    rc, out, err = as_nobody("list", "--json")
    assert (rc, err) == (0, "")
    mine = json.loads(out)
    assert mine == json.loads(vaaictl("list", "--json")[1])
    (row,) = [r for r in mine if r["name"] == lun]
    assert row["size"] == 16 << 20 and row["exports"][0].startswith("loopback/")


def test_stats_as_any_user_is_what_root_sees(lun):
    rc, out, err = as_nobody("stats", "--json", lun)
    assert (rc, err) == (0, "")
    mine = json.loads(out)
    assert set(mine) == {lun} and "ats" in mine[lun]
    assert steady(mine) == steady(json.loads(vaaictl("stats", "--json", lun)[1]))


PROMTOOL = os.environ.get("VAAI_PROMTOOL", "/opt/vaai/bin/promtool")


def test_the_exporter_serves_without_root(lun):
    port = 9738
    server = nobody("exporter", "--listen", f"127.0.0.1:{port}", stdout=subprocess.PIPE)
    try:
        assert server.stdout.readline().startswith("serving vaai metrics on http://")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            text = r.read().decode()
        got = samples(text)
        # Prometheus' own lint of an exposition: silent when it passes
        check = subprocess.run(
            [PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, check=False
        )
        assert (check.returncode, check.stdout + check.stderr) == (0, "")
        assert sample(got, "vaai_lun_ats_commands_total", lun=lun) == 0
        assert sample(got, "vaai_lun_size_bytes", lun=lun) == 16 << 20
        # the backing file under SCRATCH: its space, read as nobody too
        assert sample(got, "vaai_lun_allocated_bytes", lun=lun) >= 0
        up = [v for (n, labels), v in got.items() if n == "vaai_session_up"]
        assert 1 in up  # the loopback nexus the LUN is exported through
    finally:
        server.terminate()
        server.wait()


@pytest.mark.parametrize(
    "args",
    [
        ("create", "unpriv2", os.path.join(SCRATCH, "unpriv2.img"), "--size", "1M"),
        ("delete", NAME),
        ("unexport", NAME),
        ("save", os.path.join(SCRATCH, "unpriv.json")),
    ],
)
def test_what_changes_lio_is_refused_without_root(lun, args):
    before = vaaictl("list", "--json")[1]
    rc, out, err = as_nobody(*args)
    assert (rc, out) == (1, "")
    assert err == (
        f"vaaictl: error: {args[0]} needs root (only list, stats, exporter run "
        "without it); run it with sudo\n"
    )
    assert vaaictl("list", "--json")[1] == before and NAME in vaai_names()
    if args[0] in ("create", "save"):
        assert not any(os.path.exists(a) for a in args if a.startswith(SCRATCH))


def test_a_saved_configuration_is_for_root_alone(lun):
    path = os.path.join(SCRATCH, "unpriv-saved.json")
    try:
        vaaictl("save", path)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        r = subprocess.run([*NOBODY, "cat", path], capture_output=True, check=False)
        assert r.returncode != 0 and b"Permission denied" in r.stderr
    finally:
        os.unlink(path)
