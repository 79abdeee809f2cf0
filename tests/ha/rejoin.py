"""After the failover scenario (tests/ha/failover.py): the fenced node
comes back.  Node 2, whose power was cut, is powered on again while the
writer, the ATS slots and the copiers carry on through node 1 alone; its
admin brings it back into the cluster (the driver's rejoin), and its half
of the pair must come back as Standby, its path back in dm-multipath,
without a write, ATS or copy failing on node 1, whose group stays
Active/Optimized all along.  Then the service is switched back to node 2
under the same I/O, and everything acknowledged reads back through node
2: on DRBD, the copies node 1 made after the cut reached node 2's disk
only by DRBD's resync (the writer's blocks and the ATS slots are written
again after node 2 is back).

The driver (cluster.ByPacemaker) adds to failover.py's: settle() clears
what a move left behind, as an admin does (else the node a move was to
is promoted again the moment it is back), and rejoin(n) brings node n
into the cluster."""

import threading
import time

from acked_io import Copier, Heartbeat, Writer
from cluster import shows
from failover import median, moving_on, running, serving, wait_for
from multipath import show
from scsi import clear_unit_attention, report_target_port_groups

ACTIVE_OPTIMIZED = 0


def path_back(wwid, disk):
    """Is disk one of the multipath device's paths again, a standby one
    (ghost: the checker finds it answering, in Standby)?"""
    return any(f" {disk} " in line and "ghost" in line for line in show(wwid).splitlines())


class Holding(threading.Thread):
    """REPORT TARGET PORT GROUPS through node n's own path (sdX disk)
    every EVERY s until stopped; lapses: (when, what) each time node n's
    group was not Active/Optimized or no answer came, as when its half
    is torn down or set up again.  A unit attention is cleared and the
    command sent again."""

    EVERY = 0.5

    def __init__(self, disk, n):
        super().__init__(daemon=True)
        self.dev, self.n, self.stop, self.lapses, self.asked = f"/dev/{disk}", n, False, [], 0

    def state(self):
        try:
            groups = report_target_port_groups(self.dev)
        except AssertionError:
            clear_unit_attention(self.dev)
            groups = report_target_port_groups(self.dev)
        return next((g["state"] for g in groups if g["id"] == self.n), "no such group")

    def run(self):
        while not self.stop:
            try:
                state = self.state()
            except (AssertionError, OSError) as e:
                state = repr(e)[:200]
            self.asked += 1
            if state != ACTIVE_OPTIMIZED:
                self.lapses.append((time.monotonic(), state))
            time.sleep(self.EVERY)


def fenced_node_returns(nodes, served, driver, io, label):
    """The scenario; io: failover.py's writer, slots and copiers, whose
    threads this one's carry on from; what it measured, printed as
    label."""
    dev, disks, wwid = served
    w0, slots0, copiers0 = io
    # (multipath -ll may show no path serving for a moment: polled)
    wait_for("multipath on node 1's path", lambda: serving(wwid, disks[1]))
    driver.settle()
    w = Writer(dev, after=w0)
    slots = tuple(Heartbeat(dev, s.lba, s.label, s.interval, after=s) for s in slots0)
    copiers = tuple(
        Copier(dev, c.kind, c.sources, c.dst, c.nblocks, c.list_id, after=c) for c in copiers0
    )
    with running(w, slots, copiers, "after the switchover back"):
        moving_on(w, slots, copiers, "through node 1 alone", nodes=nodes[:1])
        # node 1's half serves all along: never torn down, never Standby
        holding = Holding(disks[1], 1)
        holding.start()
        try:
            began = time.monotonic()
            nodes[1].power_on()
            booted = time.monotonic() - began
            driver.rejoin(2)
            wait_for("node 2's path back", lambda: path_back(wwid, disks[2]), timeout=600)
            rejoined = time.monotonic() - began
            wait_for(
                "node 2's half standing by, node 1's group shown active",
                lambda: shows(nodes[1], 2, "standby") and shows(nodes[1], 1, "active"),
            )
            moving_on(w, slots, copiers, "with node 2 back", nodes=nodes)
        finally:
            holding.stop = True
            holding.join()
        assert holding.asked > 10 and not holding.lapses, (
            f"node 1's group, asked {holding.asked} times: {holding.lapses[:10]}"
        )
        wait_for("multipath still on node 1's path", lambda: serving(wwid, disks[1]))
        during = w.longest, slots[0].longest
        w.longest = slots[0].longest = 0.0

        # planned switchover back to node 2
        driver.switch(2)
        wait_for("multipath on node 2's path", lambda: serving(wwid, disks[2]))
        moving_on(w, slots, copiers, "through node 2 after its return", nodes=nodes)
    # every acknowledged write, ATS generation and copy, from before the
    # cut on, through node 2: the copies node 1 made while node 2 was
    # away (area 1) among them
    wait_for("multipath still on node 2's path", lambda: serving(wwid, disks[2]))
    for c in copiers:
        assert any(slot >= Copier.SLOTS for slot in c.acked), f"{c.kind}: no copy after the cut"
    w.check(dev)
    for s in slots:
        s.check()
    for c in copiers:
        c.check()

    # what docs/ha.md quotes (measurements, not tested)
    print(
        f"\n{label}: node 2 powered on: up {booted:.0f} s after, its path back "
        f"{rejoined:.0f} s after; longest write meanwhile {during[0]:.2f} s, longest "
        f"heartbeat {during[1]:.2f} s; switchover back to node 2: longest write "
        f"{w.longest:.2f} s, longest heartbeat {slots[0].longest:.2f} s; "
        + "; ".join(
            f"{c.count - c0.count} {c.kind} copies of {median(c.copy_took):.2f} s "
            f"({len(c.lost)} commands unanswered, refused {dict(c.refused)})"
            for c, c0 in zip(copiers, copiers0)
        )
    )
