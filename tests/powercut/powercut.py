#!/usr/bin/python3
"""Cut the power of a target under load, again and again, and check after
each cut that the LUNs hold what was promised (tests/powercut/model.py).

The target runs in a guest (tests/vm/run.py) whose LUNs live on virtio
disks backed by images here; the initiator runs on the host
(tests/powercut/initiator.py), so its record of every GOOD outlives the
guest.  Each round: boot, check the file systems (in the guest), log in to
every LUN, read each back whole and check it, run the workload for a random
while, then SIGKILL the guest's QEMU.  The last boot only checks.

    powercut.py --kver KVER --cuts N [--seed S] [--summary FILE]
"""

import argparse
import collections
import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(REPO, "tests", "guest"), os.path.join(REPO, "python")]

import scsi  # noqa: E402
from initiator import IscsiLun, SessionLostError  # noqa: E402
from luns import DISKS, HOST_IQN, LUN_SIZE, LUNS, TARGET_IQN  # noqa: E402
from model import BLOCK, LunModel  # noqa: E402
from workload import Workload  # noqa: E402

OUT = os.path.join(REPO, "build", "powercut")
STOP = os.path.join(OUT, "stop")
PORTAL = "127.0.0.1:3260"
READY = "powercut: ready"
BOOT_TIMEOUT = 600  # seconds from run.py's holding the VM lock to the LUNs exported
READ_CHUNK = 2048  # blocks per READ when checking a LUN


def vm_runner():
    spec = importlib.util.spec_from_file_location("run", os.path.join(REPO, "tests/vm/run.py"))
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    return run


class RunFailedError(Exception):
    pass


