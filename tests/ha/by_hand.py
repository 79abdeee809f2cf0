"""The pair moved by hand: each node runs `vaaictl pair` as an admin
would, no cluster (tests/ha/test_shared_disk.py, test_drbd.py)."""

from failover import IQN, SERIAL, initiator_name, multipathed


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


def served_by_hand(nodes, path):
    """The pair set up on both nodes over path, node 1 active, the
    initiator logged in to both under dm-multipath: multipathed()'s
    context."""
    me = initiator_name()
    for node in nodes:
        node.vaaictl(
            *("pair", "ha", "setup", "--node", node.n, "--iqn", IQN, "--ip", node.ip),
            *("--path", path, "--wwn", SERIAL, "--initiator", me),
        )
    nodes[0].vaaictl("pair", "ha", "active")
    nodes[1].vaaictl("pair", "ha", "standby")
    return multipathed(nodes)
