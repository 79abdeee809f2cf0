"""A pair's half over Fibre Channel (vaai.pair.setup_fc, vaaictl pair setup
--fabric fc): on LIO's FCoE target port of tests/guest/fabrics.py, seen by
the guest's own FCoE initiator.  A node cannot hold its peer's FC port, so
the peer's group is reported from attrib/alua_peer_ports
(target_core/vaai_rtpg.c); each node's half is checked in turn, as node 1
and as node 2."""

import os
import struct

import pytest
from conftest import SCRATCH, MiB, release_sd, udev_probed
from ctl import vaaictl
from scsi import (
    NOT_READY,
    attentions,
    designators,
    expect_good,
    expect_sense,
    read_blocks,
    report_target_port_groups,
    write_blocks,
)
from vaai import VaaiStorageObject, pair
from vaai.errors import VaaiError
from vaai.export import find_disk, sg_of

import fabrics

SERIAL = "c2d3e4f5-0617-4829-9bac-1d2e3f4a5b6c"
LUN = 200  # beside the fabric's own LUNs, which count from 0
AO, STANDBY = 0, 2
TARGET_PORT_IN_STANDBY = (0x04, 0x0B)
ASYMMETRIC_ACCESS_STATE_CHANGED = (0x2A, 0x06)


def rtpis():
    """{node: the relative port identifier of node's port}: settable from
    Linux 6.4 on (pair.SETTABLE_RTPI), the order of the exports before."""
    fc = fabrics.get("fc")
    if os.path.exists(os.path.join(fc.tpg.path, "rtpi")):
        return pair.SETTABLE_RTPI
    return {1: 1, 2: 2}


@pytest.fixture
def half():
    """half(node, cli=False) -> (storage object, disk, sg node): this
    guest as node's half of an FC pair, the LUN found on the FCoE
    initiator and sd released from it; taken down afterwards, the
    fabric's own target kept."""
    fc = fabrics.get("fc")
    path = os.path.join(SCRATCH, "pairfc.img")
    made = []

    def make(node, cli=False):
        so = VaaiStorageObject("pairfc", path=path, size=16 * MiB, wwn=SERIAL)
        made.append((so, []))
        args = (fc.target.wwn, [fabrics.sh(fabrics.FC_TOPOLOGY, "wwpn", "1")])
        if cli:
            vaaictl(
                *("pair", "pairfc", "setup", "--fabric", "fc", "--node", node),
                *("--wwpn", args[0], "--initiator", args[1][0], "--lun", LUN),
            )
        else:
            pair.setup_fc(so, node, *args, lun=LUN)
        fc.rescan()
        disk = find_disk(so, fc.driver, timeout=30)
        udev_probed(disk)
        made[-1][1].append(os.path.realpath(f"/sys/block/{os.path.basename(disk)}/device"))
        sg = sg_of(disk)
        # through sg alone: a udev probe READ could take the unit
        # attention a state change raises (test_pair.py)
        release_sd(disk)
        return so, disk, sg

    yield make
    for so, devices in made:
        for dev in devices:  # the SCSI device, sd released from it
            if os.path.exists(f"{dev}/delete"):
                with open(f"{dev}/delete", "w") as f:
                    f.write("1")
        if os.path.isdir(so.path):
            for lun in list(so.attached_luns):
                lun.delete()
            so.delete()
    if os.path.exists(path):
        os.unlink(path)


def groups_of(sg):
    return {g["id"]: g for g in report_target_port_groups(sg)}


