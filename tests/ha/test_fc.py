"""The pair over Fibre Channel (FCoE, tests/ha/fc.py) on the rig's shared
disk, moved by hand (tests/ha/by_hand.py), through the failover scenario
of tests/ha/failover.py: the REPORT TARGET PORT GROUPS multipath reads
from each node names the peer's port it cannot hold."""

import pytest
from by_hand import ByHand
from conftest import SHARED_DISK
from failover import switchover_then_power_cut
from fc import served_fc


@pytest.fixture(scope="module")
def served(nodes):
    with served_fc(nodes, SHARED_DISK) as served:
        yield served


def test_switchover_then_power_loss_over_fc(nodes, served):
    switchover_then_power_cut(nodes, served, ByHand(nodes), "ha-fc-shared-disk")
