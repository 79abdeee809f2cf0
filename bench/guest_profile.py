"""Where a data-path run's CPU time goes, side by side: perf in the guest.

Each workload runs with fio on each side of a store, set up as
guest_bench.py sets them up (over tcm_loop or iSCSI), while `perf record
-a -g` samples every CPU at a fixed period of the cpu-clock, idle or not.
Each sample is put in one bucket by the code it was taken in (the backend,
LIO's core, the target's fabric module, the iSCSI initiator, XFS, the rest
of the kernel, fio, idle); a bucket's share
of the samples times the CPUs, over the I/Os completed per second in the
same window, is its CPU time per I/O.  The samples whose call chain passes
through the backend module give its inclusive cost (the file system and
block layer work it calls included), and those through any of the target's
modules (LIO's core, its fabric module, the backend) the target's.  The
profiler's own samples (perf, the command it times, this script's thread
that reads the disk's counters) are left out.  perf script's text of each
run is kept beside OUT.json, in the directory of its name without .json.

    guest_profile.py OUT.json [--workload NAME ...] [--store file|bdev]
                     [--fabric loop|iscsi] [--side WHO ...] [--seconds 5]
    guest_profile.py OUT.json --reparse    (the kept text again, anywhere)
"""

import argparse
import bisect
import collections
import gzip
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import guest_bench as gb  # noqa: E402
from guestlib import clocksource  # noqa: E402

PERIOD_NS = 2000000  # a sample every 2 ms of each CPU's time
DEFAULT_WORKLOADS = ("4k-randread-qd32", "4k-randwrite-qd32", "4k-randrw70-qd32")
BACKENDS = ("target_core_vaai", "target_core_file", "target_core_iblock")
# Kernel modules with a bucket of their own; the rest is "kernel".  The
# target's fabric module is "fabric"; over iSCSI the initiator's modules are
# "initiator" (tcm_loop is the initiator's driver and the target's fabric in
# one, so over it there is no initiator bucket).
FABRIC_MODULES = ("tcm_loop", "iscsi_target_mod")
MODULES = dict(
    {
        "target_core_mod": "LIO core",
        "xfs": "xfs",
        "iscsi_tcp": "initiator",
        "libiscsi": "initiator",
        "libiscsi_tcp": "initiator",
    },
    **dict.fromkeys(FABRIC_MODULES, "fabric"),
)
IDLE = re.compile(
    r"^(native_safe_halt|default_idle|arch_cpu_idle|"
    r"default_idle_call|do_idle|cpu_idle|cpuidle|acpi_idle|"
    r"mwait_idle|poll_idle|cpu_startup_entry|pv_native_safe_halt)"
)
# A chain through any of these is the target's work (the fabric module's
# submission and completion included: tcm_loop's, or the iSCSI target's
# threads with the TCP work they call).
TARGET = (*BACKENDS, "target_core_mod", *FABRIC_MODULES)
NAMED_MODULES = set(MODULES) | set(BACKENDS)
BUCKETS = ("backend", "LIO core", "fabric", "initiator", "xfs", "kernel", "fio", "user")
# Kernel functions whose inclusive cost (the samples whose call chain passes
# through them) is reported: what a write's durability, the mtime, direct
# and page-cache I/O, the RAM disk's copy and the scheduler cost per I/O.
THROUGH = (
    "xfs_file_fsync",
    "xfs_vn_update_time",
    "iomap_dio_rw",
    "filemap_read",
    "brd_submit_bio",
    "__schedule",
)
# The profiler's own threads: perf, the `sleep` it times, and this script
# (DiskRate's thread reads /proc/diskstats every 20 ms).
PROFILER = ("perf", "perf-exec", "sleep", "python3")
# Kernel text lies above this address, user space below it.
KERNEL_BASE = 0xFFFF800000000000
FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)$")
SAMPLE_TIME = re.compile(r"\s(\d+\.\d+):")


def module_symbols(kallsyms="/proc/kallsyms"):
    """Symbol -> module of every module's symbol the kernel lists.  perf
    script names a module's function but, without the module's file where
    it looks (the guest boots with the host's /lib/modules, and ours is
    built in the tree), gives kernel.kallsyms as its dso."""
    out = {}
    with open(kallsyms) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 4 and fields[3].startswith("["):
                out.setdefault(fields[2], fields[3].strip("[]"))
    return out


