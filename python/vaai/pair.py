"""One vaai LUN served by two nodes as one device, through ALUA.

Each node of the pair holds the same layout: one iSCSI target (the same
IQN on both), with a target portal group per node (tag 1 for node 1,
tag 2 for node 2), the backstore exported as the same LUN in both, and
an ALUA target port group per node (node1, id 1; node2, id 2) holding
that node's export.  Only the local TPG is enabled and has a portal; the
peer's is there so that REPORT TARGET PORT GROUPS, which lists only
groups with a member on the answering node, names both paths.  The
relative target port identifier of node N's port is the same on both
nodes: N before Linux 6.4, SETTABLE_RTPI[N] from then on, where it is
one number space for the machine: a machine's pairs where it is node N
share one target, each pair a LUN of it.

The state is implicit ALUA (the target decides, an initiator's SET
TARGET PORT GROUPS is refused, and Linux's scsi_dh_alua sends none):
the active node's group Active/Optimized, the other's Standby, written
on each node as that node sees the pair.  Commands reaching a Standby
port are refused by LIO core (NOT READY, LOGICAL UNIT NOT ACCESSIBLE,
TARGET PORT IN STANDBY STATE) but INQUIRY, READ CAPACITY, REPORT TARGET
PORT GROUPS and the like; every session on the changed port gets the
unit attention ASYMMETRIC ACCESS STATE CHANGED.

Over Fibre Channel (setup_fc) a node cannot hold its peer's port: each
node exports the LUN on its own target port (TPG 1) in its own group,
the peer's group is made without a member, and the backend reports the
peer's port in it (attrib/alua_peer_ports, target_core/vaai_rtpg.c).

What the two nodes must agree on is the admin's: the same IQN and LUN,
the same unit serial (vaaictl create --wwn: the NAA designator is made
from it) and the same capacity.  The data beneath (a shared disk, DRBD)
and who is active (Pacemaker) are not this module's.
"""

import contextlib
import glob
import os

from rtslib_fb import TPG, ALUATargetPortGroup, NetworkPortal
from rtslib_fb.utils import RTSLibError

from . import made
from .errors import VaaiError
from .export import fc_lun
from .profiles import iscsi_tpg

NODES = (1, 2)
# ALUA access states as configfs takes them (SPC-4's codes)
ACTIVE_OPTIMIZED = 0
STANDBY = 2
STATES = {"active": ACTIVE_OPTIMIZED, "standby": STANDBY}
STATE_NAMES = {
    0: "active/optimized",
    1: "active/non-optimized",
    2: "standby",
    3: "unavailable",
    14: "offline",
    15: "transitioning",
}
# what a group may be in: the two states and the step between them
SUPPORTED = {
    "alua_support_active_optimized": 1,
    "alua_support_standby": 1,
    "alua_support_transitioning": 1,
    "alua_support_active_nonoptimized": 0,
    "alua_support_unavailable": 0,
    "alua_support_offline": 0,
}
IMPLICIT = 1  # alua_access_type: the target alone changes states


def group_name(node):
    return f"node{node}"


def _check_node(node):
    if node not in NODES:
        raise VaaiError(f"node must be 1 or 2, not {node}")
    return 3 - node


def _group(so, node):
    """so's ALUA group of node, made with id node if missing."""
    try:
        g = ALUATargetPortGroup(so, group_name(node))
    except RTSLibError:
        g = ALUATargetPortGroup(so, group_name(node), tag=node)
    if g.tg_pt_gp_id != node:
        raise VaaiError(
            f"ALUA group {g.name} of {so.name} has id {g.tg_pt_gp_id}, not {node}; "
            "delete it (targetcli) and run this again"
        )
    return g


def _settle_group(g, state):
    """g as the pair keeps it; state the new group's first (a group that
    existed keeps its state)."""
    for name, value in SUPPORTED.items():
        if int(getattr(g, name)) != value:
            setattr(g, name, value)
    if g.alua_access_type != IMPLICIT:
        g.alua_access_type = IMPLICIT
    if g.nonop_delay_msecs != 0:
        g.nonop_delay_msecs = 0
    if state is not None:
        g.alua_access_state = state


def _made_groups(created, so):
    """Both nodes' ALUA groups of so as the pair keeps them, those made
    here remembered in created and Standby."""
    for n in NODES:
        had = _has_group(so, n)
        g = _group(so, n)
        if not had:
            created.append(g)
        _settle_group(g, None if had else STANDBY)


def _rtpi_path(tpg):
    return os.path.join(tpg.path, "rtpi")


