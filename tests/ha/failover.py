"""The rig's failover scenario (tests/ha/rig.py), whoever moves the pair:
the initiator logged in to both nodes under dm-multipath; a writer
stamping 4 KiB blocks, two ATS slots (a heartbeat and a lock) moving on
by COMPARE AND WRITE, and full copies (EXTENDED COPY, and ODX) one after
another through it while node 1 hands over to node 2 (planned), and then
node 2 is frozen with a copy of each kind under way on it, its power
cut, and node 1 takes over.  No write, ATS or copy may fail (the copies
cut off are sent again, as hosts do); every acknowledged block and slot
reads back, and each copy's destination holds the source of its last
copy; an ODX token made on the dead node is refused on the survivor.

A driver moves the pair: switch(to) makes node `to` the active one, as
an admin would ask; take_over(survivor) is what happens once the active
node is gone (the test's own command, or the cluster's fencing and
promotion)."""

import contextlib
import glob
import os
import subprocess
import time

from acked_io import BLOCKS, Copier, Heartbeat, Writer
from conftest import RIG
from multipath import active_disk, multipathd, paths, sh, show
from scsi import (
    ILLEGAL_REQUEST,
    clear_unit_attention,
    expect_good,
    expect_sense,
    make_token,
    read_blocks,
    write_blocks,
    write_using_token,
)
from sense_codes import TOKEN_UNKNOWN

INITIATOR = os.path.join(os.path.dirname(__file__), "..", "..", "fabrics", "iscsi", "initiator.sh")
IQN = "iqn.2026-11.org.vaai:ha-shared"
SERIAL = "5ca1ab1e-0d15-4c0a-8e11-00000000a001"
BS = 512
HEARTBEAT, LOCK = 16384, 16392  # past the writer's first 8 MiB
TOKEN_SRC, TOKEN_DST = 20480, 24576
# the copiers': two sources and two areas of Copier.SLOTS destination
# slots each, of 16 MiB (ESXi's largest EXTENDED COPY; at 4 MiB a copy
# can be too quick to be sure one is in flight at the cut)
COPY_BLOCKS = 32768
XCOPY_SRC, XCOPY_DST = (32768, 65536), 98304
ODX_SRC, ODX_DST = (360448, 393216), 425984
# A dead node found in seconds: NOP-Out every 2 s, answered within 2,
# then 5 s to come back before the session's commands fail over (the
# defaults are 5, 5 and 120: docs/ha.md).
SETTINGS = (
    "node.conn[0].timeo.noop_out_interval=2 node.conn[0].timeo.noop_out_timeout=2 "
    "node.session.timeo.replacement_timeout=5"
)


def disk_of(ip, timeout=60):
    """The sdX the iSCSI session to ip attached."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for sess in glob.glob("/sys/class/iscsi_session/session*"):
            sid = sess.rsplit("session", 1)[1]
            with open(f"/sys/class/iscsi_connection/connection{sid}:0/persistent_address") as f:
                if f.read().strip() != ip:
                    continue
            disks = glob.glob(f"{sess}/device/target*/*:*:*:*/block/*")
            if disks:
                return os.path.basename(disks[0])
        time.sleep(0.5)
    raise AssertionError(f"no disk from the session to {ip}")


def wait_for(what, cond, timeout=60, poll=0.5):
    """cond()'s first true answer, asked every poll s."""
    deadline = time.monotonic() + timeout
    while not (got := cond()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout} s; multipathd's paths:\n{paths()}")
        time.sleep(poll)
    return got


@contextlib.contextmanager
def multipathed(nodes):
    """(the multipath device, {node: its path's sdX}, WWID): the initiator
    logged in to both nodes' portals, multipathd making one device."""
    env = dict(os.environ, ISCSI_NODE_SETTINGS=SETTINGS)
    for node in nodes:
        subprocess.run([INITIATOR, "login", IQN, node.ip], env=env, check=True)
    disks = {node.n: disk_of(node.ip) for node in nodes}
    wwid = sh("/lib/udev/scsi_id", "-g", "-u", "-d", f"/dev/{disks[1]}").strip()
    with multipathd(wwid, log=os.path.join(RIG, "multipathd.log")) as (dev, _shown):
        yield dev, disks, wwid


def initiator_name():
    sh(INITIATOR, "start")
    return sh(INITIATOR, "name").strip()


def serving(wwid, disk):
    """Is disk's path group the Active/Optimized one?  (Between two
    states multipath may show none.)"""
    try:
        return active_disk(show(wwid))[0] == disk
    except AssertionError:
        return False


