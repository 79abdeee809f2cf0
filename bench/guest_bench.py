"""Data-path benchmarks run inside the VM: each workload against our backend
and against upstream LIO on identical backing stores, in the same boot.

Stores and the sides compared on each:
  file   a file on XFS on a RAM disk: ours (vaai, write cache off: direct
         I/O), target_core_file buffered (lio) and with async_io (lio-aio)
  bdev   a RAM disk (brd) each: ours (vaai) and target_core_iblock (lio)
and, on the file store when asked for (--side), ours-wb: vaai with the
write cache on and io_mode=direct, so that like target_core_file's
async_io it syncs no write (its writes are direct but not O_DSYNC); on
both, ours-nostats: vaai with attrib/io_stats=0, which counts no I/O
metrics (their cost: ours against it), and ours-tokens: vaai with
TOKENS change-vulnerable ODX tokens alive all along on blocks past the
LUN_BYTES fio works on, so that every write is checked against them and
none cancels them (what the check costs: ours-tokens against ours).
Every LUN is exported over tcm_loop and over iSCSI (127.0.0.1, the esxi
TPG profile, 128 commands per LUN) and driven with fio (libaio, O_DIRECT).
Each round runs every workload on every side, rotating which side goes
first; the report takes the median of the rounds.

    guest_bench.py OUT.json [--rounds 3] [--runtime 3] [--only NAME]
                   [--fabric loop|iscsi] [--store file|bdev] [--side WHO]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "guest"))

from guestlib import clock_check, clocksource, sh, xfs_on_brd  # noqa: E402
from rtslib_fb import BlockStorageObject, FileIOStorageObject  # noqa: E402
from scsi import ROD_TYPE_PIT_VULNERABLE, expect_good, make_token, write_using_token  # noqa: E402
from vaai import VaaiStorageObject  # noqa: E402
from vaai.export import export_iscsi, export_loopback, find_disk, unexport  # noqa: E402

MiB = 1 << 20
LUN_BYTES = 256 * MiB
FS_MNT = "/run/vaai-bench"
INITIATOR = os.path.join(HERE, "..", "fabrics", "iscsi", "initiator.sh")
BENCH_IQN = "iqn.2026-11.org.vaai:bench"

SIDES = {"file": ("ours", "lio", "lio-aio"), "bdev": ("ours", "lio")}
# Run only when --side names them.
EXTRA_SIDES = {
    "file": ("ours-wb", "ours-nostats", "ours-tokens"),
    "bdev": ("ours-nostats", "ours-tokens"),
}
# Every side each store can run.
KNOWN_SIDES = {st: SIDES[st] + EXTRA_SIDES.get(st, ()) for st in SIDES}
SIDE_TEXT = {
    "file": {
        "lio": "target_core_file (write_back=0)",
        "lio-aio": "target_core_file (write_back=0, async_io=1)",
        "ours-wb": "vaai (emulate_write_cache=1, io_mode=direct)",
        "ours-nostats": "vaai (io_stats=0)",
        "ours-tokens": "vaai, change-vulnerable tokens alive",
    },
    "bdev": {
        "lio": "target_core_iblock",
        "ours-nostats": "vaai (io_stats=0)",
        "ours-tokens": "vaai, change-vulnerable tokens alive",
    },
}
FABRICS = ("loop", "iscsi")
# The RAM disks of the block store's sides (ram0 holds the file store's XFS).
BDEVS = {
    "ours": "/dev/ram1",
    "lio": "/dev/ram2",
    "ours-nostats": "/dev/ram3",
    "ours-tokens": "/dev/ram4",
}
# ours-tokens' tokens: how many, each of RANGES ranges of RANGE_BLOCKS
# 512-byte blocks, all past the first LUN_BYTES (the LUN is twice that)
TOKENS, RANGES, RANGE_BLOCKS = 16, 4, 2048


def _workloads():
    """name -> (fio options, in the table, in the block-size sweep)."""
    w = {}
    for qd in (1, 32, 128):
        w[f"4k-randread-qd{qd}"] = ({"rw": "randread", "bs": "4k", "iodepth": qd}, True, qd == 32)
        w[f"4k-randwrite-qd{qd}"] = (
            {"rw": "randwrite", "bs": "4k", "iodepth": qd},
            True,
            qd == 32,
        )
        w[f"4k-randrw70-qd{qd}"] = (
            {"rw": "randrw", "rwmixread": 70, "bs": "4k", "iodepth": qd},
            True,
            False,
        )
    # the seeds' database profile
    w["8k-randrw90-qd32"] = (
        {"rw": "randrw", "rwmixread": 90, "bs": "8k", "iodepth": 32},
        True,
        False,
    )
    for bs in ("64k", "1m"):
        w[f"{bs}-seqread-qd8"] = ({"rw": "read", "bs": bs, "iodepth": 8}, True, False)
        w[f"{bs}-seqwrite-qd8"] = ({"rw": "write", "bs": bs, "iodepth": 8}, True, False)
    # the sweep behind the plots: random I/O at queue depth 32, by block size
    for bs in ("16k", "64k", "256k", "1m"):
        w[f"{bs}-randread-qd32"] = ({"rw": "randread", "bs": bs, "iodepth": 32}, False, True)
        w[f"{bs}-randwrite-qd32"] = ({"rw": "randwrite", "bs": bs, "iodepth": 32}, False, True)
    return w


WORKLOADS = _workloads()


def guest_counters():
    """From /proc/stat: jiffies all CPUs spent busy (user+nice+system+irq+
    softirq), and context switches."""
    got = {}
    with open("/proc/stat") as f:
        for line in f:
            key, *vals = line.split()
            if key == "cpu":
                v = [int(x) for x in vals[:7]]
                got["busy"] = sum(v) - v[3] - v[4]
            elif key == "ctxt":
                got[key] = int(vals[0])
    return got


def disk_bytes(disk):
    """Bytes the initiator's disk has read and written (counted in bytes:
    the block layer may split one of fio's I/Os into several requests)."""
    with open(f"/sys/block/{os.path.basename(disk)}/stat") as f:
        fields = [int(x) for x in f.read().split()]
    return (fields[2] + fields[6]) * 512


