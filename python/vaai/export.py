"""Exporting a storage object over LIO's fabrics through rtslib-fb."""

import glob
import os
import re
import time

from rtslib_fb import LUN, TPG, NetworkPortal, Target
from rtslib_fb.utils import RTSLibError

from . import made
from .errors import VaaiError
from .params import fc_wwn
from .profiles import iscsi_tpg


def export_loopback(so, lun=0, wwn=None):
    """Export so over tcm_loop: it appears as a local SCSI disk.

    rtslib-fb sets the TPG's nexus before the LUN is linked, which tcm_loop
    needs for its SCSI scan.
    """
    target = Target(made.fabric("loopback"), wwn, mode="any" if wwn else "create")
    tpg = TPG(target, 1, mode="any")
    return LUN(tpg, lun, storage_object=so)


def export_iscsi(
    so,
    iqn=None,
    ip="127.0.0.1",
    port=3260,
    initiators=(),
    lun=0,
    tag=1,
    chap=None,
    mutual_chap=None,
    profile="plain",
):
    """Export so over iSCSI on ip:port; LUN lun is mapped to each initiator
    IQN in initiators (an ACL each; no ACL at all means nobody sees it).
    chap=(user, secret): those initiators must log in with it; mutual_chap:
    and the target answers with this one.  profile: the TPG settings
    (profiles.ISCSI_TPG) for a TPG this call creates.  What exists already
    is reused; on failure, what this call created is removed again."""
    if mutual_chap and not chap:
        raise VaaiError("mutual CHAP needs the initiator's CHAP credentials too")
    fm = made.fabric("iscsi")
    created = []
    try:
        target = (
            made.target(created, fm, iqn)
            if iqn
            else made.remember(created, Target(fm, mode="create"))
        )
        tpg = made.get_or_make(
            created,
            lambda: TPG(target, tag, mode="lookup"),
            lambda: TPG(target, tag, mode="create"),
        )
        if tpg in created:
            params, attrs = iscsi_tpg(profile)
            for name, value in params.items():
                tpg.set_parameter(name, value)
            for name, value in attrs.items():
                tpg.set_attribute(name, value)
        made.get_or_make(
            created,
            lambda: NetworkPortal(tpg, ip, port, mode="lookup"),
            lambda: NetworkPortal(tpg, ip, port, mode="create"),
        )
        tpg_lun = made.lun(created, tpg, lun, so)
        for name in initiators:
            acl = made.mapped(created, tpg, name, lun, tpg_lun)
            if chap:
                acl.chap_userid, acl.chap_password = chap
            if mutual_chap:
                acl.chap_mutual_userid, acl.chap_mutual_password = mutual_chap
        # CHAP on when asked; a TPG that existed keeps what it had.
        if chap or tpg in created:
            tpg.set_attribute("authentication", "1" if chap else "0")
        tpg.enable = True
    except RTSLibError as e:
        raise made.rolled_back(created, e, f"{so.name} over iSCSI on {ip}:{port}")
    return tpg_lun


FC_FABRICS = ("tcm_fc", "qla2xxx")


def export_fc(so, wwpn, initiators=(), lun=0, fabric="tcm_fc"):
    """Export so on the Fibre Channel target port wwpn (tcm_fc: an FCoE
    port; qla2xxx: a QLogic HBA in target mode) as LUN lun, mapped to each
    initiator WWPN in initiators.  FC has no demo mode here: an initiator
    without an ACL sees nothing.  Creating what exists already is a no-op;
    on failure, what this call created is removed again."""
    created = []
    try:
        return fc_lun(created, so, wwpn, initiators, lun, fabric)
    except (RTSLibError, VaaiError) as e:
        raise made.rolled_back(created, e, f"{so.name} on {fabric} port {wwpn}")


