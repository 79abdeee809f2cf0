"""Moving an LIO fileio or block (iblock) backstore to a vaai one in place.

The hosts must see the same device afterwards: the same unit serial (and
with it the NAA designator LIO derives from it), company id, vendor,
product and revision, capacity and block size, on the same LUN numbers
with the same mappings and ALUA groups.  LIO cannot change the backstore
behind a live LUN, so the LUNs are made again; while that happens no
command may reach them, or a host would be told the LUN is gone (or, for
LUN 0 of a demo-mode TPG, be answered by LIO's virtual LUN 0).  So every
TPG that exports the backstore is disabled first (and with it every other
LUN it has): its sessions close, and the initiators retry their logins
(iSCSI's replacement timeout, FC's dev_loss_tmo hold the I/O) until the
TPG is enabled again.  A fabric whose TPGs cannot be disabled (tcm_loop,
tcm_fc) gets the move only with --offline, the admin's word that nothing
uses the LUN.

Everything is checked before anything changes (reservations again once
the TPGs are paused); a step that fails puts the old backstore, its
identity, ALUA groups, LUNs and mappings back, and every TPG is enabled
again, or named when it cannot be."""

import contextlib
import os

from rtslib_fb import RTSRoot
from rtslib_fb.utils import RTSLibError

from . import backstore, config
from .errors import VaaiError
from .params import LIO_COMPANY_ID, naa_designator
from .profiles import queue_attr
from .relink import can_pause, flush, groups, identity, luns, read, signals_raised, tpg_name
from .storage import PLUGIN, store_bytes

ADOPTABLE = ("fileio", "block")
# The inquiry data and designators a host tells a device by, under the
# backstore's wwn/ directory; company_id only on kernels that have it.
IDENTITY = ("vendor_id", "product_id", "revision", "company_id")
# LIO core's settings a host can see the effect of, carried over as they
# are (the esxi profile's own, VAAI's, are what the move is for).
CARRIED = (
    "emulate_tas",
    "emulate_ua_intlck_ctrl",
    "emulate_fua_write",
    "emulate_pr",
    "force_pr_aptpl",
    "enforce_pr_isids",
    "emulate_rest_reord",
)
# pr/res_holder when nothing is held, or reservations are not LIO's to hold
NO_HOLDER = ("No ", "SPC_RESERVATIONS_DISABLED", "Passthrough")
DEFAULT_LU_GP = "default_lu_gp"


def _source(spec):
    """The fileio or block backstore spec names ("NAME", "fileio/NAME")."""
    plugin, _, name = spec.rpartition("/")
    objs = [
        so
        for so in RTSRoot().storage_objects
        if so.name == name and (so.plugin == plugin if plugin else so.plugin != PLUGIN)
    ]
    if not objs:
        if not plugin and any(so.name == name for so in RTSRoot().storage_objects):
            raise VaaiError(f"{name} is a vaai backstore already")
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


def _backstore(plugin, name):
    """The backstore plugin/name as configfs has it now, or None."""
    return next(
        (so for so in RTSRoot().storage_objects if (so.plugin, so.name) == (plugin, name)), None
    )


def _pr_state(so):
    """Why so's reservations forbid the move (None: there are none).  They
    live in the device LIO drops with the old backstore."""
    # "SPC-3 PR Registrations:", then one line per key or "None"
    regs = (read(so, "pr/res_pr_registered_i_pts") or "").splitlines()[1:]
    holder = read(so, "pr/res_holder")
    if regs and regs != ["None"]:
        return "persistent reservation keys are registered"
    if holder and not holder.startswith(NO_HOLDER):
        return "a reservation is held"
    return None


def _lu_gp(so):
    """The ALUA logical unit group so is in, when not LIO's default."""
    text = read(so, "alua_lu_gp") or ""
    alias = text.splitlines()[0].partition(":")[2].strip() if text else ""
    return alias if alias and alias != DEFAULT_LU_GP else None


