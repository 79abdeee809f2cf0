"""Attribute profiles applied when a backstore is created.

`esxi` (the default) is what an ESXi datastore LUN wants without a loop of
`echo 1 >` into configfs: 512-byte logical blocks (VMFS and most guest
operating systems expect them), COMPARE AND WRITE and third-party copy on,
UNMAP and WRITE SAME with UNMAP on where the store can deallocate, and the
rotation rate taken from the store.  `plain` leaves LIO's own defaults: a
thick-looking LUN with thin provisioning off, as target_core_file presents.
"""

import os
import stat

from .errors import VaaiError

PROFILES = ("esxi", "plain")


def is_nonrot(path, sysfs="/sys"):
    """1 when the store sits on a non-rotational device (or in RAM, as tmpfs),
    0 when on a spinning one, from the queue's `rotational` flag."""
    st = os.stat(path)
    dev = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    return device_nonrot(os.major(dev), os.minor(dev), sysfs)


def device_nonrot(major, minor, sysfs="/sys"):
    """is_nonrot for the block device major:minor (major 0: no device)."""
    if major == 0:
        return 1  # tmpfs, overlay on RAM: no device
    return 0 if queue_attr(major, minor, "rotational", sysfs) in ("1", None) else 1


def queue_attr(major, minor, name, sysfs="/sys"):
    """The block device major:minor's queue/name (a partition: its disk's),
    None when it has none."""
    node = os.path.realpath(os.path.join(sysfs, "dev", "block", f"{major}:{minor}"))
    for d in (node, os.path.dirname(node)):
        try:
            with open(os.path.join(d, "queue", name)) as f:
                return f.read().strip()
        except OSError:
            continue
    return None


def validate(profile, block_size=None):
    """VaaiError unless profile and block size are ones we offer."""
    if profile not in PROFILES:
        raise VaaiError("unknown profile {!r}; use one of: {}".format(profile, ", ".join(PROFILES)))
    if block_size is not None and str(block_size) not in ("512", "4096"):
        raise VaaiError(f"block size {block_size}: use 512 or 4096")


def attributes(profile, path, block_size=None, can_unmap=True, sysfs="/sys"):
    """{attribute: value} to set on a new backstore for this profile."""
    validate(profile, block_size)
    attrs = {}
    if block_size is not None:
        attrs["block_size"] = int(block_size)
    if profile == "plain":
        attrs.update(emulate_tpu=0, emulate_tpws=0)
        return attrs
    attrs.setdefault("block_size", 512)
    attrs.update(emulate_caw=1, emulate_3pc=1, is_nonrot=is_nonrot(path, sysfs))
    if can_unmap:
        attrs.update(emulate_tpu=1, emulate_tpws=1)
    return attrs


# What an iSCSI export sets on a TPG it creates (a TPG that exists keeps its
# settings).  `esxi` meets what ESXi's software initiator offers by default
# (256 KiB first and maximum bursts, 128 commands queued per LUN) and lets
# an initiator that proposes InitialR2T=No send its first burst
# unsolicited.  LIO's own defaults (a 64 KiB first burst, InitialR2T=Yes,
# a CmdSN window of 64) make every write wait for an R2T and cap the
# session at 64 commands in flight.
ISCSI_TPG = {
    "esxi": {
        "parameters": {
            "FirstBurstLength": "262144",
            "MaxBurstLength": "262144",
            "InitialR2T": "No",
            "ImmediateData": "Yes",
        },
        "attributes": {"default_cmdsn_depth": "128"},
    },
    "plain": {"parameters": {}, "attributes": {}},
}


def iscsi_tpg(profile):
    """(parameters, attributes) for a new iSCSI TPG under this profile."""
    validate(profile)
    p = ISCSI_TPG[profile]
    return dict(p["parameters"]), dict(p["attributes"])
