"""EXTENDED COPY between files that cannot share extents (ext4).  While the
direct path serves the LUNs (write cache off, io_mode auto), the copy
engine moves the data with direct I/O through its own buffers and leaves
neither file's pages in the page cache; with io_mode buffered on both it
splices from page cache to page cache.  Either way the backing file and
the LUN read back what was copied."""

import os
import subprocess

import pytest
from conftest import MiB, cached_bytes, current, drop_caches
from scsi import clear_unit_attention, cscd_e4, expect_good, naa_of, seg_b2b, xcopy, xcopy_list
from vaai import VaaiStorageObject
from vaai.export import export_loopback, find_disk, sg_of, unexport

LUN_BYTES = 32 * MiB
COPY_BYTES = 8 * MiB


@pytest.fixture
def two_luns(ext4_scratch):
    """Two vaai LUNs on files on the session's ext4 (conftest), in one
    tcm_loop target (one nexus):
    [(storage object, sg node, disk, backing file)] * 2."""
    made, wwn = [], None
    try:
        for i in range(2):
            path = os.path.join(ext4_scratch, f"nr{i}.img")
            so = VaaiStorageObject(f"nr{i}", path=path, size=LUN_BYTES)
            made.append((so, path))
            so.set_attribute("emulate_write_cache", "0")
            lun = export_loopback(so, lun=i, wwn=wwn)
            wwn = lun.parent_tpg.parent_target.wwn
        luns = []
        for so, path in made:
            disk = find_disk(so, "tcm_loopback")
            sg = sg_of(disk)
            clear_unit_attention(sg)
            luns.append((so, sg, disk, path))
        yield luns
    finally:
        for made_so, path in made:
            so = current(made_so)
            if so is not None:
                unexport(so)
                so.delete()
            os.unlink(path)


def dd(*args):
    return subprocess.run(("dd", "status=none", *args), check=True, capture_output=True).stdout


@pytest.mark.parametrize("mode", ["auto", "buffered"])
def test_copy_between_ext4_files(two_luns, mode):
    (a, a_sg, a_disk, _), (b, b_sg, b_disk, b_path) = two_luns
    for so in (a, b):
        so.set_attribute("io_mode", mode)
    data = os.urandom(COPY_BYTES)
    subprocess.run(
        ["dd", "of=" + a_disk, "bs=1M", "oflag=direct", "status=none"], input=data, check=True
    )
    drop_caches()
    n = COPY_BYTES // 512
    cscds = [cscd_e4(naa_of(a_sg), 512), cscd_e4(naa_of(b_sg), 512)]
    expect_good(xcopy(a_sg, xcopy_list(cscds, [seg_b2b(0, 1, n, 0, 2048)])))
    if mode == "auto":
        assert cached_bytes(b_path) == 0, "the copy went through the page cache"
    else:
        assert cached_bytes(b_path) >= COPY_BYTES
    # what the file holds, from the disk, and what the LUN returns
    drop_caches()
    with open(b_path, "rb") as f:
        f.seek(2048 * 512)
        assert f.read(COPY_BYTES) == data
    assert (
        dd("if=" + b_disk, "bs=1M", "iflag=direct", "skip=1", f"count={COPY_BYTES // MiB}") == data
    )
