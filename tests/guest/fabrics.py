"""The fabrics a test LUN is seen through, each with its test topology:

  loop   tcm_loop: every LUN in a target of its own, unless put beside another
  iscsi  LIO's iSCSI target on 127.0.0.1:3260 and open-iscsi logged in to it
         (fabrics/iscsi/initiator.sh)
  fc     tcm_fc on one FCoE port of a veth pair in VN2VN mode, the kernel's
         FC initiator on the other (fabrics/fc/topology.sh)

iSCSI and FC are set up once per test session: one TPG with an ACL for the
guest's initiator; a test's LUNs are mapped into it (so they share one I_T
nexus, as a host's datastore LUNs do) and rescanned, and unmapped after it.
"""

import contextlib
import glob
import itertools
import os
import subprocess
import time

from rtslib_fb import LUN, TPG, FabricModule, MappedLUN, NetworkPortal, NodeACL, Target
from vaai.export import drop_lun, export_iscsi, export_loopback, find_disk, has_luns, unexport

HERE = os.path.dirname(os.path.abspath(__file__))
FABRICS_DIR = os.path.join(HERE, "..", "..", "fabrics")
INITIATOR = os.path.join(FABRICS_DIR, "iscsi", "initiator.sh")
FC_TOPOLOGY = os.path.join(FABRICS_DIR, "fc", "topology.sh")
ALL = ("loop", "iscsi", "fc")


def sh(*argv):
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    if p.returncode:
        raise AssertionError(f"{' '.join(argv)} failed ({p.returncode}): {p.stdout}{p.stderr}")
    return p.stdout.strip()


@contextlib.contextmanager
def iscsi_login(sos, iqn, profile="plain"):
    """The storage objects sos as LUNs 0, 1, ... of iSCSI target iqn on
    127.0.0.1 (the TPG's settings profile's), this guest's open-iscsi
    logged in to it: the rtslib LUN of each.  Logged out after, also
    after a login that failed half way; a failed logout after a login
    that did not is said (the next login to iqn would fail on the session
    left behind).  Taking the LUNs down is the caller's."""
    sh(INITIATOR, "start")
    me = sh(INITIATOR, "name")
    made = [
        export_iscsi(so, iqn, initiators=[me], lun=i, profile=profile) for i, so in enumerate(sos)
    ]
    logged_in = False
    try:
        sh(INITIATOR, "login", iqn)
        logged_in = True
        yield made
    finally:
        p = subprocess.run([INITIATOR, "logout", iqn], capture_output=True, text=True, check=False)
        if p.returncode and logged_in:
            print(f"iSCSI logout of {iqn} failed: {p.stdout}{p.stderr}", flush=True)


def delete_disk(disk):
    """Take /dev/sdX away on the initiator side."""
    path = f"/sys/block/{os.path.basename(disk)}/device/delete"
    if os.path.exists(path):
        with open(path, "w") as f:
            f.write("1")


class Loop:
    """A tcm_loop target is a SCSI host of this initiator, and adding and
    removing one took about 130 ms of the 400 a test's LUN cost (a guest
    under TCG).  A target a test leaves empty is kept, with its nexus,
    for a later LUN that needs a target of its own (_SPARE, until
    drop_spare_targets()): that LUN is LUN 0 of a nexus seeing nothing
    else, as in a new target."""

    name, driver = "loop", "tcm_loopback"

    def export(self, so, beside=None):
        """/dev/sdX of so, in a target of its own or in beside's TPG."""
        if beside is None:
            export_loopback(so, wwn=_spare_wwn())
        else:
            tpg = next(beside.so.attached_luns).parent_tpg
            export_loopback(so, lun=max(x.lun for x in tpg.luns) + 1, wwn=tpg.parent_target.wwn)
        return find_disk(so, self.driver)

    def unexport(self, so, disk):
        for lun in list(so.attached_luns):
            target = lun.parent_tpg.parent_target
            if target.fabric_module.name != "loopback":
                drop_lun(lun)  # a fabric the test added
                continue
            lun.delete()
            if not has_luns(target):
                _SPARE.append(target)

    def close(self):
        drop_spare_targets()


# Emptied tcm_loop targets, whichever Loop emptied them: a test may close
# the topologies (close_all) while its LUNs are still up.
_SPARE = []


def _empty(target):
    """target still there (a test may have wiped LIO's configuration), with no LUN."""
    return os.path.isdir(target.path) and not has_luns(target)


def _spare_wwn():
    """An empty target kept from an earlier LUN, or None."""
    while _SPARE:
        target = _SPARE.pop()
        if _empty(target):
            return target.wwn
    return None


def drop_spare_targets():
    """Remove the empty tcm_loop targets kept for later LUNs."""
    while _SPARE:
        target = _SPARE.pop()
        if _empty(target):
            target.delete()


class _Shared:
    """One TPG and one ACL for this initiator; LUN numbers are never reused
    in a session, so a stale disk can never pass for a new LUN."""

    driver = None

    def __init__(self):
        self.numbers = itertools.count()

    def export(self, so, beside=None):
        n = next(self.numbers)
        MappedLUN(self.acl, n, LUN(self.tpg, n, storage_object=so))
        self.rescan()
        return find_disk(so, self.driver, timeout=30)

    def unexport(self, so, disk):
        delete_disk(disk)
        for lun in list(so.attached_luns):
            if lun.parent_tpg.path == self.tpg.path:
                lun.delete()
        unexport(so)  # any other fabric a test added

    def alive(self):
        return os.path.isdir(self.tpg.path)


