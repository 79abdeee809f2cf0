"""ATS heartbeats beside streams, inside the VM: what a VMFS heartbeat
waits while the same host streams VM I/O to the LUN, ours against
upstream LIO on the same store, in the same boot, over tcm_loop (--fabric
loop, the default), over LIO's iSCSI target with this guest's open-iscsi
logged in on 127.0.0.1 (--fabric iscsi; the TPG as vaaictl sets it up
for ESXi), or both.

A heartbeat (bench/heartbeat.c) is a single-block COMPARE AND WRITE of one
block every 10 ms, timed in C.  Beside it, on blocks from 64 MiB on, one of
these streams runs on the same LUN:
  idle            nothing
  seq1m-qd4/32    1 MiB sequential writes, 4 or 32 in flight (fio)
  rand4k-qd32     4 KiB random writes, 32 in flight (fio)
  ws1m-qd4        WRITE SAME (16) of zeroes, 1 MiB each, 4 in flight, as
                  VMFS eager-zeroes (bench/sgloop.c)
  xcopy4m-qd4     EXTENDED COPY of 4 MiB within the LUN, 4 in flight, as
                  ESXi's data mover clones (bench/sgloop.c)
Stores: a file on XFS on a RAM disk, made anew each round and written in
full, the streams' range again before each point (ours' copies share
extents, and a write to a shared one is copied on write; ours with the
write cache off:
direct I/O; LIO target_core_file, write_back=0), and a
RAM disk each (ours; LIO target_core_iblock).  Each round runs every
stream on both sides, rotating which goes first; after each point the
heartbeat block must hold the count of beats that ended GOOD.

    guest_ats.py OUT.json [--rounds 3] [--seconds 10] [--store file|block]
                          [--fabric loop|iscsi] [--stream NAME]
                          [--trace | --trace-sched]
                          [--bdevs OURS,LIO] [--durable]

--bdevs puts the block store's two LUNs on those devices instead of RAM
disks (virtio disks: run.py --disk), where the block layer's write-back
throttling, the I/O scheduler and a volatile write cache sit between the
target and the medium, as on a real disk; a RAM disk has none of them.
Where LIO reports a write cache there, its writes are not durable at GOOD,
and ours gets its write cache turned on too, unless --durable.
"""

import argparse
import contextlib
import glob
import json
import os
import platform
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "guest"))

import ats_trace  # noqa: E402
from guest_clone import Lun, xcopy_cmds  # noqa: E402
from guestlib import HEARTBEAT, SGLOOP, clocksource, cmd_file, sh, xfs_on_brd  # noqa: E402
from rtslib_fb import BlockStorageObject, FileIOStorageObject  # noqa: E402
from scsi import cdb_write_same16, clear_unit_attention, naa_of, read_blocks  # noqa: E402
from vaai import VaaiStorageObject  # noqa: E402
from vaai.export import export_loopback, find_disk, sg_of, unexport  # noqa: E402

from fabrics import iscsi_login  # noqa: E402

MiB = 1 << 20
LUN_BYTES = 512 * MiB
BEAT_LBA = 2048  # the heartbeat's block, 1 MiB in
STREAM_OFF = 64 * MiB  # where the streams work, to the LUN's end
FS_MNT = "/run/vaai-ats"
BDEVS = {"ours": "/dev/ram1", "lio": "/dev/ram2"}
SIDES = ("ours", "lio")
FABRICS = {"loop": "tcm_loop", "iscsi": "iSCSI"}
ISCSI_IQN = "iqn.2026-11.org.vaai:ats"
SIDE_TEXT = {
    "file": {"ours": "vaai (write cache off)", "lio": "target_core_file (write_back=0)"},
    "block": {"ours": "vaai", "lio": "target_core_iblock"},
}


