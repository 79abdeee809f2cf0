"""REPORT TARGET PORT GROUPS with a peer node's ports (attrib/alua_peer_ports,
target_core/vaai_rtpg.c): what a Fibre Channel pair's node reports of the
port it cannot hold.  One LUN over tcm_loop in ALUA group node1 (id 1), an
empty group node2 (id 2) standing for the peer's."""

import errno
import os
import struct

import pytest
from conftest import SCRATCH
from rtslib_fb import ALUATargetPortGroup
from scsi import (
    ILLEGAL_REQUEST,
    UNIT_ATTENTION,
    designators,
    expect_good,
    expect_sense,
    report_target_port_groups,
    sg_io,
)
from sense_codes import INVALID_FIELD_IN_CDB

AO, STANDBY = 0, 2
PEER_RTPI = 0xA002


def rtpg_cdb(fmt, alloc_len):
    return struct.pack(">BBIIBB", 0xA3, fmt << 5 | 0x0A, 0, alloc_len, 0, 0)


@pytest.fixture
def grouped(exported):
    """(storage object, sg node, the export's relative port): the export
    in group node1, Active/Optimized; node2 empty, Standby."""
    so, sg = exported("peer", f"{SCRATCH}/peer.img", size=16 << 20)
    g1 = ALUATargetPortGroup(so, "node1", tag=1)
    g2 = ALUATargetPortGroup(so, "node2", tag=2)
    (lun,) = so.attached_luns
    lun.alua_tg_pt_gp_name = "node1"
    g1.alua_access_state = AO
    g2.alua_access_state = STANDBY
    rtpi = struct.unpack(">H", designators(sg)[(1, 4)][2:4])[0]
    taken(sg)
    return so, sg, rtpi


def taken(sg):
    """The unit attentions a change raised (INQUIRY DATA HAS CHANGED,
    ASYMMETRIC ACCESS STATE CHANGED), taken by TEST UNIT READY (which a
    Standby port then refuses)."""
    for _ in range(4):
        s = sg_io(sg, bytes(6)).decoded()
        if s is None or s.key != UNIT_ATTENTION:
            return
    raise AssertionError("unit attentions do not end")


def by_id(groups):
    return {g["id"]: g for g in groups}


def test_peer_group_is_reported_with_the_declared_port(grouped):
    so, sg, rtpi = grouped
    assert so.get_attribute("alua_peer_ports") == "none"
    # LIO's way: a group without a port here is not reported
    assert list(by_id(report_target_port_groups(sg))) == [1]

    so.set_attribute("alua_peer_ports", f"2:{PEER_RTPI:#x}")
    assert so.get_attribute("alua_peer_ports") == f"2:{PEER_RTPI}"
    groups = by_id(report_target_port_groups(sg))
    assert sorted(groups) == [1, 2]
    assert (groups[1]["state"], groups[1]["ports"]) == (AO, [rtpi])
    assert (groups[2]["state"], groups[2]["ports"]) == (STANDBY, [PEER_RTPI])

    # the peer's group takes its state from LIO's group, as the pair moves
    g1, g2 = (ALUATargetPortGroup(so, n) for n in ("node1", "node2"))
    g1.alua_access_state = STANDBY
    g2.alua_access_state = AO
    taken(sg)
    groups = by_id(report_target_port_groups(sg))
    assert [groups[n]["state"] for n in (1, 2)] == [STANDBY, AO]

    # ports declared for a group the device does not have: reported nowhere
    so.set_attribute("alua_peer_ports", "9:0xa009")
    assert list(by_id(report_target_port_groups(sg))) == [1]
    so.set_attribute("alua_peer_ports", "none")
    assert so.get_attribute("alua_peer_ports") == "none"
    assert list(by_id(report_target_port_groups(sg))) == [1]


def test_several_peer_ports(grouped):
    so, sg, _ = grouped
    so.set_attribute("alua_peer_ports", "2 :0xa002, 0XA004,010")
    assert so.get_attribute("alua_peer_ports") == "2:40962,40964,10"
    assert by_id(report_target_port_groups(sg))[2]["ports"] == [0xA002, 0xA004, 10]


