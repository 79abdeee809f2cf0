"""The rig's nodes as a Pacemaker cluster (tests/ha/cluster.sh on each):
the pair as a promotable clone of ocf:vaai:pair, fenced by the rig's
power switch (tests/ha/fence_rig), on the shared disk or after DRBD's
promotable clone (ocf:linbit:drbd, both nodes promoted), as docs/ha.md
has an admin set it up."""

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


def _drbd_xml(resource):
    """DRBD's promotable clone, promoted on both nodes (dual-primary)."""
    meta = {
        "promotable": "true",
        "promoted-max": 2,
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


def resources_xml(params, drbd=None):
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
        + (_drbd_xml(drbd) if drbd else "")
        + f'<clone id="{CLONE}"><meta_attributes id="{CLONE}-meta">'
        + _nvpairs(CLONE, meta)
        + "</meta_attributes>"
        '<primitive id="ha" class="ocf" provider="vaai" type="pair">'
        '<instance_attributes id="ha-ia">' + _nvpairs("ha", params) + "</instance_attributes>"
        f"<operations>{ops}</operations>"
        "</primitive></clone></resources>"
    )


def constraints_xml(first, drbd):
    """Node `first` preferred for the pair's promoted role; with DRBD, the
    pair started only after DRBD's promotion, where DRBD is promoted."""
    xml = (
        f'<rsc_location id="ha-first" rsc="{CLONE}" role="Promoted" '
        f'node="node{first}" score="100"/>'
    )
    if drbd:
        xml += (
            f'<rsc_order id="ha-after-drbd" first="{DRBD_CLONE}" first-action="promote" '
            f'then="{CLONE}" then-action="start" kind="Mandatory"/>'
            f'<rsc_colocation id="ha-on-drbd" rsc="{CLONE}" with-rsc="{DRBD_CLONE}" '
            'with-rsc-role="Promoted" score="INFINITY"/>'
        )
    return f"<constraints>{xml}</constraints>"


def start(nodes, params, first=1, drbd=None):
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
        ("resources", resources_xml(params, drbd)),
        ("constraints", constraints_xml(first, drbd)),
    ):
        n1.sh(f"cibadmin --replace --scope {scope} --xml-text {quote(xml)}")
    n1.sh(f"crm_resource --resource {CLONE} --meta --delete-parameter target-role")


def move(node, to):
    """The promoted role to node `to` (an admin's planned switchover)."""
    node.sh(f"crm_resource --move --resource {CLONE} --node node{to} --promoted")


def clear_moves(node):
    """The constraints moves left behind gone (`crm_resource --clear`), as
    an admin does once a move is done: a node a move was to would be
    promoted again as soon as it is back."""
    node.sh(f"crm_resource --clear --resource {CLONE}")


def join(node, drbd_handlers=None):
    """Node, booted again after it was fenced, back in the cluster as its
    admin brings it: DRBD's configuration in place (drbd_handlers given:
    with the fence handlers or not) for the cluster's DRBD agent to bring
    the resource up, then corosync and Pacemaker.  The cluster does the
    rest: DRBD resyncs, and the pair's half starts (standby)."""
    if drbd_handlers is not None:
        drbd.configure(node, drbd_handlers)
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
    settle: the moves' constraints cleared."""

    def __init__(self, nodes, drbd=False):
        self.nodes, self.drbd = nodes, drbd

    def switch(self, to):
        move(self.nodes[0], to)
        wait_for(f"node {to} promoted", lambda: shows(self.nodes[to - 1], to, "active"), 300)

    def take_over(self, survivor):
        node = self.nodes[survivor - 1]
        wait_for(
            f"node {survivor} promoted by the cluster", lambda: shows(node, survivor, "active"), 300
        )

    def settle(self):
        clear_moves(self.nodes[0])

    def rejoin(self, n):
        node = self.nodes[n - 1]
        join(node, drbd_handlers=True if self.drbd else None)
        if self.drbd:
            wait_for(
                f"{node.name}: DRBD resynced",
                lambda: drbd.state(node, "dstate") == "UpToDate/UpToDate",
                timeout=900,
            )


@contextlib.contextmanager
def served(nodes, path, drbd=None):
    """The cluster up with the pair on path promoted on node 1 (DRBD
    resource drbd beneath if given), node 2's half showing it so, the
    initiator logged in to both: multipathed()'s."""
    params = {
        "backstore": "ha",
        "path": path,
        "serial": SERIAL,
        "iqn": IQN,
        "hosts": "node1 node2",
        "portals": f"{nodes[0].ip} {nodes[1].ip}",
        "initiators": initiator_name(),
    }
    start(nodes, params, first=1, drbd=drbd)
    wait_for("node 1 promoted", lambda: shows(nodes[0], 1, "active"), 300)
    wait_for("node 2 showing node 1 active", lambda: shows(nodes[1], 1, "active"), 300)
    with multipathed(nodes) as got:
        yield got
