"""Host-side tests of the Prometheus collector over a fake configfs tree:
names, labels, histograms as Prometheus' text format carries them, space,
sessions; and the HTTP endpoint serving it."""

import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from prometheus_client.parser import text_string_to_metric_families
from vaai import collector, exporter, iostats, stats


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def fake_vaai_lun(root, name, serial, size, path, io=None, threshold=0, **counters):
    """A vaai device as configfs shows it: info, unit serial, the VAAI
    counters and the I/O metrics (io: {kind: (cmds, errors, bytes, lat_us,
    {bucket: count})})."""
    dev = os.path.join(root, "core", "vaai_0", name)
    write(
        os.path.join(dev, "info"),
        # LIO ends its part with spaces, no newline, as the kernel does
        f"Status: ACTIVATED  Max Queue Depth: 128        Path: {path}\nStore: file\n"
        f"Bytes: {size}\nReadonly: 0\n",
    )
    write(os.path.join(dev, "wwn", "vpd_unit_serial"), f"T10 VPD Unit Serial Number: {serial}\n")
    attrib = os.path.join(dev, "attrib")
    write(os.path.join(attrib, "tp_soft_threshold"), f"{threshold}\n")
    write(os.path.join(attrib, "block_size"), "512\n")
    for key, _ in stats.COUNTERS:
        write(os.path.join(attrib, "stats_" + key), f"{counters.get(key, 0)}\n")
    for kind in iostats.KINDS:
        cmds, errors, nbytes, lat, hist = (io or {}).get(kind, (0, 0, 0, 0, {}))
        buckets = " ".join(str(hist.get(b, 0)) for b in range(iostats.BUCKETS))
        write(
            os.path.join(attrib, f"stats_io_{kind}"), f"{cmds} {errors} {nbytes} {lat} {buckets}\n"
        )
    write(os.path.join(attrib, "stats_lock_wait"), "3 1500\n")
    write(os.path.join(attrib, "stats_ats_worst_us"), "2048\n")
    write(os.path.join(attrib, "io_stats"), "1\n")


def scrape(root):
    """{(name, labels as a sorted tuple): value} of one exposition."""
    out = {}
    for family in text_string_to_metric_families(exporter.exposition(str(root))):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def lun_labels(lun, wwn, **more):
    return tuple(sorted(dict(lun=lun, wwn=wwn, **more).items()))


@pytest.fixture
def tree(tmp_path):
    image = tmp_path / "ds1.img"
    with open(image, "wb") as f:
        f.write(b"\1" * 8192)
    fake_vaai_lun(
        str(tmp_path),
        "ds1",
        "b0c1a0e4-0000",
        1 << 30,
        str(image),
        io={
            # 3 ATS: 1 of 0 µs (bucket 0), 2 of 1000-1023 µs (bucket 10)
            "ats": (3, 1, 1536, 2001, {0: 1, 10: 2}),
            "read": (5, 0, 5 << 20, 50, {3: 5}),
        },
        threshold=80,
        ats_miscompare=1,
        clone_read_bytes=4096,
        in_flight=2,
        odx_held_bytes=16 << 20,
    )
    return tmp_path, image


def test_each_kind_has_commands_errors_bytes_and_a_latency_histogram(tree):
    root, _ = tree
    got = scrape(root)
    ds1 = lun_labels("ds1", "b0c1a0e4-0000")
    assert got[("vaai_lun_ats_commands_total", ds1)] == 3
    assert got[("vaai_lun_ats_errors_total", ds1)] == 1
    assert got[("vaai_lun_ats_bytes_total", ds1)] == 1536
    assert got[("vaai_lun_read_bytes_total", ds1)] == 5 << 20
    assert got[("vaai_lun_clone_commands_total", ds1)] == 0
    # buckets are cumulative, their bounds 2^b µs in seconds
    le = lambda v: lun_labels("ds1", "b0c1a0e4-0000", le=v)  # noqa: E731
    assert got[("vaai_lun_ats_latency_seconds_bucket", le("1e-06"))] == 1
    assert got[("vaai_lun_ats_latency_seconds_bucket", le("0.000512"))] == 1
    assert got[("vaai_lun_ats_latency_seconds_bucket", le("0.001024"))] == 3
    assert got[("vaai_lun_ats_latency_seconds_bucket", le("+Inf"))] == 3
    assert got[("vaai_lun_ats_latency_seconds_count", ds1)] == 3
    assert got[("vaai_lun_ats_latency_seconds_sum", ds1)] == pytest.approx(0.002001)
    assert got[("vaai_lun_read_latency_seconds_bucket", le("8e-06"))] == 5


