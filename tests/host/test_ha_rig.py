"""The two-node rig's wiring (tests/ha/rig.py) and its node loop
(tests/ha/node.py), without guests."""

import importlib.util
import os
import signal
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
        ran = tmp_path / "ran"
        for n, (script, want) in enumerate(
            [
                (f"echo one; echo 1 >> {ran}", "0\none\n"),
                (f"echo 2 >> {ran}; echo two >&2; false; echo no", "1\ntwo\n"),
            ],
            1,
        ):
            # written whole, as the tests write them
            (here / "cmd.tmp").write_text(script + "\n")
            (here / "cmd.tmp").rename(here / f"cmd.{n}")
            while not (here / f"res.{n}").exists():
                assert time.monotonic() < deadline, f"no answer to cmd.{n}"
                time.sleep(0.05)
            assert (here / f"res.{n}").read_text() == want
        assert (here / "ready").exists()
        time.sleep(0.3)  # a few more turns of its loop: nothing runs again
        assert ran.read_text() == "1\n2\n"
        (here / "exit").touch()
        assert node.wait(30) == 0
    finally:
        if node.poll() is None:
            node.kill()
            pytest.fail("node.py did not end on exit")


class FakeGuest:
    """A run.py as serve_power sees it: ends by itself after `ends` polls
    with `rc`, or on SIGTERM with `on_term`."""

    def __init__(self, ends=None, rc=0, on_term=None):
        self.ends, self.rc, self.on_term, self.polls, self.returncode = ends, rc, on_term, 0, None
        self.signals = []

    def poll(self):
        self.polls += 1
        if self.returncode is None and self.ends is not None and self.polls >= self.ends:
            self.returncode = self.rc
        return self.returncode

    def send_signal(self, sig):
        self.signals.append(sig)
        if sig == signal.SIGTERM:
            self.returncode = self.on_term

    def wait(self, timeout=None):
        return self.returncode


def no_boot(name):
    raise AssertionError(f"{name} booted, not asked to")


def test_the_rig_cuts_a_node_asked_for_and_reports_the_ones_that_end(tmp_path, monkeypatch):
    monkeypatch.setattr(rig.time, "sleep", lambda s: None)
    for name in rig.NODES:
        (tmp_path / name).mkdir()
    (tmp_path / "kill-node1").touch()
    guests = {
        "node1": FakeGuest(on_term=rig.run.POWER_CUT),  # cut clean
        "node2": FakeGuest(ends=2, rc=1),  # a crash of its own
    }
    initiator = FakeGuest(ends=5)
    killed, dead = rig.serve_power(guests, initiator, str(tmp_path), no_boot)
    assert (killed, dead) == ({"node1"}, {"node2"})
    assert float((tmp_path / "killed-node1").read_text()) > 0
    assert (tmp_path / "node2" / "dead").read_text() == "1\n"


def test_a_cut_that_finds_trouble_is_no_clean_cut(tmp_path, monkeypatch):
    monkeypatch.setattr(rig.time, "sleep", lambda s: None)
    for name in rig.NODES:
        (tmp_path / name).mkdir()
    (tmp_path / "kill-node2").touch()
    guests = {"node1": FakeGuest(), "node2": FakeGuest(on_term=1)}
    killed, dead = rig.serve_power(guests, FakeGuest(ends=3), str(tmp_path), no_boot)
    assert (killed, dead) == (set(), {"node2"})
    assert not (tmp_path / "killed-node2").exists()
    assert (tmp_path / "node2" / "dead").read_text() == "1\n"


class Initiator(FakeGuest):
    """The initiator's tests: at each poll, the next of asks (a file the
    tests write for the rig, or None) is written first; done after the
    last."""

    def __init__(self, asks):
        super().__init__(ends=len(asks) + 1)
        self.asks = asks

    def poll(self):
        if self.polls < len(self.asks) and self.asks[self.polls]:
            self.asks[self.polls].touch()
        return super().poll()


