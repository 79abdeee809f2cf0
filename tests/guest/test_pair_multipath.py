"""A planned switchover under dm-multipath: both halves of a pair on one
shared file in this guest (two LUNs with one serial, each on a target of
its own, as two nodes on a shared disk), the guest's initiator logged in
to both, multipathd making them one device with an ALUA path group per
node.  A writer goes on through the switch (node 1 standby, then node 2
active); no write may fail, and every one acknowledged reads back."""

import os
import subprocess
import time

import pytest
from acked_io import Writer
from conftest import INITIATOR, SCRATCH, MiB, sh
from multipath import active_disk, multipathd, show, unload_alua
from test_pair import SERIAL, Half
from vaai import VaaiStorageObject, pair
from vaai.export import find_disk, unexport


class SharedHalf(Half):
    """A half whose backstore is on the one shared file."""

    def __init__(self, node, me, path):
        self.node, self.me, self.sg = node, me, None
        self.iqn = f"iqn.2026-11.org.vaai:mpath-node{node}"
        self.path = path
        self.so = VaaiStorageObject(f"mpath{node}", path=path, wwn=SERIAL)

    def close(self):
        subprocess.run([INITIATOR, "logout", self.iqn], capture_output=True, check=False)
        unexport(self.so)
        self.so.delete()


@pytest.fixture
def multipathed(tmp_path):
    sh(INITIATOR, "start")
    me = sh(INITIATOR, "name").strip()
    path = os.path.join(SCRATCH, "mpath-shared.img")
    with open(path, "wb") as f:
        f.truncate(16 * MiB)
    halves = []
    try:
        for node in (1, 2):
            halves.append(SharedHalf(node, me, path))
            halves[-1].setup()
        pair.set_state(halves[0].so, "active")  # node 1 serves
        pair.set_state(halves[1].so, "standby")  # and node 2 says so too
        for h in halves:
            sh(INITIATOR, "login", h.iqn)
        wwid = sh("/lib/udev/scsi_id", "-g", "-u", "-d", find(halves[0])).strip()
        with multipathd(wwid) as (dev, shown):
            yield halves, dev, shown, wwid
    finally:
        try:
            for h in reversed(halves):
                h.close()
            os.unlink(path)
        finally:
            # a failure here shows chained to one already on its way
            unload_alua()


def find(half):
    """half's /dev/sdX, seen through its own target."""
    return find_disk(half.so, "iscsi_tcp", target=half.iqn)


def test_planned_switchover_loses_no_write(multipathed):
    halves, dev, shown, wwid = multipathed
    disks = {h.node: os.path.basename(find(h)) for h in halves}
    assert active_disk(shown)[0] == disks[1], shown
    w = Writer(dev)
    w.start()
    time.sleep(3)
    before = w.count
    assert before, "the writer wrote nothing through multipath"
    pair.set_state(halves[0].so, "standby")
    pair.set_state(halves[1].so, "active")
    switched = w.count
    time.sleep(8)
    w.stop = True
    w.join(60)
    assert not w.is_alive(), "a write hangs after the switch"
    assert not w.errors, f"a write failed through the switch: {w.errors}\n{shown}"
    assert w.count > switched, "nothing was written after the switch"
    after = show(wwid)
    disk, line = active_disk(after)
    assert disk == disks[2] and "ready" in line, after
    w.check(dev)
    # the pause a host sees, for docs/ha.md (a measurement, not a test)
    print(f"pair-switchover: {w.count} writes, longest {w.longest:.2f} s")
