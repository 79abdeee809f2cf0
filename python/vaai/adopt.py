"""Moving an LIO fileio or block (iblock) backstore to a vaai one in place.

The hosts must see the same device afterwards: the same unit serial (and
with it the NAA designator LIO derives from it), company id, vendor,
product and revision, capacity and block size, on the same LUN numbers
with the same mappings and ALUA groups.  LIO cannot change the backstore
behind a live LUN, so the LUNs are made again; while that happens no
command may reach them, or a host would be told the LUN is gone (or, for
LUN 0 of a demo-mode TPG, be answered by LIO's virtual LUN 0).  So every
TPG that exports the backstore is disabled first: its sessions close, and
the initiators retry their logins (iSCSI's replacement timeout, FC's
dev_loss_tmo hold the I/O) until the TPG is enabled again, when they see
REPORTED LUNS DATA HAS CHANGED.  A fabric whose TPGs cannot be disabled
(tcm_loop, tcm_fc) gets the move only with --offline, the admin's word
that nothing uses the LUN.

Everything is checked before anything changes; a step that fails puts the
old backstore, its ALUA groups, LUNs and mappings back and enables the
TPGs again."""

import contextlib
import os

from rtslib_fb import LUN, ALUATargetPortGroup, MappedLUN, NodeACL, RTSRoot
from rtslib_fb.alua import alua_rw_params
from rtslib_fb.utils import RTSLibError, fread, fwrite

from . import backstore, config
from .errors import VaaiError
from .params import LIO_COMPANY_ID, naa_designator
from .profiles import queue_attr
from .storage import PLUGIN, store_bytes

ADOPTABLE = ("fileio", "block")
# The inquiry data and designators a host tells a device by, under the
# backstore's wwn/ directory; company_id only on kernels that have it.
IDENTITY = ("vendor_id", "product_id", "revision", "company_id")


def _source(spec):
    """The fileio or block backstore spec names ("NAME", "fileio/NAME")."""
    plugin, _, name = spec.rpartition("/")
    objs = [
        so
        for so in RTSRoot().storage_objects
        if so.name == name and (so.plugin == plugin if plugin else so.plugin != PLUGIN)
    ]
    if not objs:
        raise VaaiError(f"no backstore {spec!r} to adopt; see 'targetcli ls /backstores'")
    if len(objs) > 1:
        kinds = ", ".join(f"{so.plugin}/{so.name}" for so in objs)
        raise VaaiError(f"{spec!r} names {kinds}; say which, as PLUGIN/NAME")
    so = objs[0]
    if so.plugin not in ADOPTABLE:
        raise VaaiError(
            f"{so.plugin}/{so.name}: only fileio and block backstores can be adopted "
            "(a vaai backstore needs a file or a block device)"
        )
    return so


def _read(so, name):
    """A file of so's configfs directory, None where this kernel has none."""
    try:
        return fread(f"{so.path}/{name}")
    except (OSError, RTSLibError):
        return None


def _pr_state(so):
    """Why so's reservations forbid the move (None: there are none).  They
    live in the device LIO drops with the old backstore."""
    # "SPC-3 PR Registrations:", then one line per key or "None"
    regs = (_read(so, "pr/res_pr_registered_i_pts") or "").splitlines()[1:]
    holder = _read(so, "pr/res_holder")
    if regs and regs != ["None"]:
        return "persistent reservation keys are registered"
    if holder and not holder.startswith("No "):
        return "a reservation is held"
    return None


