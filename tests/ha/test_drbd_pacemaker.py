"""The pair on DRBD under Pacemaker, as docs/ha.md has an admin set it
up: DRBD's resource (tests/ha/drbd.py) with its fence handlers
(fencing resource-and-stonith: after the peer is lost, I/O waits until
the cluster has fenced it) as a promotable clone of ocf:linbit:drbd
promoted on both nodes, the pair's clone started after that promotion
and only where DRBD is promoted (tests/ha/cluster.py), through the
failover scenario of tests/ha/failover.py."""

import cluster
import drbd
import pytest
from failover import switchover_then_power_cut
from rejoin import fenced_node_returns


@pytest.fixture(scope="module")
def served(nodes):
    drbd.up(nodes, primary=False, handlers=True)
    with cluster.served(nodes, drbd.DEVICE, drbd="ha") as served:
        yield served


def test_switchover_power_loss_and_return(nodes, served):
    driver = cluster.ByPacemaker(nodes, drbd=True)
    io = switchover_then_power_cut(nodes, served, driver, "ha-drbd-pacemaker")
    fenced_node_returns(nodes, served, driver, io, "ha-drbd-pacemaker")
