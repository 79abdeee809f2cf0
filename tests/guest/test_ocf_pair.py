"""The pair's Pacemaker resource agent (ha/ocf/pair), outside a cluster:
Pacemaker's own ocf-tester, then each action's effect on what an
initiator would be served."""

import glob
import os
import subprocess

import loopdev
import pytest
from conftest import SCRATCH, MiB
from ctl import REPO
from vaai import VaaiStorageObject, pair
from vaai.storage import MODULE

import fabrics

AGENT = os.path.join(REPO, "ha", "ocf", "pair")
OCF_SUCCESS, OCF_ERR_INSTALLED, OCF_ERR_CONFIGURED = 0, 5, 6
OCF_NOT_RUNNING, OCF_RUNNING_PROMOTED = 7, 8
SERIAL = "c0ffee00-1234-4567-89ab-cdef01234567"


@pytest.fixture
def agent(tmp_path):
    """run(action, **params) -> (exit status, output): the agent with
    this tree's vaaictl and a 16 MiB file for the LUN, this machine node 1
    of hosts; what the agent left running is stopped afterwards."""
    assert os.path.isdir(f"/sys/module/{MODULE}")
    vaaictl = tmp_path / "vaaictl"
    vaaictl.write_text(f'#!/bin/sh\nPYTHONPATH={REPO}/python exec /usr/bin/python3 -m vaai "$@"\n')
    vaaictl.chmod(0o755)
    path = os.path.join(SCRATCH, "ocf-pair.img")
    with open(path, "wb") as f:
        f.truncate(16 * MiB)
    params = {
        "backstore": "ocfpair",
        "path": path,
        "serial": SERIAL,
        # LIO keeps it in lower case: the monitor must find it all the same
        "iqn": "iqn.2026-11.org.vaai:OCF-pair",
        "hosts": f"{os.uname().nodename} peer-node",
        "portals": "127.0.0.1 192.0.2.2:3260",
    }
    env = dict(os.environ, VAAICTL=str(vaaictl), OCF_ROOT="/usr/lib/ocf")

    def run(action, **more):
        e = dict(env, __OCF_ACTION=action)
        e.update({f"OCF_RESKEY_{k}": v for k, v in {**params, **more}.items()})
        p = subprocess.run([AGENT, action], capture_output=True, text=True, env=e, check=False)
        return p.returncode, p.stdout + p.stderr

    run.params, run.env = params, env
    yield run
    run("demote")
    run("stop")
    os.unlink(path)


