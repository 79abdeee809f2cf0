#!/usr/bin/python3
"""The two-node test rig: three guests under one VM lock, node1 and node2
(the pair's target nodes: each its own disk, /dev/vda, and one image
attached to both, /dev/vdb, as their shared disk) and an initiator,
joined only by point-to-point links over UDP on 127.0.0.1 (tests/vm/run.py
--link):

  initiator 10.77.1.100 ---- 10.77.1.1 node1
  initiator 10.77.2.100 ---- 10.77.2.2 node2
            node1 10.77.3.1 ---- 10.77.3.2 node2   (the nodes' own link)

The nodes run tests/ha/node.py, which runs what the initiator's tests hand
it (tests/ha/conftest.py) through files under build/rig/ (--dir; the repository is
every guest's, read-write).  The initiator runs the command given here; a
test cuts a node's power by writing build/rig/kill-NODE, and the rig kills
that node's QEMU and answers with build/rig/killed-NODE; it powers a cut
node on again by writing build/rig/poweron-NODE, and the rig boots it
(its disks as they were at the cut) and answers with build/rig/powered-NODE.
A test freezes a node (its QEMU stopped: nothing it has under way ends)
by writing build/rig/freeze-NODE, answered by build/rig/frozen-NODE, and
thaws it by writing build/rig/thaw-NODE, answered by build/rig/thawed-NODE;
a frozen node's power may be cut.
A node's earlier boots keep their files as NODE.bootN (its directory, and
NODE.bootN-console.log, NODE.bootN.out).

The run passes when the initiator's command does and no node showed kernel
trouble.  Each guest's console is kept in build/rig/NAME-console.log.

Usage: rig.py --kver KVER [--timeout S] [--dir DIR] -- COMMAND [ARGS...]
"""

import argparse
import contextlib
import glob
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# the rig's directory (--dir): what the guests share, their consoles
DIR = os.path.join(REPO, "build", "rig")
sys.path[:0] = [HERE, os.path.join(REPO, "tests", "vm")]

import run  # noqa: E402  (tests/vm/run.py)
from rigfiles import put  # noqa: E402

NODES = ("node1", "node2")
DISK_SIZE = 512 << 20
# UDP ports on 127.0.0.1 from here on, two per link
PORT_BASE = int(os.environ.get("VAAI_RIG_PORT", "47100"))
# Each link's socket receive queue, in bytes.  The kernel's default (about
# 200 KiB) overflows while a guest under emulation is slow to take frames:
# iSCSI's TCP sends a dropped frame again, FCoE, made for lossless
# Ethernet, does not, and the command waits out its exchange timeout.
LINK_QUEUE = 32 << 20
RMEM_DEFAULT = "/proc/sys/net/core/rmem_default"
# (guest, MAC, address) at each end of each link
LINKS = (
    (
        ("initiator", "52:54:00:77:01:64", "10.77.1.100/24"),
        ("node1", "52:54:00:77:01:01", "10.77.1.1/24"),
    ),
    (
        ("initiator", "52:54:00:77:02:64", "10.77.2.100/24"),
        ("node2", "52:54:00:77:02:02", "10.77.2.2/24"),
    ),
    (
        ("node1", "52:54:00:77:03:01", "10.77.3.1/24"),
        ("node2", "52:54:00:77:03:02", "10.77.3.2/24"),
    ),
)


def guest_links(name):
    """(run.py --link values, VAAI_NET) of guest name."""
    links, net = [], []
    for n, ends in enumerate(LINKS):
        for side, (guest, mac, addr) in enumerate(ends):
            if guest == name:
                port, peer = PORT_BASE + 2 * n + side, PORT_BASE + 2 * n + 1 - side
                links.append(f"{mac},{port},{peer}")
                net.append(f"{mac}={addr}")
    return links, " ".join(net)


