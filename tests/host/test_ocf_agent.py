"""The pair's resource agent (ha/ocf/pair) on the host: its decisions
against a configfs tree made here and a vaaictl that only records what
it is asked (the guest suite runs it against LIO, test_ocf_pair.py)."""

import os
import shutil
import subprocess

import pytest

REPO = os.path.join(os.path.dirname(__file__), "..", "..")
AGENT = os.path.join(REPO, "ha", "ocf", "pair")
OCF_FUNCS = "/usr/lib/ocf/lib/heartbeat/ocf-shellfuncs"
IQN = "iqn.2026-11.org.vaai:pair"
ME, PEER = "node-me", "node-peer"
OCF_RUNNING_PROMOTED = 8


@pytest.fixture
def agent(tmp_path):
    """run(action, state=None, **params) -> (exit status, vaaictl calls):
    this machine node 2 (hosts "node-peer node-me"); state: None (no
    backstore), or {node: ALUA state} with this node's TPG (tpg: its
    configfs path, the iSCSI target's tpgt_2 by default) enabled or not
    (None: no enable file);
    online: what the backstore's info says of its device; stuck: its
    control cannot be written."""
    assert os.path.exists(OCF_FUNCS), "resource-agents is not installed: run tests/vm/deps.sh"
    cfs = tmp_path / "configfs"
    log = tmp_path / "calls"
    fake = tmp_path / "vaaictl"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    fake.chmod(0o755)

    def run(action, state=None, enabled=True, broken=(), online=1, stuck=False, tpg=None, **params):
        shutil.rmtree(cfs, ignore_errors=True)
        (cfs / "core").mkdir(parents=True)
        if state is not None:
            so = cfs / "core" / "vaai_0" / "ds1"
            so.mkdir(parents=True)
            (so / "info").write_text(f"Path: /dev/drbd0\nOnline: {online}\n")
            if stuck:
                (so / "control").mkdir()
            for n, s in state.items():
                g = cfs / "core" / "vaai_0" / "ds1" / "alua" / f"node{n}"
                g.mkdir(parents=True)
                if n in broken:  # neither read nor written, even by root
                    (g / "alua_access_state").mkdir()
                else:
                    (g / "alua_access_state").write_text(f"{s}\n")
            tpg = cfs / (tpg or f"iscsi/{IQN}/tpgt_2")
            (tpg / "lun" / "lun_0").mkdir(parents=True)  # the pair's LUN, 0
            if enabled is not None:  # None: a fabric whose TPGs have no enable
                (tpg / "enable").write_text("1\n" if enabled else "0\n")
        log.write_text("")
        env = dict(
            os.environ,
            __OCF_ACTION=action,
            OCF_ROOT="/usr/lib/ocf",
            VAAICTL=str(fake),
            VAAI_CONFIGFS=str(cfs),
            OCF_RESKEY_CRM_meta_on_node=ME,
            OCF_RESKEY_CRM_meta_interval="10000",
            OCF_RESKEY_backstore="ds1",
            OCF_RESKEY_path=str(tmp_path),  # exists
            OCF_RESKEY_serial="6f1e2d3c",
            OCF_RESKEY_iqn=IQN.upper(),
            OCF_RESKEY_hosts=f"{PEER} {ME}",
            OCF_RESKEY_portals="10.0.0.1 10.0.0.2:3261",
        )
        env.update({f"OCF_RESKEY_{k}": v for k, v in params.items()})
        p = subprocess.run([AGENT, action], env=env, capture_output=True, text=True, check=False)
        return p.returncode, log.read_text().splitlines()

    def states():
        """{node: ALUA state} as the last run left the groups."""
        groups = cfs / "core" / "vaai_0" / "ds1" / "alua"
        return {n: int((groups / f"node{n}" / "alua_access_state").read_text()) for n in (1, 2)}

    def control():
        """What the last run wrote to the backstore's control ('' for nothing)."""
        f = cfs / "core" / "vaai_0" / "ds1" / "control"
        return f.read_text() if f.is_file() else ""

    run.control = control
    run.path = str(tmp_path)
    run.states = states
    run.configfs = cfs
    return run


AO, S = 0, 2


@pytest.mark.parametrize(
    "state, enabled, rc",
    [(None, True, 7), ({1: S, 2: AO}, True, 8), ({1: AO, 2: S}, True, 0), ({1: S, 2: S}, False, 1)],
)
def test_monitor_reads_this_nodes_group(agent, state, enabled, rc):
    assert agent("monitor", state, enabled) == (rc, [])


def test_a_probe_outside_hosts_finds_nothing_of_ours(agent):
    got = agent("monitor", {1: AO, 2: S}, hosts="node-a node-b", CRM_meta_interval="0")
    assert got == (7, [])


