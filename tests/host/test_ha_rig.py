"""The two-node rig's wiring (tests/ha/rig.py) and its node loop
(tests/ha/node.py), without guests."""

import importlib.util
import os
import subprocess
import sys
import time

import pytest

HA = os.path.join(os.path.dirname(__file__), "..", "ha")


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HA, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rig = load("rig")


def test_each_link_joins_two_guests_port_to_port():
    ends = {}
    for name in ("initiator", "node1", "node2"):
        links, net = rig.guest_links(name)
        assert len(links) == 2 and len(net.split()) == 2
        for link, spec in zip(links, net.split()):
            mac, port, peer = link.split(",")
            assert spec.startswith(mac + "=")
            ends[int(port)] = (name, int(peer), spec.split("=")[1])
    # each guest sends to the port its peer listens on, and back
    for port, (name, peer, _addr) in ends.items():
        assert ends[peer][1] == port and ends[peer][0] != name
    # each link one subnet; the tests' node addresses on the initiator's
    addrs = {name: [a for n, _p, a in ends.values() if n == name] for name in rig.NODES}
    assert "10.77.1.1/24" in addrs["node1"] and "10.77.2.2/24" in addrs["node2"]


def test_a_node_runs_each_command_once_in_order_until_told_to_end(tmp_path):
    here = tmp_path / "node1"
    here.mkdir()
    env = dict(os.environ, VAAI_RIG=str(tmp_path))
    node = subprocess.Popen([sys.executable, os.path.join(HA, "node.py"), "node1"], env=env)
    try:
        deadline = time.monotonic() + 30
        for n, (script, want) in enumerate(
            [("echo one", "0\none\n"), ("echo two >&2; false; echo no", "1\ntwo\n")], 1
        ):
            # written whole, as the tests write them
            (here / "cmd.tmp").write_text(script + "\n")
            (here / "cmd.tmp").rename(here / f"cmd.{n}")
            while not (here / f"res.{n}").exists():
                assert time.monotonic() < deadline, f"no answer to cmd.{n}"
                time.sleep(0.05)
            assert (here / f"res.{n}").read_text() == want
        assert (here / "ready").exists()
        (here / "exit").touch()
        assert node.wait(30) == 0
    finally:
        if node.poll() is None:
            node.kill()
            pytest.fail("node.py did not end on exit")
