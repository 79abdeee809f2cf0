"""vaaictl end to end: create with the ESXi profile, export, drive each
primitive with sg3_utils and read the counters back, refusals that leave
nothing behind."""

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from conftest import INITIATOR, SCRATCH, STORES, Backing, MiB, sh
from ctl import REPO, refused, sample, samples, vaai_names, vaaictl
from rtslib_fb import RTSRoot
from scsi import (
    clear_unit_attention,
    expect_good,
    make_token,
    read_blocks,
    write_blocks,
    write_using_token,
)
from vaai import VaaiStorageObject
from vaai.export import find_disk, sg_of


@pytest.fixture
def backstores():
    """Names of backstores a test makes through vaaictl, removed after it."""
    names = []
    yield names
    for name in names:
        vaaictl("delete", name, check=False)


def attr(name, key):
    return VaaiStorageObject(name).get_attribute(key)


def rotational(path):
    """What sysfs says of the store's device (a RAM file system: none)."""
    st = os.stat(path)
    dev = st.st_rdev if path.startswith("/dev/") else st.st_dev
    if os.major(dev) == 0:
        return 0
    with open(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/queue/rotational") as f:
        return int(f.read())


@pytest.mark.parametrize("kind", STORES)
def test_create_applies_the_esxi_profile(kind, backstores):
    backing = Backing(kind, 64 * MiB, precreate=True)
    try:
        backstores.append(f"esx-{kind}")
        _, out, _ = vaaictl("create", backstores[0], backing.path)
        assert out.startswith(
            f"created vaai/{backstores[0]} on {backing.path} (67108864 bytes, {kind} store"
        )
        want = {
            "block_size": "512",
            "emulate_caw": "1",
            "emulate_3pc": "1",
            "emulate_tpu": "1",
            "emulate_tpws": "1",
            "is_nonrot": str(1 - rotational(backing.path)),
        }
        assert {k: attr(backstores[0], k) for k in want} == want
        (row,) = json.loads(vaaictl("list", "--json")[1])
        assert row["name"] == backstores[0] and row["path"] == backing.path
        assert row["store"] == kind and row["thin"] and row["exports"] == []
        _, out, _ = vaaictl("delete", backstores[0])
        assert out == f"deleted vaai/{backstores[0]}\n"
        assert vaai_names() == [] and os.path.exists(backing.path)
    finally:
        backing.remove()


def test_plain_profile_and_4k_blocks(backstores, tmp_path):
    path = os.path.join(SCRATCH, "plain.img")
    backstores.append("plain")
    vaaictl("create", "plain", path, "--size", "32M", "--profile", "plain", "--block-size", "4096")
    try:
        assert attr("plain", "emulate_tpu") == "0" and attr("plain", "emulate_tpws") == "0"
        assert attr("plain", "block_size") == "4096"
        _, out, _ = vaaictl("list")
        _head, row = out.splitlines()
        assert row.split()[:5] == ["plain", "file", "32M", "4096", "rw"]
    finally:
        vaaictl("delete", "plain")
        os.unlink(path)


def test_refusals_say_what_is_wrong_and_leave_nothing(backstores):
    path = os.path.join(SCRATCH, "one.img")
    backstores.append("one")
    vaaictl("create", "one", path, "--size", "16M")
    try:
        refused(["create", "one", path + "2", "--size", "16M"], "backstore vaai/one exists already")
        assert not os.path.exists(path + "2")
        refused(["create", "two", path], f"{path} is in use by backstore vaai/one")
        refused(["create", "two", os.path.join(SCRATCH, "none.img")], "does not exist; give --size")
        refused(
            ["create", "two", "/nonexistent/dir/x.img", "--size", "1M"],
            "directory /nonexistent/dir does not exist",
        )
        refused(["create", "bad/name", path + "3", "--size", "1M"], "backstore name")
        # The kernel's own reason comes through for what only it can judge.
        with open(path + "4", "wb") as f:
            f.truncate(16 * MiB)
        refused(
            ["create", "two", path + "4", "--size", "8M"],
            f"size=8388608 does not match the 16777216 bytes of {path}4",
        )
        os.unlink(path + "4")
        refused(["delete", "nine"], "no vaai backstore 'nine' (there are: one)")
        refused(["export", "nine", "loopback"], "no vaai backstore 'nine'")
        refused(["stats", "nine"], "no vaai backstore nine")
        refused(
            ["restore", os.path.join(SCRATCH, "missing.json")],
            "does not exist; write one with 'vaaictl save'",
        )
    finally:
        vaaictl("delete", "one")
        os.unlink(path)


def test_a_size_the_file_system_refuses_is_rolled_back(small_fs, backstores):
    _, mnt = small_fs
    path = os.path.join(mnt, "huge.img")
    refused(["create", "huge", path, "--size", "1T"], "cannot create vaai/huge")
    assert not os.path.exists(path)


def test_missing_module_is_one_line_with_the_fix(tmp_path):
    """modprobe that cannot find the module (as on a host where it is not
    installed); here the module is loaded, so fake the check as well."""
    fake = tmp_path / "modprobe"
    fake.write_text(
        "#!/bin/sh\necho 'modprobe: FATAL: Module target_core_vaai not found' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    probe = tmp_path / "sitecustomize.py"
    probe.write_text(
        "import os\n_isdir = os.path.isdir\nos.path.isdir = lambda p: "
        "False if p == '/sys/module/target_core_vaai' else _isdir(p)\n"
    )
    env = {
        "PATH": "{}:{}".format(tmp_path, os.environ["PATH"]),
        "PYTHONPATH": "{}:{}".format(os.path.join(REPO, "python"), tmp_path),
    }
    refused(
        ["create", "m", os.path.join(SCRATCH, "m.img"), "--size", "1M"],
        "cannot load the target_core_vaai module (modprobe: FATAL: Module "
        "target_core_vaai not found): install the vaai-dkms package (with "
        "this kernel's headers), or run 'make install'",
        env=env,
    )


# --- counters ---------------------------------------------------------------


@pytest.fixture
def exported(backstores):
    """A 64 MiB file backstore made and exported over tcm_loop by vaaictl:
    (name, /dev/sgN)."""
    path = os.path.join(SCRATCH, "ctl.img")
    backstores.append("ctl")
    vaaictl("create", "ctl", path, "--size", "64M")
    _, out, _ = vaaictl("export", "ctl", "loopback")
    disk = out.strip().rsplit("(", 1)[1].rstrip(")")
    assert out.startswith("exported vaai/ctl as naa.") and disk.startswith("/dev/sd")
    wwn = out.split()[3]
    sg = sg_of(disk)
    clear_unit_attention(sg)
    yield "ctl", sg
    _, out, _ = vaaictl("delete", "ctl")
    assert out == f"deleted vaai/ctl; removed loopback {wwn} LUN 0\n"
    assert wwn not in [t.wwn for t in RTSRoot().targets], "the emptied target stays"
    os.unlink(path)


def counters(name):
    return json.loads(vaaictl("stats", name, "--json")[1])[name]


# The data path's own figures: READ/WRITE deferrals, the ACTV gauge, and
# the I/O metrics (udev reads the disk; test_metrics.py checks them)
DATA_PATH = {"mb_per_s", "rw_deferred", "in_flight", "io", "io_per_s"}


def moved(before, after):
    """The VAAI counters that changed, by how much."""
    return {k: after[k] - before[k] for k in after if k not in DATA_PATH and after[k] != before[k]}


def test_each_primitive_moves_exactly_its_counters(exported, tmp_path):
    name, sg = exported
    block = os.urandom(512)
    expect_good(write_blocks(sg, 0, block, 512))
    caw = tmp_path / "caw"
    caw.write_bytes(block + os.urandom(512))
    c0 = counters(name)

    sh("sg_compare_and_write", f"--in={caw}", "--lba=0", "--num=1", "--xferlen=1024", sg)
    c1 = counters(name)
    assert moved(c0, c1) == {"ats": 1}

    p = subprocess.run(
        ["sg_compare_and_write", f"--in={caw}", "--lba=0", "--num=1", "--xferlen=1024", sg],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 14, p.stderr  # sg3_utils: MISCOMPARE
    c2 = counters(name)
    assert moved(c1, c2) == {"ats_miscompare": 1}

    sh("sg_write_same", "--16", "--lba=2048", "--num=2048", sg)
    c3 = counters(name)
    assert moved(c2, c3) == {"zero": 1, "zero_blocks": 2048, "zero_bytes": MiB}

    sh("sg_unmap", "--force", "--lba=8192", "--num=4096", sg)
    c4 = counters(name)
    assert moved(c3, c4) == {"unmap": 1, "unmap_blocks": 4096, "unmap_bytes": 2 * MiB}

    sh("sg_xcopy", "if=" + sg, "of=" + sg, "bs=512", "count=64", "seek=20000")
    c5 = counters(name)
    assert moved(c4, c5) == {
        "clone_read": 1,
        "clone_write": 1,
        "clone_read_bytes": 32768,
        "clone_write_bytes": 32768,
    }
    assert (
        expect_good(read_blocks(sg, 20000, 64, 512)).data
        == expect_good(read_blocks(sg, 0, 64, 512)).data
    )

    # ODX: a token of 64 blocks, then a copy with it (counted as a clone)
    token = make_token(sg, [(0, 64)])
    c6 = counters(name)
    assert moved(c5, c6) == {"odx_tokens": 1}
    expect_good(write_using_token(sg, token, [(30000, 64)], 1))
    c7 = counters(name)
    assert moved(c6, c7) == {
        "clone_read": 1,
        "clone_write": 1,
        "clone_read_bytes": 32768,
        "clone_write_bytes": 32768,
    }
    assert (
        expect_good(read_blocks(sg, 30000, 64, 512)).data
        == expect_good(read_blocks(sg, 0, 64, 512)).data
    )

    # Refused before execution (LBA OUT OF RANGE): no counter moves.
    p = subprocess.run(
        ["sg_write_same", "--16", f"--lba={64 * MiB // 512}", "--num=1", sg],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 22, p.stderr  # sg3_utils: LBA OUT OF RANGE
    assert moved(c7, counters(name)) == {}


def vaai_only(got):
    """What the data path and udev's reads do not move between two
    scrapes: the offloads' series and the LUN's identity."""
    steady = ("vaai_lun_ats_", "vaai_lun_zero_", "vaai_lun_unmap_", "vaai_lun_clone_")
    return {
        k: v for k, v in got.items() if k[0].startswith(steady) or k[0] == "vaai_lun_size_bytes"
    }


def test_prometheus_text_and_http_endpoint_agree(exported):
    name, sg = exported
    sh("sg_write_same", "--16", "--lba=0", "--num=8", sg)
    text = vaaictl("stats", "--prometheus")[1]
    assert "# TYPE vaai_lun_zero_commands_total counter" in text
    assert "# TYPE vaai_lun_zero_latency_seconds histogram" in text
    got = samples(text)
    assert sample(got, "vaai_lun_zero_commands_total", lun=name) == counters(name)["zero"] == 1
    assert sample(got, "vaai_lun_zero_bytes_total", lun=name) == 4096
    assert sample(got, "vaai_lun_zero_latency_seconds_count", lun=name) == 1
    assert sample(got, "vaai_lun_zero_latency_seconds_bucket", lun=name, le="+Inf") == 1
    assert sample(got, "vaai_lun_in_flight_requests", lun=name) >= 0
    (row,) = [r for r in json.loads(vaaictl("list", "--json")[1]) if r["name"] == name]
    assert sample(got, "vaai_lun_size_bytes", lun=name, wwn=row["wwn"]) == row["size"]

    port = 9737
    server = subprocess.Popen(
        [sys.executable, "-m", "vaai", "exporter", "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")),
    )
    try:
        assert server.stdout.readline().startswith("serving vaai metrics on http://")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            # udev may still be reading the new disk: the data path's
            # figures can move between the two readings, the VAAI ones not
            assert vaai_only(samples(r.read().decode())) == vaai_only(got)
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=10)
        assert e.value.code == 404
    finally:
        server.terminate()
        server.wait()


def test_watch_shows_rates_over_each_interval(exported):
    name, _sg = exported
    t0 = time.monotonic()
    _, out, _ = vaaictl("stats", name, "--watch", "--interval", "0.3", "--count", "2")
    assert time.monotonic() - t0 >= 0.6
    views = [v for v in out.split("\n\n") if v.strip()]
    assert len(views) == 2
    for view in views:
        head, row = view.splitlines()
        cells = dict(zip(head.split(), row.split()))
        assert cells["BACKSTORE"] == name
        assert float(cells["MBZERO/s"]) >= 0 and float(cells["MBC_RD/s"]) >= 0


# --- export over iSCSI ------------------------------------------------------

ISCSI_IQN = "iqn.2026-11.org.vaai:ctl-export"


@pytest.fixture
def iscsi_session():
    """This initiator's name; logged out of ISCSI_IQN and its node record
    dropped afterwards."""
    sh(INITIATOR, "start")
    yield sh(INITIATOR, "name").strip()
    subprocess.run([INITIATOR, "logout", ISCSI_IQN], capture_output=True, check=False)
    subprocess.run(
        ["iscsiadm", "-m", "node", "-T", ISCSI_IQN, "-o", "delete"],
        capture_output=True,
        check=False,
    )


def negotiated(iqn):
    """The iSCSI parameters of open-iscsi's session to iqn, as negotiated."""
    out = sh("iscsiadm", "-m", "session", "-P", "2")
    part = out[out.index("Target: " + iqn) :]
    return dict(re.findall(r"^\s+(\w+): (\S+)$", part, re.MULTILINE))


def test_plain_profile_keeps_lio_iscsi_defaults(backstores, iscsi_session):
    path = os.path.join(SCRATCH, "plainiscsi.img")
    backstores.append("plainiscsi")
    vaaictl("create", "plainiscsi", path, "--size", "16M")
    try:
        vaaictl(
            "export",
            "plainiscsi",
            "iscsi",
            "--iqn",
            ISCSI_IQN,
            "--ip",
            "127.0.0.1",
            "--initiator",
            iscsi_session,
            "--profile",
            "plain",
        )
        sh(INITIATOR, "login", ISCSI_IQN)
        got = negotiated(ISCSI_IQN)
        assert got.items() >= {"FirstBurstLength": "65536", "InitialR2T": "Yes"}.items(), (
            json.dumps(got)
        )
        sh(INITIATOR, "logout", ISCSI_IQN)
    finally:
        vaaictl("delete", "plainiscsi")
        os.unlink(path)


def test_export_over_iscsi_with_chap(backstores, iscsi_session):
    me = iscsi_session
    path = os.path.join(SCRATCH, "chap.img")
    backstores.append("chap")
    vaaictl("create", "chap", path, "--size", "16M")
    # The secret from a file only root may read, not the command line.
    secret = os.path.join(SCRATCH, "chap-secret")
    with open(os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write("esx01:s3cret-for-esx1\n")
    try:
        refused(
            [
                "export",
                "chap",
                "iscsi",
                "--iqn",
                ISCSI_IQN,
                "--initiator",
                me,
                "--mutual-chap",
                "array:array-s3cret-42",
            ],
            "mutual CHAP needs the initiator's CHAP credentials too",
        )
        assert ISCSI_IQN not in [t.wwn for t in RTSRoot().targets]
        args = [
            "export",
            "chap",
            "iscsi",
            "--iqn",
            ISCSI_IQN,
            "--ip",
            "127.0.0.1",
            "--initiator",
            me,
            "--chap-file",
            secret,
        ]
        _, out, _ = vaaictl(*args)
        assert out == f"exported vaai/chap as {ISCSI_IQN} LUN 0 (127.0.0.1:3260)\n"
        before = RTSRoot().dump()["targets"]
        vaaictl(*args)  # again: nothing changes
        assert RTSRoot().dump()["targets"] == before

        env = dict(os.environ, CHAP_USER="esx01", CHAP_PASS="wrong-secret-123")
        assert (
            subprocess.run(
                [INITIATOR, "login", ISCSI_IQN], env=env, capture_output=True, check=False
            ).returncode
            != 0
        )
        env.update(CHAP_PASS="s3cret-for-esx1")
        subprocess.run([INITIATOR, "login", ISCSI_IQN], env=env, check=True, capture_output=True)
        # The esxi profile's TPG settings, as the session negotiated them.
        want = {
            "FirstBurstLength": "262144",
            "MaxBurstLength": "262144",
            "InitialR2T": "No",
            "ImmediateData": "Yes",
        }
        assert negotiated(ISCSI_IQN).items() >= want.items()
        acl = next(
            iter(
                next(iter(next(t for t in RTSRoot().targets if t.wwn == ISCSI_IQN).tpgs)).node_acls
            )
        )
        assert acl.tcq_depth == "128"
        sg = sg_of(find_disk(VaaiStorageObject("chap"), "iscsi_tcp", target=ISCSI_IQN))
        clear_unit_attention(sg)
        data = os.urandom(8192)
        expect_good(write_blocks(sg, 64, data, 512))
        assert expect_good(read_blocks(sg, 64, 16, 512)).data == data
        sh(INITIATOR, "logout", ISCSI_IQN)

        # LUN 0 of that target is taken: another backstore is refused there,
        # and the ACL it would have added is not left behind.
        backstores.append("chap2")
        vaaictl("create", "chap2", path + "2", "--size", "1M")
        refused(
            [
                "export",
                "chap2",
                "iscsi",
                "--iqn",
                ISCSI_IQN,
                "--ip",
                "127.0.0.1",
                "--initiator",
                "iqn.1998-01.com.vmware:esx02",
            ],
            f"LUN 0 of {ISCSI_IQN} is vaai/chap already; pick another LUN",
        )
        assert RTSRoot().dump()["targets"] == before
    finally:
        for name in ("chap", "chap2"):
            vaaictl("delete", name, check=False)
        for p in (path, path + "2", secret):
            if os.path.exists(p):
                os.unlink(p)
    assert ISCSI_IQN not in [t.wwn for t in RTSRoot().targets]


@pytest.fixture
def lun_named_bad(backstores):
    path = os.path.join(SCRATCH, "bad.img")
    backstores.append("bad")
    vaaictl("create", "bad", path, "--size", "1M")
    yield "bad"
    vaaictl("delete", "bad")
    os.unlink(path)


def test_export_on_a_port_in_use_is_refused_and_rolled_back(lun_named_bad):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        refused(
            [
                "export",
                lun_named_bad,
                "iscsi",
                "--iqn",
                ISCSI_IQN,
                "--ip",
                "127.0.0.1",
                "--port",
                port,
            ],
            f"cannot export bad over iSCSI on 127.0.0.1:{port}",
        )
    assert ISCSI_IQN not in [t.wwn for t in RTSRoot().targets]


@pytest.mark.parametrize("driver", ["tcm_fc", "qla2xxx"])
def test_export_to_an_fc_port_this_machine_lacks(lun_named_bad, driver):
    """No FCoE port is up and there is no QLogic HBA here: the WWPN is
    refused by name, whether the fabric module loads or not."""
    targets = [t.wwn for t in RTSRoot().targets]
    rc, out, err = vaaictl(
        "export",
        lun_named_bad,
        "fc",
        "--driver",
        driver,
        "--wwpn",
        "21:00:00:24:ff:31:4c:9a",
        check=False,
    )
    assert rc == 1 and out == "" and len(err.splitlines()) == 1, err
    assert (
        f"no {driver} port naa.21000024ff314c9a on this machine" in err
        or f"fabric {driver} is not available" in err
    ), err
    assert [t.wwn for t in RTSRoot().targets] == targets