@pytest.mark.parametrize("node", [1, 2])
def test_half_reports_both_groups_and_moves(half, node):
    peer = 3 - node
    ports = rtpis()
    so, _, sg = half(node, cli=node == 2)
    seen, res = attentions(sg)
    expect_sense(res, NOT_READY, *TARGET_PORT_IN_STANDBY)

    # this node's port as INQUIRY gives it; both groups, each its port
    d = designators(sg)
    assert struct.unpack(">H", d[(1, 5)][2:4])[0] == node  # target port group
    assert struct.unpack(">H", d[(1, 4)][2:4])[0] == ports[node]
    groups = groups_of(sg)
    assert sorted(groups) == [1, 2]
    assert {n: groups[n]["ports"] for n in (1, 2)} == {1: [ports[1]], 2: [ports[2]]}
    assert [groups[n]["state"] for n in (node, peer)] == [STANDBY, STANDBY]
    shown = pair.show(so)
    assert shown["node"] == node
    assert {n: [p["rtpi"] for p in g["ports"]] for n, g in shown["groups"].items()} == {
        1: [ports[1]],
        2: [ports[2]],
    }

    pair.set_state(so, "active")
    seen, res = attentions(sg)
    assert ASYMMETRIC_ACCESS_STATE_CHANGED in seen
    expect_good(res)
    groups = groups_of(sg)
    assert [groups[n]["state"] for n in (node, peer)] == [AO, STANDBY]
    data = os.urandom(32 * 512)
    expect_good(write_blocks(sg, 64, data, 512))

    pair.set_state(so, "standby")
    seen, res = attentions(sg)
    assert ASYMMETRIC_ACCESS_STATE_CHANGED in seen
    expect_sense(res, NOT_READY, *TARGET_PORT_IN_STANDBY)
    groups = groups_of(sg)
    assert [groups[n]["state"] for n in (node, peer)] == [STANDBY, AO]
    res = write_blocks(sg, 64, bytes(32 * 512), 512)
    expect_sense(res, NOT_READY, *TARGET_PORT_IN_STANDBY)

    pair.set_state(so, "active")
    attentions(sg)
    assert expect_good(read_blocks(sg, 64, 32, 512)).data == data

    # setup again changes nothing
    pair.setup_fc(so, node, fabrics.get("fc").target.wwn, [], lun=LUN)
    assert {n: groups_of(sg)[n]["ports"] for n in (1, 2)} == {1: [ports[1]], 2: [ports[2]]}


def test_fc_setup_refuses_iscsi_arguments():
    """--fabric fc with --iqn: refused before anything is made."""
    fc = fabrics.get("fc")
    path = os.path.join(SCRATCH, "pairfc-refused.img")
    so = VaaiStorageObject("pairfc", path=path, size=16 * MiB, wwn=SERIAL)
    try:
        rc, _, err = vaaictl(
            *("pair", "pairfc", "setup", "--fabric", "fc", "--node", 1),
            *("--wwpn", fc.target.wwn, "--iqn", "iqn.2026-11.org.vaai:x"),
            check=False,
        )
        assert rc == 1 and "--iqn" in err, err
        assert not list(so.attached_luns)
        assert [g.name for g in so.alua_tpgs] == ["default_tg_pt_gp"]
    finally:
        so.delete()
        os.unlink(path)


def test_fc_setup_on_a_port_not_here_leaves_nothing():
    path = os.path.join(SCRATCH, "pairfc-noport.img")
    so = VaaiStorageObject("pairfc", path=path, size=16 * MiB, wwn=SERIAL)
    try:
        with pytest.raises(VaaiError, match="no tcm_fc port"):
            pair.setup_fc(so, 1, "naa.2000000000000001", [], lun=LUN)
        assert not list(so.attached_luns)
        assert [g.name for g in so.alua_tpgs] == ["default_tg_pt_gp"]
        assert so.get_attribute("alua_peer_ports") == "none"
    finally:
        so.delete()
        os.unlink(path)


def test_a_port_serves_the_pairs_of_one_node_number(half):
    """From 6.4 on an FC port's TPG has one relative port number for all
    its LUNs: a port serving a pair as node 1 refuses to serve another
    as node 2, changing nothing.  Before 6.4 each device numbers its own
    exports, and the port serves both."""
    so, _, sg = half(1)
    fc = fabrics.get("fc")
    path = os.path.join(SCRATCH, "pairfc-other.img")
    other = VaaiStorageObject("pairfc2", path=path, size=16 * MiB, wwn=SERIAL[:-1] + "d")
    try:
        if os.path.exists(os.path.join(fc.tpg.path, "rtpi")):
            with pytest.raises(VaaiError, match="serves pairs where this machine is node 1"):
                pair.setup_fc(other, 2, fc.target.wwn, [], lun=LUN + 1)
            assert not list(other.attached_luns)
            assert other.get_attribute("alua_peer_ports") == "none"
            assert [g.name for g in other.alua_tpgs] == ["default_tg_pt_gp"]
            d = designators(sg)
            assert struct.unpack(">H", d[(1, 4)][2:4])[0] == pair.SETTABLE_RTPI[1]
        else:
            shown = pair.setup_fc(other, 2, fc.target.wwn, [], lun=LUN + 1)
            assert [p["rtpi"] for p in shown["groups"][2]["ports"]] == [2]
            assert [p["rtpi"] for p in pair.show(so)["groups"][1]["ports"]] == [1]
    finally:
        for lun in list(other.attached_luns):
            lun.delete()
        other.delete()
        os.unlink(path)