def port_id(tpg_lun):
    """The relative target port identifier hosts see for tpg_lun: the
    SCSI port's index in its statistics (per export before Linux 6.4, per
    TPG from then on)."""
    with open(os.path.join(tpg_lun.path, "statistics", "scsi_port", "indx")) as f:
        return int(f.read().strip(), 0)


# Where an admin may choose the identifiers (Linux 6.4 on), they are one
# space for every enabled TPG of every fabric on the machine, and the
# kernel hands the lowest free ones to the TPGs nobody numbered: the
# pair's ports take two from far above those.
SETTABLE_RTPI = {1: 0xA001, 2: 0xA002}


def _rtpis(tpgs):
    """{node: the relative port identifier node's port must have}, for
    the pair's TPGs here."""
    settable = all(os.path.exists(_rtpi_path(tpg)) for tpg in tpgs)
    return SETTABLE_RTPI if settable else {n: n for n in NODES}


def _set_rtpi(tpg, rtpi):
    """Give tpg relative port identifier rtpi where the kernel lets an
    admin choose it (tpgt_N/rtpi, Linux 6.4 on), disabling it meanwhile
    if it is enabled with another.  Before 6.4 the identifier is the
    order the device's exports were made in, checked by setup()."""
    path = _rtpi_path(tpg)
    if not os.path.exists(path):
        return
    old = _rtpi_of(tpg)
    if old == rtpi:
        return
    was = tpg.enable
    if was:
        tpg.enable = False
    with open(path, "w") as f:
        f.write(str(rtpi))
    if was:
        try:
            tpg.enable = True
        except RTSLibError as e:
            # as it was: its other LUNs served again
            with open(path, "w") as f:
                f.write(str(old))
            tpg.enable = True
            raise VaaiError(_busy(tpg, rtpi, e))


def setup(so, node, iqn, ip, port=3260, initiators=(), lun=0, chap=None, profile="esxi"):
    """Make (or complete) this node's half of the pair for so: both TPGs,
    both exports, both ALUA groups.  A group made here starts Standby: the
    node serves nothing until `state` makes it active.  What exists is
    kept and checked; on failure what this call made is removed again."""
    peer = _check_node(node)
    fm = made.fabric("iscsi")
    created = []
    try:
        target = made.target(created, fm, iqn)
        tpgs = {}
        for n in NODES:
            tpgs[n] = made.get_or_make(
                created,
                lambda n=n: TPG(target, n, mode="lookup"),
                lambda n=n: TPG(target, n, mode="create"),
            )
            if tpgs[n] in created:
                params, attrs = iscsi_tpg(profile)
                for k, v in params.items():
                    tpgs[n].set_parameter(k, v)
                for k, v in attrs.items():
                    tpgs[n].set_attribute(k, v)
        if tpgs[peer].enable or list(tpgs[peer].network_portals):
            raise VaaiError(
                f"TPG {peer} of {target.wwn} is enabled here or has a portal: this machine "
                f"is node {peer} of that target's pairs; a machine's pairs where it is "
                f"node {node} need a target of their own"
            )
        for n in NODES:
            # CHAP on when asked (for every pair of the TPG); a TPG that
            # existed keeps what it had
            if chap or tpgs[n] in created:
                tpgs[n].set_attribute("authentication", "1" if chap else "0")
        # the portal before any export: a wrong address fails before the
        # device's ports are numbered (before Linux 6.4, for good)
        made.get_or_make(
            created,
            lambda: NetworkPortal(tpgs[node], ip, port, mode="lookup"),
            lambda: NetworkPortal(tpgs[node], ip, port, mode="create"),
        )
        _made_groups(created, so)
        luns = {}
        for n in NODES:  # node 1's export first: its port is 1 before Linux 6.4
            luns[n] = made.lun(created, tpgs[n], lun, so)
            if luns[n].alua_tg_pt_gp_name != group_name(n):
                luns[n].alua_tg_pt_gp_name = group_name(n)
            for name in initiators:
                acl = made.mapped(created, tpgs[n], name, lun, luns[n])
                if chap:
                    acl.chap_userid, acl.chap_password = chap
        rtpi = _rtpis(tpgs.values())
        for n in NODES:
            _set_rtpi(tpgs[n], rtpi[n])
        try:
            tpgs[node].enable = True
        except RTSLibError as e:
            raise VaaiError(_busy(tpgs[node], rtpi[node], e))
        for n in NODES:
            if port_id(luns[n]) != rtpi[n]:
                raise VaaiError(
                    f"{so.name}'s export in TPG {n} has relative port {port_id(luns[n])}, "
                    f"not {rtpi[n]}: on this kernel the ports are numbered in the order a "
                    "device's exports are made, from 1 for the device's first: delete the "
                    "backstore (vaaictl delete; the data stays), create it again and set "
                    "the pair up first"
                )
    except (RTSLibError, VaaiError, OSError) as e:
        raise made.rolled_back(created, e, f"{so.name} as node {node} of a pair")
    return show(so)