def no_errors(w, others):
    """True, or AssertionError with the first thread's errors."""
    assert not w.errors, f"a write failed: {w.errors}"
    for t in others:
        assert not t.errors, f"{t.label}: {t.errors}"
    return True


# What a node shows of a copy that does not end: its blocked tasks (to
# its console), DRBD's state, the vaai devices' counters.
STUCK = (
    "echo w > /proc/sysrq-trigger; cat /proc/drbd 2>/dev/null || true; "
    "cd /sys/kernel/config/target/core && grep -H . */*/attrib/stats_* 2>/dev/null || true"
)


def stuck(nodes):
    """STUCK's answer from each node that gives one within 30 s."""
    out = []
    for node in nodes:
        try:
            out.append(f"{node.name}:\n{node.sh(STUCK, timeout=30, check=False)}")
        except AssertionError as e:
            out.append(f"{node.name}: {e}")
    return "\n".join(out)


def moving_on(w, slots, copiers, what, timeout=60, nodes=()):
    """Writes, both ATS slots and the copies go on from here (an error of
    theirs fails at once, not at the timeout); a copier that does not, with
    what nodes show of it.  A copier must end the copy under way and one
    more, in as long as it gives each (Copier.GIVE_UP): no pace is asked
    of the copies, which a 16 MiB one over single-primary DRBD in the rig
    takes 10 to 26 s (median; a node copies one 256 KiB chunk at a time
    per CPU, and has one) and took over 44 s (2026-12-01)."""
    others = (*slots, *copiers)
    n, gens, copies = w.count, [s.gen for s in slots], [c.count for c in copiers]
    wait_for(f"writes {what}", lambda: no_errors(w, others) and w.count > n + 50, timeout)
    for s, gen in zip(slots, gens):
        wait_for(
            f"{s.label} {what}",
            lambda s=s, gen=gen: no_errors(w, others) and s.gen > gen + 2,
            timeout,
        )
    for c, count in zip(copiers, copies):
        try:
            wait_for(
                f"{c.kind} copies {what}",
                lambda c=c, count=count: no_errors(w, others) and c.count > count + 1,
                max(timeout, 2 * Copier.GIVE_UP),
            )
        except AssertionError as e:
            raise AssertionError(f"{e}\n{c}\n{stuck(nodes)}") from None


@contextlib.contextmanager
def running(w, slots, copiers, what):
    """The writer, ATS slots and copiers started; on leaving, stopped and
    waited for (a generation or copy under way is seen through), none
    stuck and none failed."""
    threads = (w, *slots, *copiers)
    for t in threads:
        t.start()
    try:
        yield
    finally:
        for t in threads:
            t.stop = True
        for t in threads:
            t.join(Heartbeat.GIVE_UP + 30)
    for t in threads:
        assert not t.is_alive(), f"{t} still waits {what}"
    no_errors(w, (*slots, *copiers))


