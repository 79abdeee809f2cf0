"""COMPARE AND WRITE benchmarks inside the VM, ours against upstream LIO
fileio on the same XFS, in the same boot, over tcm_loop.

  disjoint-N   N streams, each incrementing its own block with CAW
  same-8       8 streams incrementing one block (read, CAW, retry)
  beside-1m    1 stream while fio writes 1 MiB sequentially to the LUN
For each: successful CAWs per second and the p99 CAW latency.

    guest_caw.py OUT.json [--seconds 5]
"""

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "guest"))

from guestlib import xfs_on_brd  # noqa: E402
from rtslib_fb import FileIOStorageObject  # noqa: E402
from scsi import GOOD, compare_and_write, read_blocks, write_blocks  # noqa: E402
from vaai import VaaiStorageObject  # noqa: E402
from vaai.export import export_loopback, find_disk, sg_of, unexport  # noqa: E402

MiB = 1 << 20
LUN_BYTES = 256 * MiB
FS_MNT = "/run/vaai-caw"


def block(n):
    return struct.pack(">Q", n) * 64


def stream(sg, lba, seconds, lat, ok):
    """Increment the counter at lba until the time is up."""
    cur = read_blocks(sg, lba, 1, 512).data
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        n = struct.unpack(">Q", cur[:8])[0]
        new = block(n + 1)
        t0 = time.monotonic()
        res = compare_and_write(sg, lba, cur, new, 512)
        lat.append(time.monotonic() - t0)
        if res.status == GOOD:
            ok.append(1)
            cur = new
        else:  # someone else got there first
            cur = read_blocks(sg, lba, 1, 512).data


def run_point(sg, lbas, seconds):
    lat, ok = [], []
    for lba in set(lbas):
        if write_blocks(sg, lba, block(0), 512).status != GOOD:
            raise RuntimeError(f"the counter block at {lba} could not be written")
    threads = [threading.Thread(target=stream, args=(sg, lba, seconds, lat, ok)) for lba in lbas]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lat.sort()
    return {
        "caw_per_s": len(ok) / seconds,
        "p99_us": lat[int(0.99 * (len(lat) - 1))] * 1e6 if lat else None,
        "mean_us": statistics.mean(lat) * 1e6 if lat else None,
    }


POINTS = {
    "disjoint-1": lambda: [1024],
    "disjoint-8": lambda: [1024 + 64 * i for i in range(8)],
    "disjoint-32": lambda: [1024 + 64 * i for i in range(32)],
    "same-8": lambda: [1024] * 8,
}


def measure(so, seconds):
    export_loopback(so)
    disk = find_disk(so, "tcm_loopback")
    sg = sg_of(disk)
    out = {name: run_point(sg, lbas(), seconds) for name, lbas in POINTS.items()}
    fio = subprocess.Popen(
        [
            "fio",
            "--name=seq",
            f"--filename={disk}",
            "--ioengine=libaio",
            "--direct=1",
            "--rw=write",
            "--bs=1m",
            "--iodepth=4",
            "--offset=64m",
            "--size=128m",
            "--time_based",
            f"--runtime={seconds + 2:d}",
            "--output-format=json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    time.sleep(1)
    out["beside-1m"] = run_point(sg, [1024], seconds)
    job = json.loads(fio.communicate()[0])["jobs"][0]
    # what the writer got meanwhile: a CAW rate is only half the story
    out["beside-1m"]["writer_mbps"] = job["write"]["bw_bytes"] / 1e6
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="the JSON results file to write")
    p.add_argument("--seconds", type=int, default=5, help="seconds per point (default %(default)s)")
    args = p.parse_args()

    results = {}
    with xfs_on_brd(FS_MNT, 1024 * 1024):
        for who in ("ours", "lio"):
            path = os.path.join(FS_MNT, f"{who}.img")
            with open(path, "wb") as f:
                f.truncate(LUN_BYTES)
            if who == "ours":
                so = VaaiStorageObject("caw_ours", path=path)
            else:
                so = FileIOStorageObject("caw_lio", dev=path, size=LUN_BYTES)
            try:
                results[who] = measure(so, args.seconds)
            finally:
                unexport(so)
                so.delete()
            for name, r in results[who].items():
                print(
                    "{} {}: {:.0f} CAW/s, p99 {:.0f} us".format(
                        who, name, r["caw_per_s"], r["p99_us"] or 0
                    ),
                    flush=True,
                )
    with open(args.out, "w") as f:
        json.dump(
            {
                "meta": {
                    "seconds": args.seconds,
                    "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                },
                "results": results,
            },
            f,
            indent=2,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
