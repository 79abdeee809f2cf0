"""The rig's nodes as a Pacemaker cluster (tests/ha/cluster.sh on each):
the pair as a promotable clone of ocf:vaai:pair, fenced by the rig's
power switch (tests/ha/fence_rig), as docs/ha.md has an admin set it up."""

import os
from shlex import quote
from xml.sax.saxutils import quoteattr

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER_SH = os.path.join(HERE, "cluster.sh")
CLONE = "ha-pair"


def _nvpairs(owner, pairs):
    return "".join(
        f"<nvpair id={quoteattr(f'{owner}-{k}')} name={quoteattr(k)} value={quoteattr(str(v))}/>"
        for k, v in pairs.items()
    )


def resources_xml(params):
    """The fence device and the pair's promotable clone (ops' timeouts
    long: vaaictl takes seconds per call in an emulated guest)."""
    ops = "".join(
        f'<op id="ha-{name}-{role or "any"}" name="{name}" interval="{interval}" '
        f'timeout="180s"{f" role={quoteattr(role)}" if role else ""}/>'
        for name, interval, role in (
            ("monitor", "3s", "Promoted"),
            ("monitor", "4s", "Unpromoted"),
            ("start", "0s", None),
            ("stop", "0s", None),
            ("promote", "0s", None),
            ("demote", "0s", None),
            ("notify", "0s", None),
        )
    )
    meta = {"promotable": "true", "promoted-max": 1, "clone-max": 2, "notify": "true"}
    return (
        "<resources>"
        '<primitive id="rig-fence" class="stonith" type="fence_rig">'
        '<instance_attributes id="rig-fence-ia">'
        + _nvpairs("rig-fence", {"pcmk_host_list": "node1 node2"})
        + "</instance_attributes>"
        '<operations><op id="rig-fence-monitor" name="monitor" interval="60s"/></operations>'
        "</primitive>"
        f'<clone id="{CLONE}"><meta_attributes id="{CLONE}-meta">'
        + _nvpairs(CLONE, meta)
        + "</meta_attributes>"
        '<primitive id="ha" class="ocf" provider="vaai" type="pair">'
        '<instance_attributes id="ha-ia">' + _nvpairs("ha", params) + "</instance_attributes>"
        f"<operations>{ops}</operations>"
        "</primitive></clone></resources>"
    )


def start(nodes, params, first=1):
    """Corosync and Pacemaker on both nodes, then the configuration: node
    `first` preferred for the promoted role."""
    for node in nodes:
        node.sh(f"{CLUSTER_SH} start")
    for node in nodes:
        node.sh(f"{CLUSTER_SH} wait node1 node2", timeout=600)
    n1 = nodes[0]
    n1.sh("crm_attribute --type crm_config --name stonith-enabled --update true")
    n1.sh("crm_attribute --type crm_config --name stonith-timeout --update 120s")
    n1.sh(f"cibadmin --replace --scope resources --xml-text {quote(resources_xml(params))}")
    n1.sh(
        "cibadmin --create --scope constraints --xml-text "
        + quote(
            f'<rsc_location id="ha-first" rsc="{CLONE}" role="Promoted" '
            f'node="node{first}" score="100"/>'
        )
    )


def move(node, to):
    """The promoted role to node `to` (an admin's planned switchover)."""
    node.sh(f"crm_resource --move --resource {CLONE} --node node{to} --promoted")
