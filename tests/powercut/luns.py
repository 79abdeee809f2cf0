"""The power-cut rig's LUNs, known to the guest that serves them and the
host that drives and checks them: each store (a file on XFS, a file on
ext4, a whole block device) with its write cache off and on.

The guest sees the host's images as virtio disks in DISKS' order.
"""

import uuid
from collections import namedtuple

TARGET_IQN = "iqn.2026-11.org.vaai:powercut"
HOST_IQN = "iqn.2026-11.org.vaai:powercut-host"
LUN_SIZE = 16 << 20

# The images, /dev/vda to /dev/vdd in the guest: an XFS (mkfs.xfs's least
# size), an ext4 (guest-target.sh makes and checks both) and two whole disks.
Disk = namedtuple("Disk", "image size")
DISKS = [
    Disk("xfs.img", 320 << 20),
    Disk("ext4.img", 64 << 20),
    Disk("block-wt.img", LUN_SIZE),
    Disk("block-wb.img", LUN_SIZE),
]

# LUN number = index; store: the disk's fs (a file on it) or "block"
Lun = namedtuple("Lun", "name store dev write_cache")
LUNS = [
    Lun("pc-xfs-wt", "xfs", "/dev/vda", False),
    Lun("pc-xfs-wb", "xfs", "/dev/vda", True),
    Lun("pc-ext4-wt", "ext4", "/dev/vdb", False),
    Lun("pc-ext4-wb", "ext4", "/dev/vdb", True),
    Lun("pc-block-wt", "block", "/dev/vdc", False),
    Lun("pc-block-wb", "block", "/dev/vdd", True),
]


def mountpoint(store):
    return f"/run/vaai/powercut-{store}"


def backing(lun):
    """Where the guest keeps the LUN's blocks."""
    if lun.store == "block":
        return lun.dev
    return f"{mountpoint(lun.store)}/{lun.name}.img"


def wwn(lun):
    """The same unit serial on every boot: the host sees the same LUN.  The
    NAA designator takes only the serial's first 25 hex digits: they must
    differ from LUN to LUN, or EXTENDED COPY finds the wrong one."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, TARGET_IQN + "/" + lun.name))
