"""libiscsi's conformance suite, iscsi-test-cu (Debian's libiscsi-bin),
against vaai LUNs over LIO's iSCSI target: every suite, --dataloss, once
per store of STORES, the runs side by side (one software-emulated guest
gets through both in less time than one after the other): the file store
(a file on XFS) with the TPG in demo mode, and the block store with an
ACL per initiator as `vaaictl export --initiator` makes them.

The test fails on any test that fails in either run and is not in
libiscsi_expected (each entry says which clause or which LIO-core
behaviour makes it fail), and on an EXPECTED entry that passed: the list
only names tests that fail here."""

import contextlib
import json
import os
from concurrent.futures import ThreadPoolExecutor

from conftest import SCRATCH, Backing, MiB
from libiscsi import PORT, exported, keep, run_suite
from libiscsi_expected import EXPECTED, FLAKY
from vaai import VaaiStorageObject
from vaai.export import unexport

SIZE = 256 * MiB
RUNS = (("xfs", "demo"), ("bdev", "acl"))
# the stores to run it on (VAAI_LIBISCSI_STORES, "xfs bdev" by default):
# make test runs the block store's alone, within CI's hour
STORES = os.environ.get("VAAI_LIBISCSI_STORES", "xfs bdev").split()


@contextlib.contextmanager
def lun(kind, where):
    """A new LUN of kind ("xfs": the file store on XFS, "bdev")."""
    backing = Backing(kind, SIZE, where=where)
    so = None
    try:
        so = VaaiStorageObject(
            "libiscsi-" + kind, path=backing.path, size=None if backing.precreated else SIZE
        )
        yield so
    finally:
        if so is not None:
            unexport(so)
            so.delete()
        backing.remove()


def log_of(kind, mode):
    """build/vm/libiscsi-KVER-KIND-MODE: .txt the console, .json outcomes."""
    return f"build/vm/libiscsi-{os.uname().release}-{kind}-{mode}"


def verdict(results):
    """(unexpected failures, EXPECTED entries that passed, passed count)."""
    failed = {t: why for t, why in results.items() if why != "passed"}
    unexpected = {t: why for t, why in failed.items() if t not in EXPECTED and t not in FLAKY}
    fixed = sorted(t for t in EXPECTED if results.get(t) == "passed")
    return unexpected, fixed, len(results) - len(failed)


def test_libiscsi_suites(xfs_scratch, tmp_path):
    runs = [(kind, mode) for kind, mode in RUNS if kind in STORES]
    assert runs and len(runs) == len(STORES), f"VAAI_LIBISCSI_STORES={STORES}: not of {RUNS}"
    wheres = {"xfs": xfs_scratch, "bdev": SCRATCH}
    with contextlib.ExitStack() as stack:
        # Made and exported one after the other (loop devices, configfs);
        # only the suites run side by side.
        targets = []
        for i, (kind, mode) in enumerate(runs):
            so = stack.enter_context(lun(kind, wheres[kind]))
            iqn = stack.enter_context(exported(so, mode, PORT + i))
            out = tmp_path / kind
            out.mkdir()
            targets.append((out, iqn, PORT + i))
        with ThreadPoolExecutor(len(runs)) as pool:
            results = list(pool.map(lambda t: run_suite(*t), targets))
    report = []
    for (kind, mode), (res, text) in zip(runs, results):
        keep(text, log_of(kind, mode) + ".txt")
        with open(log_of(kind, mode) + ".json", "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
        unexpected, fixed, passed = verdict(res)
        if unexpected or fixed:
            failures = "\n  ".join(f"{name} {why}" for name, why in sorted(unexpected.items()))
            report.append(
                f"{kind}-{mode}: {passed} of {len(res)} passed; unexpected failures:\n"
                f"  {failures}\nexpected to fail but passed: {fixed}"
            )
    assert not report, "\n".join(report)
