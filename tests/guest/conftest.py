"""Fixtures for the in-guest suites: vaai LUNs on each store, exported over
a fabric (tests/guest/fabrics.py), torn down afterwards.  Run inside the VM
(tests/vm/guest-test.sh).

Every LUN test runs on both stores over tcm_loop; a stores marker narrows
or widens that, on a module (`pytestmark = pytest.mark.stores("file")`) or
on a test, where what it tests is settled before a store is reached.
Store "xfs" is a file on XFS, where the file store does direct I/O while
the write cache is off and extents can be shared; "ext4" a file on ext4,
direct I/O without sharing; "btrfs" a file on btrfs, shared extents
again (the others' files live on tmpfs, which has neither).
A test marked over_fabrics also runs on the file store over iSCSI and FC
(VAAI_FABRICS=loop,iscsi,fc picks which; over_fabrics("iscsi"), which of
them it needs): those that move data through the fabric and read it back,
send data-out of the wrong length, carry sense with an INFORMATION field
or a parameter-list field pointer, or depend on the initiator's identity
(nexus, ACL, reservation).  A refusal of a CDB field travels the same path
whatever the field, so the rest run over tcm_loop only."""

import itertools
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import loopdev
from rtslib_fb import RTSRoot
from rtslib_fb.utils import RTSLibNotInCFS
from scsi import clear_unit_attention, expect_good, read_blocks, write_blocks
from vaai import VaaiStorageObject
from vaai.export import export_iscsi, export_loopback, find_disk, sg_of, unexport

import fabrics

SCRATCH = os.environ.get("VAAI_SCRATCH", "/run/vaai")
STORES = ("file", "bdev")
MiB = 1 << 20
_names = itertools.count()


def sh(*argv, check=True):
    """Run a command; its stdout as text."""
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    if check and p.returncode:
        raise AssertionError(f"{' '.join(argv)} failed ({p.returncode}): {p.stdout}{p.stderr}")
    return p.stdout


