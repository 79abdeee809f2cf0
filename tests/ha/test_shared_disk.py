"""The pair on the rig's shared disk, moved by hand (tests/ha/by_hand.py),
through the failover scenario of tests/ha/failover.py."""

import pytest
from by_hand import ByHand, served_by_hand
from conftest import SHARED_DISK
from failover import switchover_then_power_cut


@pytest.fixture(scope="module")
def served(nodes):
    with served_by_hand(nodes, SHARED_DISK) as served:
        yield served


def test_switchover_then_power_loss(nodes, served):
    switchover_then_power_cut(nodes, served, ByHand(nodes), "ha-shared-disk")