def test_start_sets_up_node_2_with_its_portal(agent):
    rc, calls = agent("start", initiators="iqn.x:esx1 iqn.x:esx2")
    assert rc == 0
    want = (
        f"pair ds1 setup --node 2 --iqn {IQN.upper()} --ip 10.0.0.2 --port 3261 --lun 0 "
        f"--path {agent.path} --wwn 6f1e2d3c --initiator iqn.x:esx1 --initiator iqn.x:esx2"
    )
    assert calls == [want]
    assert agent("start", {1: AO, 2: S}) == (0, [])  # running: nothing to do


FC = {"fabric": "fc", "wwpns": "naa.2000000000000001 NAA.20000000000000AB"}
FC_TPG = "{}/20:00:00:00:00:00:00:ab/tpgt_1"


def test_start_sets_up_an_fc_node_on_its_port(agent):
    rc, calls = agent("start", initiators="naa.2100000000000001", fc_driver="tcm_fc", **FC)
    assert rc == 0
    want = (
        "pair ds1 setup --node 2 --fabric fc --wwpn NAA.20000000000000AB --driver tcm_fc "
        f"--lun 0 --path {agent.path} --wwn 6f1e2d3c --initiator naa.2100000000000001"
    )
    assert calls == [want]


@pytest.mark.parametrize(
    "driver, enabled, rc",
    [("qla2xxx", True, 8), ("qla2xxx", False, 1), ("tcm_fc", None, 8), ("tcm_fc", True, 8)],
)
def test_monitor_finds_an_fc_node_on_its_port(agent, driver, enabled, rc):
    state = {1: S, 2: AO}
    where = {"qla2xxx": "qla2xxx", "tcm_fc": "fc"}  # LIO's configfs names
    got = agent("monitor", state, enabled, tpg=FC_TPG.format(where[driver]), fc_driver=driver, **FC)
    assert got == (rc, [])
    # the port holding LUN 0 only, the pair's LUN 7 not there (an FC port
    # serves other LUNs too)
    tpg = FC_TPG.format(where[driver])
    got = agent("monitor", state, enabled, tpg=tpg, fc_driver=driver, lun="7", **FC)
    assert got == (1 if rc == OCF_RUNNING_PROMOTED else rc, [])
    # the port of another fabric module is not this one's
    other = where["tcm_fc" if driver == "qla2xxx" else "qla2xxx"]
    got = agent("monitor", state, enabled, tpg=FC_TPG.format(other), fc_driver=driver, **FC)
    assert got == (1, [])


@pytest.mark.parametrize(
    "params",
    [
        {"fabric": "fcoe"},
        {"fabric": "fc"},
        {"fabric": "fc", "wwpns": "naa.2000000000000001"},
        {"fabric": "fc", "wwpns": "naa.2000000000000001 20:00:00:00:00:00:00:02"},
        dict(FC, fc_driver="lpfc"),
        dict(FC, chap_file="/etc/vaai/chap"),
        {"fabric": "iscsi", "portals": ""},
    ],
)
def test_validate_refuses_a_fabric_half_given(agent, params):
    assert agent("validate-all", **params) == (6, [])


def test_validate_takes_fc_without_iscsi_parameters(agent):
    assert agent("validate-all", iqn="", portals="", **FC) == (0, [])


@pytest.mark.parametrize(
    "action, state, after",
    [
        ("promote", {1: S, 2: S}, {1: S, 2: AO}),  # as a start leaves them
        ("promote", {1: AO, 2: S}, {1: S, 2: AO}),
        ("promote", {1: S, 2: AO}, {1: S, 2: AO}),
        ("demote", {1: S, 2: AO}, {1: AO, 2: S}),
        ("demote", {1: AO, 2: S}, {1: AO, 2: S}),
    ],
)
def test_promote_and_demote_write_both_groups(agent, action, state, after):
    # no vaaictl: its start would cost seconds of every promotion's pause
    assert agent(action, state) == (0, [])
    assert agent.states() == after


def test_an_active_group_with_its_device_closed_is_an_error(agent):
    assert agent("monitor", {1: S, 2: AO}, online=0)[0] == 1
    assert agent("monitor", {1: AO, 2: S}, online=0)[0] == 0


def test_single_primary_standby_with_its_device_open_is_an_error(agent):
    # DRBD could not be demoted beneath it
    assert agent("monitor", {1: AO, 2: S}, online=1, single_primary="true")[0] == 1
    assert agent("monitor", {1: AO, 2: S}, online=0, single_primary="true")[0] == 0
    assert agent("monitor", {1: AO, 2: S}, online=1)[0] == 0  # dual-primary: open


def test_single_primary_start_leaves_the_device_closed(agent):
    rc, calls = agent("start", single_primary="true")
    assert rc == 0 and calls[0].endswith(" --closed"), calls


