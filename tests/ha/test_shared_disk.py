"""The pair on the rig's shared disk, moved by hand: each node runs
`vaaictl pair` as an admin would (no cluster), through the failover
scenario of tests/ha/failover.py."""

import pytest
from failover import IQN, SERIAL, initiator_name, multipathed, switchover_then_power_cut


class ByHand:
    """switch: the active node stands by, then the other goes active;
    take_over: the survivor goes active (what the cluster does once the
    dead node is fenced)."""

    def __init__(self, nodes):
        self.nodes = nodes

    def switch(self, to):
        self.nodes[2 - to].vaaictl("pair", "ha", "standby")
        self.nodes[to - 1].vaaictl("pair", "ha", "active")

    def take_over(self, survivor):
        self.nodes[survivor - 1].vaaictl("pair", "ha", "active")


@pytest.fixture(scope="module")
def served(nodes):
    """The pair set up on both nodes, node 1 active, the initiator
    logged in to both under dm-multipath."""
    me = initiator_name()
    for node in nodes:
        node.vaaictl(
            *("pair", "ha", "setup", "--node", node.n, "--iqn", IQN, "--ip", node.ip),
            *("--path", "/dev/vda", "--wwn", SERIAL, "--initiator", me),
        )
    nodes[0].vaaictl("pair", "ha", "active")
    nodes[1].vaaictl("pair", "ha", "standby")
    with multipathed(nodes) as served:
        yield served


def test_switchover_then_power_loss(nodes, served):
    switchover_then_power_cut(nodes, served, ByHand(nodes), "ha-shared-disk")
