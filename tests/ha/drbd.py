"""DRBD on the rig's nodes: resource "ha" replicates each node's own disk
to the other over the nodes' link, protocol C (a write completes once it
is on both disks).  Dual-primary (allow-two-primaries), both nodes are
Primary: the Standby node's half of the pair holds its store open, and
ALUA keeps the writes to the active node.  Single-primary, only the
active node's DRBD is Primary: the Standby node's half answers INQUIRY
and READ CAPACITY with the device closed (docs/ha.md)."""

from conftest import OWN_DISK
from failover import wait_for

DEVICE = "/dev/drbd0"
# Under Pacemaker, DRBD's fence handlers as docs/ha.md has them: a lost
# peer freezes I/O here until the cluster has fenced it.
FENCING = "\n\t\tfencing resource-and-stonith;"
HANDLERS = """	handlers {
		fence-peer "/usr/lib/drbd/crm-fence-peer.sh";
		after-resync-target "/usr/lib/drbd/crm-unfence-peer.sh";
	}
"""
# A node back after a failover resyncs what the survivor wrote meanwhile
# (268 MiB in one run of the rig's scenario).  By default DRBD 8.4 holds
# a resync to 250 KiB/s while the survivor serves I/O (c-min-rate): that
# one was not done eight minutes later.  Its dynamic controller instead,
# keeping 1 MiB in flight, and not held below 4 MiB/s (docs/ha.md).
RESYNC = """c-plan-ahead 20;
		c-fill-target 1M;
		c-min-rate 4M;"""


TWO_PRIMARIES = "\n\t\tallow-two-primaries yes;"


# A dead peer noticed sooner than by DRBD's defaults (a request unanswered
# for 6 s; a ping every 10 s, 0.5 s to answer), not so soon that an
# emulated guest's stall splits the pair: 4 s for a request, a ping every
# 5 s given 2 s (timeout and ping-timeout count tenths of a second,
# ping-int and connect-int seconds; timeout below both intervals).
def conf(handlers=False, dual=True):
    """/etc/drbd.conf for the rig, with the fence handlers if handlers,
    two primaries allowed if dual."""
    return f"""global {{
	usage-count no;
}}
resource ha {{
	disk {{
		{RESYNC}{FENCING if handlers else ""}
	}}
{HANDLERS if handlers else ""}	net {{
		protocol C;{TWO_PRIMARIES if dual else ""}
		timeout 40;
		ping-int 5;
		ping-timeout 20;
		connect-int 5;
	}}
	on node1 {{
		device {DEVICE};
		disk {OWN_DISK};
		address 10.77.3.1:7789;
		meta-disk internal;
	}}
	on node2 {{
		device {DEVICE};
		disk {OWN_DISK};
		address 10.77.3.2:7789;
		meta-disk internal;
	}}
}}
"""


def state(node, what):
    """drbdadm's cstate, dstate or role of the resource on node."""
    return node.sh(f"drbdadm {what} ha", check=False).strip()


def configure(node, handlers=False, dual=True):
    """DRBD's module and the rig's /etc/drbd.conf on node (a node booted
    again has neither: its /etc is the boot's own)."""
    node.sh(f"modprobe drbd\ncat > /etc/drbd.conf <<'XEOF'\n{conf(handlers, dual)}XEOF")


def up(nodes, primary=True, handlers=False, dual=True):
    """The resource connected and UpToDate on both nodes, both Primary
    (or both Secondary, for the cluster to promote; with the fence
    handlers if handlers; one Primary at a time unless dual).  The rig's
    disks start as zeros on both, so the first sync is skipped (a new
    current UUID with the bitmap cleared): they are the same."""
    for node in nodes:
        configure(node, handlers, dual)
        node.sh("yes yes | drbdadm create-md --force ha\ndrbdadm up ha")
    for node in nodes:
        wait_for(f"{node.name}: DRBD connected", lambda n=node: state(n, "cstate") == "Connected")
    nodes[0].sh("drbdadm -- --clear-bitmap new-current-uuid ha")
    for node in nodes:
        wait_for(
            f"{node.name}: DRBD up to date",
            lambda n=node: state(n, "dstate") == "UpToDate/UpToDate",
        )
    if not primary:
        return
    for node in nodes:
        node.sh("drbdadm primary ha")
    for node in nodes:
        wait_for(f"{node.name}: both Primary", lambda n=node: state(n, "role") == "Primary/Primary")
