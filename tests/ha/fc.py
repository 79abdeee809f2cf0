"""The pair over Fibre Channel in the rig (tests/ha/rig.py): an FCoE port
in VN2VN mode (fabrics/fc/port.sh) at each end of the initiator's link to
each node, LIO's tcm_fc serving the node's port, the initiator's libfc
logging in from its own; each node's half set up by `vaaictl pair setup
--fabric fc`, which declares the peer's port to the backend
(attrib/alua_peer_ports: a node cannot hold its peer's FC port), and
dm-multipath over the two paths."""

import contextlib
import glob
import os
import subprocess

from conftest import REPO, RIG
from failover import SERIAL, wait_for
from multipath import multipathd, sh

PORT = os.path.join(REPO, "fabrics", "fc", "port.sh")
# the interface holding an address (an initiator's or a node's on a link)
IFACE = "ip -o -4 addr show to %s/32 | awk '{print $2; exit}'"


def local_iface(ip):
    iface = subprocess.run(
        ["sh", "-c", IFACE % ip], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert iface, f"no interface here has {ip}"
    return iface


def disk_behind(wwpn, host):
    """The sdX of LUN 0 behind the remote port wwpn (naa.<16 hex>), once
    the initiator has logged in to it from its port's SCSI host (hostN),
    or None (the host rescanned: libfc scans a target as it logs in, and
    a LUN mapped later is found by a rescan only)."""
    want = "0x" + wwpn.removeprefix("naa.").lower()
    for rport in glob.glob("/sys/class/fc_remote_ports/rport-*"):
        with open(os.path.join(rport, "port_name")) as f:
            if f.read().strip() != want:
                continue
        disks = glob.glob(f"{rport}/device/target*/*:*:*:0/block/*")
        if disks:
            return os.path.basename(disks[0])
    with open(f"/sys/class/scsi_host/{host}/scan", "w") as f:
        f.write("- - -")
    return None


@contextlib.contextmanager
def served_fc(nodes, path):
    """The pair set up on both nodes over FC on path, node 1 active, the
    initiator logged in to both nodes' ports under dm-multipath: as
    failover.multipathed(), (the multipath device, {node: its path's
    sdX}, WWID)."""
    mine, theirs = {}, {}
    for node in nodes:
        iface = local_iface(f"10.77.{node.n}.100")
        sh(PORT, "up", iface)
        mine[node.n] = (iface, sh(PORT, "wwpn", iface).strip(), sh(PORT, "host", iface).strip())
    for node in nodes:
        at = IFACE % node.ip
        theirs[node.n] = node.sh(f'i=$({at}); {PORT} up "$i"; {PORT} wwpn "$i"').strip()
        node.vaaictl(
            *("pair", "ha", "setup", "--node", node.n, "--fabric", "fc"),
            *("--driver", "tcm_fc", "--wwpn", theirs[node.n]),
            *("--path", path, "--wwn", SERIAL, "--initiator", mine[node.n][1]),
        )
        # the ACL is there: the initiator's login is taken
        node.sh(f'{PORT} enable "$({at})"')
    nodes[0].vaaictl("pair", "ha", "active")
    nodes[1].vaaictl("pair", "ha", "standby")
    for iface, _, _ in mine.values():
        sh(PORT, "enable", iface)
    disks = {
        n: wait_for(
            f"node {n}'s LUN over FC", lambda n=n: disk_behind(theirs[n], mine[n][2]), timeout=120
        )
        for n in theirs
    }
    wwid = sh("/lib/udev/scsi_id", "-g", "-u", "-d", f"/dev/{disks[1]}").strip()
    with multipathd(wwid, log=os.path.join(RIG, "multipathd.log")) as (dev, _shown):
        yield dev, disks, wwid
