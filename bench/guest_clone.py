"""Full-copy (EXTENDED COPY) benchmarks inside the VM: our backend against
upstream LIO (fileio, or iblock on the block store) on the same store, in
the same boot, over tcm_loop.

For each store (a file on XFS with reflink or on ext4, on a RAM disk; or
"block", each LUN a RAM disk of its own) and each clone size, a source of
non-repeating data is copied
  across   from a LUN on the source file to a LUN on a new sparse file
  within   from the first half of a LUN to its (empty) second half
with one EXTENDED COPY (LID1) per 4 MiB or 16 MiB, ESXi's sizes, 1, 4 or 8
of them in flight as ESXi's data mover keeps them, by ours and by LIO; and
as a host does without the offload: dd, 4 MiB direct READs and WRITEs over
our LUNs.  From one initiator (tcm_loop), and from two at once, as two
ESXi hosts cloning on one datastore: tcm_loop and this guest's open-iscsi
logged in to LIO's iSCSI target, each copying its half of the range.
Every copy is checked against the source afterwards.
Reports seconds, what the copy added to the destination file's allocation,
and how much of the destination shares extents with the source.  Every
point is measured --rounds times, the rounds interleaved (a boot of this
guest drifts: the same copy took 1.27 and 2.23 s a minute apart), and the
median round reported with all rounds' seconds.

A small run per file system comes first (--probe): it shows every path works
before the long runs, and gives the estimates that keep the whole run within
--budget seconds.  Points that would not fit, or not fit in memory, are
skipped and the output says why.

    guest_clone.py OUT.json [--sizes 256M,1G] [--fs xfs,ext4,block] [--cmds 4M,16M]
                            [--depths 1,4,8] [--budget 4000] [--probe 64M]
                            [--rounds 3] [--initiators 1,2]
"""

import argparse
import collections
import contextlib
import ctypes
import fcntl
import json
import os
import platform
import random
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "guest"))

from guestlib import drop_caches, fs_on_brd, sgloop, sh  # noqa: E402
from rtslib_fb import BlockStorageObject, FileIOStorageObject  # noqa: E402
from scsi import cdb_xcopy, clear_unit_attention, cscd_e4, naa_of, seg_b2b, xcopy_list  # noqa: E402
from vaai import VaaiStorageObject  # noqa: E402
from vaai.export import export_loopback, find_disk, sg_of, unexport  # noqa: E402
from vaai.params import parse_size  # noqa: E402

from fabrics import iscsi_login  # noqa: E402

MiB = 1 << 20
GiB = 1 << 30
FS_MNT = "/run/vaai-clone"
HOST_BS = 4 * MiB  # the host-side copy's READ and WRITE size
# the second initiator: open-iscsi in this guest (fabrics.iscsi_login, the
# suites' own), logged in to LIO's iSCSI target
ISCSI_IQN = "iqn.2026-11.org.vaai:clone"
MEM_HEADROOM = GiB  # guest memory left over beside the RAM disk

_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 0x01, 0x02

# FIEMAP (linux/fiemap.h): struct fiemap, then fm_extent_count extents
FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 0x1
FIEMAP_EXTENT_LAST, FIEMAP_EXTENT_SHARED = 0x1, 0x2000
_FIEMAP = struct.Struct("=QQIIII")  # start, length, flags, mapped, count, reserved
_EXTENT = struct.Struct("=QQQ16xI12x")  # logical, physical, length, flags


class MiscompareError(AssertionError):
    pass


