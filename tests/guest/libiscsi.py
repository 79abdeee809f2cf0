"""Running libiscsi's iscsi-test-cu (Debian's libiscsi-bin) in the guest
against one storage object exported over LIO's iSCSI target on
127.0.0.1 (port 3261, or another for a second run beside it), and reading
its results (CUnit's XML)."""

import contextlib
import os
import subprocess
import xml.etree.ElementTree as ET

from rtslib_fb import LUN, TPG, FabricModule, NetworkPortal, Target
from vaai.export import export_iscsi

IQN = "iqn.2026-11.org.vaai:libiscsi"
PORT = 3261
# The suite logs in as these two (the second for the reservation tests).
INITIATORS = (
    "iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-test",
    "iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-test-2",
)


def export_demo(so, iqn, port):
    """so as LUN 0 of a TPG in demo mode: any initiator, read-write."""
    tpg = TPG(Target(FabricModule("iscsi"), iqn), 1)
    NetworkPortal(tpg, "127.0.0.1", port)
    LUN(tpg, 0, storage_object=so)
    for name, value in (
        ("authentication", 0),
        ("generate_node_acls", 1),
        ("demo_mode_write_protect", 0),
        ("cache_dynamic_acls", 1),
    ):
        tpg.set_attribute(name, value)
    tpg.enable = True


def export_acl(so, iqn, port):
    export_iscsi(so, iqn, port=port, initiators=INITIATORS)


def outcomes(xml_path):
    """{test name: "passed" | "failed: why"} from CUnit's automated XML."""
    out = {}
    root = ET.parse(xml_path).getroot()
    for suite in root.iter("CUNIT_RUN_SUITE_SUCCESS"):
        name = suite.findtext("SUITE_NAME").strip()
        for rec in suite.iter("CUNIT_RUN_TEST_RECORD"):
            ok = rec.find("CUNIT_RUN_TEST_SUCCESS")
            if ok is not None:
                out["{}.{}".format(name, ok.findtext("TEST_NAME").strip())] = "passed"
                continue
            bad = rec.find("CUNIT_RUN_TEST_FAILURE")
            test = "{}.{}".format(name, bad.findtext("TEST_NAME").strip())
            why = "{}:{} {}".format(
                os.path.basename(bad.findtext("FILE_NAME").strip()),
                bad.findtext("LINE_NUMBER").strip(),
                bad.findtext("CONDITION").strip(),
            )
            if out.get(test, "passed") == "passed":
                out[test] = "failed: " + why
    for suite in root.iter("CUNIT_RUN_SUITE_FAILURE"):
        out[suite.findtext("SUITE_NAME").strip() + ".*"] = (
            "failed: suite " + suite.findtext("FAILURE_REASON").strip()
        )
    return out


def run_suite(tmp_path, iqn, port):
    """iscsi-test-cu, every test once, --dataloss, XML in tmp_path: the
    outcomes and the console text.  Without --test it runs each of its
    families in turn (ALL, then SCSI, iSCSI and LINUX, whose tests are
    ALL's again), three times the work for no test more."""
    url = f"iscsi://127.0.0.1:{port}/{iqn}/0"
    p = subprocess.run(
        ["iscsi-test-cu", "--dataloss", "--test", "ALL", "--xml", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    xml = tmp_path / "CUnitAutomated-Results.xml"
    assert xml.exists(), (
        f"iscsi-test-cu wrote no results ({p.returncode}): {(p.stdout[-2000:])}{(p.stderr[-2000:])}"
    )
    return outcomes(xml), p.stdout + p.stderr


@contextlib.contextmanager
def exported(so, mode, port=PORT):
    """so exported in mode ("demo" or "acl") on a target of its own at
    port while the block runs; yields the target's name."""
    iqn = f"{IQN}-{port}"
    try:
        (export_demo if mode == "demo" else export_acl)(so, iqn, port)
        yield iqn
    finally:
        Target(FabricModule("iscsi"), iqn, mode="any").delete()


def keep(text, log):
    with open(log, "w") as f:
        f.write(text)


def suite_on(so, mode, tmp_path, log, port=PORT):
    """The suite against so, exported in mode ("demo" or "acl"); the
    console text goes to log.  The outcomes, as outcomes() gives them."""
    with exported(so, mode, port) as iqn:
        results, text = run_suite(tmp_path, iqn, port)
    keep(text, log)
    return results
