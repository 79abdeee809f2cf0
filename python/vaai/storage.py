"""The `vaai` storage object for rtslib-fb."""

import errno
import os
import stat

from rtslib_fb import RTSRoot, tcm
from rtslib_fb.utils import RTSLibError, fread

from .errors import VaaiError
from .kmsg import KernelLog
from .params import control_string, parse_info
from .profiles import queue_attr

PLUGIN = "vaai"
MODULE = "target_core_vaai"


DBROOT = "/sys/kernel/config/target/dbroot"


def ensure_dbroot():
    """LIO keeps persistent reservations (APTPL) and ALUA state in pr/ and
    alua/ under its dbroot and answers PERSISTENT RESERVE OUT with LOGICAL
    UNIT COMMUNICATION FAILURE (NOT READY, 08h/00h) when it cannot write
    there; Debian's packages do not make them."""
    try:
        root = fread(DBROOT)
    except (OSError, RTSLibError):
        return
    for sub in ("pr", "alua"):
        os.makedirs(os.path.join(root, sub), mode=0o700, exist_ok=True)


class VaaiStorageObject(tcm.StorageObject):
    """A LUN stored by target_core_vaai in a regular file or block device.

    Creation mode (path given): path is a regular file, created sparse when
    size is given and it does not exist, or a block device.  Lookup mode
    (no path): binds to the existing storage object called name.

    Restore mode (min_size given, as dump() saves it): path must exist, and
    the LUN takes the store's size now, which may have grown since the save
    but not shrunk; one saved closed is restored closed.  A restore never
    creates a store: a file that is gone or a device not yet there fails
    this LUN alone.

    online=False: the LUN is enabled with its store closed, for a block
    device that only another node may open now (DRBD's secondary), as big
    and as thin as sysfs says it is (closed_store()); set_online(True)
    opens it.
    """

    def __init__(
        self,
        name,
        path=None,
        size=None,
        readonly=False,
        wwn=None,
        index=None,
        min_size=None,
        online=True,
    ):
        if not os.path.isdir("/sys/kernel/config/target/core") or not os.path.isdir(
            f"/sys/module/{MODULE}"
        ):
            raise VaaiError(
                f"the {MODULE} module is not loaded: run 'modprobe {MODULE}' "
                f"(or insmod build/module/{os.uname().release}/{MODULE}.ko)"
            )
        if path is None:
            super().__init__(name, "lookup", index)
            return
        if min_size is not None and online:
            _check_saved_store(name, path, int(min_size))
            size = None
        unmap_unit, lbprz = 0, False
        if not online:
            have, unmap_unit, lbprz, _ = closed_store(path)
            if min_size is not None:  # saved closed: restored closed
                _check_saved_size(name, path, have, int(min_size))
                size = None
            size = have if size is None else size
        line = control_string(path, size, readonly, online, unmap_unit, lbprz)
        # RTSRoot() points LIO's dbroot at rtslib's directory, which LIO
        # only allows before the first device is enabled.
        RTSRoot()
        ensure_dbroot()
        super().__init__(name, "create", index)
        try:
            self._configure(line, path, wwn)
        except BaseException:
            self.delete()
            raise

    def _configure(self, line, path, wwn):
        with KernelLog(MODULE) as klog:
            try:
                self._control(line)
                self._set_udev_path(path)
                self._enable()
            except OSError as e:
                why = os.strerror(e.errno or errno.EIO)
                raise VaaiError(
                    f"cannot create vaai/{self.name} on {path}: {klog.why(e)} ({why})"
                ) from e
        super()._configure(wwn)

    def resize(self):
        """Take the store's size now: after it grew, the LUN's capacity
        follows and every I_T nexus gets CAPACITY DATA HAS CHANGED.  A store
        that shrank is refused."""
        path = self.path_name
        with KernelLog(MODULE) as klog:
            try:
                self._control("resize=1")
            except OSError as e:
                raise VaaiError(
                    f"cannot resize vaai/{self.name}: {klog.why(e, naming=path)}"
                ) from e

    def set_online(self, online):
        """Open the store (True) or close it (False) under the live LUN.
        Closing waits for the commands using it; until it is open again
        they are answered NOT READY, ASYMMETRIC ACCESS STATE TRANSITION.
        Only a block device store is closed."""
        what = "open" if online else "close"
        with KernelLog(MODULE) as klog:
            try:
                self._control(f"online={bool(online):d}")
            except OSError as e:
                raise VaaiError(
                    f"cannot {what} the store of vaai/{self.name}: "
                    f"{klog.why(e, naming=self.path_name)}"
                ) from e

    @property
    def online(self):
        """The store is open (commands reach it)."""
        return self._info().get("Online", "1") == "1"

    def set_attribute(self, attribute, value):
        super().set_attribute(attribute, value)
        if attribute == "block_size":
            # LIO rescales hw_max_sectors to the new block size but leaves
            # optimal_sectors, which then exceeds it and cannot be restored.
            hw_max = int(self.get_attribute("hw_max_sectors"))
            if int(self.get_attribute("optimal_sectors")) > hw_max:
                super().set_attribute("optimal_sectors", hw_max)

    def _info(self):
        return parse_info(fread(f"{self.path}/info"))

    @property
    def path_name(self):
        """The backing file or block device."""
        return self._info().get("Path", "")

    @property
    def store(self):
        """'file' or 'bdev'."""
        return self._info().get("Store", "")

    @property
    def size(self):
        """Capacity in bytes."""
        return int(self._info().get("Bytes", 0))

    @property
    def readonly(self):
        return self._info().get("Readonly") == "1"

    def dump(self):
        d = super().dump()
        d["path"] = self.path_name
        d["min_size"] = self.size
        d["readonly"] = self.readonly
        d["wwn"] = self.wwn
        d["online"] = self.online
        return d


