"""libiscsi's suite on ours and on LIO's own backends in one boot, for the
side-by-side table in docs/testing.md (`make report-libiscsi`; not part of
`make test`, and it asserts nothing).  Every side runs in demo mode on a
LUN of the same size: ours on a file on XFS and on a loop device, LIO's
fileio on a file on XFS and iblock on a loop device, both with
emulate_tpu=1 and emulate_tpws=1 (LIO's defaults leave UNMAP off).
Results: build/libiscsi/KVER-SIDE.json, {test: "passed" | "failed: ..."}."""

import json
import os

import pytest
from conftest import SCRATCH, Backing, MiB
from libiscsi import suite_on
from rtslib_fb import BlockStorageObject, FileIOStorageObject
from vaai import VaaiStorageObject
from vaai.export import unexport

SIZE = 256 * MiB
OUT = "build/libiscsi"


def make_so(backend, backing):
    if backend == "vaai":
        return VaaiStorageObject(
            "libiscsi", path=backing.path, size=None if backing.precreated else SIZE
        )
    if backend == "fileio":
        so = FileIOStorageObject("libiscsi", backing.path, size=SIZE, write_back=False)
    else:
        so = BlockStorageObject("libiscsi", backing.path)
    so.set_attribute("emulate_tpu", 1)
    so.set_attribute("emulate_tpws", 1)
    return so


@pytest.mark.parametrize(
    "backend, kind", [("vaai", "xfs"), ("fileio", "xfs"), ("vaai", "bdev"), ("iblock", "bdev")]
)
def test_report(backend, kind, request, tmp_path):
    where = request.getfixturevalue("xfs_scratch") if kind == "xfs" else SCRATCH
    backing = Backing(kind, SIZE, where=where, precreate=backend == "fileio")
    so = make_so(backend, backing)
    side = f"{backend}-{kind}"
    os.makedirs(OUT, exist_ok=True)
    try:
        results = suite_on(so, "demo", tmp_path, f"{OUT}/{os.uname().release}-{side}.txt")
    finally:
        unexport(so)
        so.delete()
        backing.remove()
    with open(f"{OUT}/{os.uname().release}-{side}.json", "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
