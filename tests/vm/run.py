#!/usr/bin/python3
"""Boot Debian's stock kernel, or a kernel build tree (the sanitizer kernel of
`make test-debug`), in QEMU (virtme-ng, host root filesystem) and run one
command inside it, with the repository mounted read-write.

The run fails if the guest command fails, if the guest never reports back
(panic, oops: the guest boots with oops=panic and panic=-1), if it outlives
--timeout, or if the console shows a kernel BUG, oops or warning.  The whole
console, kernel messages included, is kept in --log.  A guest kernel that
started, showed no trouble, and died before user space (nothing of ours
loaded yet) is booted once more; that first console is kept beside the log
as LOG.first-boot.  So is one that died before user space of an int3 oops
alone (QEMU's TCG running code another vCPU was patching): LOG.int3-boot,
and one whose kernel had not started user space VAAI_BOOT_TIMEOUT (300)
seconds in, killed for it: LOG.first-boot.

Several guests at once (tests/ha/rig.py) each get a run.py of their own,
under the one VM lock the rig holds (--locked): --link joins NICs of two
guests over UDP on 127.0.0.1, --shared-disk gives them one image, and
SIGTERM cuts a guest's power (its QEMU killed at once); SIGUSR1 freezes
the guest (its QEMU stopped, disks and links as they are) and SIGUSR2
thaws it.
"""

import argparse
import codecs
import collections
import contextlib
import fcntl
import io
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VNG = os.environ.get("VAAI_VNG", "/var/cache/vaai/venv/bin/vng")
# One VM at a time on this machine: a second run waits for the first (two
# software-emulated guests on two cores slow each other past the tests'
# timeouts).
VM_LOCK = os.environ.get("VAAI_VM_LOCK", "/tmp/vaai-vm.lock")
BOOTING = "run.py: the VM lock is ours; booting"

# The headers of lockdep's reports (kernel/locking/lockdep.c).  Sleeping in
# atomic context (DEBUG_ATOMIC_SLEEP) is a "BUG: sleeping function called".
LOCKDEP_REPORT = (
    r"WARNING: (possible circular locking|possible recursive locking|"
    r"possible irq lock inversion|inconsistent lock state|"
    r"suspicious RCU usage|bad unlock balance|bad contention|"
    r"held lock freed|lock held when returning|Nested lock was not taken|"
    r"chain_key collision|\S+-safe -> \S+-unsafe lock order|"
    r"\S+ still has locks held)"
)
# Kernel trouble that fails a run even when the guest command passed.
# kmemleak's scan logs the count; guest-init.sh prints the report, one
# "unreferenced object" per leak.
KERNEL_TROUBLE = re.compile(
    # before 6.9 an oops's header is "int3: 0000 [#1]" with no "Oops: "
    r"BUG:|Oops|Kernel panic|WARNING: CPU:|general protection fault|"
    r"\b(int3|invalid opcode): \d{4} \[#\d+\]|"
    r"UBSAN:|KASAN:|INFO: task .* blocked|" + LOCKDEP_REPORT + "|"
    r"kmemleak: .* new suspected memory leaks|unreferenced object 0x"
)
# Warnings from other kernel code than ours, which the tests reach on a
# stock kernel and which are reported without failing the run: what it
# is, and a frame of the warning's stack trace that tells it apart.
KNOWN_WARNINGS = (
    (
        (
            "Linux's DRBD 8.4 writes its metadata under rcu_read_lock() once its "
            "fence-peer handler has fenced the peer (docs/ha.md)"
        ),
        re.compile(r"\bw_after_conn_state_ch\+0x[0-9a-f]+/0x[0-9a-f]+ \[drbd\]"),
    ),
)
WARNING = re.compile(r"WARNING: CPU:")
END_TRACE = "---[ end trace"
# How much of the console to show around the first trouble: the lines
# before it (the warning's message, the test that was running) and the
# stack trace after it.
CONTEXT_BEFORE = 6
CONTEXT_AFTER = 40
# What tests/guest/conftest.py logs as each test starts.
TEST_START = re.compile(r"vaai-test: (\S+)")
# What guest-init.sh prints first: the guest reached user space.
GUEST_UP = "guest-init: up"
# Kernel log lines: kept in the log, not echoed unless they are trouble.
KERNEL_LINE = re.compile(r"\[\s*\d+\.\d+\] ")

