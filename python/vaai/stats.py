"""VAAI counters per backstore, the way esxtop's VAAI view shows them.

The module keeps one counter per file in each device's attrib/ directory
(attrib/stats_*; stats_in_flight is a gauge).  This module reads them,
turns two readings into rates, and renders a table or JSON (the
Prometheus text is collector.py's).  Reading takes a configfs root so the
host tests can point it at a fake tree.
"""

import glob
import json
import os

from .iostats import COLUMNS, CORE, as_dict

# The module's counter files, in display order: (file suffix, esxtop column).
COUNTERS = (
    ("in_flight", "ACTV"),
    ("ats", "ATS"),
    ("ats_miscompare", "ATSF"),
    ("ats_failed", "ATS_ERR"),
    ("zero", "ZERO"),
    ("zero_failed", "ZERO_F"),
    ("zero_blocks", None),
    ("clone_read", "CLONE_RD"),
    ("clone_write", "CLONE_WR"),
    ("clone_failed", "CLONE_F"),
    ("clone_read_bytes", None),
    ("clone_write_bytes", None),
    ("odx_tokens", None),
    ("odx_held_bytes", None),
    ("unmap", "UNMAP"),
    ("unmap_failed", "UNMAP_F"),
    ("unmap_blocks", None),
    ("rw_deferred", None),
)

# Files that hold a level, not a running count.
GAUGES = ("in_flight", "odx_held_bytes")

# What each rate column moves per second, in MB (10^6 bytes, as esxtop).
RATES = (
    ("MBZERO/s", "zero_bytes"),
    ("MBC_RD/s", "clone_read_bytes"),
    ("MBC_WR/s", "clone_write_bytes"),
    ("MBDEL/s", "unmap_bytes"),
)

HELP = {
    "in_flight": "requests at the backing store now (esxtop ACTV)",
    "rw_deferred": "file-store READ and WRITE commands that could not be issued "
    "without blocking and went to the workqueue",
    "ats": "COMPARE AND WRITE commands completed (esxtop ATS)",
    "ats_miscompare": "COMPARE AND WRITE commands that miscompared (ATSF)",
    "ats_failed": "COMPARE AND WRITE commands failed other than by a miscompare",
    "zero": "WRITE SAME commands (and ODX zero-token writes) completed (ZERO)",
    "zero_failed": "WRITE SAME commands (and ODX zero-token writes) failed (ZERO_F)",
    "zero_bytes": "bytes written or zeroed by WRITE SAME or the ODX zero token",
    "clone_read": "EXTENDED COPY or WRITE USING TOKEN commands that read this LUN (CLONE_RD)",
    "clone_write": "EXTENDED COPY or WRITE USING TOKEN commands that wrote this LUN (CLONE_WR)",
    "clone_failed": "EXTENDED COPY or WRITE USING TOKEN commands sent to this LUN that "
    "failed (CLONE_F)",
    "clone_read_bytes": "bytes copied out of this LUN by EXTENDED COPY or ODX",
    "clone_write_bytes": "bytes copied into this LUN by EXTENDED COPY or ODX",
    "odx_tokens": "ODX tokens POPULATE TOKEN made of this LUN's blocks",
    "odx_held_bytes": "bytes the LUN's live point-in-time ODX tokens hold in token "
    "files (shared extents; each becomes a copy when the LUN's block is written)",
    "unmap": "UNMAP commands completed",
    "unmap_failed": "UNMAP commands refused or failed",
    "unmap_bytes": "bytes deallocated by UNMAP",
}


def _read_int(path):
    with open(path) as f:
        return int(f.read().split()[0])


def read(root=CORE, names=None):
    """{backstore name: counters} for every vaai backstore (or those named),
    with the block counts also given in bytes."""
    out = {}
    for dev in sorted(glob.glob(os.path.join(root, "vaai_*", "*"))):
        attrib = os.path.join(dev, "attrib")
        name = os.path.basename(dev)
        if not os.path.isdir(attrib) or (names and name not in names):
            continue
        try:
            c = {key: _read_int(os.path.join(attrib, "stats_" + key)) for key, _ in COUNTERS}
            block = _read_int(os.path.join(attrib, "block_size"))
        except (OSError, ValueError):
            continue  # not enabled yet, or removed while we read
        c["zero_bytes"] = c["zero_blocks"] * block
        c["unmap_bytes"] = c["unmap_blocks"] * block
        out[name] = c
    return out


def rates(before, after, seconds):
    """{name: {rate column: MB/s}} between two readings `seconds` apart."""
    out = {}
    for name, now in after.items():
        then = before.get(name)
        if then is None or seconds <= 0:
            continue
        out[name] = {col: max(now[key] - then[key], 0) / 1e6 / seconds for col, key in RATES}
    return out


def _cell(value, digits):
    return "-" if value is None else f"{value:.{digits}f}"


def table(counters, mbps=None, io=None):
    """The human view: one row per backstore, esxtop's column names; with
    io (iostats.columns()), the LUN's command rates and latency first."""
    io_cols = list(COLUMNS) if io is not None else []
    cols = [col for _, col in COUNTERS if col]
    head = ["BACKSTORE"] + io_cols + cols + ([col for col, _ in RATES] if mbps is not None else [])
    rows = [head]
    for name, c in sorted(counters.items()):
        row = [name]
        if io is not None:
            r = io.get(name)
            row += [_cell(r[col], 2 if col.endswith("_ms") else 1) if r else "-" for col in io_cols]
        row += [str(c[key]) for key, col in COUNTERS if col]
        if mbps is not None:
            r = mbps.get(name)
            row += [f"{r[col]:.1f}" if r else "-" for col, _ in RATES]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))
        )
        for r in rows
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def as_json(counters, mbps=None, io=None, io_rates=None):
    """Every counter per backstore; with io (iostats.read()) the I/O
    metrics as "io", and with rates between two readings "mb_per_s" and
    "io_per_s" (iostats.columns())."""
    doc = {}
    for name, c in counters.items():
        doc[name] = dict(c)
        if mbps and name in mbps:
            doc[name]["mb_per_s"] = mbps[name]
        if io and name in io:
            doc[name]["io"] = as_dict(io[name])
        if io_rates and name in io_rates:
            doc[name]["io_per_s"] = io_rates[name]
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