def start(name, args, cmd, timeout, disks=()):
    """run.py for guest name, under the rig's lock, disks (its own, the
    shared one) attached: the process.  Its console goes to
    NAME-console.log, its output to NAME.out."""
    links, net = guest_links(name)
    argv = [
        sys.executable,
        os.path.join(REPO, "tests", "vm", "run.py"),
        *("--kver", args.kver, "--name", name, "--locked"),
        *("--mem", args.mem, "--cpus", "1", "--timeout", str(timeout)),
        *("--log", os.path.join(args.dir, f"{name}-console.log")),
    ]
    for link in links:
        argv += ["--link", link]
    if disks:
        own, shared = disks
        argv += ["--disk", own, "--shared-disk", shared]
        # a node installs a cluster's agents and logs (tests/ha/cluster.sh)
        argv += ["--overlay", "/usr", "--overlay", "/var/log"]
    env = dict(os.environ, VAAI_NET=net, VAAI_RIG=args.dir, VAAI_RIG_NAME=name)
    with open(os.path.join(args.dir, f"{name}.out"), "w") as out:
        return subprocess.Popen([*argv, "--", *cmd], stdout=out, stderr=subprocess.STDOUT, env=env)


def set_aside(rig, name, boot):
    """Node name's files of its boot'th boot (the one whose power was cut)
    renamed NAME.bootN..., and a fresh directory for its next boot."""
    for suffix in ("", "-console.log", ".out"):
        with contextlib.suppress(FileNotFoundError):
            os.rename(
                os.path.join(rig, name + suffix), os.path.join(rig, f"{name}.boot{boot}{suffix}")
            )
    os.makedirs(os.path.join(rig, name))


# a test's ask: (run.py's signal, the answer written, the answer it replaces)
FREEZES = {
    "freeze": (signal.SIGUSR1, "frozen", "thawed"),
    "thaw": (signal.SIGUSR2, "thawed", "frozen"),
}


def freeze_or_thaw(guest, rig, name):
    """Node name frozen or thawed if a test asked (the ask removed, the
    answer written once run.py is told; QEMU stops a moment later): did
    it?"""
    for ask, (sig, answer, gone) in FREEZES.items():
        path = os.path.join(rig, f"{ask}-{name}")
        if os.path.exists(path):
            guest.send_signal(sig)
            os.unlink(path)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(rig, f"{gone}-{name}"))
            put(os.path.join(rig, f"{answer}-{name}"), f"{time.time():.3f}\n")
            print(f"rig: {name} {answer}", flush=True)
            return True
    return False