# udev would load drivers for QEMU's emulated hardware no job uses and the
# CPU-feature crypto modules, whose self-tests take seconds under TCG (the
# generic algorithms serve): a boot took 23.7 s, now 18.7 s.
UNUSED_MODULES = (
    *("kvm", "kvm_amd", "kvm_intel", "ccp", "powernow_k8", "pcspkr", "psmouse"),
    *("serio_raw", "evdev", "button", "i2c_i801", "iTCO_wdt", "iTCO_vendor_support"),
    *("i6300esb", "lpc_ich", "intel_pmc_bxt", "ahci", "sr_mod"),
    *("aesni_intel", "ghash_clmulni_intel", "crc32_pclmul", "sha512_ssse3"),
)
GUEST_CMDLINE = [
    "oops=panic",  # an oops ends the run at once (vng adds panic=-1)
    "softlockup_panic=1",
    "hung_task_panic=1",
    "hung_task_timeout_secs=120",
    "console=ttyS0",
    "modprobe.blacklist=" + ",".join(UNUSED_MODULES),
]


def echo_part(line):
    """What of a console line goes to stdout: the guest job's own output,
    not the kernel's messages interleaved with it, unless they are trouble."""
    m = KERNEL_LINE.search(line)
    if not m or KERNEL_TROUBLE.search(line):
        return line
    return line[: m.start()].rstrip("[ ")


class ConsoleWatch:
    """Kernel trouble seen on the console, with what surrounds the first:
    the lines before it, the stack trace after it, and the guest test that
    was running."""

    def __init__(self):
        self._trouble = []
        self.known = []  # (what, the warning) of KNOWN_WARNINGS seen
        self.booted = False  # the guest kernel printed something
        self.user_space = False  # the kernel started user space
        self.up = False  # guest-init.sh started (user space, ours)
        self.context = None
        self.test = None
        self._running = None
        self._recent = collections.deque(maxlen=CONTEXT_BEFORE)
        # a warning whose stack trace is still coming: (the lines so far,
        # the lines before it, the test running)
        self._warning = None

    @property
    def trouble(self):
        """The trouble lines; a warning whose trace has not ended counts,
        with what trouble its trace holds so far."""
        pending = self._warning[0] if self._warning else []
        return self._trouble + [x for x in pending if KERNEL_TROUBLE.search(x)]

    def _found(self, lines, before, test):
        """Trouble among lines; the first trouble's context starts with
        before (the line being fed is appended by feed)."""
        self._trouble += [x for x in lines if KERNEL_TROUBLE.search(x)]
        if self.context is None:
            self.context, self.test = list(before), test

    def _warning_line(self, line):
        """The pending warning's trace, once it has ended: a known one, or
        trouble with the trace so far as its context."""
        lines, before, test = self._warning
        lines.append(line)
        if END_TRACE not in line and len(lines) < CONTEXT_AFTER:
            return
        self._warning = None
        for what, frame in KNOWN_WARNINGS:
            if any(frame.search(x) for x in lines):
                self.known.append((what, lines[0]))
                # trouble printed inside its trace is still trouble
                before, lines = before + lines[:1], lines[1:]
                break
        if not any(KERNEL_TROUBLE.search(x) for x in lines):
            return
        first = self.context is None
        self._found(lines, before, test)
        if first:
            self.context += lines[:-1]

    def feed(self, line):
        line = line.rstrip()
        if KERNEL_LINE.search(line):
            self.booted = True
        m = TEST_START.search(line)
        if GUEST_UP in line or m:
            self.up = True
        if self.up or USER_SPACE.search(line):
            self.user_space = True
        if m:
            self._running = m.group(1)
        if self._warning is not None:
            self._warning_line(line)
        elif WARNING.search(line):
            self._warning = ([line], list(self._recent), self._running)
        elif KERNEL_TROUBLE.search(line):
            self._found([line], self._recent, self._running)
        if self.context is not None and len(self.context) < CONTEXT_BEFORE + CONTEXT_AFTER:
            self.context.append(line)
        self._recent.append(line)

    def report(self):
        """The console around the first trouble, then the trouble lines and
        the test: last, where a log's tail (all CI shows) keeps them."""
        context, test = self.context, self.test
        if context is None and self._warning is not None:
            lines, before, test = self._warning
            context = before + lines
        out = ["run.py: the console around the first trouble:"]
        out += ["  | " + line for line in context or ()]
        out.append("run.py: the trouble seen:")
        out += ["  " + line for line in self.trouble[:20]]
        if test:
            out.append(f"run.py: the first came during {test}")
        return out


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kernel = p.add_mutually_exclusive_group(required=True)
    kernel.add_argument("--kver", help="guest kernel release (/boot/vmlinuz-KVER)")
    kernel.add_argument(
        "--kernel-dir",
        help="a built kernel tree: its bzImage, and its modules for modprobe in the guest",
    )
    p.add_argument("--mem", default="2G", help="guest memory (default %(default)s)")
    p.add_argument("--cpus", default="2", help="guest CPUs (default %(default)s)")
    p.add_argument(
        "--timeout", type=int, default=1500, help="seconds before the VM is killed (0: never)"
    )
    p.add_argument("--log", required=True, help="console log path")
    p.add_argument(
        "--append",
        action="append",
        default=[],
        metavar="ARG",
        help="one more guest kernel argument, after the usual ones "
        "(e.g. clocksource=tsc); may be repeated",
    )
    p.add_argument(
        "--root",
        help="boot on this directory as the root file system "
        "instead of the host's (the package tests' Debian 12 root)",
    )
    p.add_argument(
        "--serve", action="store_true", help="forward the guest's iSCSI port to 127.0.0.1:3260"
    )
    p.add_argument(
        "--disk",
        action="append",
        default=[],
        metavar="IMAGE",
        help="a raw image as the next virtio disk (/dev/vda, vdb, ...), the host's "
        "cache off for it; may be repeated",
    )
    p.add_argument(
        "--shared-disk",
        action="append",
        default=[],
        metavar="IMAGE",
        help="a raw image as the next virtio disk after --disk's, other guests "
        "writing it at the same time (share-rw, as two nodes see one SAN LUN)",
    )
    p.add_argument(
        "--link",
        action="append",
        default=[],
        metavar="MAC,PORT,PEER_PORT",
        help="a virtio NIC with this MAC whose frames go over UDP from "
        "127.0.0.1:PORT to another guest's 127.0.0.1:PEER_PORT; may be repeated",
    )
    p.add_argument("--name", help="the guest's host name")
    p.add_argument(
        "--overlay",
        action="append",
        default=[],
        metavar="DIR",
        help="a host directory the guest may write to, its writes kept in memory "
        "(as /etc and /var/lib are); may be repeated",
    )
    p.add_argument(
        "--locked",
        action="store_true",
        help="the caller holds the VM lock (tests/ha/rig.py, for its guests)",
    )
    p.add_argument(
        "cmd", nargs=argparse.REMAINDER, help="-- guest command (relative to the repository)"
    )
    args = p.parse_args(argv)
    if args.cmd and args.cmd[0] == "--":
        args.cmd = args.cmd[1:]
    if not args.cmd:
        p.error("no guest command given")
    return args