def fio_stream(rw, bs, qd):
    def argv(disk, seconds):
        return [
            "fio",
            "--name=stream",
            f"--filename={disk}",
            "--ioengine=libaio",
            "--direct=1",
            f"--rw={rw}",
            f"--bs={bs}",
            f"--iodepth={qd}",
            f"--offset={STREAM_OFF}",
            f"--size={LUN_BYTES - STREAM_OFF}",
            "--randrepeat=0",
            "--norandommap",
            "--time_based",
            f"--runtime={seconds}",
            "--output-format=json",
        ]

    return ("fio", argv)


def sg_stream(make_cmds, qd):
    """A stream of prepared commands that sgloop sends over and over."""
    return ("sg", (make_cmds, qd))


def write_same_cmds(lun):
    """WRITE SAME (16) of zeroes, 1 MiB each, from STREAM_OFF on."""
    per = MiB // lun.block_size
    return [
        (cdb_write_same16(lba, per), bytes(lun.block_size))
        for lba in range(STREAM_OFF // lun.block_size, LUN_BYTES // lun.block_size, per)
    ]


def xcopy_within(lun):
    """4 MiB EXTENDED COPYs from the first half of [STREAM_OFF, end) to
    its second half."""
    half = (LUN_BYTES - STREAM_OFF) // 2
    return xcopy_cmds(lun, lun, 4 * MiB, half, STREAM_OFF + half, STREAM_OFF)


STREAMS = {
    "idle": None,
    "seq1m-qd4": fio_stream("write", "1m", 4),
    "seq1m-qd32": fio_stream("write", "1m", 32),
    "rand4k-qd32": fio_stream("randwrite", "4k", 32),
    "ws1m-qd4": sg_stream(write_same_cmds, 4),
    "xcopy4m-qd4": sg_stream(xcopy_within, 4),
}


class Stream:
    """One of STREAMS running on lun for seconds: start(), then mbps()
    once it has ended (bytes moved per second by its own count)."""

    def __init__(self, name, lun, seconds):
        self.kind, self.how = STREAMS[name] or (None, None)
        self.lun, self.seconds, self.proc, self.cmds = lun, seconds, None, None
        if self.kind == "sg":
            make, self.qd = self.how
            self.cmds = make(lun)
            self.path = cmd_file(f"/run/vaai-ats-{name}.cmds", self.cmds)

    def start(self):
        if self.kind == "fio":
            argv = self.how(self.lun.disk, self.seconds)
        elif self.kind == "sg":
            argv = [SGLOOP, "-d", str(self.qd), "-t", str(self.seconds), self.lun.sg, self.path]
        else:
            return
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)

    def mbps(self):
        if not self.proc:
            return None
        out = self.proc.communicate(timeout=self.seconds + 120)[0]
        if self.proc.returncode:
            raise RuntimeError(f"the stream failed: {self.proc.args}")
        if self.kind == "fio":
            return json.loads(out)["jobs"][0]["write"]["bw_bytes"] / 1e6
        secs, sent = out.split()
        per_cmd = _bytes_per_cmd(self.cmds[0])
        return int(sent) * per_cmd / float(secs) / 1e6

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.cmds:
            os.unlink(self.path)


def _bytes_per_cmd(cmd):
    """What one of a stream's commands writes: WRITE SAME's NUMBER OF
    LOGICAL BLOCKS, or an EXTENDED COPY segment's."""
    cdb, data = cmd
    if cdb[0] == 0x93:
        return struct.unpack_from(">I", cdb, 10)[0] * 512
    # LID1 list: 16-byte header, the CSCDs, then the segment; its NUMBER OF
    # BLOCKS is bytes 10-11 of a block-to-block descriptor
    cscd_len = struct.unpack_from(">H", data, 2)[0]
    return struct.unpack_from(">H", data, 16 + cscd_len + 10)[0] * 512


def counter(lun):
    return struct.unpack_from("<Q", read_blocks(lun.sg, BEAT_LBA, 1, 512).data)[0]


