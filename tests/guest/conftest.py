"""Fixtures for the in-guest suites: vaai LUNs on each store, exported over
tcm_loop, torn down afterwards.  Run inside the VM (tests/vm/guest-test.sh)."""
import itertools
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from rtslib_fb import RTSRoot  # noqa: E402
from rtslib_fb.utils import RTSLibNotInCFS  # noqa: E402

from scsi import clear_unit_attention  # noqa: E402
from vaai import VaaiStorageObject  # noqa: E402
from vaai.export import (export_iscsi, export_loopback, find_disk,  # noqa: E402
                         sg_of, unexport)

SCRATCH = os.environ.get("VAAI_SCRATCH", "/run/vaai")
STORES = ("file", "bdev")
MiB = 1 << 20
_names = itertools.count()


def sh(*argv, check=True):
    """Run a command; its stdout as text."""
    p = subprocess.run(argv, capture_output=True, text=True)
    if check and p.returncode:
        raise AssertionError("%s failed (%d): %s%s" % (" ".join(argv), p.returncode,
                                                       p.stdout, p.stderr))
    return p.stdout


class Lun:
    """A vaai storage object, exported over tcm_loop, seen as /dev/sdX."""

    def __init__(self, so, backing, block_size):
        self.so = so
        self.backing = backing
        self.block_size = block_size
        self.disk = find_disk(so, "tcm_loopback")
        self.sg = sg_of(self.disk)
        self.nr_blocks = so.size // block_size

        self.nexus = [self]       # the LUNs one tcm_loop nexus sees

    @property
    def last_lba(self):
        return self.nr_blocks - 1


def export_beside(so, lun):
    """Export so in the TPG of lun (one nexus sees both) and clear the
    REPORTED LUNS DATA HAS CHANGED unit attention that raises on the LUNs
    already there (SPC-4 5.14)."""
    tpg = next(lun.so.attached_luns).parent_tpg
    export_loopback(so, lun=max(x.lun for x in tpg.luns) + 1, wwn=tpg.parent_target.wwn)
    for other in lun.nexus:
        clear_unit_attention(other.sg)
    return so


class Backing:
    """Scratch storage for one LUN.  A file store gets a path the module
    creates, unless the data must exist first (fill, read-only); a bdev store
    gets a loop device over a scratch file."""

    def __init__(self, store, size, fill=None, precreate=False):
        n = next(_names)
        self.image = os.path.join(SCRATCH, "img%d" % n)
        self.loop = None
        self.precreated = store == "bdev" or precreate or fill is not None
        if self.precreated:
            with open(self.image, "wb") as f:
                f.truncate(size)
                if fill:
                    f.write(fill)
        if store == "bdev":
            self.loop = sh("losetup", "--find", "--show", self.image).strip()

    @property
    def path(self):
        return self.loop or self.image

    def remove(self):
        if self.loop:
            sh("losetup", "-d", self.loop)
        if os.path.exists(self.image):
            os.unlink(self.image)


@pytest.fixture(params=STORES)
def store(request):
    return request.param


@pytest.fixture
def make_lun(store):
    """make_lun(size=..., block_size=..., readonly=..., fill=bytes,
    beside=Lun) -> Lun.  beside: export in that LUN's TPG (one I_T nexus
    sees both), not in a target of its own."""
    made = []

    def make(size=64 * MiB, block_size=512, readonly=False, fill=None, beside=None):
        backing = Backing(store, size, fill, precreate=readonly)
        made.append((None, backing))
        so = VaaiStorageObject("t%d" % next(_names), path=backing.path,
                               size=None if backing.precreated else size,
                               readonly=readonly)
        made[-1] = (so, backing)
        if block_size != 512:
            so.set_attribute("block_size", block_size)
        if beside is None:
            export_loopback(so)
            return Lun(so, backing, block_size)
        lun = Lun(export_beside(so, beside), backing, block_size)
        lun.nexus = beside.nexus
        lun.nexus.append(lun)
        return lun

    yield make
    for so, backing in reversed(made):
        if so is not None:
            # looked up again by name: a test may have restored it anew
            try:
                so = VaaiStorageObject(so.name)
            except RTSLibNotInCFS:
                so = None
        if so is not None:
            unexport(so)
            so.delete()
        backing.remove()


@pytest.fixture
def lun(make_lun):
    return make_lun()


INITIATOR = os.path.join(os.path.dirname(__file__), "..", "..", "fabrics", "iscsi",
                         "initiator.sh")
ISCSI_IQN = "iqn.2026-11.org.vaai:test"


@pytest.fixture
def over_iscsi():
    """over_iscsi(lun) -> the SCSI generic node of the same LUN seen through
    an open-iscsi session to 127.0.0.1 (a second initiator beside tcm_loop)."""
    logged_in = []

    def attach(lun):
        sh(INITIATOR, "start")
        me = sh(INITIATOR, "name").strip()
        export_iscsi(lun.so, ISCSI_IQN, initiators=[me])
        sh(INITIATOR, "login", ISCSI_IQN)
        logged_in.append(lun)
        return sg_of(find_disk(lun.so, "iscsi_tcp"))

    yield attach
    for lun in logged_in:
        sh(INITIATOR, "logout", ISCSI_IQN)


@pytest.fixture(autouse=True)
def no_leftovers():
    """Every test leaves configfs as it found it."""
    before = {so.name for so in RTSRoot().storage_objects}
    yield
    after = {so.name for so in RTSRoot().storage_objects}
    assert after == before, "storage objects left behind: %s" % (after - before)


@pytest.fixture
def small_fs(tmp_path):
    """An ext2 file system with 1 KiB blocks: files stop at about 16 GiB."""
    image = os.path.join(SCRATCH, "ext2.img")
    with open(image, "wb") as f:
        f.truncate(8 << 20)
    sh("mkfs.ext2", "-q", "-b", "1024", image)
    loop = sh("losetup", "--find", "--show", image).strip()
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    sh("mount", loop, str(mnt))
    yield loop, str(mnt)
    subprocess.run(["umount", str(mnt)])
    sh("losetup", "-d", loop)
    os.unlink(image)