def size_bytes(size):
    """fio's "4k", "1m" as bytes."""
    units = {"k": 1 << 10, "m": 1 << 20}
    return int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)


def per_io(disk, bs, runtime, proc):
    """What the guest spends per I/O over the middle of fio's timed part:
    from its ramp second's end until half a second before the end, counting
    the I/Os the disk completed meanwhile: CPU time across the guest in
    microseconds, and context switches.  fio's own start-up and exit
    (seconds of CPU in an emulated guest) stay out.  None for each if fio
    never started."""
    none = {"cpu_us_per_io": None, "ctxt_per_io": None}
    if not fio_started(disk, bs, proc):
        return none
    time.sleep(1.1)
    c0, bytes0 = guest_counters(), disk_bytes(disk)
    time.sleep(runtime - 0.6)
    c1 = guest_counters()
    ios = (disk_bytes(disk) - bytes0) / size_bytes(bs)
    if not ios:
        return none
    return {
        "cpu_us_per_io": (c1["busy"] - c0["busy"]) / os.sysconf("SC_CLK_TCK") * 1e6 / ios,
        "ctxt_per_io": (c1["ctxt"] - c0["ctxt"]) / ios,
    }


def _merge(job):
    """One figure per run: reads and writes added up; the mean latency
    weighted by I/Os; the p99 the worse of the two directions.  Latency is
    fio's lat, submission to completion: its clat leaves out the time in
    io_submit, where a command that completes at once spends all of it."""
    sides = [job[d] for d in ("read", "write") if job[d]["total_ios"]]
    ios = sum(d["total_ios"] for d in sides)
    return {
        "iops": sum(d["iops"] for d in sides),
        "mbps": sum(d["bw_bytes"] for d in sides) / 1e6,
        "lat_mean_us": sum(d["lat_ns"]["mean"] * d["total_ios"] for d in sides) / ios / 1e3
        if ios
        else None,
        "lat_p99_us": max(d["lat_ns"]["percentile"]["99.000000"] for d in sides) / 1e3,
    }


