"""The data path's context switches per I/O, per side, for
docs/benchmarks.md.  The count is less tied to the emulator's speed than
CPU time is (how commands batch up still depends on timing)."""

from plots import side_label
from report_cells import num

EVENTS = """
### Context switches per I/O

Counted across the guest from /proc/stat (`ctxt`) over the same window as
CPU/IO, divided by the same I/Os: what each side costs the guest's
scheduler per command, less tied to the emulator's speed than CPU time
(how commands batch up still depends on timing).  fio and the initiator
add the same on every side.
"""


def table(rows, store):
    sides = [who for who in ("ours", "lio", "lio-aio") if who in rows[0]]
    head = ["workload"] + [side_label(store, who) for who in sides]
    out = ["| {} |".format(" | ".join(head)), "|---|" + "---:|" * len(sides)]
    out.extend(
        "| {} |".format(
            " | ".join([r["workload"]] + [num(r[who].get("ctxt_per_io"), "%.2f") for who in sides])
        )
        for r in rows
    )
    return "\n".join(out) + "\n"


def render_events(tables):
    """One table per (title, store, rows) of the data section; empty for
    results from before context switches were counted."""
    tables = [
        (title, store, rows) for title, store, rows in tables if "ctxt_per_io" in rows[0]["ours"]
    ]
    if not tables:
        return ""
    return EVENTS + "".join(
        f"\n#### {title}\n\n" + table(rows, store) for title, store, rows in tables
    )