def median(took):
    took = sorted(took)
    return took[len(took) // 2] if took else 0.0


def in_flight(c, at):
    """The commands of copier c's sent before `at` and lost after it."""
    return [name for name, sent, lost in c.lost if sent < at < lost]


def just_turned(copiers):
    """The copying commands (EXTENDED COPY, WRITE USING TOKEN) of every
    copier, one of them sent within 20 ms, or None.  A copier sends its
    next copy as its last ends (an ODX one after two short commands that
    make its token), and a node runs one copy after another, so the other
    copier's has most of its run ahead; frozen_mid_copy() checks it."""
    now = time.monotonic()
    sent = [c.current for c in copiers]
    if not all(s and s[0] == c.slow for c, s in zip(copiers, sent)):
        return None
    return sent if now - max(s[1] for s in sent) < 0.02 else None


def frozen_mid_copy(node, copiers, tries=20):
    """Node frozen (tests/ha/rig.py) with a copying command of every
    copier's under way on it, none of them answered: the copies a power
    cut now finds in flight.  When it was sure (time.monotonic()), and
    the tries it took.  A copy can still end between the look and the
    freeze (a 16 MiB copy alone takes about 0.1 s on a rig node): the
    node is thawed and looked at again.  (A node a failed test leaves
    frozen, the rig thaws as it ends.)"""
    for n in range(1, tries + 1):
        sent = wait_for("a copy of each kind under way", lambda: just_turned(copiers), poll=0.005)
        node.freeze()
        time.sleep(0.2)  # an answer sent before the freeze has arrived
        if [c.current for c in copiers] == sent:
            return time.monotonic(), n
        node.thaw()
    raise AssertionError(f"a copy ended before {node.name} froze, {tries} times")


def switchover_then_power_cut(nodes, served, driver, label):
    """The scenario; what it measured, printed as label.  The writer, the
    ATS slots and the copiers, stopped (tests/ha/rejoin.py carries on
    from them)."""
    dev, disks, wwid = served
    assert serving(wwid, disks[1]), show(wwid)
    slots = (Heartbeat(dev, HEARTBEAT, "heartbeat"), Heartbeat(dev, LOCK, "lock", interval=1))
    for s in slots:
        expect_good(write_blocks(dev, s.lba, s.last, BS))
    w = Writer(dev)
    for src in (*XCOPY_SRC, *ODX_SRC):
        expect_good(write_blocks(dev, src, os.urandom(COPY_BLOCKS * BS), BS))
    copiers = (
        Copier(dev, "xcopy", XCOPY_SRC, XCOPY_DST, COPY_BLOCKS),
        Copier(dev, "odx", ODX_SRC, ODX_DST, COPY_BLOCKS),
    )
    with running(w, slots, copiers, "after the failover"):
        moving_on(w, slots, copiers, "through node 1", nodes=nodes)

        # planned switchover: node 1 stands by, node 2 serves
        driver.switch(2)
        wait_for("multipath on node 2's path", lambda: serving(wwid, disks[2]))
        moving_on(w, slots, copiers, "through node 2", nodes=nodes)
        planned = w.longest, slots[0].longest
        w.longest = slots[0].longest = 0.0

        # an ODX token of node 2's
        src = f"/dev/{disks[2]}"
        clear_unit_attention(src)
        token = make_token(src, [(TOKEN_SRC, 64)], list_id=7)

        # node 2's power cut, a copy of each kind in flight; node 1
        # takes over
        began, tries = frozen_mid_copy(nodes[1], copiers)
        at_cut = w.count
        for c in copiers:
            c.area = 1  # the copies after this one: node 2's stay as they are
        nodes[1].power_cut()
        driver.take_over(1)
        promoted = time.monotonic() - began
        wait_for("multipath on node 1's path", lambda: serving(wwid, disks[1]), timeout=120)
        moving_on(w, slots, copiers, "through node 1 again", timeout=120, nodes=nodes[:1])
    # a command of each copier's was in flight at the cut, and its copy
    # sent again (as hosts do) and done; every slot holds its last copy,
    # node 2's among them
    for c in copiers:
        assert in_flight(c, began), f"{c.kind}: nothing in flight lost: {c.lost}"
        c.check()
    # every acknowledged write and ATS generation is on the survivor,
    # node 2's last ones among them (not all rewritten since)
    assert w.count - at_cut < BLOCKS, "the writer went round since the cut"
    w.check(dev)
    for s in slots:
        s.check()

    # the dead node's token: unknown to the survivor, nothing written
    dst = f"/dev/{disks[1]}"
    clear_unit_attention(dst)
    before = expect_good(read_blocks(dst, TOKEN_DST, 64, BS)).data
    res = write_using_token(dst, token, [(TOKEN_DST, 64)], list_id=8)
    expect_sense(res, ILLEGAL_REQUEST, *TOKEN_UNKNOWN)
    assert expect_good(read_blocks(dst, TOKEN_DST, 64, BS)).data == before

    # what docs/ha.md quotes (measurements, not tested)
    print(
        f"\n{label}: planned switchover: longest write {planned[0]:.2f} s, "
        f"longest heartbeat {planned[1]:.2f} s; power cut (node 2 frozen first, "
        f"at try {tries}): node 1 active "
        f"{promoted:.1f} s after, longest write {w.longest:.2f} s, longest heartbeat "
        f"{slots[0].longest:.2f} s ({slots[0].retries} heartbeat retries); "
        f"{w.count} writes, {slots[0].gen} heartbeats, {slots[1].gen} lock moves; "
        + "; ".join(
            f"{c.count} {c.kind} copies of {median(c.copy_took):.2f} s "
            f"({', '.join(in_flight(c, began))} "
            f"in flight at the cut, {len(c.lost)} commands unanswered, {c.restarts} started over, "
            f"refused {dict(c.refused)})"
            for c in copiers
        )
    )
    return w, slots, copiers