def closed_store(path, sysfs="/sys"):
    """What the module reads of the block device at path when it opens it,
    read from sysfs without opening it (DRBD's secondary refuses every
    open): (bytes, deallocation unit or 0, LBPRZ, logical block size),
    taken as vaai_bdev.c takes them from the device's queue."""
    try:
        st = os.stat(path)
        if not stat.S_ISBLK(st.st_mode):
            raise VaaiError(f"{path} is not a block device: only a block device store is closed")
        major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
        with open(os.path.join(sysfs, "dev", "block", f"{major}:{minor}", "size")) as f:
            size = int(f.read()) * 512
    except OSError as e:
        raise VaaiError(f"{path}: {e.strerror}") from e

    def queue(name):
        return int(queue_attr(major, minor, name, sysfs) or 0)

    lbprz = queue("write_zeroes_max_bytes") != 0
    block = queue("logical_block_size") or 512
    unit = 0
    if queue("discard_max_bytes") or lbprz:
        unit = max(queue("discard_granularity"), block)
    return size, unit, lbprz, block


def store_bytes(path):
    """Bytes in the regular file or block device at path."""
    with open(path, "rb") as f:
        return f.seek(0, os.SEEK_END)


def _check_saved_size(name, path, have, min_size):
    if have < min_size:
        raise VaaiError(
            f"vaai/{name}: {path} holds {have} bytes, fewer than the {min_size} saved; a "
            "store that shrank is not restored (the LUN would lose "
            "blocks the hosts wrote)"
        )


def _check_saved_store(name, path, min_size):
    try:
        have = store_bytes(path)
    except FileNotFoundError:
        raise VaaiError(
            f"vaai/{name}: {path} does not exist (a restore does not create a "
            "store: mount or attach what holds it, then restore again)"
        ) from None
    except OSError as e:
        raise VaaiError(f"vaai/{name}: cannot open {path}: {e.strerror}") from e
    _check_saved_size(name, path, have, min_size)


def _register():
    """Make rtslib-fb know the plugin (its two registries), once."""
    tcm.so_mapping.setdefault(PLUGIN, VaaiStorageObject)
    tcm.bs_params.setdefault(VaaiStorageObject, {"name": PLUGIN})


_register()