def test_the_rig_powers_a_cut_node_on_again_and_keeps_its_first_boot(tmp_path, monkeypatch):
    monkeypatch.setattr(rig.time, "sleep", lambda s: None)
    for name in rig.NODES:
        (tmp_path / name).mkdir()
    (tmp_path / "node1" / "res.1").write_text("0\n")
    (tmp_path / "node1-console.log").write_text("first boot\n")
    (tmp_path / "node1.out").write_text("first boot's output\n")
    booted = []

    def boot(name):
        booted.append((name, FakeGuest()))
        return booted[-1][1]

    guests = {"node1": FakeGuest(on_term=rig.run.POWER_CUT), "node2": FakeGuest()}
    asks = [tmp_path / "kill-node1", None, tmp_path / "poweron-node1", None]
    killed, dead = rig.serve_power(guests, Initiator(asks), str(tmp_path), boot)
    assert (killed, dead) == (set(), set())
    assert [name for name, _ in booted] == ["node1"]
    assert guests["node1"] is booted[0][1]
    assert float((tmp_path / "powered-node1").read_text()) > 0
    for gone in ("kill-node1", "killed-node1", "poweron-node1"):
        assert not (tmp_path / gone).exists(), gone
    # the first boot's files set aside, a fresh directory for the second
    assert (tmp_path / "node1.boot1" / "res.1").read_text() == "0\n"
    assert (tmp_path / "node1.boot1-console.log").read_text() == "first boot\n"
    assert (tmp_path / "node1.boot1.out").read_text() == "first boot's output\n"
    assert list((tmp_path / "node1").iterdir()) == []


def test_a_node_powered_on_again_can_be_cut_again(tmp_path, monkeypatch):
    monkeypatch.setattr(rig.time, "sleep", lambda s: None)
    for name in rig.NODES:
        (tmp_path / name).mkdir()
    guests = {"node1": FakeGuest(), "node2": FakeGuest(on_term=rig.run.POWER_CUT)}
    asks = [tmp_path / "kill-node2", tmp_path / "poweron-node2", tmp_path / "kill-node2", None]

    def boot(name):
        return FakeGuest(on_term=rig.run.POWER_CUT)

    killed, dead = rig.serve_power(guests, Initiator(asks), str(tmp_path), boot)
    assert (killed, dead) == ({"node2"}, set())
    assert (tmp_path / "killed-node2").exists()
    assert not (tmp_path / "powered-node2").exists()
    assert (tmp_path / "node2.boot1").is_dir()


def test_a_node_that_is_on_is_not_powered_on_at_its_next_cut(tmp_path, monkeypatch):
    monkeypatch.setattr(rig.time, "sleep", lambda s: None)
    for name in rig.NODES:
        (tmp_path / name).mkdir()
    guests = {"node1": FakeGuest(on_term=rig.run.POWER_CUT), "node2": FakeGuest()}
    asks = [tmp_path / "poweron-node1", tmp_path / "kill-node1", None]
    killed, dead = rig.serve_power(guests, Initiator(asks), str(tmp_path), no_boot)
    assert (killed, dead) == ({"node1"}, set())
    assert not (tmp_path / "poweron-node1").exists()
    assert not (tmp_path / "powered-node1").exists()


def test_the_rig_freezes_a_node_and_thaws_it_then_cuts_it_frozen(tmp_path, monkeypatch):
    monkeypatch.setattr(rig.time, "sleep", lambda s: None)
    for name in rig.NODES:
        (tmp_path / name).mkdir()
    first = FakeGuest(on_term=rig.run.POWER_CUT)
    guests = {"node1": FakeGuest(), "node2": first}
    seen, booted = [], []

    class Watching(Initiator):
        def poll(self):
            seen.append(sorted(p.name for p in tmp_path.glob("*-node2")))
            return super().poll()

    def boot(name):
        booted.append(FakeGuest())
        return booted[-1]

    asks = [tmp_path / "freeze-node2", tmp_path / "thaw-node2", tmp_path / "freeze-node2"]
    # a freeze asked while it is cut is not its next boot's
    asks += [tmp_path / "kill-node2", tmp_path / "freeze-node2", tmp_path / "poweron-node2"]
    killed, dead = rig.serve_power(guests, Watching([*asks, None]), str(tmp_path), boot)
    assert (killed, dead) == (set(), set())
    freeze, thaw, cut = signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM
    assert first.signals == [freeze, thaw, freeze, cut]
    assert guests["node2"] is booted[0] and booted[0].signals == []
    assert guests["node1"].signals == []
    # each answer replaces the other; asks are taken once
    assert seen[1:5] == [
        ["frozen-node2"],
        ["thawed-node2"],
        ["frozen-node2"],
        ["kill-node2", "killed-node2"],
    ]
    assert sorted(p.name for p in tmp_path.glob("*-node2")) == ["powered-node2"]


def test_the_rig_thaws_the_nodes_it_tells_to_end(tmp_path):
    for name in rig.NODES:
        (tmp_path / name).mkdir()
    guests = {"node1": FakeGuest(), "node2": FakeGuest()}
    rig.stop_nodes(guests, {"node1"}, str(tmp_path))
    assert guests["node1"].signals == [] and guests["node2"].signals == [signal.SIGUSR2]
    assert (tmp_path / "node2" / "exit").exists() and not (tmp_path / "node1" / "exit").exists()
