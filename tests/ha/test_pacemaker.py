"""The pair on the rig's shared disk under Pacemaker: corosync over the
nodes' own link (two_node), the pair as a promotable clone of
ocf:vaai:pair, the rig's power switch as the fence device
(tests/ha/cluster.py), through the failover scenario of
tests/ha/failover.py: a planned switchover is `crm_resource --move
--promoted`, and after node 2's power cut the cluster fences it and
promotes node 1 by itself."""

import cluster
import pytest
from conftest import SHARED_DISK
from failover import IQN, SERIAL, initiator_name, multipathed, switchover_then_power_cut, wait_for


def shows(node, n, state):
    """Does node report node n's group in state (vaaictl pair show)?"""
    out = node.vaaictl("pair", "ha", "show", check=False)
    return f"group node{n} (id {n}): {state}" in out


class ByPacemaker:
    """switch: the cluster moves the promoted role; take_over: nothing
    but waiting, the cluster fences the dead node and promotes the other."""

    def __init__(self, nodes):
        self.nodes = nodes

    def switch(self, to):
        cluster.move(self.nodes[0], to)
        wait_for(f"node {to} promoted", lambda: shows(self.nodes[to - 1], to, "active"), 300)

    def take_over(self, survivor):
        node = self.nodes[survivor - 1]
        wait_for(
            f"node {survivor} promoted by the cluster", lambda: shows(node, survivor, "active"), 300
        )


@pytest.fixture(scope="module")
def served(nodes):
    """The cluster up with the pair promoted on node 1, node 2's half
    showing it so, the initiator logged in to both."""
    params = {
        "backstore": "ha",
        "path": SHARED_DISK,
        "serial": SERIAL,
        "iqn": IQN,
        "hosts": "node1 node2",
        "portals": f"{nodes[0].ip} {nodes[1].ip}",
        "initiators": initiator_name(),
    }
    cluster.start(nodes, params, first=1)
    wait_for("node 1 promoted", lambda: shows(nodes[0], 1, "active"), 300)
    wait_for("node 2 showing node 1 active", lambda: shows(nodes[1], 1, "active"), 300)
    with multipathed(nodes) as served:
        yield served


def test_switchover_then_power_loss(nodes, served):
    switchover_then_power_cut(nodes, served, ByPacemaker(nodes), "ha-pacemaker")