class Plan:
    """What adopting one backstore does, found and checked before any
    change: the dumps of everything to make again, and the refusals."""

    def __init__(self, spec, offline=False):
        self.so = so = _source(spec)
        self.name = so.name
        self.path = so.udev_path
        self.size = so.size
        self.dump = so.dump()
        self.attrs = {a: so.get_attribute(a) for a in ("block_size", "pi_prot_type")}
        self.write_cache = _write_cache(so)
        self.identity = {f: v for f in IDENTITY if (v := _read(so, f"wwn/{f}")) is not None}
        self.serial = so.wwn
        self.luns = []  # (tpg, LUN dump, [(acl node_wwn, MappedLUN dump)])
        for lun in so.attached_luns:
            tpg = lun.parent_tpg
            mapped = [(m.parent_nodeacl.node_wwn, m.dump()) for m in lun.mapped_luns]
            self.luns.append((tpg, lun.dump(), mapped))
        tpgs = {tpg.path: tpg for tpg, _, _ in self.luns}
        self.paused = [t for t in tpgs.values() if _can_pause(t) and t.enable]
        self.unpausable = [t for t in tpgs.values() if not _can_pause(t)]
        self.offline = offline
        self._check()

    def _check(self):
        where = f"{self.so.plugin}/{self.name}"
        if any(so.plugin == PLUGIN and so.name == self.name for so in RTSRoot().storage_objects):
            raise VaaiError(f"{where}: a vaai backstore is called {self.name} already")
        if not self.path or not os.path.exists(self.path):
            raise VaaiError(f"{where}: its store {self.path!r} is not there")
        if self.attrs["block_size"] not in ("512", "4096"):
            raise VaaiError(
                f"{where} has {self.attrs['block_size']}-byte blocks; vaai serves 512 or 4096"
            )
        if self.attrs["pi_prot_type"] != "0":
            raise VaaiError(f"{where} carries protection information, which vaai does not")
        have = store_bytes(self.path)
        if have != self.size:
            raise VaaiError(
                f"{where} serves {self.size} bytes of {self.path}, which holds {have}: a vaai "
                "LUN serves its whole store and the hosts would see the capacity change; "
                "make them agree first"
            )
        why = _pr_state(self.so)
        if why:
            raise VaaiError(
                f"{where}: {why}; they would be lost with the old backstore: have the hosts "
                "release them first"
            )
        if self.unpausable and not self.offline:
            names = ", ".join(_tpg_name(t) for t in self.unpausable)
            raise VaaiError(
                f"{where} is exported by {names}, whose sessions cannot be paused: stop the "
                "I/O to it and adopt with --offline"
            )

    def steps(self):
        """The plan as lines, for --dry-run and before the move."""
        return list(self._steps())

    def _steps(self):
        ident = ", ".join(f"{k} {v!r}" for k, v in self.identity.items())
        company = int(self.identity.get("company_id", "0"), 0) or LIO_COMPANY_ID
        naa = naa_designator(self.serial, company).hex()
        yield (
            f"adopt {self.so.plugin}/{self.name} as vaai/{self.name} on {self.path} "
            f"({self.size} bytes, {self.attrs['block_size']}-byte blocks)"
        )
        yield f"  identity: unit serial {self.serial!r} (NAA {naa}), {ident}"
        yield f"  write cache: {'on' if self.write_cache else 'off'}"
        for t in self.paused:
            yield f"  pause {_tpg_name(t)}: its sessions close and log in again after"
        yield f"  flush {self.path}"
        for group in self.dump.get("alua_tpgs", []):
            yield f"  ALUA group {group['name']} (id {group['tg_pt_gp_id']})"
        for tpg, lun, mapped in self.luns:
            yield f"  {_tpg_name(tpg)} LUN {lun['index']} (ALUA group {lun['alua_tg_pt_gp_name']})"
            for node, m in mapped:
                wp = ", read-only" if m["write_protect"] else ""
                yield f"    mapped to {node} as LUN {m['index']}{wp}"

    def run(self, say=print):
        """The move; on failure, what was there is put back."""
        where = f"{self.so.plugin}/{self.name}"
        try:
            for t in self.paused:
                say(f"pausing {_tpg_name(t)}")
                t.enable = False
            _flush(self.path)
            self.so.delete()  # its LUNs and their mappings with it
            return self._make()
        except BaseException as e:
            try:
                self._put_back()
            except (RTSLibError, VaaiError, OSError) as again:
                raise VaaiError(
                    f"adopting {where} failed ({e}), and putting it back failed too: {again}"
                ) from e
            raise VaaiError(f"adopting {where} failed, put back as it was: {e}") from e
        finally:
            self._resume(say)

    def _make(self):
        so = backstore.create(
            self.name,
            self.path,
            readonly=self.dump.get("readonly", False),
            wwn=self.serial,
            block_size=self.attrs["block_size"],
        )
        for field, value in self.identity.items():
            fwrite(f"{so.path}/wwn/{field}", value)
        so.set_attribute("emulate_write_cache", int(self.write_cache))
        self._groups(so)
        self._luns(f"/backstores/{PLUGIN}/{self.name}", _raise)
        return so

    def _groups(self, so):
        for group in self.dump.get("alua_tpgs", []):
            if group["name"] != "default_tg_pt_gp":
                ALUATargetPortGroup.setup(so, group, _raise)
                continue
            default = ALUATargetPortGroup(so, "default_tg_pt_gp")
            for param in alua_rw_params:
                value = group.get(param)
                if value is not None and getattr(default, param, None) != value:
                    setattr(default, param, value)

    def _luns(self, so_path, err):
        """The LUNs (and their mappings) made again on so_path's backstore."""
        for tpg, lun, mapped in self.luns:
            LUN.setup(tpg, dict(lun, storage_object=so_path), err)
            for node, m in mapped:
                MappedLUN.setup(tpg, NodeACL(tpg, node, mode="lookup"), m, err)

    def _put_back(self):
        """Remove what the move made, make the old backstore again."""
        with contextlib.suppress(VaaiError):
            backstore.find(self.name).delete()  # its LUNs with it
        if any(
            (so.plugin, so.name) == (self.so.plugin, self.name) for so in RTSRoot().storage_objects
        ):
            return  # it never went
        errors = []
        config.restore_so(self.dump, errors.append)
        self._luns(f"/backstores/{self.so.plugin}/{self.name}", errors.append)
        if errors:
            raise VaaiError("; ".join(errors))

    def _resume(self, say):
        for t in self.paused:
            say(f"resuming {_tpg_name(t)}")
            t.enable = True


def _write_cache(so):
    """Whether the hosts see a write cache (WCE): a fileio backstore's
    write-back setting; what a block backstore's device has (LIO asks the
    device, whatever emulate_write_cache says)."""
    if so.plugin == "fileio":
        return so.write_back
    st = os.stat(so.udev_path)
    return queue_attr(os.major(st.st_rdev), os.minor(st.st_rdev), "write_cache") == "write back"


def _can_pause(tpg):
    return os.path.isfile(f"{tpg.path}/enable")


def _tpg_name(tpg):
    target = tpg.parent_target
    return f"{target.fabric_module.name} {target.wwn} TPG {tpg.tag}"


def _flush(path):
    """Write back what the old backstore's cache holds of path (a
    write-back fileio's page cache, a block device's cache)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _raise(msg):
    raise VaaiError(msg)