class Pattern:
    """What the source holds: one random MiB over and over, with the first 8
    bytes of every 512-byte block replaced by the block's number.  Nothing is
    zero, so no side gets a sparse source to copy, and no two blocks are
    alike, so a block copied to the wrong place fails the check."""

    CHUNK = MiB

    def __init__(self, seed=1):
        self.base = random.Random(seed).randbytes(self.CHUNK)

    def chunk(self, offset):
        """The CHUNK bytes at offset (a multiple of CHUNK) of the source."""
        buf = bytearray(self.base)
        n = self.CHUNK // 512
        first = offset // 512
        stamps = struct.pack(f"<{n}Q", *range(first, first + n))
        for i in range(8):
            buf[i::512] = stamps[i::8]
        return buf

    def write(self, path, size):
        with open(path, "wb") as f:
            f.writelines(self.chunk(off) for off in range(0, size, self.CHUNK))
            os.fsync(f.fileno())

    def check(self, path, start, size):
        """Miscompare unless path holds the source's first size bytes at start."""
        got = bytearray(self.CHUNK)
        with open(path, "rb", buffering=0) as f:
            f.seek(start)
            for off in range(0, size, self.CHUNK):
                n = f.readinto(got)
                want = self.chunk(off)
                if n == self.CHUNK and got == want:
                    continue
                bad = next(
                    (i for i in range(0, self.CHUNK, 512) if got[i : i + 512] != want[i : i + 512]),
                    0,
                )
                held = struct.unpack_from("<Q", got, bad)[0]
                what = (
                    f"source block {held}"
                    if held < size // 512
                    and got[bad + 8 : bad + 512] == self.base[bad + 8 : bad + 512]
                    else "no source block"
                )
                raise MiscompareError(
                    f"{path}: the block at byte {start + off + bad} should be source "
                    f"block {(off + bad) // 512}, holds {what}"
                )


def punch(path, offset, length):
    """The range emptied: a hole in a file, zeros on a RAM disk."""
    if path.startswith("/dev/"):
        sh("blkdiscard", "-f", "-z", "-o", str(offset), "-l", str(length), path)
        return
    fd = os.open(path, os.O_WRONLY)
    try:
        if _libc.fallocate(fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, offset, length):
            err = ctypes.get_errno()
            raise OSError(err, f"punching {path}: {os.strerror(err)}")
    finally:
        os.close(fd)