def write(lun, lba, data):
    """data written to lun from lba on, in WRITEs of at most 1 MiB."""
    bs = lun.block_size
    for off in range(0, len(data), MiB):
        expect_good(write_blocks(lun.sg, lba + off // bs, data[off : off + MiB], bs))


def fill(lun, lba, nblocks):
    """Random data written to nblocks of lun at lba; the data."""
    data = os.urandom(nblocks * lun.block_size)
    write(lun, lba, data)
    return data


def read(lun, lba, nblocks):
    """nblocks of lun from lba on, in READs of at most 1 MiB."""
    bs = lun.block_size
    return b"".join(
        expect_good(
            read_blocks(lun.sg, lba + off // bs, min(MiB, nblocks * bs - off) // bs, bs)
        ).data
        for off in range(0, nblocks * bs, MiB)
    )


def drop_caches():
    """Write everything back, then empty the page cache."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def udev_probed(disk):
    """Wait until udev has handled disk's "add" event (its probe read the
    disk) and has nothing else queued.  A bare settle is not enough right
    after find_disk(): the disk shows in sysfs while the kernel still scans
    its partitions, before the event is sent, so the probe could start only
    after the settle."""
    sh("udevadm", "wait", "--settle", "--timeout=120", disk)


def release_sd(disk):
    """Unbind sd from disk's SCSI device: its sg node stays, its block
    device goes, and with it anything udev would do to it."""
    hctl = os.path.basename(os.path.realpath(f"/sys/block/{os.path.basename(disk)}/device"))
    with open("/sys/bus/scsi/drivers/sd/unbind", "w") as f:
        f.write(hctl)


def cached_bytes(path):
    """Bytes of path in the page cache (util-linux fincore)."""
    out = sh("fincore", "--bytes", "--noheadings", "--output", "RES", path)
    return int(out.split()[0])


MODULE = os.environ.get("VAAI_MODULE", f"build/module/{os.uname().release}/target_core_vaai.ko")


def module_loaded():
    return os.path.isdir("/sys/module/target_core_vaai")


def unload_and_reload():
    """rmmod must succeed (nothing left holding the module), then insmod."""
    sh("rmmod", "target_core_vaai")
    assert not module_loaded()
    sh("insmod", MODULE)


class Lun:
    """A vaai storage object, exported over a fabric, seen as /dev/sdX."""

    def __init__(self, so, backing, block_size, fabric, disk):
        self.so = so
        self.backing = backing
        self.block_size = block_size
        self.fabric = fabric
        self.disk = disk
        self.sg = sg_of(self.disk)
        self.nr_blocks = so.size // block_size
        self.nexus = [self]  # the LUNs of the test one I_T nexus sees

    @property
    def last_lba(self):
        return self.nr_blocks - 1


def export_beside(so, lun):
    """Export so where lun is (one I_T nexus sees both): its /dev/sdX.  The
    LUNs already there get REPORTED LUNS DATA HAS CHANGED (SPC-4 5.14),
    cleared here."""
    disk = lun.fabric.export(so, beside=lun)
    for other in lun.nexus:
        clear_unit_attention(other.sg)
    return disk


class Backing:
    """Scratch storage for one LUN.  A file store gets a path the module
    creates, unless the data must exist first (fill, read-only); a bdev store
    gets a loop device over a scratch file."""

    def __init__(self, store, size, fill=None, precreate=False, where=SCRATCH):
        n = next(_names)
        self.image = os.path.join(where, f"img{n}")
        self.loop = None
        self.precreated = store == "bdev" or precreate or fill is not None
        if self.precreated:
            with open(self.image, "wb") as f:
                f.truncate(size)
                if fill:
                    f.write(fill)
        if store == "bdev":
            self.loop = loopdev.attach(self.image)

    @property
    def path(self):
        return self.loop or self.image

    def remove(self):
        if self.loop:
            loopdev.detach(self.loop)
        if os.path.exists(self.image):
            os.unlink(self.image)


def pytest_runtest_setup(item):
    """Name each test in the kernel log, so a warning on the console can be
    traced to the test that was running."""
    try:
        with open("/dev/kmsg", "w") as kmsg:
            kmsg.write(f"vaai-test: {item.nodeid}\n")
    except OSError:
        pass


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "stores(*names): run on these stores (file, bdev, xfs, ext4, btrfs) only; on a "
        "module (pytestmark) for all its tests, on a test for that test",
    )
    config.addinivalue_line(
        "markers",
        "over_fabrics(*names): also run on the file store over these "
        "fabrics (none named: every fabric selected)",
    )


def pytest_generate_tests(metafunc):
    """(store, fabric) for every test that uses a LUN: each store of its
    closest stores marker (default: file and bdev) over tcm_loop, and the
    file store over each fabric of its closest over_fabrics marker (among
    VAAI_FABRICS)."""
    if "store" not in metafunc.fixturenames:
        return
    only = metafunc.definition.get_closest_marker("stores")
    combos = [(store, "loop") for store in (only.args if only else STORES)]
    over = metafunc.definition.get_closest_marker("over_fabrics")
    if over:
        # the fabric carries the same commands to either store: the file
        # store stands for both
        combos += [
            ("file", name)
            for name in fabrics.selected()
            if name != "loop" and (not over.args or name in over.args)
        ]
    metafunc.parametrize(
        ("store", "fabric"),
        combos,
        indirect=True,
        ids=["{}-{}".format(*c) if c[1] != "loop" else c[0] for c in combos],
    )


@pytest.fixture
def store(request):
    return request.param


@pytest.fixture
def fabric(request):
    return fabrics.get(getattr(request, "param", "loop"))


@pytest.fixture(scope="session", autouse=True)
def fabric_topologies():
    yield
    fabrics.close_all()


@pytest.fixture(scope="module", autouse=True)
def no_spare_targets():
    """A test module leaves no tcm_loop target behind (fabrics.Loop keeps
    empty ones between its tests)."""
    yield
    fabrics.drop_spare_targets()


def scratch_fs(name, mkfs, check):
    """Yield a directory on a 4 GiB file system (on a loop device over a
    sparse tmpfs file: room for a 1 GiB token beside its LUNs) made with
    mkfs; check(device) runs once it is unmounted."""
    image = os.path.join(SCRATCH, f"{name}-scratch.img")
    with open(image, "wb") as f:
        f.truncate(4 << 30)
    loop = sh("losetup", "--find", "--show", image).strip()
    mnt = os.path.join(SCRATCH, name)
    os.makedirs(mnt, exist_ok=True)
    try:
        sh(*mkfs, loop)
        sh("mount", loop, mnt)
        yield mnt
        sh("umount", mnt)
        sh(*check, loop)
    finally:
        subprocess.run(["umount", mnt], capture_output=True, check=False)
        sh("losetup", "-d", loop)
        os.unlink(image)


@pytest.fixture(scope="session")
def xfs_scratch():
    """A directory on XFS with reflink, for the session."""
    yield from scratch_fs("xfs", ("mkfs.xfs", "-q", "-f", "-m", "reflink=1"), ("xfs_repair", "-n"))


@pytest.fixture(scope="session")
def ext4_scratch():
    """A directory on ext4 (no shared extents), for the session."""
    yield from scratch_fs("ext4", ("mkfs.ext4", "-q", "-F"), ("e2fsck", "-fn"))


@pytest.fixture(scope="session")
def btrfs_scratch():
    """A directory on btrfs (shared extents, as on XFS), for the session."""
    yield from scratch_fs("btrfs", ("mkfs.btrfs", "-q", "-f"), ("btrfs", "check", "--readonly"))


# the stores whose files live on a scratch file system of their own
SCRATCH_FS = {"xfs": "xfs_scratch", "ext4": "ext4_scratch", "btrfs": "btrfs_scratch"}


def current(so):
    """so looked up again by name (a test may have restored it anew), or
    None where it is gone."""
    try:
        return VaaiStorageObject(so.name)
    except RTSLibNotInCFS:
        return None


@pytest.fixture
def make_lun(store, fabric, request):
    """make_lun(size=..., block_size=..., readonly=..., fill=bytes,
    beside=Lun, own_nexus=False) -> Lun.  beside: where that LUN is, so one
    I_T nexus sees both (over iSCSI and FC all of a test's LUNs are);
    own_nexus: over tcm_loop in a target of its own, seen by no other LUN's
    nexus, whatever the fabric."""
    made = []

    def make(
        size=64 * MiB, block_size=512, readonly=False, fill=None, beside=None, own_nexus=False
    ):
        fs = SCRATCH_FS.get(store)
        where = request.getfixturevalue(fs) if fs else SCRATCH
        backing = Backing(store, size, fill, precreate=readonly, where=where)
        made.append((None, backing, None, None))
        so = VaaiStorageObject(
            f"t{next(_names)}",
            path=backing.path,
            size=None if backing.precreated else size,
            readonly=readonly,
        )
        made[-1] = (so, backing, None, None)
        if block_size != 512:
            so.set_attribute("block_size", block_size)
        via = fabrics.get("loop") if own_nexus else fabric
        if beside is None and not own_nexus and via.name != "loop":
            beside = next(
                (line for _, _, _, line in reversed(made) if line and line.fabric is via), None
            )
        disk = export_beside(so, beside) if beside else via.export(so)
        lun = Lun(so, backing, block_size, via, disk)
        if beside:
            lun.nexus = beside.nexus
            lun.nexus.append(lun)
        made[-1] = (so, backing, via, lun)
        return lun

    yield make
    for made_so, backing, via, lun in reversed(made):
        so = current(made_so) if made_so is not None else None
        if so is not None:
            if via is not None:
                via.unexport(so, lun.disk if lun else None)
            else:
                unexport(so)
            so.delete()
        backing.remove()


@pytest.fixture
def exported():
    """exported(name, path, size=None, write_cache=None) -> (storage object,
    its SCSI generic node): a vaai LUN on a path the test made itself,
    exported over tcm_loop and removed afterwards (unless the test did)."""
    made = []

    def export(name, path, size=None, write_cache=None):
        so = VaaiStorageObject(name, path=path, size=size)
        made.append(so)
        if write_cache is not None:
            so.set_attribute("emulate_write_cache", int(write_cache))
        export_loopback(so)
        return so, sg_of(find_disk(so, "tcm_loopback"))

    yield export
    for so in filter(None, map(current, made)):
        unexport(so)
        so.delete()


@pytest.fixture
def lun(make_lun):
    return make_lun()


INITIATOR = fabrics.INITIATOR
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
        return sg_of(find_disk(lun.so, "iscsi_tcp", target=ISCSI_IQN))

    yield attach
    for _lun in logged_in:
        sh(INITIATOR, "logout", ISCSI_IQN)


CMD_WATCH = "/sys/module/vaai_cmd_watch/parameters/late"


def late_calls():
    """Calls on commands already completed, counted by tests/kmod's
    vaai_cmd_watch (guest-test.sh loads it)."""
    with open(CMD_WATCH) as f:
        return int(f.read())


@pytest.fixture(autouse=True)
def nothing_touched_after_completion():
    """No command is mapped, unmapped or completed again once completed:
    the fabric may have freed or reused it (vaai.h's completion contract).
    The kernel log names the call and its caller."""
    before = late_calls()
    yield
    assert late_calls() == before, "a command was touched after its completion: see the kernel log"


# storage objects a test module keeps across its tests
# (slowdev.KeptZeroLuns): removed when it says so, not by each test
KEPT = set()


@pytest.fixture(autouse=True)
def no_leftovers():
    """Every test leaves configfs as it found it (but for KEPT)."""
    before = {so.name for so in RTSRoot().storage_objects} - KEPT
    yield
    after = {so.name for so in RTSRoot().storage_objects} - KEPT
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
    subprocess.run(["umount", str(mnt)], check=False)
    sh("losetup", "-d", loop)
    os.unlink(image)