def test_a_peer_port_this_node_holds_is_reported_once(grouped):
    """A port declared the peer's that is this node's own (its LUN's,
    here in group node1) stays in the group that holds it: a port in two
    groups would tell a host two states for one path.  A group left
    without a port is not reported at all."""
    so, sg, rtpi = grouped
    if not rtpi:
        # 6.4 on, a tcm_loop port is 0 (reserved) until its TPG is numbered
        (lun,) = so.attached_luns
        with open(os.path.join(lun.parent_tpg.path, "rtpi"), "w") as f:
            f.write("16")
        taken(sg)
        rtpi = struct.unpack(">H", designators(sg)[(1, 4)][2:4])[0]
        assert rtpi == 16
    so.set_attribute("alua_peer_ports", f"2:{rtpi},{PEER_RTPI:#x}")
    groups = by_id(report_target_port_groups(sg))
    assert (groups[1]["ports"], groups[2]["ports"]) == ([rtpi], [PEER_RTPI])
    so.set_attribute("alua_peer_ports", f"2:{rtpi}")
    groups = by_id(report_target_port_groups(sg))
    assert (list(groups), groups[1]["ports"]) == ([1], [rtpi])


@pytest.mark.parametrize(
    "bad",
    [
        "2",
        "2:",
        "x:1",
        "2:0",
        "2:65536",
        "70000:1",
        "2:1,1",
        "2:" + ",".join(map(str, range(1, 10))),
        "2:1;3",
        "2:0x",
        "0x:1",
        "2:-1",
        "1:" + "1" * 200,
    ],
)
def test_bad_peer_ports_change_nothing(grouped, bad):
    so, sg, _ = grouped
    so.set_attribute("alua_peer_ports", "2:0xa002")
    before = report_target_port_groups(sg)
    with pytest.raises(OSError) as e, open(f"{so.path}/attrib/alua_peer_ports", "w") as f:
        f.write(bad)
    assert e.value.errno == errno.EINVAL, e.value
    assert so.get_attribute("alua_peer_ports") == "2:40962"
    assert report_target_port_groups(sg) == before


def test_extended_header(grouped):
    """PARAMETER DATA FORMAT 001b: RETURN DATA LENGTH counts the header's
    bytes 4-7 too (n - 3), FORMAT TYPE 001b, the group's IMPLICIT
    TRANSITION TIME."""
    so, sg, rtpi = grouped
    so.set_attribute("alua_peer_ports", "2:0xa002")
    ALUATargetPortGroup(so, "node1").implicit_trans_secs = 7
    d = expect_good(sg_io(sg, rtpg_cdb(1, 256), data_in_len=256)).data
    assert struct.unpack(">I", d[:4])[0] == 4 + 2 * 12
    assert (d[4], d[5]) == (0x10, 7)
    assert struct.unpack(">H", d[8 + 2 : 8 + 4])[0] == 1
    assert struct.unpack(">H", d[8 + 8 + 2 : 8 + 12])[0] == rtpi
    assert struct.unpack(">H", d[20 + 8 + 2 : 20 + 12])[0] == PEER_RTPI


@pytest.mark.parametrize("fmt", range(2, 8))
def test_reserved_format_is_refused(grouped, fmt):
    _, sg, _ = grouped
    res = sg_io(sg, rtpg_cdb(fmt, 256), data_in_len=256)
    expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)


@pytest.mark.parametrize("alloc_len", [0, 1, 3, 4, 10, 27])
def test_short_allocation_length_cuts_the_data(grouped, alloc_len):
    """SPC-4 4.2.5.6: no error, the first bytes; RETURN DATA LENGTH still
    the whole data's."""
    so, sg, _ = grouped
    so.set_attribute("alua_peer_ports", "2:0xa002")
    full = expect_good(sg_io(sg, rtpg_cdb(0, 256), data_in_len=256)).data[:28]
    assert struct.unpack(">I", full[:4])[0] == 24
    res = expect_good(sg_io(sg, rtpg_cdb(0, alloc_len), data_in_len=alloc_len))
    assert bytes(res.data[:alloc_len]) == full[:alloc_len]
