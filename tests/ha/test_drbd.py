"""The pair on DRBD (tests/ha/drbd.py: each node's own disk, replicated
with protocol C over the nodes' link), moved by hand, through the
failover scenario of tests/ha/failover.py: every write node 2
acknowledged before its power cut reads back through node 1, which
holds it in its own copy."""

import drbd
import pytest
from by_hand import ByHand, served_by_hand
from failover import switchover_then_power_cut


@pytest.fixture(scope="module")
def served(nodes):
    drbd.up(nodes)
    with served_by_hand(nodes, drbd.DEVICE) as served:
        yield served


def test_switchover_then_power_loss(nodes, served):
    switchover_then_power_cut(nodes, served, ByHand(nodes), "ha-drbd")