def syncfs(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.syncfs(fd):
            err = ctypes.get_errno()
            raise OSError(err, f"syncfs {path}: {os.strerror(err)}")
    finally:
        os.close(fd)


def fs_used(path):
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def extent_bytes(path, start, length, batch=256):
    """(bytes mapped, bytes in extents flagged shared) of path's range
    [start, start + length), as FIEMAP reports them."""
    end, pos = start + length, start
    mapped = shared = 0
    with open(path, "rb") as f:
        while pos < end:
            buf = bytearray(_FIEMAP.size + batch * _EXTENT.size)
            _FIEMAP.pack_into(buf, 0, pos, end - pos, FIEMAP_FLAG_SYNC, 0, batch, 0)
            fcntl.ioctl(f.fileno(), FS_IOC_FIEMAP, buf)
            count = _FIEMAP.unpack_from(buf)[3]
            if not count:
                break
            for i in range(count):
                logical, _, size, flags = _EXTENT.unpack_from(buf, _FIEMAP.size + i * _EXTENT.size)
                overlap = min(end, logical + size) - max(start, logical)
                if overlap > 0:
                    mapped += overlap
                    if flags & FIEMAP_EXTENT_SHARED:
                        shared += overlap
                if flags & FIEMAP_EXTENT_LAST:
                    return mapped, shared
            pos = logical + size
    return mapped, shared


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def rd_bytes(size):
    """The RAM disk for one size: source and destination, and room for the
    file system's own (XFS log, ext4 journal)."""
    return 2 * size + max(512 * MiB, size // 8)


def mem_needed(fs, size):
    """Guest memory a block of fs and size takes: the block store's two RAM
    disks fill as they are written (source, and both copies' destinations)."""
    return (3 * size if fs == "block" else rd_bytes(size)) + MEM_HEADROOM


def label(n):
    return f"{n // GiB} GiB" if n >= GiB and n % GiB == 0 else f"{n // MiB} MiB"


class Layout:
    """The files behind the LUNs of one kind of copy, and where it goes.

    across: LUN 0 on the source file, LUN 1 on a new sparse file of the same
    size.  within: one LUN on the source file grown to twice the size; the
    copy goes from its first half to its second.  On the block store the
    source is /dev/ram0 and the other RAM disk the destination across; each
    is twice the size."""

    def __init__(self, copy, src, size):
        self.copy, self.src, self.size = copy, src, size
        self.block = src.startswith("/dev/")
        if self.block:
            self.dst = "/dev/ram1" if copy == "across" else src
            self.files = [src, self.dst] if copy == "across" else [src]
            self.dst_off = 0 if copy == "across" else size
        elif copy == "across":
            self.dst = os.path.join(os.path.dirname(src), "dst.img")
            with open(self.dst, "wb") as f:
                f.truncate(size)
            self.files, self.dst_off = [src, self.dst], 0
        else:
            os.truncate(src, 2 * size)
            self.files, self.dst, self.dst_off = [src], src, size

    def close(self):
        if self.block:
            return
        if self.copy == "across":
            os.unlink(self.dst)
        else:
            os.truncate(self.src, self.size)


Lun = collections.namedtuple("Lun", "disk sg naa block_size")


def find_luns(sos, driver, target=None):
    """The Lun of each storage object as driver's disks show it."""
    luns = []
    for so in sos:
        disk = find_disk(so, driver, target=target)
        sg = sg_of(disk)
        # the LUNs added after it raised REPORTED LUNS DATA HAS CHANGED
        clear_unit_attention(sg)
        luns.append(Lun(disk, sg, naa_of(sg), int(so.get_attribute("block_size"))))
    return luns


@contextlib.contextmanager
def exported(who, files, iscsi=False):
    """A LUN by who on each file, all in one tcm_loop target: one I_T nexus
    sees them all, and that is where both ours and LIO look up the LUNs an
    EXTENDED COPY names.  Write cache off on both sides.  With iscsi, the
    same LUNs also through LIO's iSCSI target, this guest's open-iscsi
    logged in: a second initiator, as a second ESXi host sharing the
    datastore.  Yields the paths, tcm_loop's first: each a Lun per file."""
    sos, wwn = [], None
    try:
        for i, path in enumerate(files):
            name = f"clone_{who}_{i}"
            if who == "ours":
                so = VaaiStorageObject(name, path=path)
                sos.append(so)
                so.set_attribute("emulate_write_cache", "0")
            elif path.startswith("/dev/"):
                so = BlockStorageObject(name, dev=path)
                sos.append(so)
            else:
                # write_back=False: O_DSYNC, write cache reported off
                so = FileIOStorageObject(name, dev=path, size=os.path.getsize(path))
                sos.append(so)
            lun = export_loopback(so, lun=i, wwn=wwn)
            wwn = lun.parent_tpg.parent_target.wwn
        paths = [find_luns(sos, "tcm_loopback")]
        with contextlib.ExitStack() as stack:
            if iscsi:
                stack.enter_context(iscsi_login(sos, ISCSI_IQN))
                paths.append(find_luns(sos, "iscsi_tcp", target=ISCSI_IQN))
            # udev's probe of the new disks must not run inside a timed copy
            sh("udevadm", "settle")
            yield paths
    finally:
        for so in sos:
            unexport(so)
            so.delete()


def xcopy_cmds(src, dst, cmd_bytes, nbytes, dst_off=0, src_off=0):
    """EXTENDED COPY commands as ESXi sends them: one per cmd_bytes of
    nbytes of src from src_off, to dst at dst_off, each naming both LUNs by
    identification CSCD descriptors and holding one block-to-block segment."""
    bs = src.block_size
    per_cmd = cmd_bytes // bs
    if not 0 < per_cmd <= 0xFFFF:
        raise ValueError(f"NUMBER OF BLOCKS is 16 bits: {per_cmd}")
    cscds = [cscd_e4(src.naa, bs), cscd_e4(dst.naa, dst.block_size)]
    nblocks, src_lba, dst_lba = nbytes // bs, src_off // bs, dst_off // bs
    cmds = []
    for lba in range(0, nblocks, per_cmd):
        n = min(per_cmd, nblocks - lba)
        params = xcopy_list(cscds, [seg_b2b(0, 1, n, src_lba + lba, dst_lba + lba)])
        cmds.append((cdb_xcopy(len(params)), params))
    return cmds


def xcopy_clone(paths, layout, cmd_bytes, depth):
    """The copy as ESXi sends it, depth commands in flight on each path,
    the commands built before and timed by sgloop; each path copies its
    share of the range, all at once: the seconds of the slowest."""
    share = layout.size // len(paths)

    def send(i):
        luns = paths[i]
        cmds = xcopy_cmds(
            luns[0], luns[-1], cmd_bytes, share, layout.dst_off + i * share, i * share
        )
        return sgloop(luns[0].sg, cmds, depth, tag=str(i))

    with ThreadPoolExecutor(len(paths)) as pool:
        return max(pool.map(send, range(len(paths))))


def host_copy(paths, layout):
    """What a host does without the offload: read, then write, over the
    fabric, each path its share of the range, all at once (timed from
    outside: None)."""
    share = layout.size // len(paths)
    dds = [
        subprocess.Popen(
            [
                "dd",
                f"if={luns[0].disk}",
                f"of={luns[-1].disk}",
                f"bs={HOST_BS}",
                f"count={share // HOST_BS}",
                f"skip={i * share // HOST_BS}",
                f"seek={(layout.dst_off + i * share) // HOST_BS}",
                "iflag=direct",
                "oflag=direct",
                "conv=notrunc",
                "status=none",
            ],
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, luns in enumerate(paths)
    ]
    for dd in dds:
        _, err = dd.communicate()
        if dd.returncode:
            raise subprocess.CalledProcessError(dd.returncode, dd.args, stderr=err)


@contextlib.contextmanager
def ram_disks(nr, kib):
    """/dev/ram0 .. ram<nr - 1> of kib KiB each, gone again afterwards."""
    sh("modprobe", "brd", f"rd_nr={nr}", f"rd_size={kib}")
    try:
        yield
    finally:
        sh("rmmod", "brd")


def median_round(runs):
    """Of one side's rounds at one point, the one of median seconds (the
    lower of the middle two), with every round's seconds; a failed round
    fails the point."""
    failed = [m for m in runs if "error" in m]
    if failed:
        return failed[0]
    mid = sorted(runs, key=lambda m: m["seconds"])[(len(runs) - 1) // 2]
    return dict(mid, rounds=[m["seconds"] for m in runs])


class Block:
    """One store and one size: every copy, by every side, rounds times."""

    def __init__(self, fs, size, cmds, depths, pattern, rounds=1, initiators=(1,)):
        self.fs, self.size, self.cmds, self.pattern = fs, size, cmds, pattern
        self.depths, self.rounds, self.initiators = depths, rounds, initiators
        self.data_s = 0.0  # time that grows with the size: fill, copies, checks
        self.errors = 0
        # point -> side -> one measurement per round
        self.xcopy = collections.defaultdict(lambda: collections.defaultdict(list))
        self.host = collections.defaultdict(list)

    def measure(self, what, layout, copy):
        """copy() onto an empty destination range, timed from a cold cache to
        a durable result (syncfs included); then what it allocated, and
        whether the destination equals the source."""
        try:
            punch(layout.dst, layout.dst_off, layout.size)
            drop_caches()
            if not layout.block:
                blocks0, used0 = os.stat(layout.dst).st_blocks, fs_used(FS_MNT)
            t0 = time.monotonic()
            inner = copy()  # the seconds it timed itself, if it did
            t1 = time.monotonic()
            if not layout.block:  # a RAM disk has no cache to write back
                syncfs(FS_MNT)
            t2 = time.monotonic()
            copy_s = t1 - t0 if inner is None else inner
            out = {"seconds": copy_s + t2 - t1, "sync_seconds": t2 - t1}
            if layout.block:
                out.update(allocated=None, mapped=None, shared=None, fs_used=None)
                drop_caches()  # the copy wrote past the device's page cache
            else:
                mapped, shared = extent_bytes(layout.dst, layout.dst_off, layout.size)
                out.update(
                    allocated=(os.stat(layout.dst).st_blocks - blocks0) * 512,
                    mapped=mapped,
                    shared=shared,
                    fs_used=fs_used(FS_MNT) - used0,
                )
            self.pattern.check(layout.dst, layout.dst_off, layout.size)
            self.data_s += time.monotonic() - t0
        except (AssertionError, OSError, subprocess.CalledProcessError) as e:
            self.errors += 1
            why = getattr(e, "stderr", None) or str(e)
            print(f"{what}: FAILED: {why.strip()}", flush=True)
            return {"error": why.strip()}
        space = (
            ""
            if layout.block
            else ", allocated {}, shared {}".format(label(out["allocated"]), label(out["shared"]))
        )
        print(f"{what}: {out['seconds']:.2f} s{space}", flush=True)
        return out

    def run(self):
        t0 = time.monotonic()
        if self.fs == "block":
            store = ram_disks(2, 2 * self.size // 1024)
        else:
            store = fs_on_brd(FS_MNT, rd_bytes(self.size) // 1024, self.fs)
        with store:
            src = "/dev/ram0" if self.fs == "block" else os.path.join(FS_MNT, "src.img")
            t = time.monotonic()
            self.pattern.write(src, self.size)
            self.data_s += time.monotonic() - t
            for copy in ("across", "within"):
                layout = Layout(copy, src, self.size)
                try:
                    # rounds interleaved: what drifts in a boot drifts for all
                    for rnd in range(self.rounds):
                        self.run_copy(layout, rnd)
                finally:
                    layout.close()
        self.seconds = time.monotonic() - t0
        return self

    def run_copy(self, layout, rnd):
        name = f"{self.fs} {label(self.size)} {layout.copy}"
        if self.rounds > 1:
            name += f" round {rnd + 1}"
        for who in ("ours", "lio"):
            with exported(who, layout.files, iscsi=max(self.initiators) > 1) as paths:
                for n in self.initiators:
                    by = f" from {n} initiators" if n > 1 else ""
                    for cmd in self.cmds:
                        for depth in self.depths:
                            point = (layout.copy, cmd, depth, n)
                            self.xcopy[point][who].append(
                                self.measure(
                                    f"{name} xcopy {label(cmd)} x{depth}{by} {who}",
                                    layout,
                                    lambda cmd=cmd, depth=depth, n=n: xcopy_clone(
                                        paths[:n], layout, cmd, depth
                                    ),
                                )
                            )
                    if who == "ours":
                        self.host[(layout.copy, n)].append(
                            self.measure(
                                f"{name} host dd {label(HOST_BS)}{by}",
                                layout,
                                lambda n=n: host_copy(paths[:n], layout),
                            )
                        )

    def estimate(self, size):
        """Seconds a block of size would take here, from this one."""
        return self.seconds - self.data_s + self.data_s * size / self.size

    def results(self):
        out = []
        for copy in ("across", "within"):
            for n in self.initiators:
                out.extend(
                    dict(
                        fs=self.fs,
                        size=self.size,
                        copy=copy,
                        method="xcopy",
                        cmd_bytes=cmd,
                        depth=depth,
                        initiators=n,
                        **{
                            who: median_round(runs)
                            for who, runs in self.xcopy[(copy, cmd, depth, n)].items()
                        },
                    )
                    for cmd in self.cmds
                    for depth in self.depths
                )
                out.append(
                    {
                        "fs": self.fs,
                        "size": self.size,
                        "copy": copy,
                        "method": "host",
                        "cmd_bytes": HOST_BS,
                        "initiators": n,
                        "ours": median_round(self.host[(copy, n)]),
                    }
                )
        return out

    def summary(self):
        return {
            "fs": self.fs,
            "size": self.size,
            "seconds": self.seconds,
            "data_seconds": self.data_s,
            "errors": self.errors,
        }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="the JSON results file to write")
    p.add_argument("--sizes", default="256M,1G", help="clone sizes (default %(default)s)")
    p.add_argument("--fs", default="xfs,ext4,block", help="stores, in order (default %(default)s)")
    p.add_argument("--cmds", default="4M,16M", help="bytes per EXTENDED COPY (default %(default)s)")
    p.add_argument(
        "--depths", default="1,4,8", help="EXTENDED COPYs in flight (default %(default)s)"
    )
    p.add_argument(
        "--budget",
        type=int,
        default=4000,
        help="guest seconds for the whole run; 0: no limit (default %(default)s)",
    )
    p.add_argument(
        "--initiators",
        default="1,2",
        help="initiators copying at once, each its share of the range: 1 (tcm_loop), "
        "2 (and open-iscsi) (default %(default)s)",
    )
    p.add_argument("--probe", default="64M", help="size of the first, estimating run; 0: none")
    p.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="measurements of every point, interleaved; the median is reported "
        "(default %(default)s)",
    )
    args = p.parse_args()
    if args.rounds < 1:
        p.error("--rounds is at least 1")

    sizes = [parse_size(s) for s in args.sizes.split(",")]
    cmds = [parse_size(s) for s in args.cmds.split(",")]
    depths = [int(d) for d in args.depths.split(",")]
    initiators = [int(n) for n in args.initiators.split(",")]
    if any(n not in (1, 2) for n in initiators):
        p.error("initiators: 1 or 2")
    if any(not 1 <= d <= 64 for d in depths):
        p.error("depths are 1 to 64 commands in flight")
    probe = parse_size(args.probe) if args.probe not in ("", "0") else 0
    fss = args.fs.split(",")
    # each initiator's share a whole number of commands and host reads
    unit = max([*cmds, HOST_BS, Pattern.CHUNK]) * max(initiators)
    for size in sizes + ([probe] if probe else []):
        if size % unit:
            p.error(f"sizes must be multiples of {label(unit)}")
    for fs in fss:
        if fs not in ("xfs", "ext4", "block"):
            p.error(f"store {fs!r}: xfs, ext4 or block")

    pattern = Pattern()
    start = time.monotonic()
    model, broken = {}, set()
    probes, results, skipped = [], [], []
    failed = False

    for fs in fss:
        if not probe:
            break
        blk = Block(fs, probe, cmds, depths, pattern, args.rounds, initiators).run()
        probes.append(blk.summary())
        model[fs] = blk
        print(f"probe {fs} {label(probe)}: {blk.seconds:.0f} s", flush=True)
        if blk.errors:
            broken.add(fs)
            failed = True

    # every store at a size before any at the next: a large size of the
    # first store cannot crowd the others out of the budget
    for size in sizes:
        for fs in fss:
            left = args.budget - (time.monotonic() - start)
            est = model[fs].estimate(size) if fs in model else None
            need = mem_needed(fs, size)
            why = None
            if fs in broken:
                why = f"the {label(probe)} probe failed"
            elif need > mem_available():
                why = f"needs {label(need)} of guest memory, {label(mem_available())} available"
            elif args.budget and est is not None and est > left:
                why = f"estimated {est:.0f} s, {left:.0f} s of the {args.budget:d} s budget left"
            if why:
                print(f"{fs} {label(size)}: {why}", flush=True)
                skipped.append({"fs": fs, "size": size, "reason": why})
                continue
            if est is not None:
                print(f"{fs} {label(size)}: estimated {est:.0f} s", flush=True)
            blk = Block(fs, size, cmds, depths, pattern, args.rounds, initiators).run()
            print(f"{fs} {label(size)}: took {blk.seconds:.0f} s", flush=True)
            results += blk.results()
            model[fs] = blk
            failed = failed or blk.errors > 0

    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "budget_s": args.budget,
        "seconds": time.monotonic() - start,
        "host_bs": HOST_BS,
        "probes": probes,
        "skipped": skipped,
        "lio": "target_core_file (write_back=0) on files, target_core_iblock on the block store",
        "rounds": args.rounds,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=2)
    if failed:
        print("guest_clone: some copies failed or miscompared; see above", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
