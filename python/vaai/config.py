"""Save and restore through rtslib-fb's saveconfig.json, idempotently.

rtslib's own restore refuses to run over a configuration that has any of
the file's objects already.  Here restoring is a merge: what exists is left
alone (and checked against the file), what is missing is made.  Restoring
twice is a no-op; restoring over a partial configuration finishes it.  An
object that cannot be made (a backing file gone, a device not there yet)
fails alone, with what depends on it: the rest is restored, and the error
names each failure.  Anything else going wrong removes what this run made.
"""

import copy
import datetime as dt
import glob
import gzip
import json
import os

from rtslib_fb import ALUATargetPortGroup, RTSRoot
from rtslib_fb.root import default_save_file
from rtslib_fb.target import Target
from rtslib_fb.tcm import so_mapping
from rtslib_fb.utils import RTSLibError, set_attributes

from .errors import VaaiError

SAVE_FILE = default_save_file


# targetcli's default for its max_backup_files preference.
MAX_BACKUPS = 10


def save(path=SAVE_FILE):
    """Write the running configuration (every backstore and target) to path.
    The default file's previous version is kept first, as targetcli keeps
    it (back_up())."""
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise VaaiError(f"directory {d} does not exist")
    if os.path.abspath(path) == SAVE_FILE:
        back_up(path)
    RTSRoot().save_to_file(path)
    return path


def back_up(path, keep=MAX_BACKUPS, now=None):
    """Copy path, gzipped and readable by root only, to
    backup/saveconfig-YYYYMMDD-HH:MM:SS-json.gz beside it unless the newest
    backup there holds the same; keep the newest `keep`.  The names and
    format are targetcli's, so saves by either tool rotate one set and
    targetcli's restoreconfig reads them.  Returns the backup made, or None."""
    if not os.path.exists(path):
        return None
    backups = os.path.join(os.path.dirname(path), "backup")
    os.makedirs(backups, mode=0o700, exist_ok=True)
    old = sorted(glob.glob(os.path.join(backups, "saveconfig-*json*")))
    with open(path, "rb") as f:
        data = f.read()
    if old and _backup_data(old[-1]) == data:
        return None
    stamp = (now or dt.datetime.now()).strftime("%Y%m%d-%H:%M:%S")
    made = os.path.join(backups, f"saveconfig-{stamp}-json.gz")
    fd = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with gzip.open(os.fdopen(fd, "wb"), "wb") as out:
        out.write(data)
    for stale in sorted({*old, made})[:-keep]:
        os.unlink(stale)
    return made


def _backup_data(path):
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                return f.read()
        with open(path, "rb") as f:
            return f.read()
    except (OSError, EOFError):
        return None


def load(path=SAVE_FILE):
    try:
        with open(path) as f:
            config = json.load(f)
    except FileNotFoundError:
        raise VaaiError(f"{path} does not exist; write one with 'vaaictl save'") from None
    except ValueError as e:
        raise VaaiError(f"{path} is not a saveconfig.json file: {e}") from None
    problem = shape_problem(config)
    if problem:
        raise VaaiError(f"{path} is not a usable saveconfig.json file: {problem}")
    return config


# What each level of a saveconfig dict must carry: (list key, required keys).
_SHAPE = {
    "root": (("storage_objects", ("name", "plugin")), ("targets", ("wwn", "fabric"))),
    "targets": (("tpgs", ("tag",)),),
    "tpgs": (
        ("luns", ("index", "storage_object")),
        ("portals", ("ip_address", "port")),
        ("node_acls", ("node_wwn",)),
    ),
    "node_acls": (("mapped_luns", ("index", "tpg_lun")),),
}


def shape_problem(node, level="root", where="the file"):
    """What makes a saveconfig dict unusable, or None."""
    if not isinstance(node, dict):
        return f"{where} is not a JSON object"
    for key, required in _SHAPE.get(level, ()):
        items = node.get(key, [])
        if not isinstance(items, list):
            return f"{where}: {key!r} is not a list"
        for i, item in enumerate(items):
            here = f"{where} {key}[{i}]"
            if not isinstance(item, dict):
                return f"{here} is not a JSON object"
            for r in required:
                if r not in item:
                    return f"{here} has no {r!r}"
            problem = shape_problem(item, key, here)
            if problem:
                return problem
    return None


def _so_key(so):
    return (so["plugin"], so["name"])


