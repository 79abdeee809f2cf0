"""The rig's nodes as a Pacemaker cluster (tests/ha/cluster.sh on each):
the pair as a promotable clone of ocf:vaai:pair, fenced by the rig's
power switch (tests/ha/fence_rig), on the shared disk or after DRBD's
promotable clone (ocf:linbit:drbd, both nodes promoted; or, single-
primary, one node promoted and the pair's promotion after it), as
docs/ha.md has an admin set it up."""

import contextlib
import os
from shlex import quote
from xml.sax.saxutils import quoteattr

import drbd
from failover import IQN, SERIAL, initiator_name, multipathed, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER_SH = os.path.join(HERE, "cluster.sh")
CLONE = "ha-pair"
DRBD_CLONE = "drbd-ha"


def _nvpairs(owner, pairs):
    return "".join(
        f"<nvpair id={quoteattr(f'{owner}-{k}')} name={quoteattr(k)} value={quoteattr(str(v))}/>"
        for k, v in pairs.items()
    )


def _ops(rsc, monitors):
    """rsc's operations: a monitor per (role, interval), the other actions
    (timeouts long: vaaictl takes seconds per call in an emulated guest)."""
    return "".join(
        f'<op id="{rsc}-{name}-{role or "any"}" name="{name}" interval="{interval}" '
        f'timeout="180s"{f" role={quoteattr(role)}" if role else ""}/>'
        for name, interval, role in (
            *(("monitor", interval, role) for role, interval in monitors),
            ("start", "0s", None),
            ("stop", "0s", None),
            ("promote", "0s", None),
            ("demote", "0s", None),
            ("notify", "0s", None),
        )
    )


def _drbd_xml(resource, single=False):
    """DRBD's promotable clone, promoted on both nodes (dual-primary) or
    on one (single)."""
    meta = {
        "promotable": "true",
        "promoted-max": 1 if single else 2,
        "promoted-node-max": 1,
        "clone-max": 2,
        "clone-node-max": 1,
        "notify": "true",
        "interleave": "true",
    }
    return (
        f'<clone id="{DRBD_CLONE}"><meta_attributes id="{DRBD_CLONE}-meta">'
        + _nvpairs(DRBD_CLONE, meta)
        + "</meta_attributes>"
        '<primitive id="drbd" class="ocf" provider="linbit" type="drbd">'
        '<instance_attributes id="drbd-ia">'
        + _nvpairs("drbd", {"drbd_resource": resource})
        + "</instance_attributes>"
        f"<operations>{_ops('drbd', (('Promoted', '5s'), ('Unpromoted', '6s')))}</operations>"
        "</primitive></clone>"
    )


def resources_xml(params, drbd=None, single=False):
    """The fence device, DRBD resource drbd's clone if given, and the
    pair's promotable clone, stopped (start() starts it).  Beside DRBD
    both clones interleave: each node's pair instance waits for that
    node's DRBD instance alone, so the survivor's is not restarted when
    the other node's DRBD comes and goes."""
    ops = _ops("ha", (("Promoted", "3s"), ("Unpromoted", "4s")))
    meta = {
        "promotable": "true",
        "promoted-max": 1,
        "clone-max": 2,
        "notify": "true",
        **({"interleave": "true"} if drbd else {}),
        "target-role": "Stopped",
    }
    return (
        "<resources>"
        '<primitive id="rig-fence" class="stonith" type="fence_rig">'
        '<instance_attributes id="rig-fence-ia">'
        + _nvpairs("rig-fence", {"pcmk_host_list": "node1 node2"})
        + "</instance_attributes>"
        '<operations><op id="rig-fence-monitor" name="monitor" interval="60s"/></operations>'
        "</primitive>"
        + (_drbd_xml(drbd, single) if drbd else "")
        + f'<clone id="{CLONE}"><meta_attributes id="{CLONE}-meta">'
        + _nvpairs(CLONE, meta)
        + "</meta_attributes>"
        '<primitive id="ha" class="ocf" provider="vaai" type="pair">'
        '<instance_attributes id="ha-ia">' + _nvpairs("ha", params) + "</instance_attributes>"
        f"<operations>{ops}</operations>"
        "</primitive></clone></resources>"
    )


def constraints_xml(first, drbd, single=False):
    """Node `first` preferred for the pair's promoted role; with DRBD, the
    pair started only after DRBD's promotion, where DRBD is promoted;
    single-primary, the pair started after DRBD's start and promoted
    after DRBD's promotion, where DRBD is promoted (and so demoted before
    it: the orders are symmetrical), node `first` preferred for DRBD's
    promoted role, which the pair's follows.  (A preference of the pair's
    does not move DRBD's promotion: Pacemaker 2.1.5 promoted DRBD on node
    2 with the pair preferring node 1, and the pair could only follow.)"""
    xml = (
        f'<rsc_location id="ha-first" rsc="{DRBD_CLONE if single else CLONE}" '
        f'role="Promoted" node="node{first}" score="100"/>'
    )
    if drbd and single:
        xml += (
            f'<rsc_order id="ha-after-drbd" first="{DRBD_CLONE}" first-action="start" '
            f'then="{CLONE}" then-action="start" kind="Mandatory"/>'
            f'<rsc_order id="ha-promoted-after-drbd" first="{DRBD_CLONE}" '
            f'first-action="promote" then="{CLONE}" then-action="promote" kind="Mandatory"/>'
            f'<rsc_colocation id="ha-on-drbd" rsc="{CLONE}" with-rsc="{DRBD_CLONE}" '
            'score="INFINITY"/>'
            f'<rsc_colocation id="ha-promoted-on-drbd" rsc="{CLONE}" rsc-role="Promoted" '
            f'with-rsc="{DRBD_CLONE}" with-rsc-role="Promoted" score="INFINITY"/>'
        )
    elif drbd:
        xml += (
            f'<rsc_order id="ha-after-drbd" first="{DRBD_CLONE}" first-action="promote" '
            f'then="{CLONE}" then-action="start" kind="Mandatory"/>'
            f'<rsc_colocation id="ha-on-drbd" rsc="{CLONE}" with-rsc="{DRBD_CLONE}" '
            'with-rsc-role="Promoted" score="INFINITY"/>'
        )
    return f"<constraints>{xml}</constraints>"