def percentile(lat, q):
    """The q-th quantile of the sorted latencies lat, as point() and the
    pooled figures take it."""
    return lat[len(lat) // 2] if q == 0.5 else lat[int(q * (len(lat) - 1))]


def point(lun, stream, seconds, trace=None):
    """The heartbeat's figures beside stream: beats, p50/p99/max in µs, the
    stream's MB/s, and with trace (an ats_trace.Trace) where the beats'
    time went.  The block must count every beat."""
    before = counter(lun)
    st = Stream(stream, lun, seconds + 2)
    try:
        st.start()
        if st.proc:
            time.sleep(1)  # the stream under way
        if trace:
            trace.start()
        proc = subprocess.run(
            [HEARTBEAT, "-t", str(seconds), lun.sg, str(BEAT_LBA)],
            capture_output=True,
            text=True,
            check=False,
        )
        beats = trace.stop() if trace else None
        if proc.returncode:
            raise RuntimeError(f"heartbeat failed: {proc.stderr.strip()}")
        mbps = st.mbps()
    finally:
        st.close()
    lat = [float(x) for x in proc.stdout.split()]
    if trace:
        beats = ats_trace.with_initiator(beats, lat)
    lat.sort()
    if counter(lun) != before + len(lat):
        raise RuntimeError(f"the heartbeat block lost a beat: {before} + {len(lat)}")
    out = {
        "beats": len(lat),
        "p50_us": percentile(lat, 0.5),
        "p99_us": percentile(lat, 0.99),
        "max_us": lat[-1],
        "stream_mbps": mbps,
        "lat_us": [round(x) for x in lat],
    }
    if trace:
        out["trace"] = ats_trace.summary(beats)
    return out


def make_so(store, who, path, thin=False):
    """who's LUN on path; thin: UNMAP on (emulate_tpu), else as made."""
    name = f"ats_{store}_{who}"
    if who == "ours":
        so = VaaiStorageObject(name, path=path)
    elif store == "block":
        so = BlockStorageObject(name, dev=path)
    else:
        so = FileIOStorageObject(name, dev=path, size=LUN_BYTES)
    try:
        if who == "ours":
            so.set_attribute("emulate_write_cache", "0")
        if thin:
            so.set_attribute("emulate_tpu", "1")
    except Exception:
        so.delete()  # else it keeps the file open, and the file system mounted
        raise
    return so


def _lun(disk):
    sg = sg_of(disk)
    clear_unit_attention(sg)
    return Lun(disk, sg, naa_of(sg), 512)


@contextlib.contextmanager
def exported(sos, fabric):
    """sos ({who: storage object}) exported over fabric: {who: Lun}.
    Over iSCSI, both in one TPG with the ESXi profile, this guest's
    open-iscsi logged in to it, and logged out after."""
    try:
        with contextlib.ExitStack() as stack:
            if fabric == "loop":
                for so in sos.values():
                    export_loopback(so)
                driver, target = "tcm_loopback", None
            else:
                stack.enter_context(iscsi_login(list(sos.values()), ISCSI_IQN, profile="esxi"))
                driver, target = "iscsi_tcp", ISCSI_IQN
            luns = {who: _lun(find_disk(so, driver, target=target)) for who, so in sos.items()}
            sh("udevadm", "settle")
            yield luns
    finally:
        for so in sos.values():
            # each taken down, whatever the one before did
            with contextlib.suppress(Exception):
                unexport(so)


def queue_of(dev):
    """What sits between a block LUN and its medium: the device's I/O
    scheduler, write-back throttling latency target (µs; 0: off) and
    rotational flag."""
    q = f"/sys/block/{os.path.basename(dev)}/queue/"
    got = {"dev": dev}
    for name in ("scheduler", "wbt_lat_usec", "rotational"):
        with contextlib.suppress(OSError), open(q + name) as f:
            got[name] = f.read().strip()
    return got


def write_back(disk):
    """Does the initiator see a volatile write cache on /dev/sdX (WCE)?"""
    (path,) = glob.glob(f"/sys/block/{os.path.basename(disk)}/device/scsi_disk/*/cache_type")
    with open(path) as f:
        return f.read().startswith("write back")


@contextlib.contextmanager
def exported_sides(store, thin=False, durable=False, fabric="loop"):
    """Both sides' LUNs on store, written out in full (so that no side
    allocates beside what is measured) and exported over fabric: {who:
    Lun}.  durable: ours' write cache stays off whatever LIO reports."""
    sos = {}
    try:
        for who in SIDES:
            if store == "block":
                path, flag = BDEVS[who], "oflag=direct"
            else:
                path, flag = os.path.join(FS_MNT, f"{who}.img"), "conv=fsync"
                # a new inode: XFS keeps an inode's copy-on-write state
                # (its reflink flag, its CoW fork) after a copy shared it
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
            sh("dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={LUN_BYTES // MiB}", flag)
            sos[who] = make_so(store, who, path, thin)
        with exported(sos, fabric) as luns:
            if store == "block" and not durable and write_back(luns["lio"].disk):
                # LIO's iblock reports its device's volatile write cache to
                # the host (MODE SENSE's WCE) and writes without FUA: not
                # durable at GOOD.  Ours, with its write cache off, would
                # flush each heartbeat; with it on, ours does the same work
                # as LIO's.
                sos["ours"].set_attribute("emulate_write_cache", "1")
                print("block: LIO reports a write cache; ours turned on too", flush=True)
            yield luns
    finally:
        for so in sos.values():
            so.delete()


def write_stream_range(target):
    """The streams' range of a LUN (its disk, or its file) written anew
    with direct I/O: allocated, and none of it shared."""
    sh(
        "dd",
        "if=/dev/zero",
        f"of={target}",
        "bs=1M",
        f"seek={STREAM_OFF // MiB}",
        f"count={(LUN_BYTES - STREAM_OFF) // MiB}",
        "conv=notrunc,fsync",
        "oflag=direct",
    )


def unshare(store, who):
    """Our EXTENDED COPY on the file store shares extents (XFS reflink),
    and every later write to them is copied on write: each point starts
    with the streams' range written anew, whatever ran before it."""
    if store == "file":
        write_stream_range(os.path.join(FS_MNT, f"{who}.img"))


def run_store(store, fabric, streams, seconds, rounds, trace=False, durable=False):
    """Both sides of store, exported over fabric; every stream on each,
    rounds times, rotating which side goes first.  Each round on LUNs made anew:
    on the file store, the copy point's shared extents would otherwise
    be copied on write under the next round's streams."""
    tracer = ats_trace.Trace(sched=trace == "sched") if trace else None
    try:
        per = {s: [] for s in streams}
        for r in range(rounds):
            order = SIDES[r % 2 :] + SIDES[: r % 2]
            with exported_sides(store, durable=durable, fabric=fabric) as luns:
                for stream in streams:
                    res = {}
                    for who in order:
                        unshare(store, who)
                        res[who] = point(luns[who], stream, seconds, tracer)
                    per[stream].append(res)
                    print(
                        f"{store} {fabric} {stream} round {r + 1}: "
                        + ", ".join(f"{who} p99 {res[who]['p99_us']:.0f} us" for who in SIDES),
                        flush=True,
                    )
        return per
    finally:
        if tracer:
            tracer.close()


def median(values):
    got = [v for v in values if v is not None]
    return statistics.median(got) if got else None


def stream_args(p, streams, seconds, what):
    """The options guest_ats.py and guest_space.py share."""
    p.add_argument("out", help="the JSON results file to write")
    p.add_argument("--rounds", type=int, default=3, help="rounds (default %(default)s)")
    p.add_argument(
        "--seconds", type=int, default=seconds, help=f"{what} per point (default %(default)s)"
    )
    p.add_argument("--store", action="append", choices=("file", "block"), help="default: both")
    p.add_argument("--stream", action="append", choices=tuple(streams), help="default: all")


def bench_meta(args, **more):
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "kernel": platform.release(),
        "clocksource": clocksource(),
        "rounds": args.rounds,
        "seconds": args.seconds,
        "lun_bytes": LUN_BYTES,
        "sides": SIDE_TEXT,
        **more,
    }