class Guest:
    """One boot of the target's guest, its console followed in a thread."""

    def __init__(self, run, kver, boot, fmt):
        self.run = run  # tests/vm/run.py, imported
        self.log = os.path.join(OUT, f"console-{boot}.log")
        env = dict(os.environ, VAAI_POWERCUT_FORMAT="1" if fmt else "0")
        disks = [a for d in DISKS for a in ("--disk", os.path.join(OUT, d.image))]
        self.proc = subprocess.Popen(
            [
                sys.executable,
                os.path.join(REPO, "tests/vm/run.py"),
                "--kver",
                kver,
                "--serve",
                *disks,
                "--timeout",
                "3600",
                "--log",
                self.log,
                "--",
                "tests/powercut/guest-target.sh",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        self.lines = []
        self.booting = threading.Event()  # run.py holds the VM lock
        self.booted_at = None  # and since when
        self.ready = threading.Event()
        threading.Thread(target=self._follow, daemon=True).start()

    def _follow(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip())
            if line.startswith(self.run.BOOTING):
                self.booted_at = time.monotonic()
                self.booting.set()
            if READY in line:
                self.ready.set()
        self.booting.set()
        self.ready.set()

    def wait_ready(self):
        """Until the guest has exported its LUNs: however long another VM
        holds the lock, then BOOT_TIMEOUT."""
        self.booting.wait()
        if not self.ready.wait(BOOT_TIMEOUT) or self.proc.poll() is not None:
            self.stop()
            raise RunFailedError(
                f"the guest did not export its LUNs (console: {self.log}):\n" + self.tail()
            )

    def tail(self, n=30):
        return "\n".join(self.lines[-n:])

    def stop(self):
        """This boot given up: run.py interrupted, which stops the vng (and
        QEMU) it started and boots no more (a QEMU killed under it instead
        could look to it like a boot that died early, to be tried again)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        self.proc.wait()

    def kill(self):
        """The power cut: SIGKILL to this boot's QEMU; where there is none,
        the boot stopped as by stop()."""
        image = os.path.join(OUT, DISKS[0].image)
        found = False
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if os.path.basename(argv[0]).startswith(b"qemu-system") and any(
                image.encode() in a for a in argv
            ):
                os.kill(int(pid), signal.SIGKILL)
                found = True
        if not found:
            self.stop()
        self.proc.wait()

    def trouble(self, run):
        """Kernel trouble on this boot's console (run.py's patterns)."""
        with open(self.log, errors="replace") as f:
            return [line.rstrip() for line in f if run.KERNEL_TROUBLE.search(line)]


def read_lun(dev, nblocks):
    data = bytearray()
    for lba in range(0, nblocks, READ_CHUNK):
        n = min(READ_CHUNK, nblocks - lba)
        res = scsi.expect_good(
            scsi.sg_io(dev, scsi.cdb_read16(lba, n), data_in_len=n * BLOCK, timeout_ms=0)
        )
        data += res.data
    return bytes(data)


def login(number):
    dev = IscsiLun(PORTAL, TARGET_IQN, number, HOST_IQN)
    scsi.clear_unit_attention(dev)
    return dev


class Rig:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.models = [
            LunModel(n, LUN_SIZE // BLOCK, lun.write_cache) for n, lun in enumerate(LUNS)
        ]
        self.naa = {}
        self.sent = [collections.Counter() for _ in LUNS]
        self.acked = [collections.Counter() for _ in LUNS]
        self.cut_inside = collections.Counter()  # what was outstanding at the cuts
        self.checked_blocks = 0
        self.fs_checks = 0  # xfs_repair -n / e2fsck -fn runs that found nothing
        self.run = vm_runner()

    def check(self, devs):
        """Every LUN read back whole against its model (zeros on the first
        boot)."""
        wrong = []
        for number, dev in enumerate(devs):
            naa = scsi.naa_of(dev)
            if self.naa.setdefault(number, naa) != naa:
                wrong.append(
                    f"LUN {number}: NAA {naa.hex()} after the cut, {self.naa[number].hex()} before"
                )
            if list(self.naa.values()).count(naa) > 1:
                wrong.append(f"LUN {number}: NAA {naa.hex()} is another LUN's too")
            model = self.models[number]
            wrong += model.check(read_lun(dev, len(model.history)))
            model.rebase()
            self.checked_blocks += len(model.history)
        return wrong

    def load(self, devs, seconds):
        """The workload on every LUN at once, then the cut."""
        workloads = [
            Workload(dev, self.models[n], random.Random(self.rng.random()), self.naa[n])
            for n, dev in enumerate(devs)
        ]
        cut = threading.Event()
        errors = []

        def drive(w):
            try:
                w.run()
            except SessionLostError:
                if not cut.is_set():
                    errors.append(f"LUN {w.model.lun_id}: session lost before the cut")
            except Exception as e:
                errors.append(f"LUN {w.model.lun_id}: {type(e).__name__}: {e}")

        threads = [threading.Thread(target=drive, args=(w,)) for w in workloads]
        for t in threads:
            t.start()
        time.sleep(seconds)
        return workloads, threads, cut, errors

    def settle(self, workloads, threads, devs):
        """--check-live: stop the load, read every LUN back before the cut
        (what the target serves must be the newest of everything), then
        cut with nothing outstanding."""
        for w in workloads:
            w.stop = True
        for t in threads:
            t.join()
        wrong = []
        for dev, w in zip(devs, workloads):
            wrong += w.model.check_live(read_lun(dev, len(w.model.history)))
        if wrong:
            raise RunFailedError("before the cut, live:\n  " + "\n  ".join(wrong[:40]))

    def tally(self, workloads):
        for n, w in enumerate(workloads):
            self.sent[n] += w.sent
            self.acked[n] += w.acked
            for what in w.sent:
                if w.sent[what] > w.acked[what]:
                    self.cut_inside[what] += w.sent[what] - w.acked[what]

    def round(self, boot):
        last = boot == self.args.cuts
        guest = Guest(self.run, self.args.kver, boot, fmt=boot == 0)
        try:
            guest.wait_ready()
            up = time.monotonic()
            start = guest.booted_at
            self.fs_checks += sum(line.endswith(" clean") for line in guest.lines)
            devs = [login(n) for n in range(len(LUNS))]
            wrong = self.check(devs)
            checked = time.monotonic()
            if wrong:
                raise RunFailedError(f"after cut {boot}:\n  " + "\n  ".join(wrong[:40]))
            if last:
                for dev in devs:
                    dev.close()
                open(STOP, "w").close()
                if guest.proc.wait(timeout=300):
                    raise RunFailedError(f"the last boot did not stop cleanly:\n{guest.tail()}")
                return
            seconds = self.rng.uniform(self.args.min_run, self.args.max_run)
            workloads, threads, cut, errors = self.load(devs, seconds)
            if self.args.check_live:
                self.settle(workloads, threads, devs)
            if errors:
                raise RunFailedError("before cut {}: {}".format(boot + 1, "; ".join(errors)))
            cut.set()
            guest.kill()
            for t in threads:
                t.join(timeout=120)
            for dev in devs:
                dev.close()
            if errors:
                raise RunFailedError("at cut {}: {}".format(boot + 1, "; ".join(errors)))
            self.tally(workloads)
            print(
                f"powercut: cut {boot + 1}/{self.args.cuts} after {seconds:.1f} s of load "
                f"(boot {up - start:.0f} s, check {checked - up:.0f} s): "
                + ", ".join(
                    f"{k} {v}"
                    for k, v in sorted(
                        sum((w.acked for w in workloads), collections.Counter()).items()
                    )
                ),
                flush=True,
            )
        finally:
            if guest.proc.poll() is None:
                guest.kill()
            trouble = guest.trouble(self.run)
            if trouble:
                raise RunFailedError(
                    f"kernel trouble on the console ({guest.log}):\n" + "\n".join(trouble[:20])
                )

    def summary(self):
        total = lambda cs: dict(sum(cs, collections.Counter()))  # noqa: E731
        return {
            "kernel": self.args.kver,
            "seed": self.args.seed,
            "cuts": self.args.cuts,
            "luns": [lun._asdict() for lun in LUNS],
            "sent": total(self.sent),
            "acked": total(self.acked),
            "outstanding_at_cut": dict(self.cut_inside),
            "blocks_checked": self.checked_blocks,
            "fs_checks": self.fs_checks,
        }


def images():
    os.makedirs(OUT, exist_ok=True)
    for d in DISKS:
        path = os.path.join(OUT, d.image)
        with open(path, "wb") as f:
            f.truncate(d.size)
    if os.path.exists(STOP):
        os.unlink(STOP)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kver", required=True, help="the guest's kernel release")
    p.add_argument("--cuts", type=int, default=3, help="power cuts (default %(default)s)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: the time)")
    p.add_argument("--min-run", type=float, default=2.0, help="least seconds of load per cut")
    p.add_argument("--max-run", type=float, default=12.0, help="most seconds of load per cut")
    p.add_argument(
        "--check-live",
        action="store_true",
        help="before each cut, stop the load and check that every LUN serves the newest data",
    )
    p.add_argument("--summary", help="write the counts here as JSON")
    args = p.parse_args()
    if args.seed is None:
        args.seed = int(time.time())
    print(f"powercut: {args.cuts} cuts on {args.kver}, seed {args.seed}", flush=True)
    images()
    rig = Rig(args)
    try:
        for boot in range(args.cuts + 1):
            rig.round(boot)
    except RunFailedError as e:
        print(f"powercut: FAILED (seed {args.seed}): {e}", flush=True)
        return 1
    summary = rig.summary()
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(summary, f, indent=1)
    print("powercut: passed: " + json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
