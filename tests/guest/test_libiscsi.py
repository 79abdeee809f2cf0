"""libiscsi's conformance suite, iscsi-test-cu (Debian's libiscsi-bin),
against a vaai LUN over LIO's iSCSI target: every suite, --dataloss, on the
block store with an ACL per initiator as `vaaictl export --initiator`
makes them, and (make test-libiscsi) on the file store (a file on XFS)
with the TPG in demo mode.

The run fails on any test that fails and is not in libiscsi_expected
(each entry says which clause or which LIO-core behaviour makes it fail),
and on an EXPECTED entry that passed: the list only names tests that fail
here."""
import json
import os

import pytest

from conftest import SCRATCH, MiB, Backing
from libiscsi import suite_on
from libiscsi_expected import EXPECTED, FLAKY
from vaai import VaaiStorageObject
from vaai.export import unexport

SIZE = 256 * MiB


# make test runs the block store with ACLs (how vaaictl exports a LUN) among
# the other suites; make test-libiscsi runs both.
@pytest.mark.parametrize("kind, mode", [
    pytest.param("xfs", "demo", marks=pytest.mark.libiscsi_full, id="xfs-demo"),
    pytest.param("bdev", "acl", id="bdev-acl")])
def test_libiscsi_suite(kind, mode, request, tmp_path):
    """kind: the store ("xfs": the file store on XFS, "bdev")."""
    where = request.getfixturevalue("xfs_scratch") if kind == "xfs" else SCRATCH
    backing = Backing(kind, SIZE, where=where)
    so = VaaiStorageObject("libiscsi", path=backing.path,
                           size=None if backing.precreated else SIZE)
    log = "build/vm/libiscsi-%s-%s-%s" % (os.uname().release, kind, mode)
    try:
        results = suite_on(so, mode, tmp_path, log + ".txt")
    finally:
        unexport(so)
        so.delete()
        backing.remove()
    with open(log + ".json", "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    failed = {t: why for t, why in results.items() if why != "passed"}
    unexpected = {t: why for t, why in failed.items()
                  if t not in EXPECTED and t not in FLAKY}
    fixed = sorted(t for t in EXPECTED if results.get(t) == "passed")
    passed = len(results) - len(failed)
    assert not unexpected and not fixed, (
        "%d of %d passed; unexpected failures:\n  %s\nexpected to fail but passed: %s"
        % (passed, len(results),
           "\n  ".join("%s %s" % kv for kv in sorted(unexpected.items())), fixed))