def test_ocf_tester_passes(agent):
    argv = ["ocf-tester", "-n", "vaai-pair"]
    for k, v in agent.params.items():
        argv += ["-o", f"{k}={v}"]
    p = subprocess.run([*argv, AGENT], capture_output=True, text=True, env=agent.env, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "passed all tests" in p.stdout


def test_actions_and_what_they_leave(agent):
    """One instance through its life (each start costs a vaaictl, seconds
    in this guest): what each action leaves in LIO."""
    assert agent("monitor")[0] == OCF_NOT_RUNNING
    rc, out = agent("start")
    assert rc == OCF_SUCCESS, out
    assert agent("start")[0] == OCF_SUCCESS  # started already: nothing to do
    so = VaaiStorageObject("ocfpair")
    assert so.wwn == SERIAL
    shown = pair.show(so)
    assert shown["node"] == 1
    assert [shown["groups"][n]["state"] for n in (1, 2)] == ["standby", "standby"]
    assert agent("monitor")[0] == OCF_SUCCESS

    # a standby instance told the peer was promoted reports the peer's
    # group Active/Optimized (hosts take every group's state from any path)
    rc, _ = agent(
        "notify",
        CRM_meta_notify_type="post",
        CRM_meta_notify_operation="promote",
        CRM_meta_notify_promote_uname="peer-node",
    )
    assert rc == OCF_SUCCESS
    shown = pair.show(so)
    assert [shown["groups"][n]["state"] for n in (1, 2)] == ["standby", "active/optimized"]

    assert agent("promote")[0] == OCF_SUCCESS
    assert agent("monitor")[0] == OCF_RUNNING_PROMOTED
    shown = pair.show(so)
    assert [shown["groups"][n]["state"] for n in (1, 2)] == ["active/optimized", "standby"]
    assert shown["groups"][1]["ports"][0]["enabled"]
    assert not shown["groups"][2]["ports"][0]["enabled"]

    assert agent("demote")[0] == OCF_SUCCESS
    assert agent("monitor")[0] == OCF_SUCCESS
    # on a node outside hosts a backstore of that name is another's: a
    # probe finds nothing of ours, a stop leaves it
    assert agent("monitor", hosts="node-a node-b", CRM_meta_interval="0")[0] == OCF_NOT_RUNNING
    assert agent("stop", hosts="node-a node-b")[0] == OCF_SUCCESS
    assert glob.glob("/sys/kernel/config/target/core/*/ocfpair")
    # no stop fails (and gets the node fenced) over what teardown does
    # not need: its device gone
    rc, out = agent("stop", path="/dev/gone")
    assert rc == OCF_SUCCESS, out
    assert agent("monitor")[0] == OCF_NOT_RUNNING
    # stopped: the backstore (and with it the device) and the target gone
    assert not glob.glob("/sys/kernel/config/target/core/*/ocfpair")
    assert not os.path.exists(f"/sys/kernel/config/target/iscsi/{agent.params['iqn'].lower()}")
    assert agent("stop", path="/dev/gone")[0] == OCF_SUCCESS


def test_a_node_outside_hosts_is_refused(agent):
    # this node alone: ERR_CONFIGURED would stop the clone everywhere
    rc, out = agent("validate-all", hosts="node-a node-b")
    assert rc == OCF_ERR_INSTALLED
    assert "is not in hosts" in out
    rc, out = agent("validate-all", hosts=f"{os.uname().nodename} {os.uname().nodename}")
    assert rc == OCF_ERR_CONFIGURED
    rc, out = agent("start", portals="127.0.0.1")
    assert rc == OCF_ERR_CONFIGURED
    assert "two portals" in out
    assert agent("monitor")[0] == OCF_NOT_RUNNING


def test_single_primary_opens_the_device_only_while_promoted(agent):
    """DRBD single-primary: started, the half exports the LUN with its
    device closed (DRBD's secondary could not be opened); promoted, it
    opens it before its group goes active; demoted, it closes it once
    the group is standby, so that DRBD can be demoted."""
    dev = loopdev.attach(agent.params["path"])
    try:
        rc, out = agent("start", path=dev, single_primary="true")
        assert rc == OCF_SUCCESS, out
        so = VaaiStorageObject("ocfpair")
        assert not so.online and not loopdev.claimed(dev)
        assert agent("monitor", path=dev, single_primary="true")[0] == OCF_SUCCESS

        rc, out = agent("promote", path=dev, single_primary="true")
        assert rc == OCF_SUCCESS, out
        assert so.online and loopdev.claimed(dev)
        shown = pair.show(so)
        assert [shown["groups"][n]["state"] for n in (1, 2)] == ["active/optimized", "standby"]
        assert agent("monitor", path=dev, single_primary="true")[0] == OCF_RUNNING_PROMOTED

        rc, out = agent("demote", path=dev, single_primary="true")
        assert rc == OCF_SUCCESS, out
        assert not so.online and not loopdev.claimed(dev)
        shown = pair.show(so)
        assert [shown["groups"][n]["state"] for n in (1, 2)] == ["standby", "active/optimized"]
        assert agent("monitor", path=dev, single_primary="true")[0] == OCF_SUCCESS

        # an active half whose device was closed behind the agent's back
        agent("promote", path=dev, single_primary="true")
        so.set_online(False)
        assert agent("monitor", path=dev, single_primary="true")[0] not in (
            OCF_SUCCESS,
            OCF_RUNNING_PROMOTED,
        )
        assert agent("stop", path=dev)[0] == OCF_SUCCESS
        assert not glob.glob("/sys/kernel/config/target/core/*/ocfpair")
    finally:
        agent("stop", path=dev)
        loopdev.detach(dev)


@pytest.fixture
def fc_port():
    """The guest's FCoE target port (tests/guest/fabrics.py) as an FC
    pair's node 1 sees it: (its WWPN, the initiator port's), with a LUN
    of its own kept on it meanwhile, so that the agent's stop (which
    removes targets left without a LUN) leaves the fabric's target."""
    fc = fabrics.get("fc")
    path = os.path.join(SCRATCH, "ocf-fc-keep.img")
    keep = VaaiStorageObject("ocfkeep", path=path, size=MiB)
    disk = fc.export(keep)
    yield fc.target.wwn, fabrics.sh(fabrics.FC_TOPOLOGY, "wwpn", "1")
    fc.unexport(keep, disk)
    keep.delete()
    os.unlink(path)


def test_ocf_tester_passes_over_fc(agent, fc_port):
    """fabric=fc: ocf-tester, then the half on this node's FC port."""
    wwpn, initiator = fc_port
    fc = {
        "fabric": "fc",
        "wwpns": f"{wwpn} naa.2000000000000099",
        "fc_driver": "tcm_fc",
        "initiators": initiator,
        "lun": "201",
    }
    params = {k: v for k, v in agent.params.items() if k not in ("iqn", "portals")}
    params.update(fc)
    argv = ["ocf-tester", "-n", "vaai-pair-fc"]
    for k, v in params.items():
        argv += ["-o", f"{k}={v}"]
    p = subprocess.run([*argv, AGENT], capture_output=True, text=True, env=agent.env, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "passed all tests" in p.stdout

    try:
        fc_half(agent, fc)
    finally:  # before fc_port's teardown takes its LUN off the target
        agent("stop", iqn="", portals="", **fc)


def fc_half(agent, fc):
    rc, out = agent("start", iqn="", portals="", **fc)
    assert rc == OCF_SUCCESS, out
    assert agent("monitor", iqn="", portals="", **fc)[0] == OCF_SUCCESS
    rc, out = agent("promote", iqn="", portals="", **fc)
    assert rc == OCF_SUCCESS, out
    assert agent("monitor", iqn="", portals="", **fc)[0] == OCF_RUNNING_PROMOTED
    shown = pair.show(VaaiStorageObject("ocfpair"))
    assert shown["node"] == 1
    assert [shown["groups"][n]["state"] for n in (1, 2)] == ["active/optimized", "standby"]
    assert [p["target"] for p in shown["groups"][2]["ports"]] == [None]  # the peer's, declared
    assert agent("demote", iqn="", portals="", **fc)[0] == OCF_SUCCESS
    assert agent("stop", iqn="", portals="", **fc)[0] == OCF_SUCCESS
    assert not glob.glob("/sys/kernel/config/target/core/*/ocfpair")
    assert os.path.isdir(os.path.join(fabrics.get("fc").tpg.path, "lun"))
