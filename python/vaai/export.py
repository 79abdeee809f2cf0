"""Exporting a storage object over LIO's fabrics through rtslib-fb."""
import glob
import os
import time

from rtslib_fb import (LUN, TPG, FabricModule, MappedLUN, NetworkPortal,
                       NodeACL, Target)
from rtslib_fb.utils import RTSLibError

from .errors import VaaiError


def _fabric(name):
    try:
        return FabricModule(name)
    except RTSLibError as e:
        raise VaaiError("fabric %s is not available: %s" % (name, e)) from e


def export_loopback(so, lun=0, wwn=None):
    """Export so over tcm_loop: it appears as a local SCSI disk.

    rtslib-fb sets the TPG's nexus before the LUN is linked, which tcm_loop
    needs for its SCSI scan.
    """
    target = Target(_fabric("loopback"), wwn, mode="any" if wwn else "create")
    tpg = TPG(target, 1, mode="any")
    return LUN(tpg, lun, storage_object=so)


def export_iscsi(so, iqn=None, ip="127.0.0.1", port=3260, initiators=(),
                 lun=0, tag=1):
    """Export so over iSCSI on ip:port; LUN lun is mapped to each initiator
    IQN in initiators (an ACL each; no ACL at all means nobody sees it)."""
    target = Target(_fabric("iscsi"), iqn, mode="any" if iqn else "create")
    tpg = TPG(target, tag, mode="any")
    try:
        NetworkPortal(tpg, ip, port, mode="any")
        tpg_lun = LUN(tpg, lun, storage_object=so)
        for name in initiators:
            MappedLUN(NodeACL(tpg, name, mode="any"), lun, tpg_lun)
        tpg.set_attribute("authentication", "0")
        tpg.enable = True
    except RTSLibError as e:
        target.delete()
        raise VaaiError("cannot export %s over iSCSI on %s:%d: %s"
                        % (so.name, ip, port, e)) from e
    return tpg_lun


def unexport(so):
    """Remove every LUN of so, and targets left with no LUN at all."""
    for lun in list(so.attached_luns):
        target = lun.parent_tpg.parent_target
        lun.delete()
        if not any(t.luns for t in target.tpgs):
            target.delete()


def _scsi_driver(block):
    """The SCSI host driver behind /sys/block/sdX (tcm_loopback, iscsi_tcp, ...)."""
    hctl = os.path.basename(os.path.realpath("/sys/block/%s/device" % block))
    host = hctl.split(":")[0]
    with open("/sys/class/scsi_host/host%s/proc_name" % host) as f:
        return f.read().strip()


def find_disk(so, driver=None, timeout=20.0):
    """The /dev/sdX whose unit serial (VPD page 0x80) is so's, once the SCSI
    scan has found it; driver picks the fabric when it is seen over several
    (tcm_loopback, iscsi_tcp)."""
    deadline = time.monotonic() + timeout
    serial = so.wwn.encode()
    while True:
        for pg80 in glob.glob("/sys/block/sd*/device/vpd_pg80"):
            block = pg80.split("/")[3]
            try:
                with open(pg80, "rb") as f:
                    if serial in f.read() and \
                            (driver is None or _scsi_driver(block) == driver):
                        return "/dev/" + block
            except OSError:
                pass
        if time.monotonic() > deadline:
            raise VaaiError("no SCSI disk with serial %s appeared%s"
                            % (so.wwn, " over " + driver if driver else ""))
        time.sleep(0.2)


def sg_of(disk):
    """/dev/sgN of a /dev/sdX."""
    base = "/sys/block/%s/device/scsi_generic" % os.path.basename(disk)
    return "/dev/" + os.listdir(base)[0]