class Plan:
    """What adopting one backstore does, found and checked before any
    change: the dumps of everything to make again, and the refusals."""

    def __init__(self, spec, offline=False):
        self.so = so = _source(spec)
        self.name = so.name
        self.where = f"{so.plugin}/{so.name}"
        self.path = so.udev_path
        if not self.path or not os.path.exists(self.path):
            raise VaaiError(f"{self.where}: its store {self.path!r} is not there")
        self.size = so.size
        self.dump = so.dump()
        self.attrs = {
            a: v
            for a in ("block_size", "pi_prot_type", *CARRIED)
            if (v := read(so, f"attrib/{a}")) is not None
        }
        self.write_cache = _write_cache(so)
        self.identity = {f: v for f in IDENTITY if (v := read(so, f"wwn/{f}")) is not None}
        self.lu_gp = _lu_gp(so)
        self.serial = so.wwn
        self.luns = []  # (tpg, LUN dump, [(acl node_wwn, MappedLUN dump)])
        for lun in so.attached_luns:
            tpg = lun.parent_tpg
            mapped = [(m.parent_nodeacl.node_wwn, m.dump()) for m in lun.mapped_luns]
            self.luns.append((tpg, lun.dump(), mapped))
        tpgs = {tpg.path: tpg for tpg, _, _ in self.luns}
        self.paused = [t for t in tpgs.values() if can_pause(t) and t.enable]
        self.unpausable = [t for t in tpgs.values() if not can_pause(t)]
        self.offline = offline
        self._check()

    def _check(self):
        where = self.where
        if _backstore(PLUGIN, self.name):
            raise VaaiError(f"{where}: a vaai backstore is called {self.name} already")
        if self.attrs["block_size"] not in ("512", "4096"):
            raise VaaiError(
                f"{where} has {self.attrs['block_size']}-byte blocks; vaai serves 512 or 4096"
            )
        if self.attrs.get("pi_prot_type", "0") != "0":
            raise VaaiError(f"{where} carries protection information, which vaai does not")
        have = store_bytes(self.path)
        if have != self.size:
            raise VaaiError(
                f"{where} serves {self.size} bytes of {self.path}, which holds {have}: a vaai "
                "LUN serves its whole store and the hosts would see the capacity change; "
                f"make them agree first (truncate -s {self.size} for a file)"
            )
        self._check_reservations()
        if self.unpausable and not self.offline:
            names = ", ".join(tpg_name(t) for t in self.unpausable)
            raise VaaiError(
                f"{where} is exported by {names}, whose sessions cannot be paused: stop the "
                "I/O to it and adopt with --offline"
            )

    def _check_reservations(self):
        why = _pr_state(self.so)
        if why:
            raise VaaiError(
                f"{self.where}: {why}; they would be lost with the old backstore: have the "
                "hosts unregister their keys (PERSISTENT RESERVE OUT, REGISTER with service "
                "action key 0, or CLEAR) first"
            )

    def steps(self):
        """The plan as lines, for --dry-run and before the move."""
        return list(self._steps())

    def _steps(self):
        ident = ", ".join(f"{k} {v!r}" for k, v in self.identity.items())
        company = int(self.identity.get("company_id", "0"), 0) or LIO_COMPANY_ID
        naa = naa_designator(self.serial, company).hex()
        yield (
            f"adopt {self.where} as vaai/{self.name} on {self.path} "
            f"({self.size} bytes, {self.attrs['block_size']}-byte blocks)"
        )
        yield f"  identity: unit serial {self.serial!r} (NAA {naa}), {ident}"
        yield f"  write cache: {'on' if self.write_cache else 'off'}"
        if self.lu_gp:
            yield f"  ALUA logical unit group: {self.lu_gp}"
        for t in self.paused:
            yield f"  pause {tpg_name(t)}: its sessions close and log in again after"
            for lun in t.luns:
                so = lun.storage_object
                if (so.plugin, so.name) != (self.so.plugin, self.name):
                    yield f"    its LUN {lun.lun} ({so.plugin}/{so.name}) pauses too"
        yield f"  flush {self.path}"
        for group in self.dump.get("alua_tpgs", []):
            yield f"  ALUA group {group['name']} (id {group['tg_pt_gp_id']})"
        for tpg, lun, mapped in self.luns:
            yield f"  {tpg_name(tpg)} LUN {lun['index']} (ALUA group {lun['alua_tg_pt_gp_name']})"
            for node, m in mapped:
                wp = ", read-only" if m["write_protect"] else ""
                yield f"    mapped to {node} as LUN {m['index']}{wp}"
        for line in _differences(self.so):
            yield f"  the hosts will see {line}"

    def run(self, say=print):
        """The move; on failure, what was there is put back.  Every paused
        TPG is enabled again, or named in the error when it cannot be."""
        made = failure = None
        with signals_raised():
            try:
                for t in self.paused:
                    say(f"pausing {tpg_name(t)}")
                    t.enable = False
                self._check_reservations()  # none can come in now
                self.so.delete()  # its groups, LUNs and their mappings with it
                flush(self.path)
                made = self._make()
            except BaseException as e:  # every failure is put back
                failure = self._failed(e)
            left = self._resume(say)
        if left:
            paths = ", ".join(f"{t.path}/enable" for t in left)
            what = f"left disabled, write 1 to {paths}"
            if failure:
                raise VaaiError(f"{failure}; {what}") from failure.__cause__
            raise VaaiError(f"adopted vaai/{self.name}, but {what}")
        if failure:
            raise failure
        return made

    def _failed(self, e):
        why = str(e) or type(e).__name__
        try:
            self._put_back()
        except (RTSLibError, VaaiError, OSError) as again:
            err = VaaiError(
                f"adopting {self.where} failed ({why}), and putting it back failed too: {again}"
            )
        else:
            err = VaaiError(f"adopting {self.where} failed, put back as it was: {why}")
        err.__cause__ = e
        return err

    def _make(self):
        so = backstore.create(
            self.name,
            self.path,
            readonly=self.dump.get("readonly", False),
            wwn=self.serial,
            block_size=self.attrs["block_size"],
        )
        identity(so, self.identity, self.lu_gp)
        so.set_attribute("emulate_write_cache", int(self.write_cache))
        for attr in CARRIED:
            if attr in self.attrs and so.get_attribute(attr) != self.attrs[attr]:
                so.set_attribute(attr, self.attrs[attr])
        groups(so, self.dump.get("alua_tpgs", []))
        luns(so, self.luns, _raise)
        return so

    def _put_back(self):
        """Remove what the move made, make again what it removed."""
        with contextlib.suppress(VaaiError):
            backstore.find(self.name).delete()  # its LUNs with it
        old = _backstore(self.so.plugin, self.name)
        errors = []
        if old is None:
            config.restore_so(self.dump, errors.append)
            old = _backstore(self.so.plugin, self.name)
            if old is None:
                raise VaaiError("; ".join(errors))
            identity(old, self.identity, self.lu_gp)
        groups(old, self.dump.get("alua_tpgs", []))  # what a halfway delete removed
        luns(old, self.luns, errors.append)
        if errors:
            raise VaaiError("; ".join(errors))

    def _resume(self, say):
        """Enable every paused TPG; those that would not be."""
        left = []
        for t in self.paused:
            say(f"resuming {tpg_name(t)}")
            try:
                t.enable = True
            except (RTSLibError, OSError):
                left.append(t)
        return left


def _differences(so):
    """What the hosts see of so that a vaai backstore on its store will
    not show: a block device's physical block size, which
    target_core_iblock reports in READ CAPACITY(16)."""
    if so.plugin != "block":
        return
    st = os.stat(so.udev_path)
    dev = (os.major(st.st_rdev), os.minor(st.st_rdev))
    logical = int(queue_attr(*dev, "logical_block_size") or 512)
    physical = int(queue_attr(*dev, "physical_block_size") or logical)
    if physical > logical:
        yield (
            f"{logical}-byte physical blocks where they saw {physical} (READ CAPACITY(16)'s "
            "LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT)"
        )


def _write_cache(so):
    """Whether the hosts see a write cache (WCE): a fileio backstore's
    write-back setting; what a block backstore's device has (LIO asks the
    device, whatever emulate_write_cache says)."""
    if so.plugin == "fileio":
        return so.write_back
    st = os.stat(so.udev_path)
    return queue_attr(os.major(st.st_rdev), os.minor(st.st_rdev), "write_cache") == "write back"


def _raise(msg):
    raise VaaiError(msg)
