"""The pair on single-primary DRBD under Pacemaker, for admins who will
not run DRBD dual-primary: DRBD's promotable clone promoted on one node
(with its fence handlers), the pair's agent with single_primary=true, its
promotion after DRBD's and where DRBD is promoted (tests/ha/cluster.py).
The Standby node's half answers INQUIRY, READ CAPACITY and REPORT TARGET
PORT GROUPS with /dev/drbd0 closed (DRBD's secondary refuses every open);
a promotion opens it, a demotion closes it before DRBD is demoted.  The
failover scenario of tests/ha/failover.py, then the fenced node's
return."""

import cluster
import drbd
import pytest
from failover import switchover_then_power_cut
from rejoin import fenced_node_returns


@pytest.fixture(scope="module")
def served(nodes):
    drbd.up(nodes, primary=False, handlers=True, dual=False)
    with cluster.served(nodes, drbd.DEVICE, drbd="ha", single=True) as served:
        yield served


def test_switchover_power_loss_and_return(nodes, served):
    driver = cluster.ByPacemaker(nodes, drbd=True, single=True)
    io = switchover_then_power_cut(nodes, served, driver, "ha-drbd-single")
    fenced_node_returns(nodes, served, driver, io, "ha-drbd-single")