def test_lock_waits_worst_ats_and_the_vaai_counters(tree):
    root, _ = tree
    got = scrape(root)
    ds1 = lun_labels("ds1", "b0c1a0e4-0000")
    assert got[("vaai_lun_range_lock_waits_total", ds1)] == 3
    assert got[("vaai_lun_range_lock_wait_seconds_total", ds1)] == pytest.approx(0.0015)
    assert got[("vaai_lun_ats_worst_latency_seconds", ds1)] == pytest.approx(0.002048)
    assert got[("vaai_lun_ats_miscompare_total", ds1)] == 1
    assert got[("vaai_lun_clone_read_bytes_total", ds1)] == 4096
    assert got[("vaai_lun_in_flight_requests", ds1)] == 2
    assert got[("vaai_lun_io_stats_enabled", ds1)] == 1
    assert got[("vaai_lun_odx_held_bytes", ds1)] == 16 << 20
    # what the per-kind metrics carry is not served twice
    assert not [k for k in got if k[0] in ("vaai_lun_ats_total", "vaai_lun_zero_total")]


def test_io_stats_off_shows(tree):
    """attrib/io_stats 0: the metrics stand still, and the gauge says why
    rates drop to nothing on a busy LUN."""
    root, _ = tree
    dev = os.path.join(root, "core", "vaai_0", "ds1")
    write(os.path.join(dev, "attrib", "io_stats"), "0\n")
    assert scrape(root)[("vaai_lun_io_stats_enabled", lun_labels("ds1", "b0c1a0e4-0000"))] == 0


def test_space_of_a_file_store(tree):
    root, image = tree
    got = scrape(root)
    ds1 = lun_labels("ds1", "b0c1a0e4-0000")
    assert got[("vaai_lun_size_bytes", ds1)] == 1 << 30
    assert got[("vaai_lun_allocated_bytes", ds1)] == os.stat(image).st_blocks * 512
    fs = os.statvfs(image)
    assert got[("vaai_lun_store_free_bytes", ds1)] == pytest.approx(
        fs.f_bavail * fs.f_frsize, rel=0.01
    )
    assert got[("vaai_lun_soft_threshold_ratio", ds1)] == 0.8


def test_a_block_store_has_a_size_but_no_file_space(tmp_path):
    fake_vaai_lun(str(tmp_path), "blk", "s2", 4 << 20, "/dev/null")
    got = scrape(tmp_path)
    assert got[("vaai_lun_size_bytes", lun_labels("blk", "s2"))] == 4 << 20
    assert not [k for k in got if k[0] == "vaai_lun_allocated_bytes"]


def test_a_lun_half_made_or_of_another_backend_is_left_out(tmp_path):
    fake_vaai_lun(str(tmp_path), "ds1", "s1", 1 << 20, "/nowhere")
    os.makedirs(tmp_path / "core" / "vaai_0" / "new" / "attrib")
    write(str(tmp_path / "core" / "fileio_0" / "f" / "info"), "Bytes: 1\n")
    luns = {dict(k[1]).get("lun") for k in scrape(tmp_path)} - {None}
    assert luns == {"ds1"}


def fake_acl(root, fabric, target, initiator, luns, info=None, port_ident=True):
    acl = os.path.join(root, fabric, target, "tpgt_1", "acls", initiator)
    os.makedirs(acl)
    if info is not None:
        write(os.path.join(acl, "info"), info)
    for n in range(luns):
        stat = os.path.join(acl, f"lun_{n}", "statistics", "scsi_att_intr_port")
        os.makedirs(stat)
        if port_ident:
            write(os.path.join(stat, "port_ident"), f"{initiator},i,0x1\n")


def test_sessions_of_every_fabric(tmp_path):
    root = str(tmp_path)
    fake_acl(root, "iscsi", "iqn.t1", "iqn.esx-a", 2, info="InitiatorName: iqn.esx-a\n")
    fake_acl(root, "iscsi", "iqn.t1", "iqn.esx-b", 1, info="No active iSCSI Session for ...\n")
    fake_acl(root, "tcm_fc", "20:00:00:00:00:00:00:01", "21:00:00:00:00:00:00:02", 1)
    fake_acl(
        root, "tcm_fc", "20:00:00:00:00:00:00:01", "21:00:00:00:00:00:00:03", 1, port_ident=False
    )
    fake_acl(root, "tcm_fc", "20:00:00:00:00:00:00:01", "21:00:00:00:00:00:00:04", 0)
    write(os.path.join(root, "loopback", "naa.5001", "tpgt_1", "nexus"), "naa.5001abc\n")
    os.makedirs(os.path.join(root, "loopback", "naa.5001", "tpgt_1", "lun", "lun_0"))
    got = scrape(tmp_path)

    def s(fabric, target, initiator):
        labels = {"fabric": fabric, "target": target, "tpg": "1", "initiator": initiator}
        return tuple(sorted(labels.items()))

    assert got[("vaai_session_up", s("iscsi", "iqn.t1", "iqn.esx-a"))] == 1
    assert got[("vaai_session_mapped_luns", s("iscsi", "iqn.t1", "iqn.esx-a"))] == 2
    assert got[("vaai_session_up", s("iscsi", "iqn.t1", "iqn.esx-b"))] == 0
    fc = "20:00:00:00:00:00:00:01"
    assert got[("vaai_session_up", s("tcm_fc", fc, "21:00:00:00:00:00:00:02"))] == 1
    assert got[("vaai_session_up", s("tcm_fc", fc, "21:00:00:00:00:00:00:03"))] == 0
    # no LUN to ask: the mapping is shown, the state is not guessed
    assert ("vaai_session_up", s("tcm_fc", fc, "21:00:00:00:00:00:00:04")) not in got
    assert got[("vaai_session_mapped_luns", s("tcm_fc", fc, "21:00:00:00:00:00:00:04"))] == 0
    assert got[("vaai_session_up", s("loopback", "naa.5001", "naa.5001abc"))] == 1
    assert got[("vaai_session_mapped_luns", s("loopback", "naa.5001", "naa.5001abc"))] == 1


