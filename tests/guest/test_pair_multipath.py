"""A planned switchover under dm-multipath: both halves of a pair on one
shared file in this guest (two LUNs with one serial, each on a target of
its own, as two nodes on a shared disk), the guest's initiator logged in
to both, multipathd making them one device with an ALUA path group per
node.  A writer goes on through the switch (node 1 standby, then node 2
active); no write may fail, and every one acknowledged reads back."""

import contextlib
import mmap
import os
import re
import subprocess
import threading
import time

import pytest
from conftest import INITIATOR, SCRATCH, MiB, sh
from test_pair import SERIAL, Half
from vaai import VaaiStorageObject, pair
from vaai.export import find_disk, unexport

# this test's device alone (the suite's other LUNs are LIO's too)
CONF = """defaults {
	user_friendly_names no
	find_multipaths no
	polling_interval 1
}
blacklist {
	wwid ".*"
}
blacklist_exceptions {
	wwid "%s"
}
devices {
	device {
		vendor ".*"
		product ".*"
		path_grouping_policy group_by_prio
		prio alua
		hardware_handler "1 alua"
		path_checker tur
		failback immediate
		no_path_retry queue
	}
}
"""
BLOCK = 4096
BLOCKS = 2048  # the writer's 8 MiB, written round and round


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


def mapped(wwid, timeout=60):
    """/dev/mapper/WWID, once multipathd has made it with two paths."""
    dev = f"/dev/mapper/{wwid}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run(
            ["multipath", "-ll", wwid], capture_output=True, text=True, check=False
        )
        if (
            os.path.exists(dev)
            and out.stdout.count("active ready") + out.stdout.count("ghost") >= 2
        ):
            return dev, out.stdout
        time.sleep(1)
    raise AssertionError(f"no multipath device {wwid} with two paths: {out.stdout}{out.stderr}")


@pytest.fixture
def multipathed(tmp_path):
    sh("modprobe", "dm-multipath")
    sh("modprobe", "scsi_dh_alua")
    sh(INITIATOR, "start")
    me = sh(INITIATOR, "name").strip()
    path = os.path.join(SCRATCH, "mpath-shared.img")
    with open(path, "wb") as f:
        f.truncate(16 * MiB)
    halves = []
    daemon = None
    try:
        for node in (1, 2):
            halves.append(SharedHalf(node, me, path))
            halves[-1].setup()
        pair.set_state(halves[0].so, "active")  # node 1 serves
        pair.set_state(halves[1].so, "standby")  # and node 2 says so too
        for h in halves:
            sh(INITIATOR, "login", h.iqn)
        wwid = sh("/lib/udev/scsi_id", "-g", "-u", "-d", find(halves[0])).strip()
        with open("/etc/multipath.conf", "w") as f:
            f.write(CONF % wwid)
        daemon = subprocess.Popen(
            ["multipathd", "-d", "-s"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(2)
        sh("multipath", "-r")
        dev, shown = mapped(wwid)
        yield halves, dev, shown, wwid
    finally:
        # queued I/O failed, not held for ever, before the map goes (a
        # writer stuck in it would keep the map, and this process, alive)
        subprocess.run(["multipathd", "disablequeueing", "maps"], capture_output=True, check=False)
        subprocess.run(["multipath", "-F"], capture_output=True, check=False)
        if daemon:
            daemon.terminate()
            daemon.wait()
        # the suites after this one get their disks unclaimed by multipath:
        # no configuration (Debian's default claims only what the wwids
        # file names), and a wwids file naming no device
        with contextlib.suppress(FileNotFoundError):
            os.unlink("/etc/multipath.conf")
        subprocess.run(["multipath", "-W"], capture_output=True, check=False)
        for h in reversed(halves):
            h.close()
        os.unlink(path)


def find(half):
    """half's /dev/sdX, seen through its own target."""
    return find_disk(half.so, "iscsi_tcp", target=half.iqn)


class Writer(threading.Thread):
    """Writes block i with (round, i) stamps through dev, O_DIRECT, until
    stopped; what each block last held when acknowledged, and errors."""

    def __init__(self, dev):
        super().__init__(daemon=True)
        self.dev, self.stop, self.acked, self.errors, self.rounds = dev, False, {}, [], 0
        self.longest, self.count = 0.0, 0

    def run(self):
        fd = os.open(self.dev, os.O_RDWR | os.O_DIRECT)
        buf = mmap.mmap(-1, BLOCK)
        try:
            while not self.stop:
                self.rounds += 1
                for i in range(BLOCKS):
                    if self.stop:
                        break
                    stamp = f"round {self.rounds} block {i}".encode().ljust(BLOCK, b".")
                    buf[:] = stamp
                    t = time.monotonic()
                    try:
                        os.pwrite(fd, buf, i * BLOCK)
                    except OSError as e:
                        self.errors.append((i, e))
                        return
                    self.longest = max(self.longest, time.monotonic() - t)
                    self.acked[i] = stamp
                    self.count += 1
        finally:
            os.close(fd)


def active_disk(shown):
    """The sdX of the path group multipath -ll shows with prio 50 (ALUA
    Active/Optimized: the prioritizer's 50; Standby's is 1), and its
    path's line."""
    lines = shown.splitlines()
    for n, line in enumerate(lines):
        if "prio=50" in line:
            return re.search(r"\b(sd[a-z]+)\b", lines[n + 1]).group(1), lines[n + 1]
    raise AssertionError(f"no active path group at Active/Optimized's priority:\n{shown}")


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
    after = subprocess.run(
        ["multipath", "-ll", wwid], capture_output=True, text=True, check=False
    ).stdout
    disk, line = active_disk(after)
    assert disk == disks[2] and "ready" in line, after
    fd = os.open(dev, os.O_RDONLY)
    try:
        for i, stamp in w.acked.items():
            assert os.pread(fd, BLOCK, i * BLOCK) == stamp, f"block {i}"
    finally:
        os.close(fd)
    # the pause a host sees, for docs/ha.md (a measurement, not a test)
    print(f"pair-switchover: {w.count} writes, longest {w.longest:.2f} s")
