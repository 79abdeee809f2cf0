"""What the Prometheus exporter serves, collected the way prometheus_client
collects: each vaai LUN's I/O metrics (commands, failures, bytes and a
latency histogram per kind of command), the VAAI counters they do not
already carry, its space, and the sessions LIO's fabrics hold.

Everything is read from configfs at each scrape (and the backing file's
inode, for the space it takes), so the collector keeps no state and needs
no root: configfs' statistics are world-readable.  Every LUN's series are
labelled lun (the backstore name) and wwn (its unit serial, from which
hosts derive its NAA designator)."""

import contextlib
import glob
import os
import re

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.utils import floatToGoString

from . import iostats, stats

TARGET = "/sys/kernel/config/target"

KINDS = {
    "read": "READ commands",
    "write": "WRITE commands (WRITE AND VERIFY and WRITE ATOMIC among them)",
    "ats": "COMPARE AND WRITE (ATS) commands",
    "zero": "WRITE SAME commands (block zeroing)",
    "unmap": "UNMAP commands",
    "clone": "EXTENDED COPY (full copy) commands",
    "odx": "POPULATE TOKEN and WRITE USING TOKEN (ODX) commands",
}

# The VAAI counters (stats.COUNTERS) the per-kind metrics do not carry.
EXTRA = (
    "ats_miscompare",
    "clone_read",
    "clone_write",
    "clone_read_bytes",
    "clone_write_bytes",
    "odx_tokens",
    "rw_deferred",
)

LABELS = ["lun", "wwn"]
SESSION_LABELS = ["fabric", "target", "tpg", "initiator"]


def _text(path):
    with open(path) as f:
        return f.read()


def identity(dev):
    """(unit serial, provisioned bytes, backing path, soft threshold in %)
    of a vaai device directory; None where configfs would not say."""
    # LIO's own part of info ends in spaces, not a newline: the backend's
    # "Path: " follows them on the same line.
    info = _text(os.path.join(dev, "info"))
    path = re.search(r"(?:^|\s)Path: (.*)$", info, re.MULTILINE)
    nbytes = re.search(r"^Bytes: (\d+)$", info, re.MULTILINE)
    serial = _text(os.path.join(dev, "wwn", "vpd_unit_serial")).rpartition(":")[2].strip()
    threshold = _text(os.path.join(dev, "attrib", "tp_soft_threshold")).strip()
    return (
        serial,
        int(nbytes.group(1)) if nbytes else 0,
        path.group(1).strip() if path else "",
        int(threshold or 0),
    )


def space(path):
    """(bytes allocated to the backing file, bytes free for it on its file
    system) of a file store; (None, None) for a block device or a file the
    caller may not look at."""
    try:
        st = os.stat(path)
        if not os.path.isfile(path):
            return None, None
        fs = os.statvfs(path)
    except OSError:
        return None, None
    return st.st_blocks * 512, fs.f_bavail * fs.f_frsize


def _luns(core):
    """{name: (device directory, unit serial, bytes, path, threshold)} of
    each vaai device."""
    out = {}
    for dev in sorted(glob.glob(os.path.join(core, "vaai_*", "*"))):
        try:
            out[os.path.basename(dev)] = (dev, *identity(dev))
        except (OSError, ValueError):
            continue  # not enabled yet, or removed as we read
    return out


def _logged_in(acl, luns):
    """Has the ACL's initiator a session now?  iSCSI says so in the ACL's
    info; for the other fabrics, a mapped LUN's attached-port statistics
    exist only while a session does (None: no LUN to ask)."""
    try:
        return not _text(os.path.join(acl, "info")).startswith("No active")
    except OSError:
        pass
    if not luns:
        return None
    try:
        _text(os.path.join(luns[0], "statistics", "scsi_att_intr_port", "port_ident"))
    except OSError:
        return False
    return True


def sessions(root=TARGET):
    """(fabric, target, tpg, initiator, LUNs mapped, logged in) for each
    ACL of every fabric, and for each tcm_loop nexus (all its TPG's LUNs)."""
    for acl in sorted(glob.glob(os.path.join(root, "*", "*", "tpgt_*", "acls", "*"))):
        parts = acl.split(os.sep)
        luns = sorted(glob.glob(os.path.join(acl, "lun_*")))
        yield parts[-5], parts[-4], parts[-3][5:], parts[-1], len(luns), _logged_in(acl, luns)
    for tpg in sorted(glob.glob(os.path.join(root, "loopback", "*", "tpgt_*"))):
        try:
            nexus = _text(os.path.join(tpg, "nexus")).strip()
        except OSError:
            continue
        if nexus:
            parts = tpg.split(os.sep)
            luns = glob.glob(os.path.join(tpg, "lun", "lun_*"))
            yield "loopback", parts[-2], parts[-1][5:], nexus, len(luns), True


def _buckets(hist):
    """prometheus_client's cumulative (upper bound in seconds, count) pairs
    of a histogram of log2-µs buckets."""
    out, total = [], 0
    for (_lo, hi), n in zip(iostats.BOUNDS, hist):
        total += n
        out.append((floatToGoString(hi / 1e6), total))
    return out


