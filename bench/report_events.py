"""The data path's context switches and interrupts per I/O, per side, for
docs/benchmarks.md.  Unlike CPU time, these counts do not depend on how
fast the emulator runs the guest's code."""
from plots import LABEL, LIO_NAME

EVENTS = """
### Context switches and interrupts per I/O

Counted across the guest from /proc/stat (`ctxt`; `intr`, which holds
device interrupts, timer ticks and inter-processor interrupts) over the
same window as CPU/IO, divided by the same I/Os: what each side costs the
guest's scheduler per command, whatever the emulator's speed.  fio and the
initiator add the same on every side.
"""
KEYS = (("ctxt_per_io", "ctxsw/IO"), ("intr_per_io", "intr/IO"))


def side_name(store, who):
    return LABEL[who].replace("LIO", LIO_NAME[store])


def table(rows, store, sides):
    head = ["workload"] + ["%s %s" % (what, side_name(store, who))
                           for _, what in KEYS for who in sides]
    out = ["| %s |" % " | ".join(head), "|---|" + "---:|" * (len(head) - 1)]
    for r in rows:
        cells = [r["workload"]]
        for key, _ in KEYS:
            cells += ["n/a" if r[who].get(key) is None else "%.2f" % r[who][key]
                      for who in sides]
        out.append("| %s |" % " | ".join(cells))
    return "\n".join(out) + "\n"


def render_events(results, titles):
    """The tables, one per store and fabric measured (titles: (store,
    fabric) -> heading); empty for results from before these were counted."""
    rows = [r for r in results if r.get("table", True) and "ctxt_per_io" in r["ours"]]
    if not rows:
        return ""
    text = EVENTS
    for (store, fabric), title in titles.items():
        sel = [r for r in rows if r["store"] == store and r["fabric"] == fabric]
        if sel:
            sides = [who for who in ("ours", "lio", "lio-aio") if who in sel[0]]
            text += "\n#### %s\n\n" % title + table(sel, store, sides)
    return text