def kill_group(pgid, timeout=10):
    """SIGKILL to the VM's process group, and back once none of it runs
    (zombies aside): QEMU writes nothing more to its images."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        running = False
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    state, _ppid, pgrp = f.read().rsplit(")", 1)[1].split()[:3]
            except (OSError, IndexError):
                continue
            running = running or (int(pgrp) == pgid and state != "Z")
        if not running:
            return
        time.sleep(0.05)


# QEMU's TCG, a host thread per vCPU, now and then runs code on one vCPU
# that another is patching (a static key turned: text_poke_bp's int3
# after the patch is done), and the kernel oopses on an int3 of nobody's:
# seen at "sched_clock: Marking stable" 2.5 s into a 6.12 boot.  A boot
# that died so before user space, where nothing of ours is loaded yet,
# is booted once more (docs/testing.md).
INT3 = re.compile(r"\b(Oops: )?int3: \d{4} \[#\d+\]")
TCG_INT3 = re.compile(INT3.pattern + r"|Kernel panic - not syncing: Fatal exception")


def tcg_int3_only(watch):
    """Did the boot die of an int3 oops (and the panic it makes) alone,
    before user space?"""
    if watch.up or not any(INT3.search(t) for t in watch.trouble):
        return False
    return all(TCG_INT3.search(t) for t in watch.trouble)


# Seconds a guest kernel has to start user space (virtme-ng's initramfs or
# init speaks), not counting time frozen; 0: no limit.  That takes 3 to
# 20 s here, three guests at once included; a stock 7.2 kernel once
# stopped printing 1.0 s into its boot (after "hpet0: 3 comparators"),
# both vCPUs busy, and would have held the run until --timeout.  Such a
# boot is killed and, as one that died before user space, booted once
# more.
BOOT_TIMEOUT = int(os.environ.get("VAAI_BOOT_TIMEOUT", "300"))
USER_SPACE = re.compile(r"virtme(-ng-init| initramfs): ")


def boot_watchdog(proc, watch, cut):
    """A thread that kills proc's group if watch has seen no user space
    BOOT_TIMEOUT s (frozen time not counted: cut["freeze"]) after it
    started, until done is set: (done, stalled, set if it killed)."""
    done, stalled = threading.Event(), threading.Event()

    def look():
        left = BOOT_TIMEOUT
        while left > 0 and not done.wait(1):
            if watch.user_space:
                return
            if cut["freeze"] != signal.SIGSTOP:
                left -= 1
        if left <= 0 and not done.is_set():
            stalled.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

    if BOOT_TIMEOUT:
        threading.Thread(target=look, daemon=True).start()
    return done, stalled


class PowerCutError(Exception):
    """SIGTERM: the guest's QEMU is killed, as a power cut would stop it."""


