"""Backstores as an operator handles them: create with a profile, delete,
list; every refusal one line saying what is wrong and what to do, and a
failed create leaves nothing behind."""

import glob
import os
import re
import subprocess

from rtslib_fb import RTSRoot
from rtslib_fb.fabric import FabricModule
from rtslib_fb.tcm import StorageObject
from rtslib_fb.utils import RTSLibError, fread

from . import profiles
from .errors import VaaiError
from .params import LIO_COMPANY_ID, NAA_SERIAL_DIGITS, naa_designator, parse_size
from .storage import MODULE, PLUGIN, VaaiStorageObject, closed_store, store_bytes

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
# LIO keeps the unit serial number (VPD page 0x80) in INQUIRY_VPD_SERIAL_LEN
# bytes, its terminating NUL included.
SERIAL_MAX = 253
SERIAL = re.compile(rf"[\x21-\x7e]{{1,{SERIAL_MAX}}}")


def load_module():
    """Load target_core_vaai (and with it LIO) unless it is loaded already."""
    if os.path.isdir(f"/sys/module/{MODULE}"):
        return
    r = subprocess.run(["modprobe", MODULE], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise VaaiError(
            "cannot load the {} module ({}): install the "
            "vaai-dkms package (with this kernel's headers), or "
            "run 'make install' in the source tree, or insmod "
            "build/module/{}/{}.ko".format(
                MODULE, r.stderr.strip() or "modprobe failed", os.uname().release, MODULE
            )
        )


def find(name):
    """The vaai backstore called name; VaaiError naming the ones there are."""
    objs = [so for so in RTSRoot().storage_objects if so.plugin == PLUGIN]
    for so in objs:
        if so.name == name:
            return so
    raise VaaiError(
        "no vaai backstore {!r} (there are: {}); see 'vaaictl list'".format(
            name, ", ".join(sorted(so.name for so in objs)) or "none"
        )
    )


def _check_free(name, path):
    for so in RTSRoot().storage_objects:
        if so.plugin == PLUGIN and so.name == name:
            raise VaaiError(
                f"backstore vaai/{name} exists already; pick another name "
                f"or remove it with 'vaaictl delete {name}'"
            )
        udev = getattr(so, "udev_path", None)
        if udev and os.path.exists(path) and os.path.exists(udev) and os.path.samefile(path, udev):
            raise VaaiError(
                f"{path} is in use by backstore {so.plugin}/{so.name}; one store per backstore"
            )


def _company_id(so):
    """The IEEE company id LIO puts in so's NAA designator (kernels without
    wwn/company_id use LIO's own)."""
    try:
        return int(fread(f"{so.path}/wwn/company_id"), 0)
    except (OSError, RTSLibError, ValueError):
        return LIO_COMPANY_ID


def _check_naa(serial):
    """A unit serial whose NAA designator a device has already would make
    the hosts take the two LUNs for one device (and EXTENDED COPY could not
    tell them apart)."""
    naa = naa_designator(serial)
    for so in StorageObject.all():
        if so.plugin == "pscsi":
            continue  # hosts see the SCSI device's own designator
        try:
            theirs = so.wwn
        except RTSLibError:
            continue  # not configured yet: no serial
        if naa_designator(theirs, _company_id(so)) == naa:
            raise VaaiError(
                f"unit serial {serial!r} gives the NAA designator {naa.hex()}, which "
                f"{so.plugin}/{so.name} (serial {theirs!r}) has: the hosts would take them "
                "for one device; pick a serial that differs in its first "
                f"{NAA_SERIAL_DIGITS} hexadecimal digits"
            )


def create(
    name,
    path,
    size=None,
    readonly=False,
    wwn=None,
    profile="esxi",
    block_size=None,
    io_mode=None,
    online=True,
):
    """A new vaai backstore on path (a block device, or a file, created
    sparse when size is given and it does not exist), set up per profile;
    online=False: a block device left closed (VaaiStorageObject)."""
    if not NAME.fullmatch(name or ""):
        raise VaaiError(
            f"backstore name {name!r}: use up to 64 letters, digits, "
            "'_', '.', ':' or '-', starting with a letter or digit"
        )
    if wwn is not None and not SERIAL.fullmatch(wwn):
        raise VaaiError(
            f"unit serial {wwn!r}: use up to {SERIAL_MAX} printable characters without "
            "spaces (or leave --wwn out for a new UUID)"
        )
    path = os.path.abspath(path)
    if size is not None:
        size = parse_size(size)
    if not os.path.exists(path):
        if size is None:
            raise VaaiError(f"{path} does not exist; give --size to create it as a sparse file")
        if not os.path.isdir(os.path.dirname(path)):
            raise VaaiError(f"directory {os.path.dirname(path)} does not exist")
    if not online and block_size is None:
        # a closed LUN cannot learn its device's block size by opening it
        block_size = max(closed_store(path)[3], 512) if os.path.exists(path) else None
    profiles.validate(profile, block_size)
    load_module()
    _check_free(name, path)
    if wwn is not None:
        _check_naa(wwn)
    made_file = not os.path.exists(path)
    so = VaaiStorageObject(name, path=path, size=size, readonly=readonly, wwn=wwn, online=online)
    try:
        can_unmap = so.get_attribute("emulate_tpu") == "1"
        attrs = profiles.attributes(profile, path, block_size, can_unmap)
        if io_mode is not None:
            attrs["io_mode"] = io_mode
        for attr, value in attrs.items():
            try:
                so.set_attribute(attr, value)
            except RTSLibError as e:
                raise VaaiError(f"cannot set {attr}={value} on vaai/{name}: {e}") from e
    except BaseException:
        so.delete()
        if made_file and os.path.isfile(path):
            os.unlink(path)
        raise
    return so


def delete(name):
    """Remove the backstore, every LUN that exports it and the targets left
    with no LUN by that; the store itself (file or device) is left as it
    is.  Returns the LUNs removed."""
    from .export import unexport

    so = find(name)
    luns = [
        f"{target.fabric_module.name} {target.wwn} LUN {lun.lun}"
        for lun in so.attached_luns
        for target in [lun.parent_tpg.parent_target]
    ]
    unexport(so)
    so.delete()
    return luns


def resize(name, size=None):
    """Grow the LUN to its store's size now, after first growing a file
    store to size when given; the hosts are told (CAPACITY DATA HAS
    CHANGED).  Returns the capacity in bytes (before, after)."""
    so = find(name)
    before = so.size
    if size is not None:
        size = parse_size(size)
        if so.store != "file":
            raise VaaiError(
                f"vaai/{name} is on the block device {so.path_name}: grow the device "
                "(lvextend, the array's own tool), then run 'vaaictl "
                f"resize {name}' without a size"
            )
        if size < before:
            raise VaaiError(
                f"vaai/{name} holds {before} bytes; a live LUN does not shrink ({size} asked)"
            )
        if size > store_bytes(so.path_name):
            os.truncate(so.path_name, size)
    so.resize()
    return before, so.size


def describe(so):
    """One backstore as a dict for `list`."""
    attr = so.get_attribute
    return {
        "name": so.name,
        "path": so.path_name,
        "store": so.store,
        "size": so.size,
        "readonly": so.readonly,
        "block_size": int(attr("block_size")),
        "thin": attr("emulate_tpu") == "1",
        "write_cache": attr("emulate_write_cache") == "1",
        "io_mode": attr("io_mode"),
        "odx_point_in_time": attr("odx_point_in_time") == "1",
        "wwn": so.wwn,
        "exports": exports(so),
    }


def exports(so):
    """Where so is exported, as fabric/target/tpgN/lunM, found by reading
    configfs alone: rtslib's so.attached_luns goes through RTSRoot()."""
    path = os.path.realpath(so.path)
    found = []
    for fm in FabricModule.all():
        if not fm.exists:
            continue
        for link in glob.glob(os.path.join(fm.path, "*", "tpgt_*", "lun", "lun_*", "*")):
            if os.path.islink(link) and os.path.realpath(link) == path:
                target, tpgt, _, lun = link.split("/")[-5:-1]
                found.append(f"{fm.name}/{target}/tpg{tpgt[5:]}/lun{lun[4:]}")
    return sorted(found)


def list_all():
    """Every vaai backstore, described.  Only reads configfs, as any user
    may: RTSRoot() would mount configfs, load LIO and set its dbroot."""
    return [describe(so) for so in StorageObject.all() if so.plugin == PLUGIN]
