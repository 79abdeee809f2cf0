#!/usr/bin/python3
"""Inside a guest: record every block write under an XFS file store with
dm-log-writes while the power-cut workload runs on a vaai LUN, then replay
the log to each flush and FUA point and check the state a power cut there
would have left: the file system clean (xfs_repair -n after its log is
replayed) and the LUN as the oracle allows (tests/powercut/model.py).

    replay.py [--commands N] [--seed S] [--write-cache]

One workload command at a time; after each a mark goes into the log, so
the replay knows which commands had returned GOOD at every point.  The
check at a point mounts a snapshot of the replayed device (dm-snapshot,
so the log recovery of the mount does not reach the replay).
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "guest"), os.path.join(HERE, "..", "..", "python")]

import scsi  # noqa: E402
import writelog  # noqa: E402
from luns import LUN_SIZE  # noqa: E402
from model import BLOCK, LunModel  # noqa: E402
from vaai import VaaiStorageObject  # noqa: E402
from vaai.export import export_loopback, find_disk, sg_of, unexport  # noqa: E402
from workload import Workload  # noqa: E402

WORK = "/run/vaai/replay"
FS_SIZE = 320 << 20  # mkfs.xfs's least
LOG_SIZE = 1 << 30
COW_SIZE = 256 << 20
LOGGED = "vaai-logged"
SNAP = "vaai-replay-snap"
MNT = os.path.join(WORK, "mnt")
LUN_FILE = "lun.img"


def sh(*argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def image(name, size):
    path = os.path.join(WORK, name)
    with open(path, "wb") as f:
        f.truncate(size)
    return path, sh("losetup", "--find", "--show", path).strip()


def sectors(dev):
    return int(sh("blockdev", "--getsz", dev))


class RecordingModel(LunModel):
    """The oracle, with every event kept in order and a mark in the log
    after each GOOD: the replay rebuilds the oracle as of any point."""

    def __init__(self, *args, mark):
        super().__init__(*args)
        self.events = []
        self.mark = mark

    def issue(self, what, serial, versions):
        self.events.append(("issue", what, serial, list(versions)))
        return super().issue(what, serial, versions)

    def acked(self, cmd, fua=False):
        super().acked(cmd, fua)
        self.events.append(("acked", cmd.serial, fua))
        self.mark(f"e{len(self.events)}")

    def synced(self):
        super().synced()
        self.events.append(("synced",))
        self.mark(f"e{len(self.events)}")


class Replayer:
    """The oracle rebuilt event by event as the log's marks go by."""

    def __init__(self, events, nblocks, write_cache):
        self.events = events
        self.model = LunModel(0, nblocks, write_cache)
        self.done = 0
        self.cmds = {}
        self.pending = []

    def _apply(self, event):
        if event[0] == "issue":
            _, what, serial, versions = event
            self.model.serial = serial
            self.cmds[serial] = self.model.issue(what, serial, versions)
        elif event[0] == "acked":
            self.model.acked(self.cmds[event[1]], fua=event[2])
        else:
            self.model.synced()

    def upto(self, n):
        """Events 1..n happened; so may the issues that follow them (the
        next command was sent before any of its writes reached the log)."""
        while self.done < n:
            self._apply(self.events[self.done])
            self.done += 1
        self.pending = []
        i = self.done
        while i < len(self.events) and self.events[i][0] == "issue":
            self.pending.append(self.events[i])
            i += 1

    def oracle(self):
        """A model as of now: the events applied and the pending issues."""
        for event in self.pending:
            self._apply(event)
            self.done += 1
        self.pending = []
        return self.model