def fc_lun(created, so, wwpn, initiators=(), lun=0, fabric="tcm_fc", make=None):
    """export_fc()'s steps, what they make remembered in created (the
    caller undoes it on failure): the LUN, made by make(tpg) if given
    (else made.lun())."""
    if fabric not in FC_FABRICS:
        raise VaaiError(
            "fabric {!r} is not a Fibre Channel fabric; use one of {}".format(
                fabric, ", ".join(FC_FABRICS)
            )
        )
    wwpn = fc_wwn(wwpn)
    initiators = [fc_wwn(i) for i in initiators]
    fm = made.fabric(fabric)
    ports = set(getattr(fm, "wwns", None) or ())
    if wwpn not in ports:
        raise VaaiError(
            "no {} port {} on this machine (ports: {})".format(
                fabric, wwpn, ", ".join(sorted(ports)) or "none"
            )
        )
    target = made.target(created, fm, wwpn)
    tpg = made.get_or_make(
        created, lambda: TPG(target, 1, mode="lookup"), lambda: TPG(target, 1, mode="create")
    )
    tpg_lun = make(tpg) if make else made.lun(created, tpg, lun, so)
    for name in initiators:
        made.mapped(created, tpg, name, lun, tpg_lun)
    return tpg_lun


def unexport(so):
    """Remove every LUN of so, and targets left with no LUN at all."""
    for lun in list(so.attached_luns):
        drop_lun(lun)


def drop_lun(lun):
    """Remove lun, and its target if that leaves it with no LUN at all."""
    target = lun.parent_tpg.parent_target
    lun.delete()
    if not has_luns(target):
        target.delete()


def has_luns(target):
    """Does any TPG of target still have a LUN?"""
    return any(list(tpg.luns) for tpg in target.tpgs)


def _scsi_driver(block):
    """The SCSI host driver behind /sys/block/sdX (tcm_loopback, iscsi_tcp, ...)."""
    hctl = os.path.basename(os.path.realpath(f"/sys/block/{block}/device"))
    host = hctl.split(":")[0]
    with open(f"/sys/class/scsi_host/host{host}/proc_name") as f:
        return f.read().strip()


def _iscsi_session(block, attr):
    """targetname or initiatorname of the iSCSI session /sys/block/sdX
    hangs off, or None."""
    m = re.search(r"/(session\d+)/", os.path.realpath(f"/sys/block/{block}/device"))
    if not m:
        return None
    try:
        with open(f"/sys/class/iscsi_session/{m.group(1)}/{attr}") as f:
            return f.read().strip()
    except OSError:
        return None


def find_disk(so, driver=None, timeout=20.0, target=None, initiator=None):
    """The /dev/sdX whose unit serial (VPD page 0x80) is so's, once the SCSI
    scan has found it; driver picks the fabric when it is seen over several
    (tcm_loopback, iscsi_tcp, fcoe), target the iSCSI target (IQN) when it is
    seen through several, initiator the iSCSI initiator name when this
    machine logs in as several."""
    deadline = time.monotonic() + timeout
    serial = so.wwn.encode()
    while True:
        for pg80 in glob.glob("/sys/block/sd*/device/vpd_pg80"):
            block = pg80.split("/")[3]
            try:
                with open(pg80, "rb") as f:
                    if (
                        serial in f.read()
                        and (driver is None or _scsi_driver(block) == driver)
                        and (target is None or _iscsi_session(block, "targetname") == target)
                        and (
                            initiator is None or _iscsi_session(block, "initiatorname") == initiator
                        )
                    ):
                        return "/dev/" + block
            except OSError:
                pass
        if time.monotonic() > deadline:
            raise VaaiError(
                "no SCSI disk with serial {} appeared{}".format(
                    so.wwn, " over " + driver if driver else ""
                )
            )
        time.sleep(0.02)


def sg_of(disk):
    """/dev/sgN of a /dev/sdX."""
    base = f"/sys/block/{os.path.basename(disk)}/device/scsi_generic"
    return "/dev/" + os.listdir(base)[0]
