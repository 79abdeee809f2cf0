"""Two nodes as one device (vaai.pair, vaaictl pair): each node's half of
the ALUA layout as an initiator sees it over iSCSI, and what Standby
refuses.  Both halves live in this one guest, each on a target of its own
(a pair shares one IQN across two machines; one machine cannot hold it
twice), with the same unit serial, as two nodes would."""

import os
import struct
import subprocess

import pytest
from conftest import INITIATOR, SCRATCH, MiB, release_sd, sh, udev_probed
from scsi import (
    COPY_ABORTED,
    NOT_READY,
    attentions,
    cscd_e4,
    designators,
    expect_good,
    expect_sense,
    naa_of,
    read_blocks,
    report_target_port_groups,
    seg_b2b,
    sg_io,
    write_blocks,
    xcopy,
    xcopy_list,
)
from sense_codes import COPY_TARGET_NOT_REACHABLE
from vaai import VaaiStorageObject, config, pair
from vaai.errors import VaaiError
from vaai.export import find_disk, sg_of, unexport

SERIAL = "b1c2d3e4-f506-4718-8a9b-0c1d2e3f4a5b"
IQNS = {1: "iqn.2026-11.org.vaai:pair-node1", 2: "iqn.2026-11.org.vaai:pair-node2"}
AO, STANDBY, TRANSITIONING = 0, 2, 15
# SPC-4 6.36, the supported-states byte: T_SUP, S_SUP, AO_SUP
SUPPORTED = 0x80 | 0x04 | 0x01
TARGET_PORT_IN_STANDBY = (0x04, 0x0B)
ASYMMETRIC_ACCESS_STATE_CHANGED = (0x2A, 0x06)


class Half:
    """One node's half of a pair: its backstore, its target, the iSCSI
    disk this guest's initiator sees through the node's port."""

    def __init__(self, node, me):
        self.node = node
        self.iqn = IQNS[node]
        self.path = os.path.join(SCRATCH, f"pair{node}.img")
        self.so = VaaiStorageObject(f"pair{node}", path=self.path, size=16 * MiB, wwn=SERIAL)
        self.sg = None
        self.me = me

    def setup(self):
        return pair.setup(self.so, self.node, self.iqn, "127.0.0.1", initiators=[self.me])

    def login(self):
        sh(INITIATOR, "login", self.iqn)
        disk = find_disk(self.so, "iscsi_tcp", target=self.iqn)
        # udev's probe of the new disk reads it: done before a test
        # switches states, or a READ of the probe's takes the unit
        # attention the test looks for
        udev_probed(disk)
        self.sg = sg_of(disk)
        # then sd lets the device go: the test speaks SCSI through sg alone.
        # The kernel sends each 2Ah/06h it sees as a uevent, 60-block.rules
        # passes it on to the disk, and udev's blkid probe READ could take
        # the next state change's unit attention (CI, stop 50)
        release_sd(disk)

    def close(self):
        subprocess.run([INITIATOR, "logout", self.iqn], capture_output=True, check=False)
        unexport(self.so)
        self.so.delete()
        os.unlink(self.path)


@pytest.fixture
def halves():
    """halves(*nodes) -> [Half]: each node's half set up, active or not as
    setup leaves it, logged in to; all taken down afterwards."""
    sh(INITIATOR, "start")
    me = sh(INITIATOR, "name").strip()
    made = []

    def make(*nodes):
        for node in nodes:
            made.append(Half(node, me))
            made[-1].setup()
        return made

    yield make
    for h in reversed(made):
        h.close()


def by_id(groups):
    return {g["id"]: g for g in groups}


def test_a_new_half_is_standby_and_refuses_io(halves):
    (h,) = halves(1)
    h.login()
    _, res = attentions(h.sg)
    expect_sense(res, NOT_READY, *TARGET_PORT_IN_STANDBY)
    groups = by_id(report_target_port_groups(h.sg))
    assert sorted(groups) == [1, 2]
    assert [groups[n]["state"] for n in (1, 2)] == [STANDBY, STANDBY]
    # what Standby still answers (SPC-4 5.15.2.4.4): INQUIRY, READ CAPACITY
    assert naa_of(h.sg)
    expect_good(sg_io(h.sg, struct.pack(">BxxxxxxxxB", 0x25, 0), data_in_len=8))


