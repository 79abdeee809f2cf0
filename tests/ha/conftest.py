"""The initiator's side of the two-node rig (tests/ha/rig.py): the target
nodes, driven through the files tests/ha/node.py reads, and their power.
Run inside the initiator guest; the helpers of tests/guest are imported
from there."""

import os
import shlex
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "guest"))

import pytest  # noqa: E402
from rigfiles import put  # noqa: E402

RIG = os.environ.get("VAAI_RIG", "")
# each node's own disk, and the image both nodes see (tests/ha/rig.py)
OWN_DISK, SHARED_DISK = "/dev/vda", "/dev/vdb"
# the nodes' vaaictl: this tree's
VAAICTL = f"PYTHONPATH={REPO}/python /usr/bin/python3 -m vaai"


class NodeError(AssertionError):
    pass


class Node:
    """Target node n of the rig: its address on the initiator's link, the
    commands it runs for the tests, and its power."""

    def __init__(self, n):
        self.n, self.name = n, f"node{n}"
        self.ip = f"10.77.{n}.{n}"
        self.dir = os.path.join(RIG, self.name)
        self.seq = 0

    def wait_for(self, path, what, timeout):
        """Until path exists; NodeError when the node ended by itself (the
        rig writes NODE/dead) or after timeout s."""
        deadline = time.monotonic() + timeout
        while not os.path.exists(path):
            if os.path.exists(os.path.join(self.dir, "dead")):
                raise NodeError(f"{self.name} ended by itself (see its console): {what}")
            if time.monotonic() > deadline:
                raise NodeError(f"{self.name}: {what}: nothing after {timeout} s")
            time.sleep(0.1)

    def wait_ready(self, timeout=600):
        self.wait_for(os.path.join(self.dir, "ready"), "up", timeout)

    def sh(self, script, timeout=300, check=True):
        """script run on the node by sh -e: its output."""
        self.seq += 1
        put(os.path.join(self.dir, f"cmd.{self.seq}"), script + "\n")
        res = os.path.join(self.dir, f"res.{self.seq}")
        self.wait_for(res, f"an answer to {script}", timeout)
        with open(res) as f:
            rc, out = f.read().split("\n", 1)
        if check and rc != "0":
            raise NodeError(f"{self.name}: `{script}` failed ({rc}): {out}")
        return out

    def vaaictl(self, *args, **kw):
        return self.sh(" ".join([VAAICTL, *map(shlex.quote, map(str, args))]), **kw)

    def power_cut(self, timeout=60):
        """The rig kills the node's QEMU; when it did (time.time())."""
        return self._power("kill", "killed", "its power cut", timeout)

    def power_on(self, timeout=600):
        """The rig boots the node again, its power cut before, and the node
        is up (a fresh tests/ha/node.py: commands count from 1 again, and
        nothing of its last boot runs); when the rig booted it."""
        at = self._power("poweron", "powered", "powered on", 60)
        self.seq = 0
        self.wait_ready(timeout)
        return at

    def freeze(self, timeout=60):
        """The rig stops the node's QEMU: what it has under way stays so
        until thaw() or a power cut.  When the rig told run.py to
        (time.time(); QEMU stops a moment later)."""
        return self._power("freeze", "frozen", "frozen", timeout)

    def thaw(self, timeout=60):
        """The frozen node runs on."""
        return self._power("thaw", "thawed", "thawed", timeout)

    def _power(self, ask, answer, what, timeout):
        # written whole and renamed: the rig may act on it, and remove
        # it, while an open() over 9p is still under way
        put(os.path.join(RIG, f"{ask}-{self.name}"), "")
        done = os.path.join(RIG, f"{answer}-{self.name}")
        self.wait_for(done, what, timeout)
        with open(done) as f:
            return float(f.read())


@pytest.fixture(scope="session")
def nodes():
    """Both target nodes, up."""
    if not RIG:
        pytest.fail("tests/ha runs in the rig's initiator guest (make test-ha)")
    both = (Node(1), Node(2))
    for node in both:
        node.wait_ready()
    return both