def serve_power(guests, initiator, rig, boot):
    """Until the initiator is done: cut a node's power when a test asks,
    boot a cut node again (boot(name): its process) when a test asks,
    freeze or thaw a live node when a test asks, and tell the tests of a
    node that ended by itself (NODE/dead).  The nodes
    whose power was cut (and not on again), and those that ended by
    themselves."""
    killed, dead, boots = set(), set(), dict.fromkeys(NODES, 1)
    while initiator.poll() is None:
        for name in NODES:
            if name in dead:
                continue
            if name in killed:
                if os.path.exists(os.path.join(rig, f"poweron-{name}")):
                    set_aside(rig, name, boots[name])
                    boots[name] += 1
                    for f in ("kill", "killed", "poweron"):
                        os.unlink(os.path.join(rig, f"{f}-{name}"))
                    for ask in FREEZES:  # asked of the boot that was cut
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(os.path.join(rig, f"{ask}-{name}"))
                    guests[name] = boot(name)
                    killed.discard(name)
                    put(os.path.join(rig, f"powered-{name}"), f"{time.time():.3f}\n")
                    print(f"rig: {name} powered on (boot {boots[name]})", flush=True)
            elif os.path.exists(os.path.join(rig, f"poweron-{name}")):
                # on already: the ask is dropped, not kept for its next cut
                os.unlink(os.path.join(rig, f"poweron-{name}"))
                print(f"rig: {name} asked to power on, and it is on", flush=True)
            elif guests[name].poll() is not None:
                dead.add(name)
                put(os.path.join(rig, name, "dead"), f"{guests[name].returncode}\n")
                print(f"rig: {name} ended by itself ({guests[name].returncode})", flush=True)
            elif freeze_or_thaw(guests[name], rig, name):
                pass
            elif os.path.exists(os.path.join(rig, f"kill-{name}")):
                guests[name].send_signal(signal.SIGTERM)
                rc = guests[name].wait()
                if rc != run.POWER_CUT:
                    # kernel trouble before the cut, or gone already
                    dead.add(name)
                    put(os.path.join(rig, name, "dead"), f"{rc}\n")
                    print(f"rig: {name} was not cut clean ({rc})", flush=True)
                    continue
                killed.add(name)
                for f in ("powered", "frozen", "thawed"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(os.path.join(rig, f"{f}-{name}"))
                put(os.path.join(rig, f"killed-{name}"), f"{time.time():.3f}\n")
                print(f"rig: {name}'s power cut", flush=True)
        time.sleep(0.01)  # a test waits on a freeze or a cut
    return killed, dead


def udp_dropped():
    """The host's UDP datagrams dropped so far for a full receive queue."""
    with open("/proc/net/snmp") as f:
        udp = [line.split() for line in f if line.startswith("Udp:")]
    return int(udp[1][udp[0].index("RcvbufErrors")])


@contextlib.contextmanager
def deep_link_queues():
    """The links' sockets (made as the guests boot) given LINK_QUEUE of
    receive queue; the host's default put back after."""
    with open(RMEM_DEFAULT) as f:
        was = f.read().strip()
    try:
        with open(RMEM_DEFAULT, "w") as f:
            f.write(f"{max(int(was), LINK_QUEUE)}\n")
    except OSError as e:
        print(f"rig: the links keep the default receive queue ({e})", flush=True)
    try:
        yield
    finally:
        with contextlib.suppress(OSError), open(RMEM_DEFAULT, "w") as f:
            f.write(was + "\n")


def stop_nodes(guests, killed, rig):
    """Tell the live nodes to end; their run.py statuses."""
    for name in NODES:
        if name not in killed:
            # a node a failed test left frozen ends too
            guests[name].send_signal(signal.SIGUSR2)
            put(os.path.join(rig, name, "exit"), "")
    rcs = {}
    for name in NODES:
        try:
            rcs[name] = guests[name].wait(120)
        except subprocess.TimeoutExpired:
            guests[name].send_signal(signal.SIGTERM)
            rcs[name] = guests[name].wait()
            print(f"rig: {name} did not end when told; killed", flush=True)
            rcs[name] = rcs[name] or 1
    return rcs


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kver", required=True, help="the guests' kernel release")
    p.add_argument("--mem", default="1536M", help="each guest's memory (default %(default)s)")
    p.add_argument("--timeout", type=int, default=1500, help="seconds before a guest is killed")
    p.add_argument("--dir", default=DIR, help="the rig's directory (default %(default)s)")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- the initiator's command")
    args = p.parse_args(argv)
    rig = args.dir = os.path.abspath(args.dir)
    if not rig.startswith(REPO + os.sep):
        p.error("the rig's directory must be in the repository, which every guest mounts")
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        p.error("no initiator command given")

    run.take_vm_lock()
    shutil.rmtree(rig, ignore_errors=True)
    for name in NODES:
        os.makedirs(os.path.join(rig, name))
    images = {name: os.path.join(rig, f"{name}.img") for name in (*NODES, "shared")}
    for image in images.values():
        with open(image, "wb") as f:
            f.truncate(DISK_SIZE)

    began = time.monotonic()
    # a CI job cancelled: the guests go with the rig (the finally below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    guests = {}
    dropped = udp_dropped()
    with deep_link_queues():
        try:
            # the nodes outlive the initiator's timeout: it is the one that ends
            def boot(name):
                disks = (images[name], images["shared"])
                return start(name, args, ["tests/ha/node.py", name], args.timeout + 300, disks)

            for name in NODES:
                guests[name] = boot(name)
            guests["initiator"] = start(
                "initiator", args, ["tests/vm/guest-test.sh", *cmd], args.timeout
            )
            killed, dead = serve_power(guests, guests["initiator"], rig, boot)
            rc = guests["initiator"].wait()
            rcs = stop_nodes(guests, killed, rig)
        finally:
            for g in guests.values():
                if g.poll() is None:
                    g.send_signal(signal.SIGTERM)
                    g.wait()
    for out in sorted(glob.glob(os.path.join(rig, "*.out"))):
        name = os.path.basename(out)[: -len(".out")]
        with open(out) as f:
            text = f.read()
        print(f"--- {name} ({os.path.join(rig, name + '-console.log')})")
        print(text.rstrip())
    bad = [n for n in NODES if n in dead or (n not in killed and rcs[n])]
    print(
        f"rig: {time.monotonic() - began:.0f} s; initiator {rc}; "
        + ", ".join(f"{n} {'power cut' if n in killed else rcs[n]}" for n in NODES)
        + f"; {udp_dropped() - dropped} frames dropped on the host's UDP sockets"
    )
    if bad:
        print(f"rig: {', '.join(bad)} failed (kernel trouble or a crash: see its console)")
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