@pytest.mark.parametrize(
    "action, online, after, wrote",
    [
        ("promote", 0, {1: S, 2: AO}, "online=1"),  # opened, then active
        ("promote", 1, {1: S, 2: AO}, ""),  # open already
        ("demote", 1, {1: AO, 2: S}, "online=0"),  # standby, then closed
        ("demote", 0, {1: AO, 2: S}, ""),
    ],
)
def test_single_primary_opens_on_promote_and_closes_on_demote(agent, action, online, after, wrote):
    state = {1: S, 2: AO} if action == "demote" else {1: AO, 2: S}
    assert agent(action, state, online=online, single_primary="true") == (0, [])
    assert agent.states() == after
    assert agent.control().strip() == wrote


@pytest.mark.parametrize(
    "action, online, wrote",
    [
        ("promote", 0, "online=1"),  # active, its device closed: opened
        ("demote", 1, "online=0"),  # standby, left open by a killed demote: closed
        ("demote", 0, ""),
    ],
)
def test_single_primary_puts_the_device_right_for_a_half_already_so(agent, action, online, wrote):
    state = {1: S, 2: AO} if action == "promote" else {1: AO, 2: S}
    assert agent(action, state, online=online, single_primary="true") == (0, [])
    assert agent.states() == state
    assert agent.control().strip() == wrote


def test_single_primary_promote_that_cannot_open_changes_no_group(agent):
    rc, _ = agent("promote", {1: AO, 2: S}, online=0, stuck=True, single_primary="true")
    assert rc == 1
    assert agent.states() == {1: AO, 2: S}


def test_single_primary_demote_that_cannot_close_fails_standby(agent):
    rc, _ = agent("demote", {1: S, 2: AO}, stuck=True, single_primary="true")
    assert rc == 1
    assert agent.states() == {1: AO, 2: S}  # standby: no writes come here


def test_the_peers_group_is_written_first(agent):
    # node 1's group cannot be written: this node's (2) is left as it was
    rc, _ = agent("promote", {1: AO, 2: S}, broken=(1,))
    assert rc == 1
    groups = agent.configfs / "core" / "vaai_0" / "ds1" / "alua"
    assert (groups / "node2" / "alua_access_state").read_text() == f"{S}\n"
    # a notification that cannot show the peer active does not fail
    post = {"CRM_meta_notify_type": "post", "CRM_meta_notify_operation": "promote"}
    rc, _ = agent("notify", {1: S, 2: S}, broken=(1,), CRM_meta_notify_promote_uname=PEER, **post)
    assert rc == 0


def test_promote_of_a_stopped_instance_is_not_running(agent):
    assert agent("promote", None)[0] == 7


@pytest.mark.parametrize(
    "env, peers",
    [
        # the peer promoted while ours shows it Standby: show it active
        ({"notify_promote_uname": PEER}, AO),
        ({"notify_promoted_uname": PEER}, AO),
        ({"notify_master_uname": PEER}, AO),
        # promoted before, demoted or stopped in this transition: not promoted
        ({"notify_promoted_uname": PEER, "notify_demote_uname": PEER}, S),
        ({"notify_promoted_uname": PEER, "notify_stop_uname": PEER}, S),
        # nobody, or this node
        ({}, S),
        ({"notify_promote_uname": ME}, S),
    ],
)
def test_notify_after_a_promotion(agent, env, peers):
    params = {"CRM_meta_notify_type": "post", "CRM_meta_notify_operation": "promote"}
    params.update({f"CRM_meta_{k}": v for k, v in env.items()})
    assert agent("notify", {1: S, 2: S}, **params) == (0, [])
    assert agent.states() == {1: peers, 2: S}


def test_notify_leaves_a_peer_shown_active_and_pre_notifications(agent):
    post = {"CRM_meta_notify_type": "post", "CRM_meta_notify_operation": "promote"}
    assert agent("notify", {1: AO, 2: S}, CRM_meta_notify_promote_uname=PEER, **post) == (0, [])
    assert agent.states() == {1: AO, 2: S}
    pre = {"CRM_meta_notify_type": "pre", "CRM_meta_notify_operation": "promote"}
    assert agent("notify", {1: S, 2: S}, CRM_meta_notify_promote_uname=PEER, **pre) == (0, [])
    assert agent.states() == {1: S, 2: S}


def test_stop(agent):
    assert agent("stop", None) == (0, [])
    assert agent("stop", {1: AO, 2: S}, path="/dev/gone") == (0, ["pair ds1 teardown"])
    # not one of the pair's nodes: the backstore of that name is another's
    assert agent("stop", {1: AO, 2: S}, hosts="node-a node-b") == (0, [])