def record(commands, seed, write_cache):
    """Run the workload on an XFS file store over dm-log-writes: (the log's
    image, the oracle's events, the workload)."""
    data_img, data = image("data.img", FS_SIZE)
    log_img, log = image("log.img", LOG_SIZE)
    undo = [
        lambda: os.unlink(data_img),
        lambda: sh("losetup", "-d", log),
        lambda: sh("losetup", "-d", data),
    ]
    try:
        sh("dmsetup", "create", LOGGED, "--table", f"0 {sectors(data)} log-writes {data} {log}")
        undo.append(lambda: sh("dmsetup", "remove", LOGGED))
        dev = f"/dev/mapper/{LOGGED}"

        def mark(text):
            sh("dmsetup", "message", LOGGED, "0", "mark", text)

        # -K: no discard of the whole device, which the log would carry
        sh("mkfs.xfs", "-q", "-f", "-K", "-m", "reflink=1", dev)
        mark("mkfs")
        os.makedirs(MNT, exist_ok=True)
        sh("mount", dev, MNT)
        undo.append(lambda: sh("umount", MNT))
        so = VaaiStorageObject("replay", path=os.path.join(MNT, LUN_FILE), size=LUN_SIZE)
        undo.append(so.delete)
        so.set_attribute("emulate_write_cache", int(write_cache))
        export_loopback(so)
        undo.append(lambda: unexport(so))
        sg = sg_of(find_disk(so, "tcm_loopback"))
        scsi.clear_unit_attention(sg)
        model = RecordingModel(0, LUN_SIZE // BLOCK, write_cache, mark=mark)
        mark("e0")
        w = Workload(sg, model, random.Random(seed), scsi.naa_of(sg))
        w.run(commands)
    finally:
        for step in reversed(undo):
            step()
    return log_img, model.events, w


def check_point(replayed, cow, replayer, wrong, lun_known):
    """What a power cut at this point would leave: mount a snapshot, read
    the LUN, unmount, xfs_repair -n."""
    sh("dmsetup", "create", SNAP, "--table", f"0 {sectors(replayed)} snapshot {replayed} {cow} N 8")
    snap = f"/dev/mapper/{SNAP}"
    try:
        r = subprocess.run(["mount", snap, MNT], capture_output=True, text=True, check=False)
        if r.returncode:
            wrong.append(f"the file system does not mount: {r.stderr.strip()}")
            return
        try:
            path = os.path.join(MNT, LUN_FILE)
            if lun_known and not os.path.exists(path):
                wrong.append("the LUN's file is gone, though the LUN was answering")
            elif lun_known:
                with open(path, "rb") as f:
                    data = f.read()
                wrong += replayer.oracle().check(data)
        finally:
            sh("umount", MNT)
        r = subprocess.run(["xfs_repair", "-n", snap], capture_output=True, text=True, check=False)
        if r.returncode:
            wrong.append(f"xfs_repair -n: {r.stdout[-2000:]}{r.stderr[-2000:]}")
    finally:
        sh("dmsetup", "remove", SNAP)


def replay(log_img, events, write_cache, every):
    """Write the log's entries in order to a fresh device, checking at
    every flush and FUA point after the file system was made."""
    replay_img, replayed = image("replay.img", FS_SIZE)
    cow_img, cow = image("cow.img", COW_SIZE)
    try:
        return replay_onto(log_img, replay_img, replayed, cow, events, write_cache, every)
    finally:
        for loop in (replayed, cow):
            sh("losetup", "-d", loop)
        for img in (replay_img, cow_img):
            os.unlink(img)


def replay_onto(log_img, replay_img, replayed, cow, events, write_cache, every):
    replayer = Replayer(events, LUN_SIZE // BLOCK, write_cache)
    points = checked = lun_checked = 0
    fs_known = lun_known = False
    wrong = []
    with open(log_img, "rb") as log, open(replay_img, "r+b") as out:
        for e in writelog.entries(log):
            if e.mark == "mkfs":
                fs_known = True
            elif e.mark and e.mark[0] == "e" and e.mark[1:].isdigit():
                lun_known = True
                replayer.upto(int(e.mark[1:]))
            if e.mark is not None:
                continue
            if e.flags & writelog.DISCARD:
                # what the loop device over tmpfs does with a discard
                out.flush()
                sh(
                    "fallocate",
                    "--punch-hole",
                    "--keep-size",
                    "-o",
                    str(e.offset),
                    "-l",
                    str(e.length),
                    replay_img,
                )
            elif e.data:
                out.seek(e.offset)
                out.write(e.data)
            if not fs_known or not e.flags & (writelog.FLUSH | writelog.FUA):
                continue
            points += 1
            if points % every:
                continue
            out.flush()
            os.fsync(out.fileno())
            sh("blockdev", "--flushbufs", replayed)
            before = len(wrong)
            check_point(replayed, cow, replayer, wrong, lun_known)
            checked += 1
            lun_checked += lun_known
            if len(wrong) > before:
                wrong.insert(before, f"at log entry {e.index} (flags {e.flags:#x}):")
                break
    return points, checked, lun_checked, wrong


def run(commands, seed=1, write_cache=False, every=1):
    """Record and replay: (the counts, what is wrong)."""
    os.makedirs(WORK, exist_ok=True)
    start = time.monotonic()
    log_img, events, w = record(commands, seed, write_cache)
    recorded = time.monotonic()
    try:
        points, checked, lun_checked, wrong = replay(log_img, events, write_cache, every)
    finally:
        os.unlink(log_img)
    counts = {
        "kernel": os.uname().release,
        "write_cache": write_cache,
        "commands": dict(w.acked),
        "points": points,
        "checked": checked,
        "lun_checked": lun_checked,
        "passed": not wrong,
        "record_s": round(recorded - start),
        "replay_s": round(time.monotonic() - recorded),
    }
    return counts, wrong


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=40)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--write-cache", action=argparse.BooleanOptionalAction, default=False)
    p.add_argument("--every", type=int, default=1, help="check every Nth flush/FUA point")
    p.add_argument("--summary", help="write the counts here as JSON")
    args = p.parse_args()
    counts, wrong = run(args.commands, args.seed, args.write_cache, args.every)
    print(f"replay: {json.dumps(counts)}", flush=True)
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(counts, f)
    if wrong:
        print("replay: FAILED\n  " + "\n  ".join(wrong[:40]), flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
