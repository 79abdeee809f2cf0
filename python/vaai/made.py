"""The LIO objects an export (or a pair's setup) makes through rtslib-fb,
each remembered as it is made, so that a step failing later undoes them
all: `created` is the list of what this call made, newest last."""

import contextlib

from rtslib_fb import LUN, FabricModule, MappedLUN, NodeACL, Target
from rtslib_fb.utils import RTSLibError

from .errors import VaaiError


def fabric(name):
    try:
        return FabricModule(name)
    except RTSLibError as e:
        raise VaaiError(f"fabric {name} is not available: {e}") from e


def get_or_make(created, lookup, create):
    """What lookup() finds, or what create() makes, remembered in created."""
    try:
        return lookup()
    except RTSLibError:
        obj = create()
        created.append(obj)
        return obj


def target(created, fm, wwn):
    """fm's target wwn, made if missing."""
    return get_or_make(
        created,
        lambda: Target(fm, wwn, mode="lookup"),
        lambda: Target(fm, wwn, mode="create"),
    )


def remember(created, obj):
    created.append(obj)
    return obj


def lun(created, tpg, index, so):
    """TPG LUN index for so: the existing one if it is so's already."""
    tpg_lun = get_or_make(
        created, lambda: LUN(tpg, index), lambda: LUN(tpg, index, storage_object=so)
    )
    have = tpg_lun.storage_object
    if (have.plugin, have.name) != (so.plugin, so.name):
        raise VaaiError(
            f"LUN {index} of {tpg.parent_target.wwn} is {have.plugin}/{have.name} already; "
            "pick another LUN"
        )
    return tpg_lun


def mapped(created, tpg, initiator, mapped_lun, tpg_lun):
    """The initiator's ACL in tpg, with tpg_lun mapped to it as mapped_lun."""
    acl = get_or_make(
        created,
        lambda: NodeACL(tpg, initiator, mode="lookup"),
        lambda: NodeACL(tpg, initiator, mode="create"),
    )
    get_or_make(
        created, lambda: MappedLUN(acl, mapped_lun), lambda: MappedLUN(acl, mapped_lun, tpg_lun)
    )
    return acl


def rolled_back(created, e, what):
    """Undo what an export created; the error to raise for e (ours as it is,
    rtslib's as 'cannot export WHAT')."""
    undo(created)
    if isinstance(e, VaaiError):
        return e
    err = VaaiError(f"cannot export {what}: {e}")
    err.__cause__ = e
    return err


def undo(created):
    """Delete what this call created, newest first (a deleted parent takes
    its children with it)."""
    for obj in reversed(created):
        with contextlib.suppress(RTSLibError):
            obj.delete()
