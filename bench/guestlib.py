"""What the in-guest benchmarks share: running commands, a cold page cache,
and the file systems on RAM disks that their backing files live on."""

import contextlib
import os
import struct
import subprocess
import time

BUILT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bench")
SGLOOP = os.path.join(BUILT, "sgloop")  # bench/sgloop.c
HEARTBEAT = os.path.join(BUILT, "heartbeat")  # bench/heartbeat.c

# mkfs per file system.  XFS with reflink (Debian 12's default, spelt out
# because the full-copy benchmark depends on it).  ext4 with one inode per
# MiB, made in full at mkfs time: few files live there, and lazy init would
# otherwise zero inode tables in the background while a benchmark runs.
MKFS = {
    "xfs": ("mkfs.xfs", "-q", "-f", "-m", "reflink=1"),
    "ext4": (
        "mkfs.ext4",
        "-q",
        "-F",
        "-i",
        "1048576",
        "-E",
        "lazy_itable_init=0,lazy_journal_init=0",
    ),
}


def sh(*argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def cmd_file(path, cmds):
    """[(cdb, data-out)] written to path as bench/sgloop.c reads them."""
    with open(path, "wb") as f:
        f.writelines(
            struct.pack("<B", len(cdb)) + cdb + struct.pack("<I", len(data)) + data
            for cdb, data in cmds
        )
    return path


def sgloop(sg, cmds, depth=1, tag=""):
    """Send [(cdb, data-out)] through bench/sgloop.c, depth of them in
    flight: the seconds they took, by its own clock.  Calls at once need
    tags of their own (their command files)."""
    path = cmd_file(f"/run/vaai-sgloop{tag}.cmds", cmds)
    try:
        return float(sh(SGLOOP, "-d", str(depth), sg, path))
    finally:
        os.unlink(path)


def clocksource():
    """What the guest's clock reads (each read of an emulated HPET is a
    trip through the emulator; make bench boots with clocksource=tsc)."""
    with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
        return f.read().strip()


def clock_check(seconds=2.0):
    """How far apart the monotonic clocks of two CPUs can be, seen by moving
    this process between them for seconds.  The gap from the last read on
    one CPU to the first read after moving to the other is the move's time
    plus how far the second clock is ahead of the first; a negative gap is
    the clock going back.  The smallest gap each way bounds the difference:
    the second CPU's clock is at most min(gap there) ahead and at most
    min(gap back) behind.  None with one CPU; else {"moves", "back_ns" (the
    largest step back, 0 if none), "skew_bound_ns"}."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    pair, smallest, moves = cpus[:2], [None, None], 0
    try:
        os.sched_setaffinity(0, {pair[0]})
        last = time.monotonic_ns()
        end = last + int(seconds * 1e9)
        while last < end:
            to = 1 - moves % 2
            os.sched_setaffinity(0, {pair[to]})
            now = time.monotonic_ns()
            gap = now - last
            smallest[to] = gap if smallest[to] is None else min(smallest[to], gap)
            moves += 1
            for _ in range(50):
                now = time.monotonic_ns()
            last = now
    finally:
        os.sched_setaffinity(0, cpus)
    if None in smallest:
        return None
    return {"moves": moves, "back_ns": max(0, -min(smallest)), "skew_bound_ns": max(smallest)}


def drop_caches():
    """Write everything back, then empty the page cache: a timed run starts cold."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


@contextlib.contextmanager
def fs_on_brd(mnt, rd_kib, fs="xfs", rd_nr=1):
    """/dev/ram0 .. ram<rd_nr - 1> of rd_kib KiB each, file system fs (a key
    of MKFS) on ram0 mounted at mnt; all of it gone again afterwards."""
    sh("modprobe", "brd", f"rd_nr={rd_nr}", f"rd_size={rd_kib}")
    try:
        sh(*MKFS[fs], "/dev/ram0")
        os.makedirs(mnt, exist_ok=True)
        sh("mount", "/dev/ram0", mnt)
        try:
            yield mnt
        finally:
            sh("umount", mnt)
    finally:
        sh("rmmod", "brd")


def xfs_on_brd(mnt, rd_kib, rd_nr=1):
    return fs_on_brd(mnt, rd_kib, "xfs", rd_nr)