def test_layout_is_the_same_from_both_nodes(halves):
    """What multipathing matches paths by: one NAA, each path's group and
    relative port in its VPD page, and the same groups and ports in both
    nodes' REPORT TARGET PORT GROUPS."""
    h1, h2 = halves(1, 2)
    pair.set_state(h1.so, "active")
    for h in (h1, h2):
        h.login()
        attentions(h.sg)
    assert naa_of(h1.sg) == naa_of(h2.sg)
    port = {}
    for h in (h1, h2):
        d = designators(h.sg)
        group = struct.unpack(">H", d[(1, 5)][2:4])[0]  # association port, type TPG
        rtpi = struct.unpack(">H", d[(1, 4)][2:4])[0]  # association port, type RTPI
        assert group == h.node
        port[h.node] = rtpi
    assert port[1] != port[2]
    views = {h.node: by_id(report_target_port_groups(h.sg)) for h in (h1, h2)}
    for view in views.values():
        assert sorted(view) == [1, 2]
        for n in (1, 2):
            assert view[n]["ports"] == [port[n]], view
            assert view[n]["supported"] == SUPPORTED
    # node 1 made active on node 1 only: node 2 has not been told
    assert [views[1][n]["state"] for n in (1, 2)] == [AO, STANDBY]
    assert [views[2][n]["state"] for n in (1, 2)] == [STANDBY, STANDBY]
    shown = pair.show(h2.so)
    assert shown["node"] == 2
    assert {n: g["ports"][0]["rtpi"] for n, g in shown["groups"].items()} == port


def test_switchover_between_states_keeps_data(halves):
    (h,) = halves(1)
    pair.set_state(h.so, "active")
    h.login()
    attentions(h.sg)
    data = os.urandom(64 * 512)
    expect_good(write_blocks(h.sg, 100, data, 512))

    pair.set_state(h.so, "standby")
    seen, res = attentions(h.sg)
    assert ASYMMETRIC_ACCESS_STATE_CHANGED in seen
    expect_sense(res, NOT_READY, *TARGET_PORT_IN_STANDBY)
    groups = by_id(report_target_port_groups(h.sg))
    assert [groups[n]["state"] for n in (1, 2)] == [STANDBY, AO]
    # a write refused in Standby changes nothing
    res = write_blocks(h.sg, 100, bytes(64 * 512), 512)
    expect_sense(res, NOT_READY, *TARGET_PORT_IN_STANDBY)
    # the copy engines too: EXTENDED COPY and POPULATE TOKEN, parsed by
    # the backend, are refused before they run
    for cdb in (
        struct.pack(">BB8xIxx", 0x83, 0x00, 0),
        struct.pack(">BB4xIIxx", 0x83, 0x10, 1, 0),
    ):
        expect_sense(sg_io(h.sg, cdb), NOT_READY, *TARGET_PORT_IN_STANDBY)

    pair.set_state(h.so, "active")
    seen, res = attentions(h.sg)
    assert ASYMMETRIC_ACCESS_STATE_CHANGED in seen
    expect_good(res)
    assert expect_good(read_blocks(h.sg, 100, 64, 512)).data == data


def test_setup_again_changes_nothing(halves):
    (h,) = halves(1)
    pair.set_state(h.so, "active")
    before = pair.show(h.so)
    assert h.setup() == before
    assert before["groups"][1]["state"] == "active/optimized"


def test_a_restored_half_is_the_half_saved(halves, tmp_path):
    """vaaictl's save and restore keep the groups, their ids, states and
    members; setup again puts back the relative port identifiers."""
    (h,) = halves(1)
    pair.set_state(h.so, "active")
    before = pair.show(h.so)
    saved = str(tmp_path / "saved.json")
    config.save(saved)
    unexport(h.so)
    h.so.delete()
    config.restore(saved)
    h.so = VaaiStorageObject(h.so.name)
    restored = pair.show(h.so)
    assert [restored["groups"][n]["state"] for n in (1, 2)] == ["active/optimized", "standby"]
    assert h.setup() == before