def parse_script(text, modsyms=None):
    """perf script's samples (fields comm, time, ip, sym, dso, one call
    chain each) as (comm, time, [(sym, dso), ...] leaf first).  A kernel
    frame's dso is its module where that has a bucket or is the target's
    (perf names the module's file when it finds it; otherwise modsyms,
    module_symbols(), knows the symbol), else kernel.kallsyms."""
    modsyms = modsyms or {}
    samples, head, chain = [], None, []
    for line in text.splitlines():
        if not line.strip():
            continue
        m = FRAME.match(line)
        if m and head is not None:
            sym = re.sub(r"\+0x[0-9a-f]+$", "", m.group(2))
            dso = os.path.basename(m.group(3).strip("[]"))
            if int(m.group(1), 16) >= KERNEL_BASE:
                mod = (
                    modsyms.get(sym)
                    if dso == "kernel.kallsyms"
                    else re.sub(r"\.ko(\.[a-z]+)?$", "", dso)
                )
                dso = mod if mod in NAMED_MODULES else "kernel.kallsyms"
            chain.append((sym, dso))
        elif not line[0].isspace():
            if head is not None:
                samples.append((*head, chain))
            t = SAMPLE_TIME.search(line)
            head, chain = (line.split()[0], float(t.group(1)) if t else None), []
    if head is not None:
        samples.append((*head, chain))
    return samples


def bucket(comm, chain):
    """The bucket of one sample, by the frame it was taken in."""
    if not chain:
        return "kernel"
    sym, dso = chain[0]
    if IDLE.match(sym):
        return "idle"
    if dso in BACKENDS:
        return "backend"
    if dso in MODULES:
        return MODULES[dso]
    if dso == "kernel.kallsyms":
        return "kernel"
    return "fio" if comm.startswith("fio") else "user"


def attribute(samples, ncpus, iops):
    """µs of CPU per I/O by bucket and by leaf symbol, from the samples of a
    window in which the disk completed iops I/Os a second."""
    mine = [(c, ch) for c, _, ch in samples if c not in PROFILER]
    total = len(samples)
    if not total or not iops:
        return None

    def us(n):
        return n / total * ncpus * 1e6 / iops

    by = collections.Counter(bucket(c, ch) for c, ch in mine)
    frames = [{s for s, _ in ch} for _, ch in mine]
    syms = collections.Counter(ch[0] for c, ch in mine if ch and bucket(c, ch) != "idle")
    under = sum(1 for c, ch in mine if any(d in BACKENDS for _, d in ch))
    target = sum(1 for c, ch in mine if any(d in TARGET for _, d in ch))
    return {
        "samples": total,
        "profiler_samples": total - len(mine),
        "busy_us_per_io": us(sum(n for b, n in by.items() if b != "idle")),
        "idle_us_per_io": us(by["idle"]),
        "buckets": {b: us(by[b]) for b in BUCKETS},
        "under_backend_us_per_io": us(under),
        "under_target_us_per_io": us(target),
        "through_us_per_io": {f: us(sum(f in syms for syms in frames)) for f in THROUGH},
        "top": [{"sym": s, "dso": d, "us_per_io": us(n)} for (s, d), n in syms.most_common(15)],
    }


def stop(fio):
    """Stop fio and its job: SIGINT, which fio passes on to the job, a child
    in a session of its own that killing fio alone would leave running."""
    fio.send_signal(signal.SIGINT)
    try:
        fio.wait(timeout=60)
    except subprocess.TimeoutExpired:
        fio.kill()
        fio.wait()
        raise RuntimeError("fio did not stop on SIGINT")


def quiesce(disk, timeout=60):
    """Wait until nothing moves on disk for half a second: the stopped
    fio's last commands done before the next side's window opens."""
    deadline = time.monotonic() + timeout
    last = gb.disk_bytes(disk)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = gb.disk_bytes(disk)
        if now == last:
            return
        last = now
    raise RuntimeError(f"{disk} still busy {timeout:d} s after fio stopped")


class DiskRate:
    """The bytes a disk has moved, read every 20 ms on a thread of its own:
    the I/Os it completed between two CLOCK_MONOTONIC times."""

    def __init__(self, disk):
        self.disk, self.points = disk, []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.done.is_set():
            self.points.append((time.monotonic(), gb.disk_bytes(self.disk)))
            time.sleep(0.02)

    def stop(self):
        self.done.set()
        self.thread.join()

    def at(self, t):
        """Bytes at time t, interpolated between the readings around it."""
        pts = self.points
        i = bisect.bisect_left(pts, (t,))
        if i == 0 or i == len(pts):
            raise ValueError(f"{t:.3f} is outside the disk's readings")
        (t0, b0), (t1, b1) = pts[i - 1], pts[i]
        return b0 + (b1 - b0) * (t - t0) / (t1 - t0)


