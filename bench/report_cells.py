"""What every table of docs/benchmarks.md shares: how a figure is written
in a cell, LIO's best at a data-path point, and the titles of stores and
fabrics; used by report.py and its section modules."""

import json

STORE_TITLE = {"file": "file store (XFS on a RAM disk)", "bdev": "block store (RAM disk)"}
FABRIC_TITLE = {"loop": "tcm_loop", "iscsi": "iSCSI"}

# What a data-path run measured with: runs compared must agree on them.
SETTINGS = ("rounds", "runtime_s", "lun_bytes", "kernel", "clocksource")


def num(v, spec):
    """A figure, or n/a where it was not measured."""
    return "n/a" if v is None else spec % v


def ratio(a, b):
    """a over b to two places, or n/a where either is missing or zero."""
    return "%.2f" % (a / b) if a and b else "n/a"


def best(r, key):
    """LIO's best value of key at this point, over its backstores."""
    vals = [r[who][key] for who in ("lio", "lio-aio") if who in r and r[who][key]]
    if not vals:
        return None
    return max(vals) if key in ("iops", "mbps") else min(vals)


def run_fabrics(run):
    """The fabrics a data-path run measured, in the page's order."""
    return sorted({r["fabric"] for r in run["results"]}, key=list(FABRIC_TITLE).index)


def need_ours(runs, what):
    """Refuse data-path runs (of one section, what) with a point that has
    no figure of ours (guest_bench.py --side without ours)."""
    if any("ours" not in r for run in runs for r in run["results"]):
        raise SystemExit(
            f"report.py: a {what} run has a point without ours "
            "(guest_bench.py --side without ours?)"
        )


def same_settings(runs, what, keys=SETTINGS):
    """Refuse runs (of one section, what) that were measured with
    different settings (keys of their meta; a data-path run's by default)."""
    for key in keys:
        if len({json.dumps(run["meta"].get(key)) for run in runs}) > 1:
            raise SystemExit(f"report.py: the {what} runs differ in {key}")


def boot_dates(runs, parts):
    """Each boot's date with what it measured (parts(run): names)."""
    return "; ".join(
        "{} ({})".format(run["meta"].get("date", "?"), ", ".join(parts(run))) for run in runs
    )


def store_tables(data, titles, columns, cells, after=None):
    """A table per store of data's results (titles: store -> its heading),
    in titles' order: columns, then cells(row, rows) of each of the
    store's rows; after(rows), if given, below each table."""
    text = ""
    for store, title in titles.items():
        rows = [r for r in data["results"] if r["store"] == store]
        if not rows:
            continue
        text += f"\n### {title}\n\n" + columns
        for r in rows:
            text += "| {} |\n".format(" | ".join(cells(r, rows)))
        if after:
            text += after(rows)
    return text