def test_pairs_share_the_target_a_lun_each(halves):
    """A machine's pairs are LUNs of one target: from Linux 6.4 on the
    relative port identifiers are one number space for the machine."""
    (h,) = halves(1)
    path = h.path + ".lun1"
    other = VaaiStorageObject("pair1b", path=path, size=MiB, wwn="a" + SERIAL[1:])
    try:
        pair.setup(other, 1, h.iqn, "127.0.0.1", initiators=[h.me], lun=1)
        mine, theirs = pair.show(h.so), pair.show(other)
        for n in (1, 2):
            assert theirs["groups"][n]["ports"][0]["lun"] == 1
            assert theirs["groups"][n]["ports"][0]["rtpi"] == mine["groups"][n]["ports"][0]["rtpi"]
    finally:
        unexport(other)
        other.delete()
        os.unlink(path)


def test_a_half_of_the_other_node_is_refused(halves):
    """Node 2's half here (its TPG enabled, with a portal): setting node
    1's up on the same target would cut it off; refused, nothing made."""
    (h,) = halves(2)
    other = VaaiStorageObject("pair2b", path=h.path + ".b", size=MiB, wwn="b" + SERIAL[1:])
    try:
        with pytest.raises(VaaiError, match=r"TPG 2 of .* is enabled here"):
            pair.setup(other, 1, h.iqn, "127.0.0.1", lun=1)
        assert not list(other.attached_luns)
        assert pair.show(h.so)["node"] == 2
    finally:
        other.delete()
        os.unlink(h.path + ".b")


def test_a_copy_reaches_no_standby_lun(halves):
    """A copy sent to an active LUN may not write a LUN whose port is in
    Standby here (another pair's, served by the other node): COPY TARGET
    NOT REACHABLE, nothing written; once that LUN is active here, the
    same copy goes through."""
    (h,) = halves(1)
    pair.set_state(h.so, "active")
    path = h.path + ".lun1"
    other = VaaiStorageObject("pair1c", path=path, size=16 * MiB, wwn="c" + SERIAL[1:])
    try:
        pair.setup(other, 1, h.iqn, "127.0.0.1", initiators=[h.me], lun=1)  # Standby
        h.login()
        other_sg = sg_of(find_disk(other, "iscsi_tcp", target=h.iqn))
        attentions(h.sg)
        data = os.urandom(64 * 512)
        expect_good(write_blocks(h.sg, 0, data, 512))
        params = xcopy_list(
            [cscd_e4(naa_of(h.sg), 512), cscd_e4(naa_of(other_sg), 512)],
            [seg_b2b(0, 1, 64, 0, 0)],
        )
        expect_sense(xcopy(h.sg, params), COPY_ABORTED, *COPY_TARGET_NOT_REACHABLE)
        pair.set_state(other, "active")
        attentions(other_sg)
        assert expect_good(read_blocks(other_sg, 0, 64, 512)).data == bytes(64 * 512)
        expect_good(xcopy(h.sg, params))
        assert expect_good(read_blocks(other_sg, 0, 64, 512)).data == data
    finally:
        unexport(other)
        other.delete()
        os.unlink(path)


def test_refusals(halves):
    (h,) = halves(1)
    with pytest.raises(VaaiError, match="node must be 1 or 2"):
        pair.setup(h.so, 3, h.iqn, "127.0.0.1")
    with pytest.raises(VaaiError, match="active or standby"):
        pair.set_state(h.so, "primary")
    other = VaaiStorageObject("pairless", path=h.path + ".2", size=MiB)
    try:
        with pytest.raises(VaaiError, match="not set up as a pair"):
            pair.set_state(other, "active")
    finally:
        other.delete()
        os.unlink(h.path + ".2")