def setup_fc(so, node, wwpn, initiators=(), lun=0, fabric="tcm_fc"):
    """This node's half of a pair over Fibre Channel: so exported on the
    local port wwpn (TPG 1) in this node's ALUA group, the peer's group
    made without a member and its port declared to the backend
    (attrib/alua_peer_ports), since a node cannot hold a target for a
    port it does not have.  Node N's port is relative port N before
    Linux 6.4 (node 2's export made after a first one, taken back, so
    that the device numbers it 2), SETTABLE_RTPI[N] from then on: one
    number for the port's TPG, which every LUN on it shares, so a port
    serves the pairs this machine is node N of.  The LUN is in its group,
    numbered and the peer's port declared before an initiator is mapped
    to it: a host that scans meanwhile never sees it otherwise.  As
    setup(): a new group starts Standby, what exists is kept and checked,
    and a failure removes what this call made and renumbers the port as
    it was."""
    peer = _check_node(node)
    created, was = [], {}
    try:
        _made_groups(created, so)

        def export(tpg):
            rtpi = _rtpis([tpg])
            if os.path.exists(_rtpi_path(tpg)):
                _fc_port_free_for(tpg, node)
                was.update(tpg=tpg, rtpi=_rtpi_of(tpg), enable=tpg.enable)
                _set_rtpi(tpg, rtpi[node])
            elif not list(so.attached_luns):
                # before 6.4 a device numbers its exports 1, 2, ... for
                # good: node N's is its Nth
                for _ in range(node - 1):
                    made.lun([], tpg, lun, so).delete()
            tpg_lun = made.lun(created, tpg, lun, so)
            if tpg_lun.alua_tg_pt_gp_name != group_name(node):
                tpg_lun.alua_tg_pt_gp_name = group_name(node)
            if port_id(tpg_lun) != rtpi[node]:
                raise VaaiError(
                    f"{so.name}'s export on {wwpn} has relative port {port_id(tpg_lun)}, not "
                    f"{rtpi[node]}: on this kernel a device numbers its exports in the order "
                    "they are made: delete the backstore (vaaictl delete; the data stays), "
                    "create it again and set the pair up first"
                )
            was.setdefault("peer_ports", so.get_attribute("alua_peer_ports"))
            so.set_attribute("alua_peer_ports", f"{peer}:{rtpi[peer]}")
            return tpg_lun

        tpg = fc_lun(created, so, wwpn, initiators, lun, fabric, make=export).parent_tpg
        if not tpg.enable:  # a new qla2xxx TPG; tcm_fc's have no enable
            try:
                tpg.enable = True
            except RTSLibError as e:
                if not os.path.exists(_rtpi_path(tpg)):
                    raise
                raise VaaiError(_busy(tpg, _rtpi_of(tpg), e))
    except (RTSLibError, VaaiError, OSError) as e:
        err = made.rolled_back(created, e, f"{so.name} as node {node} of an FC pair")
        _fc_put_back(so, was)
        raise err
    return show(so)


def _rtpi_of(tpg):
    with open(_rtpi_path(tpg)) as f:
        return int(f.read().strip(), 0)


def _fc_port_free_for(tpg, node):
    """From 6.4 on an FC port's TPG has one relative port number, that of
    the node its pairs' halves are: refuse a port serving a pair as the
    other node (a LUN in that node's group here)."""
    peer = 3 - node
    serving = [lun.lun for lun in tpg.luns if lun.alua_tg_pt_gp_name == group_name(peer)]
    if serving:
        raise VaaiError(
            f"FC port {tpg.parent_target.wwn} serves pairs where this machine is node "
            f"{peer} (LUN {serving[0]}): its relative port is one for all its LUNs; a pair "
            f"where it is node {node} needs another port"
        )


def _fc_put_back(so, was):
    """What a failed setup_fc changed and did not make, as it found it: the
    backstore's declared peer ports, the FC port's number, enabled or not."""
    with contextlib.suppress(RTSLibError, VaaiError, OSError):
        if "peer_ports" in was:
            so.set_attribute("alua_peer_ports", was["peer_ports"])
    tpg = was.get("tpg")
    if tpg is None or not os.path.isdir(tpg.path):
        return
    with contextlib.suppress(RTSLibError, VaaiError, OSError):
        _set_rtpi(tpg, was["rtpi"])
        if not was["enable"]:
            tpg.enable = False


