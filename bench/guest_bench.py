"""Benchmarks run inside the VM: each workload against our backend and
against upstream LIO on identical backing stores, in the same boot.

Stores:
  file   a file on XFS on a RAM disk; ours (vaai) vs target_core_file
  bdev   a RAM disk (brd) each;       ours (vaai) vs target_core_iblock
Every LUN is exported over tcm_loop and driven with fio (libaio, O_DIRECT).
Both sides are exported at once; each round runs every workload on both,
alternating which goes first; the report takes the median of the rounds.

    guest_bench.py OUT.json [--rounds 3] [--runtime 8] [--only NAME]
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from rtslib_fb import BlockStorageObject, FileIOStorageObject  # noqa: E402

from guestlib import sh, xfs_on_brd  # noqa: E402
from vaai import VaaiStorageObject  # noqa: E402
from vaai.export import export_loopback, find_disk, unexport  # noqa: E402

MiB = 1 << 20
LUN_BYTES = 256 * MiB
FS_MNT = "/run/vaai-bench"

# name -> fio job options; every job is O_DIRECT libaio over the whole LUN
WORKLOADS = {
    "4k-randread-qd32": dict(rw="randread", bs="4k", iodepth=32),
    "4k-randwrite-qd32": dict(rw="randwrite", bs="4k", iodepth=32),
    "1m-seqread-qd8": dict(rw="read", bs="1m", iodepth=8),
    "1m-seqwrite-qd8": dict(rw="write", bs="1m", iodepth=8),
}


def busy_ticks():
    """Jiffies all CPUs spent not idle (user+nice+system+irq+softirq+steal)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return sum(fields) - fields[3] - fields[4]


def fio(disk, opts, runtime):
    argv = ["fio", "--name=bench", "--filename=%s" % disk, "--ioengine=libaio",
            "--direct=1", "--time_based", "--runtime=%d" % runtime,
            "--ramp_time=1", "--size=%d" % LUN_BYTES, "--randrepeat=0",
            "--norandommap", "--output-format=json"]
    argv += ["--%s=%s" % kv for kv in opts.items()]
    t0 = busy_ticks()
    out = json.loads(sh(*argv))
    ticks = busy_ticks() - t0
    job = out["jobs"][0]
    side = job["read"] if job["read"]["io_bytes"] else job["write"]
    ios = side["total_ios"]
    hz = os.sysconf("SC_CLK_TCK")
    # fio's ramp second is outside total_ios but inside the CPU window:
    # scale the CPU to the measured part of the run.
    cpu_s = ticks / hz * runtime / (runtime + 1)
    return {
        "iops": side["iops"],
        "mbps": side["bw_bytes"] / 1e6,
        "lat_mean_us": side["lat_ns"]["mean"] / 1e3,
        "lat_p99_us": side["clat_ns"]["percentile"]["99.000000"] / 1e3,
        "cpu_us_per_io": cpu_s * 1e6 / ios if ios else None,
    }


class Stores:
    """The backing stores, made once per boot and shared by every round."""

    def __init__(self):
        self.files = {}
        for who in ("ours", "lio"):
            path = os.path.join(FS_MNT, "%s.img" % who)
            # written out in full, so neither side reads holes
            sh("dd", "if=/dev/zero", "of=%s" % path, "bs=1M",
               "count=%d" % (LUN_BYTES // MiB), "conv=fsync")
            self.files[who] = path
        self.bdevs = {"ours": "/dev/ram1", "lio": "/dev/ram2"}
        for dev in self.bdevs.values():
            sh("dd", "if=/dev/zero", "of=%s" % dev, "bs=1M",
               "count=%d" % (LUN_BYTES // MiB), "oflag=direct")

    def make(self, store, who):
        name = "bench_%s_%s" % (store, who)
        if store == "file":
            path = self.files[who]
            if who == "ours":
                return VaaiStorageObject(name, path=path)
            return FileIOStorageObject(name, dev=path, size=LUN_BYTES)
        dev = self.bdevs[who]
        if who == "ours":
            return VaaiStorageObject(name, path=dev)
        return BlockStorageObject(name, dev=dev)


def run_store(stores, store, names, runtime, rounds):
    """Both LUNs of a store exported at once; each round runs every workload
    on both, alternating which side goes first."""
    sos, disks = {}, {}
    try:
        for who in ("ours", "lio"):
            sos[who] = stores.make(store, who)
            export_loopback(sos[who])
            disks[who] = find_disk(sos[who], "tcm_loopback")
        per = {w: [] for w in names}
        for r in range(rounds):
            order = ("ours", "lio") if r % 2 == 0 else ("lio", "ours")
            for workload in names:
                res = {who: fio(disks[who], WORKLOADS[workload], runtime)
                       for who in order}
                per[workload].append(res)
                print("%s %s round %d: ours %.0f IOPS, lio %.0f IOPS" % (
                    store, workload, r + 1, res["ours"]["iops"],
                    res["lio"]["iops"]), flush=True)
        return per
    finally:
        for so in sos.values():
            unexport(so)
            so.delete()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runtime", type=int, default=8)
    p.add_argument("--only", action="append", help="workload names to run")
    args = p.parse_args()

    results = []
    names = args.only or list(WORKLOADS)
    # ram0 holds the XFS of the file LUNs; ram1 and ram2 are the block LUNs
    with xfs_on_brd(FS_MNT, 768 * 1024, rd_nr=3):
        stores = Stores()
        for store in ("file", "bdev"):
            per = run_store(stores, store, names, args.runtime, args.rounds)
            for workload in names:
                rounds = per[workload]
                entry = {"store": store, "workload": workload, "fabric": "tcm_loop"}
                for who in ("ours", "lio"):
                    entry[who] = {k: statistics.median(rd[who][k] for rd in rounds)
                                  for k in rounds[0][who]}
                results.append(entry)

    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "rounds": args.rounds,
        "runtime_s": args.runtime,
        "lun_bytes": LUN_BYTES,
        "lio": {"file": "target_core_file (write_back=0)",
                "bdev": "target_core_iblock"},
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