def pooled(rounds, who):
    """who's beats of every round together: their count, p50 and p99.  A
    p99 of one round's few hundred beats is its few slowest, which differ
    more from round to round than ours from LIO's."""
    lat = sorted(x for rd in rounds for x in rd[who]["lat_us"])
    return {"beats": len(lat), "p50_us": percentile(lat, 0.5), "p99_us": percentile(lat, 0.99)}


def measure_stores(out, meta, stores, run, worst=(), fabrics=("loop",)):
    """run(store, fabric) -> {stream: [round, ...]} for each fabric and
    store, on the RAM disks (ram0 holds the file store's XFS, ram1 and
    ram2 are the block LUNs); out rewritten after each with every
    figure's median of the rounds, those named in worst the worst of
    them; where the rounds keep each beat (lat_us), the beats' figures
    are those of all rounds' beats together."""
    results = []
    with xfs_on_brd(FS_MNT, 3 * LUN_BYTES // 1024, rd_nr=3):
        for fabric in fabrics:
            for store in stores:
                for stream, rounds in run(store, fabric).items():
                    entry = {"store": store, "fabric": fabric, "stream": stream, "rounds": rounds}
                    for who in SIDES:
                        entry[who] = {
                            k: median(rd[who][k] for rd in rounds)
                            for k in rounds[0][who]
                            if k not in ("trace", "lat_us")
                        }
                        for k in worst:
                            entry[who][k] = max(rd[who][k] for rd in rounds)
                        if "lat_us" in rounds[0][who]:
                            entry[who].update(pooled(rounds, who))
                    results.append(entry)
                with open(out + ".tmp", "w") as f:
                    json.dump({"meta": meta, "results": results}, f, indent=2)
                os.replace(out + ".tmp", out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    stream_args(p, STREAMS, 10, "heartbeat seconds")
    p.add_argument(
        "--fabric",
        action="append",
        choices=tuple(FABRICS),
        help="fabrics, in order (default: loop)",
    )
    p.add_argument(
        "--trace",
        action="store_true",
        help="also trace where each beat's time goes (ats_trace.py; costs the streams a little)",
    )
    p.add_argument(
        "--trace-sched",
        action="store_true",
        help="--trace, and what ran on the CPU while the slowest beats were queued "
        "(the scheduler's sched_switch as well; costs the streams more)",
    )
    p.add_argument(
        "--bdevs",
        metavar="OURS,LIO",
        help=f"the block store's devices (default: {BDEVS['ours']},{BDEVS['lio']})",
    )
    p.add_argument(
        "--durable",
        action="store_true",
        help="ours' write cache off on the block store even where LIO reports one",
    )
    args = p.parse_args()
    trace = "sched" if args.trace_sched else args.trace
    disks = {}
    if args.bdevs:
        devs = args.bdevs.split(",")
        if len(devs) != 2 or devs[0] == devs[1]:
            p.error("--bdevs takes two different devices: OURS,LIO")
        BDEVS.update(zip(SIDES, devs))
        # the RAM disks' queues do not exist until measure_stores loads brd
        disks = {"bdevs": {who: queue_of(BDEVS[who]) for who in SIDES}}
    streams = args.stream or list(STREAMS)
    fabrics = args.fabric or ["loop"]
    measure_stores(
        args.out,
        bench_meta(args, trace=trace, durable=args.durable, fabrics=fabrics, **disks),
        args.store or ("file", "block"),
        lambda store, fabric: run_store(
            store, fabric, streams, args.seconds, args.rounds, trace, args.durable
        ),
        # the worst beat of all rounds, not a median of them
        worst=("max_us",),
        fabrics=fabrics,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