def _busy(tpg, rtpi, e):
    """Why tpg did not enable with relative port rtpi: the enabled TPG
    that has it, where one does (one number space per machine)."""
    for path in glob.glob("/sys/kernel/config/target/*/*/tpgt_*/rtpi"):
        other = os.path.dirname(path)
        if other == tpg.path:
            continue
        try:
            with open(path) as f, open(os.path.join(other, "enable")) as g:
                if int(f.read().strip(), 0) == rtpi and g.read().strip() == "1":
                    fabric, wwn, tag = other.split("/")[-3:]
                    hint = (
                        f": put this LUN in that target (--iqn {wwn}, another --lun)"
                        if fabric == "iscsi"
                        else ""
                    )
                    return (
                        f"{fabric} {wwn} TPG {tag[5:]} has relative port {rtpi:#x}, which "
                        f"node {tpg.tag}'s port needs: a machine's pairs where it is node "
                        f"{tpg.tag} share one target{hint}"
                    )
        except (OSError, ValueError):
            continue
    return f"cannot enable TPG {tpg.tag} with relative port {rtpi:#x}: {e}"


def _has_group(so, node):
    return any(g.name == group_name(node) for g in so.alua_tpgs)


def _pair_groups(so):
    groups = {g.name: g for g in so.alua_tpgs}
    missing = [group_name(n) for n in NODES if group_name(n) not in groups]
    if missing:
        raise VaaiError(f"{so.name} is not set up as a pair (no ALUA group {missing[0]})")
    return {n: groups[group_name(n)] for n in NODES}


def _local_node(so):
    """This node's number: the pair's group whose export here is enabled
    (over iSCSI its TPG has the node's tag; over FC it is the only one)."""
    names = {group_name(n): n for n in NODES}
    mine = {
        names[lun.alua_tg_pt_gp_name]
        for lun in so.attached_luns
        if lun.alua_tg_pt_gp_name in names and lun.parent_tpg.enable
    }
    if len(mine) != 1:
        raise VaaiError(
            f"{so.name}: {len(mine)} of the pair's groups have an enabled port here, not "
            "one; run vaaictl pair setup"
        )
    return mine.pop()


def peer_ports(so):
    """{group id: [relative port id]} the backend reports for the peer
    (attrib/alua_peer_ports; an FC pair's): {} when none."""
    try:
        text = so.get_attribute("alua_peer_ports").strip()
    except RTSLibError:  # a module without the attribute
        return {}
    try:
        group, ports = text.split(":", 1)
        return {int(group): [int(p) for p in ports.split(",")]}
    except ValueError:  # "none", or what this code does not read
        return {}


def set_state(so, state, close=False):
    """This node active (its group Active/Optimized, the peer's Standby)
    or standby (the other way round), as this node reports the pair.  A
    closed device is opened before the group goes active; close: the
    device is closed once the group is standby (DRBD single-primary)."""
    if state not in STATES:
        raise VaaiError(f"state must be active or standby, not {state}")
    groups = _pair_groups(so)
    node = _local_node(so)
    if state == "active" and not so.online:
        so.set_online(True)
    mine, theirs = STATES[state], STATES["standby" if state == "active" else "active"]
    # the local group last: what this node serves changes once the peer's
    # group already says where to go
    for n, want in ((3 - node, theirs), (node, mine)):
        if groups[n].alua_access_state != want:
            try:
                groups[n].alua_access_state = want
            except RTSLibError as e:
                raise VaaiError(f"cannot make {so.name}'s group {groups[n].name} {state}: {e}")
    if state == "standby" and close:
        so.set_online(False)
    return show(so)


def show(so):
    """The pair as this node holds it: {node, groups: {node: {...}}}."""
    groups = _pair_groups(so)
    out = {"backstore": so.name, "serial": so.wwn, "open": so.online, "groups": {}}
    with contextlib.suppress(VaaiError):
        out["node"] = _local_node(so)
    declared = peer_ports(so)
    for n, g in groups.items():
        ports = [
            {
                "target": lun.parent_tpg.parent_target.wwn,
                "tpg": lun.parent_tpg.tag,
                "lun": lun.lun,
                "rtpi": port_id(lun),
                "enabled": lun.parent_tpg.enable,
            }
            for lun in so.attached_luns
            if lun.alua_tg_pt_gp_name == g.name
        ] + [
            {"target": None, "tpg": None, "lun": None, "rtpi": rtpi, "enabled": False}
            for rtpi in declared.get(g.tg_pt_gp_id, [])
        ]
        out["groups"][n] = {
            "name": g.name,
            "id": g.tg_pt_gp_id,
            "state": STATE_NAMES.get(g.alua_access_state, str(g.alua_access_state)),
            "ports": ports,
        }
    return out