def test_the_endpoint_serves_metrics_and_nothing_else(tree):
    root, _ = tree
    from wsgiref.simple_server import make_server

    from prometheus_client.exposition import ThreadingWSGIServer

    httpd = make_server("127.0.0.1", 0, exporter.app(str(root)), ThreadingWSGIServer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_port}"
    try:
        with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
            assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            assert 'vaai_lun_ats_commands_total{lun="ds1",wwn="b0c1a0e4-0000"} 3.0' in (
                r.read().decode().splitlines()
            )
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url + "/other", timeout=10)
        assert e.value.code == 404
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_an_empty_tree_is_a_scrape_without_samples(tmp_path):
    assert scrape(tmp_path) == {}
    names = {f.name for f in collector.VaaiCollector(str(tmp_path)).collect()}
    assert {"vaai_lun_ats_latency_seconds", "vaai_session_up"} <= names


DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "docs")


def doc_exprs():
    """Every PromQL expression of the shipped alert rules and dashboard."""
    import json

    import yaml

    with open(os.path.join(DOCS, "prometheus-vaai-alerts.yml")) as f:
        rules = yaml.safe_load(f)["groups"][0]["rules"]
    with open(os.path.join(DOCS, "grafana-vaai.json")) as f:
        dash = json.load(f)
    return [r["expr"] for r in rules] + [t["expr"] for p in dash["panels"] for t in p["targets"]]


def test_the_alerts_and_dashboard_ask_for_what_is_served(tree, tmp_path):
    root, _ = tree
    fake_acl(str(root), "iscsi", "iqn.t1", "iqn.esx-a", 1, info="InitiatorName: iqn.esx-a\n")
    served = {name for name, _labels in scrape(root)}
    asked = {m for e in doc_exprs() for m in re.findall(r"\bvaai_[a-z_]+\b", e)}
    assert asked and asked <= served, sorted(asked - served)


PROMTOOL = os.environ.get("VAAI_PROMTOOL", "/opt/vaai/bin/promtool")


def promtool(*args, text=None):
    """Prometheus' own checker (tests/vm/deps.sh unpacks it): its output."""
    assert os.access(PROMTOOL, os.X_OK), f"{PROMTOOL} missing: run tests/vm/deps.sh"
    p = subprocess.run([PROMTOOL, *args], input=text, capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout + p.stderr


def test_promtool_accepts_the_exposition_and_the_alert_rules(tree):
    root, _ = tree
    fake_acl(str(root), "iscsi", "iqn.t1", "iqn.esx-a", 2, info="InitiatorName: iqn.esx-a\n")
    text = exporter.exposition(str(root))
    assert "vaai_lun_read_latency_seconds_bucket" in text and "vaai_session_up{" in text
    # check metrics says nothing when the names, help and types pass its lint
    assert promtool("check", "metrics", text=text) == ""
    assert "SUCCESS: 6 rules found" in promtool(
        "check", "rules", os.path.join(DOCS, "prometheus-vaai-alerts.yml")
    )


def test_names_keep_those_luns_and_every_session(tree):
    root, image = tree
    fake_vaai_lun(str(root), "ds2", "c0ffee-0002", 1 << 20, str(image))
    fake_acl(str(root), "iscsi", "iqn.t1", "iqn.esx-a", 2, info="InitiatorName: iqn.esx-a\n")
    text = exporter.exposition(str(root), names=["ds2"])
    assert 'lun="ds2"' in text and 'lun="ds1"' not in text
    assert 'vaai_session_up{fabric="iscsi",initiator="iqn.esx-a"' in text
    assert 'lun="ds1"' in exporter.exposition(str(root))