def fio_argv(disk, opts, runtime):
    """fio on disk for runtime seconds after 1 s of warm-up, JSON out."""
    argv = [
        "fio",
        "--name=bench",
        f"--filename={disk}",
        "--ioengine=libaio",
        "--direct=1",
        "--time_based",
        f"--runtime={runtime}",
        "--ramp_time=1",
        f"--size={LUN_BYTES}",
        "--randrepeat=0",
        "--norandommap",
        "--lat_percentiles=1",
        "--output-format=json",
    ]
    return argv + ["--{}={}".format(*kv) for kv in opts.items()]


def fio_started(disk, bs, proc):
    """Wait, right after starting fio, until it has moved more than a few of
    its blocks on disk (a udev probe reads a few KiB); False if it never
    did."""
    start = disk_bytes(disk)
    deadline = time.monotonic() + 60
    while disk_bytes(disk) - start < 8 * size_bytes(bs):
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def fio(disk, opts, runtime):
    argv = fio_argv(disk, opts, runtime)
    # no probe of a new or just-closed disk inside the measured window
    sh("udevadm", "settle")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        spent = per_io(disk, opts["bs"], runtime, proc)
        out = proc.communicate(timeout=runtime + 120)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, argv)
    res = _merge(json.loads(out)["jobs"][0])
    res.update(spent)
    return res


class Stores:
    """The backing stores, made once per boot and shared by every round:
    one file or RAM disk per side, never shared between sides."""

    def __init__(self, file_sides=SIDES["file"], bdev_sides=SIDES["bdev"]):
        self.files = {}
        for who in file_sides:
            path = os.path.join(FS_MNT, f"{who}.img")
            # written out in full, so no side reads holes
            sh(
                "dd",
                "if=/dev/zero",
                f"of={path}",
                "bs=1M",
                f"count={LUN_BYTES // MiB}",
                "conv=fsync",
            )
            if who == "ours-tokens":
                # the tokens' half, never read or written by fio
                os.truncate(path, 2 * LUN_BYTES)
            self.files[who] = path
        self.bdevs = {who: BDEVS[who] for who in bdev_sides}
        for dev in self.bdevs.values():
            sh(
                "dd",
                "if=/dev/zero",
                f"of={dev}",
                "bs=1M",
                f"count={LUN_BYTES // MiB}",
                "oflag=direct",
            )

    def make(self, store, who):
        name = "bench_{}_{}".format(store, who.replace("-", "_"))
        if store == "file":
            path = self.files[who]
            if who == "ours":
                return VaaiStorageObject(name, path=path)
            if who == "ours-wb":
                so = VaaiStorageObject(name, path=path)
                so.set_attribute("io_mode", "direct")
                so.set_attribute("emulate_write_cache", "1")
                return so
            if who == "ours-nostats":
                return _without_io_stats(VaaiStorageObject(name, path=path))
            if who == "ours-tokens":
                return VaaiStorageObject(name, path=path)
            return FileIOStorageObject(name, dev=path, size=LUN_BYTES, aio=who == "lio-aio")
        dev = self.bdevs[who]
        if who in ("ours", "ours-tokens"):
            return VaaiStorageObject(name, path=dev)
        if who == "ours-nostats":
            return _without_io_stats(VaaiStorageObject(name, path=dev))
        return BlockStorageObject(name, dev=dev)


def _without_io_stats(so):
    """so counting nothing into its I/O metrics: what they cost is the
    difference from "ours"."""
    so.set_attribute("io_stats", "0")
    return so