def profile(disk, opts, seconds, tmp, raw, modsyms):
    """fio on disk with perf recording seconds of it, after fio's warm-up:
    the samples, and the I/Os a second the disk completed between the
    first and the last sample (perf's start-up, long in an emulated guest,
    is left out by its clock).  perf script's text is kept in raw (gzip)."""
    data = os.path.join(tmp, "perf.data")
    gb.sh("udevadm", "settle")
    # Runs until stopped: perf's start-up takes what it takes.
    fio = subprocess.Popen(gb.fio_argv(disk, opts, 3600), stdout=subprocess.DEVNULL)
    rate = DiskRate(disk)
    try:
        if not gb.fio_started(disk, opts["bs"], fio):
            raise RuntimeError(f"fio did not start on {disk}")
        time.sleep(1.1)
        gb.sh(
            "perf",
            "record",
            "-q",
            "-a",
            "-g",
            "-e",
            "cpu-clock",
            "-c",
            str(PERIOD_NS),
            "-k",
            "monotonic",
            "-o",
            data,
            "--",
            "sleep",
            str(seconds),
        )
        if fio.poll() is not None:
            raise RuntimeError(f"fio ended while perf recorded: {fio.returncode}")
    finally:
        rate.stop()
        stop(fio)
        quiesce(disk)
    text = gb.sh("perf", "script", "-i", data, "-F", "comm,time,ip,sym,dso")
    with gzip.open(raw, "wt") as f:
        f.write(text)
    samples = parse_script(text, modsyms)
    times = [t for _, t, _ in samples if t is not None]
    t0, t1 = min(times), max(times)
    ios = (rate.at(t1) - rate.at(t0)) / gb.size_bytes(opts["bs"])
    return samples, ios / (t1 - t0)


def raw_path(raw_dir, workload, who):
    return os.path.join(raw_dir, f"{workload}-{who}.txt.gz")


def reparse(out, raw_dir):
    """OUT.json's figures computed again from the perf text and module
    symbols its run kept, with the I/O rates it measured."""
    with open(out) as f:
        data = json.load(f)
    with open(os.path.join(raw_dir, "modules.json")) as f:
        modsyms = json.load(f)
    for entry in data["results"]:
        for who, side in entry.items():
            if who == "workload":
                continue
            with gzip.open(raw_path(raw_dir, entry["workload"], who), "rt") as f:
                samples = parse_script(f.read(), modsyms)
            entry[who] = dict(
                attribute(samples, data["meta"]["cpus"], side["iops"]) or {}, iops=side["iops"]
            )
    gb.save(out, data["meta"], data["results"])
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="the JSON results file to write")
    p.add_argument(
        "--workload",
        action="append",
        choices=sorted(gb.WORKLOADS),
        help=f"workloads to profile (default: {' '.join(DEFAULT_WORKLOADS)})",
    )
    p.add_argument(
        "--store", default="file", choices=tuple(gb.SIDES), help="store (default %(default)s)"
    )
    p.add_argument(
        "--fabric", default="loop", choices=("loop", "iscsi"), help="fabric (default %(default)s)"
    )
    p.add_argument(
        "--side",
        action="append",
        metavar="WHO",
        help="the store's sides to profile, as guest_bench.py's --side",
    )
    p.add_argument(
        "--seconds", type=int, default=5, help="seconds sampled per side (default %(default)s)"
    )
    p.add_argument(
        "--reparse",
        action="store_true",
        help="attribute again the perf text kept beside OUT.json (no fio, no perf: runs anywhere)",
    )
    args = p.parse_args()
    raw_dir = os.path.splitext(args.out)[0]
    if args.reparse:
        return reparse(args.out, raw_dir)
    names = args.workload or list(DEFAULT_WORKLOADS)
    sides = gb.pick_sides(args.side)
    if sides is None or not sides[args.store]:
        p.error(f"--side: no side of the {args.store} store named")
    ncpus = os.cpu_count()
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "kernel": platform.release(),
        "cpus": ncpus,
        "store": args.store,
        "seconds": args.seconds,
        "period_ns": PERIOD_NS,
        "fabric": args.fabric,
        "clocksource": clocksource(),
    }
    results = []
    # perf script's text of each run, beside OUT.json, to be read again
    os.makedirs(raw_dir, exist_ok=True)
    with (
        gb.xfs_on_brd(gb.FS_MNT, gb.fs_kib(len(sides["file"])), rd_nr=3),
        tempfile.TemporaryDirectory() as tmp,
    ):
        stores = gb.Stores(sides["file"])
        ex = gb.Exported(stores, args.store, args.fabric, sides[args.store])
        try:
            # every module loaded now: the backends, LIO, the fabric, xfs
            modsyms = module_symbols()
            with open(os.path.join(raw_dir, "modules.json"), "w") as f:
                json.dump(modsyms, f)
            for workload in names:
                entry = {"workload": workload}
                for who in sides[args.store]:
                    raw = raw_path(raw_dir, workload, who)
                    samples, iops = profile(
                        ex.disks[who], gb.WORKLOADS[workload][0], args.seconds, tmp, raw, modsyms
                    )
                    entry[who] = dict(attribute(samples, ncpus, iops) or {}, iops=iops)
                    busy = entry[who].get("busy_us_per_io", 0)
                    print(
                        f"{workload} {who}: {iops:.0f} IOPS, {busy:.0f} busy µs/IO, "
                        f"{len(samples)} samples",
                        flush=True,
                    )
                results.append(entry)
                gb.save(args.out, meta, results)
        finally:
            ex.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
