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
from failover import switchover_then_power_cut
from rejoin import fenced_node_returns


@pytest.fixture(scope="module")
def served(nodes):
    with cluster.served(nodes, SHARED_DISK) as served:
        yield served


def test_switchover_power_loss_and_return(nodes, served):
    driver = cluster.ByPacemaker(nodes)
    io = switchover_then_power_cut(nodes, served, driver, "ha-pacemaker")
    fenced_node_returns(nodes, served, driver, io, "ha-pacemaker")