def hold_tokens(disk):
    """TOKENS change-vulnerable tokens of disk's blocks past LUN_BYTES,
    alive for an hour unless a write to their ranges cancels them."""
    first = LUN_BYTES // 512
    tokens = []
    for t in range(TOKENS):
        ranges = [
            (first + (t * RANGES + r) * 2 * RANGE_BLOCKS, RANGE_BLOCKS) for r in range(RANGES)
        ]
        tokens.append(
            (
                make_token(
                    disk,
                    ranges,
                    list_id=0x7000 + t,
                    timeout=3600,
                    rtv=True,
                    rod_type=ROD_TYPE_PIT_VULNERABLE,
                ),
                ranges[0],
            )
        )
    return tokens


def check_tokens(disk, tokens):
    """Each of tokens still stands: a WRITE USING TOKEN of its first range,
    to the gap after it, succeeds (a cancelled one would be refused)."""
    for i, (token, (lba, n)) in enumerate(tokens):
        expect_good(write_using_token(disk, token, [(lba + RANGE_BLOCKS, n)], 0x7100 + i))


class Exported:
    """A store's sides, exported over one fabric: who -> /dev/sdX; the
    tokens of ours-tokens are made once it is, and checked at close."""

    def __init__(self, stores, store, fabric, sides=None):
        self.fabric = fabric
        self.sos, self.disks = {}, {}
        self.tokens = None
        try:
            for i, who in enumerate(sides or SIDES[store]):
                so = self.sos[who] = stores.make(store, who)
                if fabric == "loop":
                    export_loopback(so)
                    self.disks[who] = find_disk(so, "tcm_loopback")
                else:
                    export_iscsi(so, BENCH_IQN, initiators=[self.me()], lun=i, profile="esxi")
            if fabric == "iscsi":
                sh(INITIATOR, "login", BENCH_IQN)
                for who, so in self.sos.items():
                    self.disks[who] = find_disk(so, "iscsi_tcp", target=BENCH_IQN)
            if "ours-tokens" in self.disks:
                # the disk is in sysfs before it can be opened
                sh("udevadm", "settle")
                self.tokens = hold_tokens(self.disks["ours-tokens"])
        except BaseException:
            self.close()
            raise

    @staticmethod
    def me():
        sh(INITIATOR, "start")
        return sh(INITIATOR, "name").strip()

    def check(self):
        """What ours-tokens measured stands only if its tokens lasted."""
        if self.tokens:
            check_tokens(self.disks["ours-tokens"], self.tokens)

    def close(self):
        if self.fabric == "iscsi":
            subprocess.run([INITIATOR, "logout", BENCH_IQN], capture_output=True, check=False)
        for so in self.sos.values():
            unexport(so)
            so.delete()