def missing(config, running):
    """What of config is not in running (both saveconfig dicts), as a
    saveconfig dict of its own: storage objects absent by plugin and name;
    targets absent by WWN; and, inside targets that exist, the LUNs,
    portals, ACLs and mapped LUNs that do not.  Attributes, parameters and
    CHAP settings of what exists are left as they are."""
    have_so = {_so_key(so) for so in running.get("storage_objects", [])}
    have_t = {t["wwn"]: t for t in running.get("targets", [])}
    out = {
        "storage_objects": [
            so for so in config.get("storage_objects", []) if _so_key(so) not in have_so
        ],
        "fabric_modules": config.get("fabric_modules", []),
        "targets": [],
    }
    for t in config.get("targets", []):
        have = have_t.get(t["wwn"])
        if have is None:
            out["targets"].append(t)
            continue
        tpgs = []
        have_tpgs = {tpg["tag"]: tpg for tpg in have.get("tpgs", [])}
        for tpg in t.get("tpgs", []):
            old = have_tpgs.get(tpg["tag"])
            if old is None:
                tpgs.append(tpg)
                continue
            part = _tpg_missing(tpg, old)
            if part:
                tpgs.append(part)
        if tpgs:
            out["targets"].append(dict(t, tpgs=tpgs))
    return out


def _tpg_missing(tpg, old):
    """The part of tpg (saved) absent from old (running), or None."""
    luns = [
        lun
        for lun in tpg.get("luns", [])
        if lun["index"] not in {x["index"] for x in old.get("luns", [])}
    ]
    portals = [
        p
        for p in tpg.get("portals", [])
        if (p["ip_address"], p["port"])
        not in {(x["ip_address"], x["port"]) for x in old.get("portals", [])}
    ]
    have_acls = {a["node_wwn"]: a for a in old.get("node_acls", [])}
    acls = []
    for acl in tpg.get("node_acls", []):
        prev = have_acls.get(acl["node_wwn"])
        if prev is None:
            acls.append(acl)
            continue
        have_m = {m["index"] for m in prev.get("mapped_luns", [])}
        mapped = [m for m in acl.get("mapped_luns", []) if m["index"] not in have_m]
        if mapped:
            # Only the mapping: the ACL's own settings are the running ones.
            acls.append({"node_wwn": acl["node_wwn"], "mapped_luns": mapped})
    if not (luns or portals or acls):
        return None
    # The TPG exists: no attribute, parameter or enable change.
    return {
        "tag": tpg["tag"],
        "luns": luns,
        "portals": portals,
        "node_acls": acls,
        "enable": old.get("enable", True),
    }


def conflicts(config, running):
    """Objects the file and the running configuration both have but
    disagree on in a way a merge cannot settle: a backstore on another path,
    a LUN index bound to another backstore."""
    out = []
    run_so = {_so_key(so): so for so in running.get("storage_objects", [])}
    for so in config.get("storage_objects", []):
        cur = run_so.get(_so_key(so))
        want = so.get("dev") or so.get("path")
        have = cur and (cur.get("dev") or cur.get("path"))
        if want and have and want != have:
            out.append(
                "{}/{} is on {} here, {} in the file".format(so["plugin"], so["name"], have, want)
            )
    run_luns = {
        (t["wwn"], tpg["tag"], lun["index"]): lun["storage_object"]
        for t in running.get("targets", [])
        for tpg in t.get("tpgs", [])
        for lun in tpg.get("luns", [])
    }
    for t in config.get("targets", []):
        for tpg in t.get("tpgs", []):
            for lun in tpg.get("luns", []):
                cur = run_luns.get((t["wwn"], tpg["tag"], lun["index"]))
                if cur and cur != lun["storage_object"]:
                    out.append(
                        f"{t['wwn']} tpg {tpg['tag']} LUN {lun['index']} is {cur} here, "
                        f"{lun['storage_object']} in the file"
                    )
    return out