class VaaiCollector:
    """A prometheus_client collector over one configfs tree."""

    def __init__(self, root=TARGET, names=None):
        """names: the LUNs (vaai backstores) whose metrics to give, all
        when None; the sessions are given whole either way."""
        self.root = root
        self.core = os.path.join(root, "core")
        self.names = names

    def collect(self):
        luns = _luns(self.core)
        if self.names:
            luns = {name: lun for name, lun in luns.items() if name in self.names}
        io = iostats.read(self.core)
        counters = stats.read(self.core)
        yield from self._io(luns, io)
        yield from self._counters(luns, counters)
        yield from self._space(luns)
        yield from self._sessions()

    def _io(self, luns, io):
        for kind, what in KINDS.items():
            cmds = CounterMetricFamily(
                f"vaai_lun_{kind}_commands", f"{what} completed, failed ones too", labels=LABELS
            )
            errors = CounterMetricFamily(
                f"vaai_lun_{kind}_errors", f"{what} that failed or were refused", labels=LABELS
            )
            moved = CounterMetricFamily(
                f"vaai_lun_{kind}_bytes", f"bytes {what} read, wrote or zeroed", labels=LABELS
            )
            lat = HistogramMetricFamily(
                f"vaai_lun_{kind}_latency_seconds",
                f"latency of {what}, from arrival at the backend to the answer",
                labels=LABELS,
            )
            for name, ops in sorted(io.items()):
                if name not in luns:
                    continue
                op, labels = ops[kind], [name, luns[name][1]]
                cmds.add_metric(labels, op.cmds)
                errors.add_metric(labels, op.errors)
                moved.add_metric(labels, op.bytes)
                lat.add_metric(labels, _buckets(op.hist), op.lat_us / 1e6)
            yield from (cmds, errors, moved, lat)
        waits = CounterMetricFamily(
            "vaai_lun_range_lock_waits",
            "commands that waited for a block range another command held",
            labels=LABELS,
        )
        waited = CounterMetricFamily(
            "vaai_lun_range_lock_wait_seconds",
            "time commands spent waiting for block ranges",
            labels=LABELS,
        )
        worst = GaugeMetricFamily(
            "vaai_lun_ats_worst_latency_seconds",
            "the slowest COMPARE AND WRITE of the last minute (VMFS heartbeats)",
            labels=LABELS,
        )
        counting = GaugeMetricFamily(
            "vaai_lun_io_stats_enabled",
            "1 while the LUN counts its I/O metrics (attrib/io_stats); at 0 they stand still",
            labels=LABELS,
        )
        for name, (dev, serial, *_rest) in sorted(luns.items()):
            attrib = os.path.join(dev, "attrib")
            try:
                n, us = (int(x) for x in _text(os.path.join(attrib, "stats_lock_wait")).split())
                ats = int(_text(os.path.join(attrib, "stats_ats_worst_us")))
                on = int(_text(os.path.join(attrib, "io_stats")))
            except (OSError, ValueError):
                continue
            waits.add_metric([name, serial], n)
            waited.add_metric([name, serial], us / 1e6)
            worst.add_metric([name, serial], ats / 1e6)
            counting.add_metric([name, serial], on)
        yield from (waits, waited, worst, counting)

    def _counters(self, luns, counters):
        for key in ("in_flight", *EXTRA):
            if key in stats.GAUGES:
                family = GaugeMetricFamily(
                    f"vaai_lun_{key}_requests", stats.HELP[key], labels=LABELS
                )
            else:
                family = CounterMetricFamily(f"vaai_lun_{key}", stats.HELP[key], labels=LABELS)
            for name, c in sorted(counters.items()):
                if name in luns:
                    family.add_metric([name, luns[name][1]], c[key])
            yield family

    def _space(self, luns):
        size = GaugeMetricFamily(
            "vaai_lun_size_bytes", "the LUN's capacity (provisioned)", labels=LABELS
        )
        used = GaugeMetricFamily(
            "vaai_lun_allocated_bytes",
            "bytes the backing file takes on its file system (file stores only)",
            labels=LABELS,
        )
        free = GaugeMetricFamily(
            "vaai_lun_store_free_bytes",
            "bytes free on the backing file's file system (file stores only)",
            labels=LABELS,
        )
        soft = GaugeMetricFamily(
            "vaai_lun_soft_threshold_ratio",
            "the thin-provisioning soft threshold, a fraction of the capacity (0: off)",
            labels=LABELS,
        )
        held = GaugeMetricFamily(
            "vaai_lun_odx_held_bytes", stats.HELP["odx_held_bytes"], labels=LABELS
        )
        for name, (dev, serial, nbytes, path, threshold) in sorted(luns.items()):
            labels = [name, serial]
            size.add_metric(labels, nbytes)
            soft.add_metric(labels, threshold / 100)
            allocated, avail = space(path)
            if allocated is not None:
                used.add_metric(labels, allocated)
                free.add_metric(labels, avail)
            with contextlib.suppress(OSError, ValueError):  # an older module
                held.add_metric(
                    labels, int(_text(os.path.join(dev, "attrib", "stats_odx_held_bytes")))
                )
        yield from (size, used, free, soft, held)

    def _sessions(self):
        up = GaugeMetricFamily(
            "vaai_session_up",
            "1 while the initiator is logged in to the target portal group, else 0",
            labels=SESSION_LABELS,
        )
        mapped = GaugeMetricFamily(
            "vaai_session_mapped_luns",
            "LUNs the initiator is given in the target portal group",
            labels=SESSION_LABELS,
        )
        for fabric, target, tpg, initiator, n, logged_in in sessions(self.root):
            labels = [fabric, target, tpg, initiator]
            mapped.add_metric(labels, n)
            if logged_in is not None:
                up.add_metric(labels, int(logged_in))
        yield from (up, mapped)