def start(nodes, params, first=1, drbd=None, single=False):
    """Corosync and Pacemaker on both nodes, then the configuration: node
    `first` preferred for the promoted role; DRBD resource drbd (made and
    connected, both Secondary: tests/ha/drbd.py) beneath if given."""
    for node in nodes:
        node.sh(f"{CLUSTER_SH} start")
    for node in nodes:
        node.sh(f"{CLUSTER_SH} wait node1 node2", timeout=600)
    n1 = nodes[0]
    n1.sh("crm_attribute --type crm_config --name stonith-enabled --update true")
    n1.sh("crm_attribute --type crm_config --name stonith-timeout --update 120s")
    # the pair's clone made stopped, started once its constraints are in
    # (as `pcs resource create --disabled` would): it never starts
    # before DRBD is promoted
    for scope, xml in (
        ("resources", resources_xml(params, drbd, single)),
        ("constraints", constraints_xml(first, drbd, single)),
    ):
        n1.sh(f"cibadmin --replace --scope {scope} --xml-text {quote(xml)}")
    n1.sh(f"crm_resource --resource {CLONE} --meta --delete-parameter target-role")


def move(node, to, rsc=CLONE):
    """rsc's promoted role to node `to` (an admin's planned switchover:
    the pair's, or on single-primary DRBD, DRBD's, which the pair's
    follows)."""
    node.sh(f"crm_resource --move --resource {rsc} --node node{to} --promoted")


def clear_moves(node, rsc=CLONE):
    """The constraints moves left behind gone (`crm_resource --clear`), as
    an admin does once a move is done: a node a move was to would be
    promoted again as soon as it is back."""
    node.sh(f"crm_resource --clear --resource {rsc}")


def join(node, drbd_handlers=None, dual=True):
    """Node, booted again after it was fenced, back in the cluster as its
    admin brings it: DRBD's configuration in place (drbd_handlers given:
    with the fence handlers or not) for the cluster's DRBD agent to bring
    the resource up, then corosync and Pacemaker.  The cluster does the
    rest: DRBD resyncs, and the pair's half starts (standby)."""
    if drbd_handlers is not None:
        drbd.configure(node, drbd_handlers, dual)
    node.sh(f"{CLUSTER_SH} start")
    node.sh(f"{CLUSTER_SH} wait node1 node2", timeout=600)


def shows(node, n, state):
    """Does node report node n's group in state (vaaictl pair show)?"""
    out = node.vaaictl("pair", "ha", "show", check=False)
    return f"group node{n} (id {n}): {state}" in out


class ByPacemaker:
    """switch: the cluster moves the promoted role; take_over: nothing
    but waiting, the cluster fences the dead node and promotes the other;
    rejoin: the fenced node, booted again, joins the cluster, which
    starts its half (on DRBD, if drbd, with the fence handlers);
    settle: the moves' constraints cleared.  single: DRBD single-primary."""

    def __init__(self, nodes, drbd=False, single=False):
        self.nodes, self.drbd, self.single = nodes, drbd, single
        self.moved = DRBD_CLONE if single else CLONE

    def switch(self, to):
        move(self.nodes[0], to, self.moved)
        wait_for(f"node {to} promoted", lambda: shows(self.nodes[to - 1], to, "active"), 300)

    def take_over(self, survivor):
        node = self.nodes[survivor - 1]
        wait_for(
            f"node {survivor} promoted by the cluster", lambda: shows(node, survivor, "active"), 300
        )

    def settle(self):
        clear_moves(self.nodes[0], self.moved)

    def rejoin(self, n):
        node = self.nodes[n - 1]
        join(node, drbd_handlers=True if self.drbd else None, dual=not self.single)
        if self.drbd:
            wait_for(
                f"{node.name}: DRBD resynced",
                lambda: drbd.state(node, "dstate") == "UpToDate/UpToDate",
                timeout=900,
            )


@contextlib.contextmanager
def served(nodes, path, drbd=None, single=False):
    """The cluster up with the pair on path promoted on node 1 (DRBD
    resource drbd beneath if given, single-primary if single), node 2's
    half showing it so, the initiator logged in to both: multipathed()'s."""
    params = {
        "backstore": "ha",
        "path": path,
        "serial": SERIAL,
        "iqn": IQN,
        "hosts": "node1 node2",
        "portals": f"{nodes[0].ip} {nodes[1].ip}",
        "initiators": initiator_name(),
        **({"single_primary": "true"} if single else {}),
    }
    start(nodes, params, first=1, drbd=drbd, single=single)
    wait_for("node 1 promoted", lambda: shows(nodes[0], 1, "active"), 300)
    wait_for("node 2 showing node 1 active", lambda: shows(nodes[1], 1, "active"), 300)
    with multipathed(nodes) as got:
        yield got