def run_store(stores, store, fabric, sides, names, runtime, rounds):
    """All sides of a store exported at once; each round runs every
    workload on every side, rotating which side goes first."""
    ex = Exported(stores, store, fabric, sides)
    try:
        per = {w: [] for w in names}
        for r in range(rounds):
            order = sides[r % len(sides) :] + sides[: r % len(sides)]
            for workload in names:
                res = {who: fio(ex.disks[who], WORKLOADS[workload][0], runtime) for who in order}
                per[workload].append(res)
                iops = ", ".join(f"{who} {res[who]['iops']:.0f} IOPS" for who in sides)
                print(f"{store} {fabric} {workload} round {r + 1}: {iops}", flush=True)
        ex.check()
        return per
    finally:
        ex.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="the JSON results file to write")
    p.add_argument(
        "--rounds", type=int, default=3, help="rounds of every run (default %(default)s)"
    )
    p.add_argument(
        "--runtime", type=int, default=3, help="seconds per run after 1 s of warm-up (at least 1)"
    )
    p.add_argument("--only", action="append", help="workload names to run")
    p.add_argument("--fabric", action="append", choices=FABRICS, help="fabrics (default: all)")
    p.add_argument("--store", action="append", choices=tuple(SIDES), help="stores (default: all)")
    p.add_argument(
        "--side",
        action="append",
        metavar="WHO",
        help="the sides to run (every store's own, in the order "
        "given; default: {}, and nothing of {})".format(
            ", ".join("{}: {}".format(st, " ".join(w)) for st, w in SIDES.items()),
            " ".join(w for ws in EXTRA_SIDES.values() for w in ws),
        ),
    )
    args = p.parse_args()
    if args.runtime < 1:
        p.error("--runtime must be at least 1")
    sides = pick_sides(args.side)
    if sides is None:
        p.error(
            "--side: choose among {}".format(
                ", ".join(sorted({w for ws in KNOWN_SIDES.values() for w in ws}))
            )
        )
    stores_run = [st for st in args.store or tuple(SIDES) if sides[st]]
    if not stores_run:
        p.error("--side: none of these sides runs on the stores asked for")
    for st in set(args.store or ()) - set(stores_run):
        print(f"guest_bench.py: no side named runs on the {st} store; skipped", file=sys.stderr)

    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "clocksource": clocksource(),
        "clock_check": clock_check(),
        "rounds": args.rounds,
        "runtime_s": args.runtime,
        "lun_bytes": LUN_BYTES,
        "fabrics": list(args.fabric or FABRICS),
        "sides": {
            st: {who: SIDE_TEXT[st][who] for who in sides[st] if who in SIDE_TEXT[st]}
            for st in stores_run
        },
    }
    results = []
    names = args.only or list(WORKLOADS)
    # ram0 holds the XFS of the file LUNs; ram1 to ram4 are the block LUNs
    with xfs_on_brd(FS_MNT, fs_kib(len(sides["file"])), rd_nr=5):
        stores = Stores(sides["file"], sides["bdev"])
        for fabric in args.fabric or FABRICS:
            for store in stores_run:
                # the block-size sweep is run over tcm_loop only
                run = [w for w in names if fabric == "loop" or WORKLOADS[w][1]]
                per = run_store(stores, store, fabric, sides[store], run, args.runtime, args.rounds)
                for workload in run:
                    rounds = per[workload]
                    entry = {
                        "store": store,
                        "workload": workload,
                        "fabric": fabric,
                        "table": WORKLOADS[workload][1],
                        "sweep": WORKLOADS[workload][2],
                        "bs": WORKLOADS[workload][0]["bs"],
                        "rw": WORKLOADS[workload][0]["rw"],
                    }
                    for who in sides[store]:
                        entry[who] = {
                            k: median(rd[who][k] for rd in rounds) for k in rounds[0][who]
                        }
                    # and each round's own figures, side by side
                    entry["rounds"] = rounds
                    results.append(entry)
                # written after each store and fabric: a run cut short keeps
                # what it measured
                save(args.out, meta, results)
    return 0


def pick_sides(chosen):
    """store -> the sides to run on it: each store's usual ones, or those
    of chosen that belong to it (in chosen's order); None if chosen names a
    side no store has."""
    if not chosen:
        return dict(SIDES)
    chosen = list(dict.fromkeys(chosen))
    out = {st: tuple(w for w in chosen if w in known) for st, known in KNOWN_SIDES.items()}
    if any(not any(w in ws for ws in out.values()) for w in chosen):
        return None
    return out


def fs_kib(nr_files):
    """The XFS that holds nr_files LUN files, with a LUN's room to spare
    (the default three sides: 1 GiB), in KiB; ours-tokens' second half is
    a hole, and a RAM disk of the block store at least twice a LUN."""
    return (max(nr_files, 3) + 1) * LUN_BYTES // 1024


def median(values):
    """The median of the figures a round produced (None: not measured)."""
    got = [v for v in values if v is not None]
    return statistics.median(got) if got else None


def save(out, meta, results):
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out + ".tmp", "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=2)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    sys.exit(main())