def restore(path=SAVE_FILE, progress=None):
    """Make the running configuration contain path's; returns the number of
    objects made (0: it was there already)."""
    config = load(path)
    root = RTSRoot()
    running = root.dump()
    clash = conflicts(config, running)
    if clash:
        raise VaaiError(
            "{} disagrees with the running configuration: {}; remove those objects first".format(
                path, "; ".join(clash)
            )
        )
    todo = missing(config, running)
    # A target's portal groups in tag order, whatever order the file has
    # them in (rtslib saves them as configfs lists them): before Linux 6.4
    # a device's relative port identifiers follow the order of its exports,
    # which a pair's nodes must agree on (vaai.pair).
    todo["targets"] = [
        dict(t, tpgs=sorted(t.get("tpgs", []), key=lambda tpg: tpg["tag"])) for t in todo["targets"]
    ]
    steps = todo["storage_objects"] + todo["targets"]
    if not steps:
        return 0
    fabrics = {fm.name: fm for fm in root.fabric_modules}
    for t in todo["targets"]:
        if t.get("fabric") not in fabrics:
            raise VaaiError(
                "{} needs the {} fabric module, which is not loaded (modprobe it first)".format(
                    t["wwn"], t.get("fabric")
                )
            )
    errors = []
    try:
        for i, so in enumerate(todo["storage_objects"], 1):
            _report(progress, i, len(steps), "backstore {}/{}".format(*_so_key(so)))
            restore_so(so, errors.append)
        for fm in todo["fabric_modules"]:
            if fm.get("name") in fabrics:
                fabrics[fm["name"]].setup(copy.deepcopy(fm), errors.append)
        for i, t in enumerate(todo["targets"], len(todo["storage_objects"]) + 1):
            _report(progress, i, len(steps), "target {}".format(t["wwn"]))
            Target.setup(
                fabrics[t["fabric"]],
                copy.deepcopy(t),
                lambda m, wwn=t["wwn"]: errors.append(f"target {wwn}: {m}"),
            )
    except BaseException:
        _undo(running)
        raise
    if errors:
        raise VaaiError("{} is restored but for: {}".format(path, "; ".join(errors)))
    return len(steps)


def _report(progress, i, n, what):
    if progress:
        progress(f"restoring {i}/{n}: {what}")


def restore_so(so, err):
    """Make one saved storage object, with its attributes and ALUA groups."""

    def so_err(msg):
        err("backstore {}/{}: {}".format(so["plugin"], so["name"], msg))

    try:
        cls = so_mapping[so["plugin"]]
    except KeyError:
        so_err("the backstore type is unknown here")
        return
    kwargs = {
        k: v
        for k, v in so.items()
        if k not in ("exists", "attributes", "plugin", "buffered_mode", "alua_tpgs")
    }
    try:
        obj = cls(**kwargs)
    except VaaiError as e:
        err(str(e))
        return
    except (RTSLibError, OSError, TypeError) as e:
        so_err(str(e))
        return
    set_attributes(obj, so.get("attributes", {}), so_err)
    for group in so.get("alua_tpgs", []):
        try:
            ALUATargetPortGroup.setup(obj, group, so_err)
        except RTSLibError as e:
            so_err(str(e))


def _prune(objs, old, key):
    """Delete each of objs whose key(obj) is not in old (a dict of saved
    entries); the others, as (obj, its old entry) pairs."""
    kept = []
    for obj in list(objs):
        prev = old.get(key(obj))
        if prev is None:
            obj.delete()
        else:
            kept.append((obj, prev))
    return kept


def _undo(before):
    """Remove what exists now but did not in `before` (a running dump)."""
    root = RTSRoot()
    targets = {t["wwn"]: t for t in before.get("targets", [])}
    for t, prev in _prune(root.targets, targets, lambda t: t.wwn):
        tpgs = {tpg["tag"]: tpg for tpg in prev.get("tpgs", [])}
        for tpg, old in _prune(t.tpgs, tpgs, lambda tpg: tpg.tag):
            _undo_tpg(tpg, old)
    _prune(
        root.storage_objects,
        {_so_key(so): so for so in before.get("storage_objects", [])},
        lambda so: (so.plugin, so.name),
    )


def _undo_tpg(tpg, old):
    acls = {a["node_wwn"]: a for a in old.get("node_acls", [])}
    for acl, prev in _prune(tpg.node_acls, acls, lambda a: a.node_wwn):
        _prune(
            acl.mapped_luns,
            {m["index"]: m for m in prev.get("mapped_luns", [])},
            lambda m: m.mapped_lun,
        )
    _prune(tpg.luns, {lun["index"]: lun for lun in old.get("luns", [])}, lambda lun: lun.lun)
    _prune(
        tpg.network_portals,
        {(p["ip_address"], p["port"]): p for p in old.get("portals", [])},
        lambda p: (p.ip_address, p.port),
    )