class Iscsi(_Shared):
    name, driver = "iscsi", "iscsi_tcp"
    IQN = "iqn.2026-11.org.vaai:suite"

    def __init__(self):
        super().__init__()
        sh(INITIATOR, "start")
        self.target = Target(FabricModule("iscsi"), self.IQN)
        self.tpg = TPG(self.target, 1)
        NetworkPortal(self.tpg, "127.0.0.1", 3260)
        self.acl = NodeACL(self.tpg, sh(INITIATOR, "name"))
        self.tpg.set_attribute("authentication", "0")
        self.tpg.enable = True
        sh(INITIATOR, "login", self.IQN)

    def rescan(self):
        sh("iscsiadm", "-m", "session", "-R")

    def close(self):
        subprocess.run([INITIATOR, "logout", self.IQN], capture_output=True, check=False)
        self.target.delete()


class Fc(_Shared):
    name, driver = "fc", "fcoe"

    def __init__(self):
        super().__init__()
        sh(FC_TOPOLOGY, "up")
        self.target = Target(FabricModule("tcm_fc"), sh(FC_TOPOLOGY, "wwpn", "0"))
        self.tpg = TPG(self.target, 1)
        # the ACL before the ports log in, or the PRLI is refused
        self.acl = NodeACL(self.tpg, sh(FC_TOPOLOGY, "wwpn", "1"))
        sh(FC_TOPOLOGY, "enable")
        self.host = sh(FC_TOPOLOGY, "host", "1")
        self._wait_for_target()

    def _wait_for_target(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for roles in glob.glob(
                "/sys/class/fc_remote_ports/rport-{}:*/roles".format(self.host.replace("host", ""))
            ):
                with open(roles) as f:
                    if "FCP Target" in f.read():
                        return
            time.sleep(0.5)
        raise AssertionError("the tcm_fc port never showed up as an FCP target")

    def rescan(self):
        with open(f"/sys/class/scsi_host/{self.host}/scan", "w") as f:
            f.write("- - -")

    def close(self):
        self.target.delete()
        subprocess.run([FC_TOPOLOGY, "down"], capture_output=True, check=False)


class TwoHosts:
    """Two initiators on one iSCSI target, as two ESXi hosts with their own
    datastores: host A is this machine's initiator name, host B a second
    open-iscsi iface with a name of its own.  Each has an ACL; map() puts a
    storage object into one host's ACL, optionally read-only, and returns
    that host's /dev/sdX of it."""

    IQN = "iqn.2026-11.org.vaai:two-hosts"
    B_IFACE, B_IQN = "vaai-host-b", "iqn.1998-01.com.vmware:esx-b-5e11a5e0"

    def __init__(self):
        sh(INITIATOR, "start")
        sh(INITIATOR, "iface", self.B_IFACE, self.B_IQN)
        self.names = {"A": sh(INITIATOR, "name"), "B": self.B_IQN}
        self.target = Target(FabricModule("iscsi"), self.IQN)
        self.tpg = TPG(self.target, 1)
        NetworkPortal(self.tpg, "127.0.0.1", 3260)
        self.acls = {h: NodeACL(self.tpg, n) for h, n in self.names.items()}
        self.tpg.set_attribute("authentication", "0")
        self.tpg.enable = True
        self.luns = {}  # storage object name -> TPG LUN
        self.mapped = {"A": 0, "B": 0}
        for host in self.names:
            self._initiator("login", host)

    def _initiator(self, op, host, check=True):
        env = dict(os.environ, ISCSI_IFACE=self.B_IFACE) if host == "B" else None
        p = subprocess.run(
            [INITIATOR, op, self.IQN], env=env, capture_output=True, text=True, check=False
        )
        if check and p.returncode:
            raise AssertionError(f"{op} as host {host} failed: {p.stderr}")

    def map(self, so, host, readonly=False):
        if so.name not in self.luns:
            self.luns[so.name] = LUN(self.tpg, len(self.luns), storage_object=so)
        MappedLUN(self.acls[host], self.mapped[host], self.luns[so.name], write_protect=readonly)
        self.mapped[host] += 1
        sh("iscsiadm", "-m", "session", "-R")
        return find_disk(so, "iscsi_tcp", timeout=30, target=self.IQN, initiator=self.names[host])

    def close(self):
        for host in self.names:
            self._initiator("logout", host, check=False)
        self.target.delete()


_CLASSES = {"loop": Loop, "iscsi": Iscsi, "fc": Fc}
_up = {}


def get(name):
    """The topology of fabric name, set up on first use."""
    t = _up.get(name)
    if t is None or (hasattr(t, "alive") and not t.alive()):
        t = _up[name] = _CLASSES[name]()
    return t


def close_all():
    """Tear every topology down (before a test that wipes LIO's configuration)."""
    while _up:
        _up.popitem()[1].close()


def selected():
    """The fabrics to run the multi-fabric suites over: VAAI_FABRICS, or all."""
    names = [n for n in os.environ.get("VAAI_FABRICS", ",".join(ALL)).split(",") if n]
    unknown = set(names) - set(ALL)
    if unknown:
        raise ValueError(
            "VAAI_FABRICS: unknown fabric(s) {}; pick from {}".format(
                ", ".join(sorted(unknown)), ", ".join(ALL)
            )
        )
    return names
