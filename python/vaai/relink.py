"""A backstore's place in LIO made again from dumps: its inquiry data, its
ALUA groups, the LUNs that export it and their mappings; and the TPGs
paused meanwhile.  What `vaaictl adopt` (adopt.py) moves from an old
backstore to a new one, and puts back when the move fails."""

import contextlib
import os
import signal
import threading

from rtslib_fb import LUN, ALUATargetPortGroup, MappedLUN, NodeACL
from rtslib_fb.alua import alua_rw_params
from rtslib_fb.utils import RTSLibError, fread, fwrite

from .errors import VaaiError

DEFAULT_TG_PT_GP = "default_tg_pt_gp"


def read(so, name):
    """A file of so's configfs directory, None where this kernel has none."""
    try:
        return fread(f"{so.path}/{name}")
    except (OSError, RTSLibError):
        return None


def identity(so, fields, lu_gp=None):
    """fields ({name: value} of the wwn/ directory) and the ALUA logical
    unit group lu_gp on so, which no LUN exports yet."""
    for field, value in fields.items():
        if read(so, f"wwn/{field}") != value:
            fwrite(f"{so.path}/wwn/{field}", value)
    if lu_gp:
        fwrite(f"{so.path}/alua_lu_gp", lu_gp)


def groups(so, dumps):
    """The ALUA groups of dumps (rtslib's) on so, those it lacks made, the
    default group's settings set."""
    have = {g.name for g in so.alua_tpgs}
    for group in dumps:
        if group["name"] not in have:
            ALUATargetPortGroup.setup(so, group, _raise)
        if group["name"] != DEFAULT_TG_PT_GP:
            continue
        default = ALUATargetPortGroup(so, DEFAULT_TG_PT_GP)
        for param in alua_rw_params:
            value = group.get(param)
            if value is not None and getattr(default, param, None) != value:
                setattr(default, param, value)


def luns(so, entries, err):
    """entries' LUNs ((tpg, LUN dump, [(initiator, MappedLUN dump)])) on
    so, each in its ALUA group with its mappings, those missing made;
    err(message) for each that cannot be, the others made still."""
    for tpg, lun, mapped in entries:
        where = f"{tpg_name(tpg)} LUN {lun['index']}"
        try:
            obj = _lun_of(tpg, lun["index"], so) or LUN(
                tpg, lun["index"], storage_object=so, alias=lun.get("alias")
            )
            group = lun.get("alua_tg_pt_gp_name")
            if group and obj.alua_tg_pt_gp_name != group:
                obj.alua_tg_pt_gp_name = group  # rtslib says nothing when it fails
                if obj.alua_tg_pt_gp_name != group:
                    raise RTSLibError(f"cannot put it in ALUA group {group}")
        except (RTSLibError, OSError) as e:
            err(f"{where}: {e}")
            continue
        for node, m in mapped:
            try:
                acl = NodeACL(tpg, node, mode="lookup")
                if all(x.mapped_lun != m["index"] for x in acl.mapped_luns):
                    MappedLUN(acl, m["index"], obj, m["write_protect"], m.get("alias"))
            except (RTSLibError, OSError) as e:
                err(f"{where} mapped to {node} as LUN {m['index']}: {e}")


def _lun_of(tpg, index, so):
    """tpg's LUN index when it exists and is so's."""
    for lun in tpg.luns:
        if lun.lun == index:
            have = lun.storage_object
            return lun if (have.plugin, have.name) == (so.plugin, so.name) else None
    return None


def can_pause(tpg):
    """Has tpg an enable switch (iSCSI, qla2xxx; not tcm_loop, tcm_fc)?"""
    return os.path.isfile(f"{tpg.path}/enable")


def tpg_name(tpg):
    target = tpg.parent_target
    return f"{target.fabric_module.name} {target.wwn} TPG {tpg.tag}"


def flush(path):
    """Write back what a backstore left in a cache of path (a write-back
    fileio's page cache, a block device's cache)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Interrupted(BaseException):
    """SIGTERM or SIGHUP during signals_raised()."""


@contextlib.contextmanager
def signals_raised():
    """SIGTERM and SIGHUP (a closed terminal, systemd stopping the shell)
    raise Interrupted in the block, so that a change under way is put
    back and paused TPGs enabled rather than left as the signal found
    them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupted(signum, _frame):
        raise Interrupted(signal.Signals(signum).name)

    old = {sig: signal.signal(sig, interrupted) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _raise(msg):
    raise VaaiError(msg)