# run.py's exit status when SIGTERM cut the guest's power
POWER_CUT = 137
# what run.py sends the VM's processes on SIGUSR1 (freeze) and SIGUSR2
FREEZE = {signal.SIGUSR1: signal.SIGSTOP, signal.SIGUSR2: signal.SIGCONT}


def take_vm_lock():
    """Wait for the VM lock; it is held until this process exits."""
    lock = open(VM_LOCK, "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"run.py: another VM is running; waiting for {VM_LOCK}")
        fcntl.flock(lock, fcntl.LOCK_EX)
    # the lock lives as long as its file stays open
    take_vm_lock.held = lock


def tree_config(kdir, option):
    """OPTION's value in the kernel tree's .config, or None."""
    with open(os.path.join(kdir, ".config")) as f:
        for line in f:
            if line.startswith(option + "="):
                return line.rstrip("\n").split("=", 1)[1]
    return None


def guest_kernel(args):
    """What vng --run boots, and what the guest job is told about it."""
    if args.kver:
        # Installed from its package, or unpacked from it beside its modules
        # (tests/vm/newest-kernel.sh).
        for kernel in (f"/boot/vmlinuz-{args.kver}", f"/lib/modules/{args.kver}/vmlinuz"):
            if os.path.exists(kernel):
                return kernel, {}
        sys.exit(
            f"run.py: no /boot/vmlinuz-{args.kver}; install linux-image-{args.kver} "
            "(tests/vm/deps.sh does)"
        )
    # vng boots a tree's bzImage and links the tree's modules (through its
    # .virtme_mods) under /lib/modules in the guest.
    kernel = os.path.abspath(args.kernel_dir)
    for need in ("arch/x86/boot/bzImage", "modules.order", ".config"):
        if not os.path.exists(os.path.join(kernel, need)):
            sys.exit(
                f"run.py: {kernel} has no {need}; not a built kernel tree "
                "(tests/vm/debug-kernel.sh builds one)"
            )
    # Tell guest-init.sh a kmemleak scan is due, so a missing one fails.
    if tree_config(kernel, "CONFIG_DEBUG_KMEMLEAK") == "y":
        return kernel, {"VAAI_KMEMLEAK": "1"}
    return kernel, {}


def vng_argv(args, rc_file):
    kernel, kernel_env = guest_kernel(args)
    # VAAI_* settings reach the guest job; nothing else of the host's env.
    env = {k: v for k, v in os.environ.items() if k.startswith("VAAI_") and k != "VAAI_VNG"}
    env.update(kernel_env)
    env = [f"{k}={shlex.quote(v)}" for k, v in sorted(env.items())]
    # The guest runs this through its shell: each word quoted, so an
    # argument like `sh -c 'a; b'` or `-k 'x and y'` arrives whole.
    guest = " ".join(
        (["env", *env] if env else [])
        + [shlex.quote(w) for w in ["tests/vm/guest-init.sh", REPO, rc_file, *args.cmd]]
    )
    # --force-9p: vng would try virtiofsd first, Debian 12 has none it can
    # drive, and it waits 3 s for it each boot before falling back to 9p.
    argv = [
        VNG,
        "--run",
        kernel,
        "--disable-kvm",
        "--force-9p",
        "--verbose",
        "-m",
        args.mem,
        "--cpus",
        args.cpus,
        # With --root, virtme reads a bare path as one inside it.
        "--rwdir",
        f"{REPO}={REPO}" if args.root else REPO,
        "--overlay-rwdir",
        "/etc",
        "--overlay-rwdir",
        "/var/lib",
        *(a for d in args.overlay for a in ("--overlay-rwdir", d)),
        # virtme takes the working directory as a host path, inside
        # --root when there is one; the guest mounts REPO at REPO.
        "--cwd",
        os.path.join(os.path.abspath(args.root), REPO.lstrip("/")) if args.root else REPO,
    ]
    if args.name:
        argv += ["--name", args.name]
    for opt in GUEST_CMDLINE + args.append:
        argv += ["--append", opt]
    if args.kernel_dir:
        # The guest mounts a tmpfs on /var/cache, hiding the cached tree
        # that /lib/modules/<release> links to; mount the tree over it.
        argv += ["--rodir", kernel]
    if args.root:
        argv += ["--root", os.path.abspath(args.root)]
    qemu = []
    if args.serve:
        qemu += [
            "-netdev user,id=n9,hostfwd=tcp:127.0.0.1:3260-:3260",
            "-device virtio-net-pci,netdev=n9",
        ]
    # cache=none: a write QEMU completed to the guest is in the image, not
    # in the host's page cache; killing QEMU loses what the guest's kernel
    # had not written yet, as a power cut would.
    # Each disk a -drive and a -device of its own, in order: QEMU makes
    # the devices of if=virtio drives after every -device given, so those
    # would come after the shared disks (and be named after them).
    for n, image in enumerate(args.disk):
        qemu += [
            (
                f"-drive file={os.path.abspath(image)},if=none,id=disk{n},format=raw,"
                "cache=none,aio=threads,discard=unmap"
            ),
            f"-device virtio-blk-pci,drive=disk{n}",
        ]
    for n, image in enumerate(args.shared_disk):
        qemu += [
            (
                f"-drive file={os.path.abspath(image)},if=none,id=shared{n},format=raw,"
                "cache=none,aio=threads"
            ),
            f"-device virtio-blk-pci,drive=shared{n},share-rw=on",
        ]
    for n, link in enumerate(args.link):
        mac, port, peer = link.split(",")
        qemu += [
            f"-netdev socket,id=link{n},udp=127.0.0.1:{int(peer)},localaddr=127.0.0.1:{int(port)}",
            f"-device virtio-net-pci,netdev=link{n},mac={mac}",
        ]
    if qemu:
        argv.append("--qemu-opts=" + " ".join(qemu))
    return [*argv, "--", guest]


def vng_env():
    """vng starts virtme-run (and its helpers) through the shell: they are
    beside it in its venv, which need not be on the caller's PATH."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.dirname(VNG), env.get("PATH", "")])
    return env


def console_lines(console, woken):
    """The lines read from the file descriptor console until its end, as
    text (universal newlines, undecodable bytes replaced).  Waits for them
    in select() beside woken, the signals' wakeup fd: a signal that comes
    as Python goes back into the wait from the handler of another would
    otherwise have its own handler run only once the guest prints again
    (a frozen guest prints nothing, a hung one neither)."""
    text = io.IncrementalNewlineDecoder(
        codecs.getincrementaldecoder("utf-8")(errors="replace"), translate=True
    )
    part = ""
    while True:
        ready, _, _ = select.select([console, woken], [], [])
        if woken in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(woken, 4096)  # the handlers run as select returns
        if console not in ready:
            continue
        data = os.read(console, 65536)
        part += text.decode(data, final=not data)
        *lines, part = part.split("\n")
        for line in lines:
            yield line + "\n"
        if not data:
            if part:
                yield part
            return


@contextlib.contextmanager
def signals_wake():
    """A file descriptor that a signal makes readable, for console_lines()."""
    r, w = os.pipe()
    try:
        for fd in (r, w):
            os.set_blocking(fd, False)
        before = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        try:
            yield r
        finally:
            signal.set_wakeup_fd(before)
    finally:
        os.close(r)
        os.close(w)


def boot(args, argv, rc_file):
    """One boot of the guest: (its exit status, or None when it never
    reported back; the console's watch)."""
    if os.path.exists(rc_file):
        os.unlink(rc_file)
    watch = ConsoleWatch()
    # SIGTERM before the VM exists is kept for when it does, as is the
    # last freeze or thaw asked
    cut = {"proc": None, "asked": False, "freeze": None}

    def on_term(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        cut["asked"] = True
        if cut["proc"] is not None:
            kill_group(cut["proc"].pid)
            raise PowerCutError

    def on_freeze(signum, frame):
        cut["freeze"] = FREEZE[signum]
        if cut["proc"] is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(cut["proc"].pid, cut["freeze"])

    previous = signal.signal(signal.SIGTERM, on_term)
    previous_freeze = {sig: signal.signal(sig, on_freeze) for sig in FREEZE}
    with open(args.log, "w") as log, signals_wake() as woken:
        log.write("# {}\n".format(" ".join(argv)))
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=vng_env(),
        )

        def on_alarm(signum, frame):
            os.killpg(proc.pid, signal.SIGKILL)
            raise TimeoutError

        signal.signal(signal.SIGALRM, on_alarm)
        ended, stalled = boot_watchdog(proc, watch, cut)
        try:
            # a SIGTERM from here on raises in this try
            cut["proc"] = proc
            if args.timeout:
                signal.alarm(args.timeout)
            if cut["asked"]:
                kill_group(proc.pid)
                raise PowerCutError
            if cut["freeze"] is not None:
                os.killpg(proc.pid, cut["freeze"])
            for line in console_lines(proc.stdout.fileno(), woken):
                log.write(line)
                log.flush()
                watch.feed(line)
                sys.stdout.write(echo_part(line))
                sys.stdout.flush()
            proc.wait()
        except TimeoutError:
            proc.wait()
            print(f"run.py: VM killed after {args.timeout:d} s; console log: {args.log}")
            return 124, watch
        except PowerCutError:
            proc.wait()
            print(f"run.py: the guest's power cut (SIGTERM); console log: {args.log}")
            return POWER_CUT, watch
        except KeyboardInterrupt:
            os.killpg(proc.pid, signal.SIGTERM)
            os.killpg(proc.pid, signal.SIGCONT)  # a frozen VM sees it
            proc.wait()
            return 130, watch
        finally:
            signal.alarm(0)
            ended.set()
            signal.signal(signal.SIGTERM, previous)
            for sig, handler in previous_freeze.items():
                signal.signal(sig, handler)
    if stalled.is_set():
        print(f"run.py: no user space {BOOT_TIMEOUT} s into the boot; the guest killed")
        return None, watch
    if not os.path.exists(rc_file):
        return None, watch
    with open(rc_file) as f:
        return int(f.read().strip() or 1), watch


def run(args):
    # a freeze or thaw between boots is nothing to end the run for
    for sig in FREEZE:
        signal.signal(sig, signal.SIG_IGN)
    os.makedirs(os.path.dirname(os.path.abspath(args.log)), exist_ok=True)
    # Named after the console log, so two runs with their own logs do not
    # share it; in the repository, which the guest writes through.
    # guest-init.sh writes the guest's dmesg beside it.
    rc_file = os.path.join(
        REPO, "build", "vm", os.path.splitext(os.path.basename(args.log))[0] + ".rc"
    )
    os.makedirs(os.path.dirname(rc_file), exist_ok=True)

    argv = vng_argv(args, rc_file)
    if not args.locked:
        take_vm_lock()
    # From here the boot is ours (tests/powercut times the boot from it).
    print(BOOTING, flush=True)
    first, int3 = args.log + ".first-boot", args.log + ".int3-boot"
    for old in (first, int3):
        if os.path.exists(old):
            os.unlink(old)
    rc, watch = boot(args, argv, rc_file)
    if rc is None and watch.booted and not watch.up and not watch.trouble:
        os.replace(args.log, first)
        print(
            f"run.py: the guest died before user space (console log: {first}); booting it once more"
        )
        rc, watch = boot(args, argv, rc_file)
    elif rc is None and tcg_int3_only(watch):
        os.replace(args.log, int3)
        print(
            "run.py: an int3 oops before user space, QEMU's TCG running code another vCPU "
            f"was patching (console log: {int3}); booting it once more"
        )
        rc, watch = boot(args, argv, rc_file)
    for what, warning in watch.known:
        print(f"run.py: a known warning, not ours, not failing the run: {what}: {warning}")
    if rc is None:
        print(f"run.py: the guest never reported back (panic or crash); console log: {args.log}")
        if watch.trouble:
            print("\n".join(watch.report()))
        return 1
    if watch.trouble:
        print(f"run.py: kernel trouble on the console (see {args.log}):")
        print("\n".join(watch.report()))
        return 1 if rc in (0, POWER_CUT) else rc
    if rc and rc != POWER_CUT:
        print(f"run.py: guest command failed with {rc}; console log: {args.log}")
    # at the end too, where a log's tail shows it
    for retried in (first, int3):
        if os.path.exists(retried):
            print(f"run.py: this was the second boot; the first died early: {retried}")
    return rc


if __name__ == "__main__":
    sys.exit(run(parse_args(sys.argv[1:])))
