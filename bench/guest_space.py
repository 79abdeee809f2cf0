"""4 KiB random I/O beside VMFS's space commands, inside the VM: what a
VM's small reads and writes wait while the host reclaims space (UNMAP) or
eager-zeroes a disk (WRITE SAME) on the same LUN, ours against upstream LIO
on the same store, in the same boot, over tcm_loop.

The VM: fio, 4 KiB random reads and writes half and half, 4 in flight, on
the LUN's first 64 MiB.  Beside it, from 64 MiB on, one of:
  idle            nothing
  unmap1m-40      UNMAP of 1 MiB ranges, 40 a second (40 MB/s: VMFS-6
                  reclaims at 25-100 MB/s), the range written in full
                  before each point so every UNMAP frees something
                  (file store only: the RAM disk discards nothing on
                  Debian 12's kernel, so neither side can unmap it)
  ws1m-qd4        WRITE SAME (16) of zeroes, 1 MiB each, 4 in flight, as
                  VMFS eager-zeroes (bench/sgloop.c)
Stores and sides as bench/guest_ats.py (ours with the write cache off;
LIO target_core_file write_back=0, or target_core_iblock); thin
provisioning on for both on the file store.  Each round runs every stream
on both sides, rotating which goes first.

    guest_space.py OUT.json [--rounds 3] [--seconds 8] [--store file|block]
                            [--stream NAME]
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from guest_ats import (  # noqa: E402
    LUN_BYTES,
    SIDES,
    STREAM_OFF,
    MiB,
    bench_meta,
    exported_sides,
    measure_stores,
    stream_args,
    write_same_cmds,
    write_stream_range,
)
from guestlib import SGLOOP, cmd_file  # noqa: E402
from scsi import cdb_unmap, unmap_list  # noqa: E402

UNMAP_RATE = 40  # 1 MiB UNMAPs a second


def unmap_cmds(lun):
    """UNMAP of 1 MiB, one range each, from STREAM_OFF on."""
    per = MiB // lun.block_size
    out = []
    for lba in range(STREAM_OFF // lun.block_size, LUN_BYTES // lun.block_size, per):
        data = unmap_list([(lba, per)])
        out.append((cdb_unmap(len(data)), data))
    return out


# name: (commands, in flight, a second at most, stores)
STREAMS = {
    "idle": None,
    "unmap1m-40": (unmap_cmds, 4, UNMAP_RATE, ("file",)),
    "ws1m-qd4": (write_same_cmds, 4, None, ("file", "block")),
}


def vm_io(disk, seconds):
    return subprocess.Popen(
        [
            "fio",
            "--name=vm",
            f"--filename={disk}",
            "--ioengine=libaio",
            "--direct=1",
            "--rw=randrw",
            "--rwmixread=50",
            "--bs=4k",
            "--iodepth=4",
            "--offset=0",
            f"--size={STREAM_OFF}",
            "--randrepeat=0",
            "--norandommap",
            "--time_based",
            f"--runtime={seconds}",
            "--output-format=json",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


def clat(job, rw):
    """fio's completion latency of rw: p50 and p99 in µs, and IOPS."""
    pct = job[rw]["clat_ns"]["percentile"]
    return {
        f"{rw}_p50_us": pct["50.000000"] / 1e3,
        f"{rw}_p99_us": pct["99.000000"] / 1e3,
        f"{rw}_iops": job[rw]["iops"],
    }


def point(lun, stream, seconds):
    """The VM's latencies beside stream, and the stream's MB/s."""
    bg, path = None, None
    if STREAMS[stream]:
        make, depth, rate, _ = STREAMS[stream]
        if make is unmap_cmds:
            write_stream_range(lun.disk)  # so that every UNMAP frees blocks
        cmds = make(lun)
        if rate and rate * (seconds + 2) > len(cmds):
            raise ValueError(f"{stream} would run out of range in {seconds} s: fewer seconds")
        path = cmd_file(f"/run/vaai-space-{stream}.cmds", cmds)
        argv = [SGLOOP, "-d", str(depth), "-t", str(seconds + 2)]
        argv += ["-r", str(rate)] if rate else []
        bg = subprocess.Popen([*argv, lun.sg, path], stdout=subprocess.PIPE, text=True)
        time.sleep(1)  # the stream under way
    try:
        vm = vm_io(lun.disk, seconds)
        out = vm.communicate(timeout=seconds + 120)[0]
        if vm.returncode:
            raise RuntimeError("fio failed")
        job = json.loads(out)["jobs"][0]
        res = {**clat(job, "read"), **clat(job, "write"), "stream_mbps": None}
        if bg:
            got = bg.communicate(timeout=seconds + 120)[0]
            if bg.returncode:
                raise RuntimeError(f"the stream failed: {bg.args}")
            secs, sent = got.split()
            res["stream_mbps"] = int(sent) * MiB / float(secs) / 1e6
        return res
    finally:
        if bg and bg.poll() is None:
            bg.kill()
            bg.wait()
        if path:
            os.unlink(path)


def run_store(store, streams, seconds, rounds):
    streams = [s for s in streams if not STREAMS[s] or store in STREAMS[s][3]]
    per = {s: [] for s in streams}
    for r in range(rounds):
        order = SIDES[r % 2 :] + SIDES[: r % 2]
        # each round on LUNs made anew, as guest_ats.py's
        with exported_sides(store, thin=store == "file") as luns:
            for stream in streams:
                res = {who: point(luns[who], stream, seconds) for who in order}
                per[stream].append(res)
                print(
                    f"{store} {stream} round {r + 1}: "
                    + ", ".join(
                        f"{who} write p99 {res[who]['write_p99_us']:.0f} us" for who in SIDES
                    ),
                    flush=True,
                )
    return per


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    stream_args(p, STREAMS, 8, "seconds of VM I/O")
    args = p.parse_args()
    streams = args.stream or list(STREAMS)
    measure_stores(
        args.out,
        bench_meta(args, unmap_rate=UNMAP_RATE),
        args.store or ("file", "block"),
        lambda store, _fabric: run_store(store, streams, args.seconds, args.rounds),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
