"""Render bench results (JSON from guest_bench.py, guest_thin.py,
guest_caw.py, guest_ats.py, guest_space.py, guest_clone.py and
guest_profile.py) into
docs/benchmarks.md.

    report.py [--data RESULTS.json ...] [--boots RESULTS.json ...]
              [--profile PROFILE.json] [--gaps PROFILE.json ...]
              [--durability DURABILITY.json] [--metrics METRICS.json]
              [--odxcheck ODXCHECK.json]
              [--thin THIN.json] [--caw CAW.json] [--ats ATS.json ...]
              [--space SPACE.json]
              [--clone CLONE.json ...] OUT.md

OUT.md is written by hand but for its measured blocks, each between
<!-- section:NAME --> and <!-- /section:NAME -->: each section given is
rendered anew into its block (the run that measured it, its tables, for
the data path its plots, PNG files beside OUT.md); everything else,
the prose that says how each figure is measured included, stays as it is.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from report_ats import merge_ats, render_ats
from report_boots import render_boots
from report_cells import (
    FABRIC_TITLE,
    STORE_TITLE,
    best,
    boot_dates,
    need_ours,
    num,
    ratio,
    run_fabrics,
    same_settings,
)
from report_durability import render_durability
from report_events import render_events
from report_metrics import render_metrics, render_odxcheck
from report_profile import render_gaps, render_profile
from report_space import render_space

DATA = (
    "`bench/guest_bench.py`, measured {date} (kernel {kernel}), the sides of "
    "each table in the same boot: file LUNs of {lun_mib} MiB; over {fabrics}; "
    "{runtime} s per run after 1 s of warm-up, {rounds}; the guest's clocksource "
    "was `{clocksource}`{clock_check}.\n"
)


DATA_COLS = (
    "| workload | IOPS ours | IOPS LIO | ratio | MB/s ours | MB/s LIO "
    "| mean µs ours | mean µs LIO | p99 µs ours | p99 µs LIO | ratio "
    "| CPU µs/IO ours | CPU µs/IO LIO | ratio |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
)


def row(r):
    o = r["ours"]
    lb = {k: best(r, k) for k in o}
    cells = [r["workload"]]
    for key, spec, rated in (
        ("iops", "%.0f", True),
        ("mbps", "%.1f", False),
        ("lat_mean_us", "%.0f", False),
        ("lat_p99_us", "%.0f", True),
        ("cpu_us_per_io", "%.1f", True),
    ):
        cells += [num(o[key], spec), num(lb[key], spec)]
        if rated:
            cells.append(ratio(o[key], lb[key]))
    return "| {} |".format(" | ".join(cells))


FABRIC_TEXT = {
    "loop": "tcm_loop",
    "iscsi": "iSCSI over 127.0.0.1 with the `esxi` TPG profile (CmdSN window "
    "128) and open-iscsi queueing 128 commands per LUN",
}


def meets(r, key, factor=1.0):
    """Ours at least as good as LIO's best at this point, by factor."""
    ours, lio = r["ours"][key], best(r, key)
    if ours is None or lio is None:
        return False
    return ours >= lio * factor if key in ("iops", "mbps") else ours <= lio * factor


def targets(rows):
    """How many table points meet each of the issue's targets."""
    n = len(rows)
    iops = sum(1 for r in rows if meets(r, "iops"))
    p99 = sum(1 for r in rows if meets(r, "lat_p99_us"))
    file_rows = [r for r in rows if r["store"] == "file"]
    cpu = sum(1 for r in file_rows if meets(r, "cpu_us_per_io", 0.85))
    return (
        f"\nOf the {n} points above: IOPS at least LIO's best at {iops}; p99 no "
        f"higher at {p99}; on the file store, CPU/IO at least 15 % below LIO's "
        f"best at {cpu} of {len(file_rows)}.\n"
    )


def clock_check(meta):
    """What guestlib.clock_check() saw before the run, if it ran."""
    c = meta.get("clock_check")
    if not c:
        return ""
    text = (
        f" (a process moved {c['moves']} times between two CPUs: their monotonic "
        f"clocks agree within {c['skew_bound_ns'] / 1e3:.0f} µs"
    )
    if c["back_ns"]:
        return text + f", and went back by up to {c['back_ns']} ns)"
    return text + " and never went back)"


def render_data(data, plots):
    m = data["meta"]
    need_ours([data], "data")
    fabrics = [FABRIC_TEXT[f] for f in m.get("fabrics", run_fabrics(data))]
    rounds = (
        "one round: each figure is a single run (one side's IOPS move by about 20 % between runs)"
        if m["rounds"] == 1
        else f"{m['rounds']} rounds, rotating which side runs first; each figure is the "
        "median of the rounds"
    )
    text = DATA.format(
        date=m["date"],
        kernel=m["kernel"],
        lun_mib=m["lun_bytes"] >> 20,
        runtime=m["runtime_s"],
        rounds=rounds,
        fabrics=", and ".join(fabrics),
        clocksource=m.get("clocksource", "not recorded"),
        clock_check=clock_check(m),
    )
    rows = [r for r in data["results"] if r.get("table", True)]
    tables = []
    for fabric in ("loop", "iscsi"):
        for store in ("file", "bdev"):
            sel = [
                r
                for r in rows
                if r["fabric"] in (fabric, "tcm_loop" if fabric == "loop" else fabric)
                and r["store"] == store
            ]
            if sel:
                title = f"{STORE_TITLE[store]} over {FABRIC_TITLE[fabric]}"
                tables.append((title, store, sel))
                text += f"\n### {title}\n\n"
                text += DATA_COLS + "\n".join(row(r) for r in sel) + "\n"
    text += targets(rows)
    text += render_events(tables)
    for name, what in plots:
        text += f"\n![{what}]({name})\n"
    return text


THIN = """`bench/guest_thin.py`, measured {date}.

| step | seconds ours | seconds LIO | ratio | seconds ours, WC on | allocated ours | allocated LIO |
|---|---:|---:|---:|---:|---:|---:|
"""


def mib(n):
    return "%.0f MiB" % (n / (1 << 20))


def render_thin(data):
    o, lio = data["results"]["ours"], data["results"]["lio"]
    wb = data["results"]["ours_wb"]
    rows = [
        "| {} | {:.2f} | {:.2f} | {} | {:.2f} | {} | {} |".format(
            step,
            o[step]["seconds"],
            lio[step]["seconds"],
            ratio(o[step]["seconds"], lio[step]["seconds"]),
            wb[step]["seconds"],
            mib(o[step]["allocated"]),
            mib(lio[step]["allocated"]),
        )
        for step in ("zero", "unmap", "host")
    ]
    return THIN.format(date=data.get("meta", {}).get("date", "?")) + "\n".join(rows) + "\n"


CAW = """`bench/guest_caw.py`, measured {date}.

| streams | CAW/s ours | CAW/s LIO | ratio | p99 µs ours | p99 µs LIO | ratio |
|---|---:|---:|---:|---:|---:|---:|
"""


def render_caw(data):
    o, lio = data["results"]["ours"], data["results"]["lio"]
    rows = [
        "| {} | {:.0f} | {:.0f} | {} | {:.0f} | {:.0f} | {} |".format(
            name,
            o[name]["caw_per_s"],
            lio[name]["caw_per_s"],
            ratio(o[name]["caw_per_s"], lio[name]["caw_per_s"]),
            o[name]["p99_us"] or 0,
            lio[name]["p99_us"] or 0,
            ratio(o[name]["p99_us"], lio[name]["p99_us"]),
        )
        for name in ("disjoint-1", "disjoint-8", "disjoint-32", "same-8", "beside-1m")
    ]
    writer = (
        "\nDuring beside-1m the sequential writer moved {:.0f} MB/s on ours and "
        "{:.0f} MB/s on LIO.\n".format(
            o["beside-1m"].get("writer_mbps", 0), lio["beside-1m"].get("writer_mbps", 0)
        )
    )
    return CAW.format(date=data.get("meta", {}).get("date", "?")) + "\n".join(rows) + "\n" + writer


CLONE_COLS = (
    "fs",
    "size",
    "copy",
    "command",
    "in flight",
    "seconds ours",
    "seconds LIO",
    "LIO/ours",
    "seconds host",
    "host/ours",
    "new space ours",
    "new space LIO",
    "shared ours",
    "shared LIO",
)
CLONE = (
    "`bench/guest_clone.py`, measured {date} (kernel {kernel}), ours and LIO\n"
    "in the same boot; host: `dd iflag=direct oflag=direct bs={host_mib}M`{rounds}.\n\n"
    "| " + " | ".join(CLONE_COLS) + " |\n|---|---|---|---|" + "---:|" * 10 + "\n"
)


def size_label(n):
    return f"{n >> 30} GiB" if n >= 1 << 30 and n % (1 << 30) == 0 else mib(n)


def _get(m, key):
    """A measured value, or None where the side was not measured or failed."""
    return None if not m or "error" in m else m[key]


def _secs(m):
    if m and "error" in m:
        return "failed"
    v = _get(m, "seconds")
    if v is None:
        return "n/a"
    return f"{v:.2f}" if v >= 0.1 else f"{v:.3f}"  # a reflink can take milliseconds


def _bytes(m, key):
    v = _get(m, key)
    return "n/a" if v is None else mib(v)


def render_clone(data):
    res = data["results"]

    def key(r):  # runs before 2026-11-29 had one initiator
        return r["fs"], r["size"], r["copy"], r.get("initiators", 1)

    host = {key(r): r["ours"] for r in res if r["method"] == "host"}
    rows = []
    for r in res:
        if r["method"] != "xcopy":
            continue
        o, lio = r.get("ours"), r.get("lio")
        h = host.get(key(r))
        depth = r.get("depth", 1)  # runs before 2026-11-28 sent one at a time
        n = r.get("initiators", 1)
        rows.append(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
                r["fs"],
                size_label(r["size"]),
                r["copy"],
                size_label(r["cmd_bytes"]),
                depth if n == 1 else f"{depth} each from {n} initiators",
                _secs(o),
                _secs(lio),
                ratio(_get(lio, "seconds"), _get(o, "seconds")),
                _secs(h),
                ratio(_get(h, "seconds"), _get(o, "seconds")),
                _bytes(o, "fs_used"),
                _bytes(lio, "fs_used"),
                _bytes(o, "shared"),
                _bytes(lio, "shared"),
            )
        )
    m = data["meta"]
    text = (
        CLONE.format(
            host_mib=m.get("host_bs", 4 << 20) >> 20,
            date=m.get("date", "?"),
            kernel=m.get("kernel", "?"),
            rounds=(
                f"; seconds: the median of {m['rounds']} rounds, interleaved"
                if m.get("rounds", 1) > 1
                else ""
            ),
        )
        + "\n".join(rows)
        + "\n"
    )
    skipped = m.get("skipped", [])
    if skipped:
        budget = (
            f"{m['budget_s']:d} s of guest time"
            if m.get("budget_s")
            else "the run's budget of guest time"
        )
        text += (
            "\nNot measured (a small run per file system first estimates the "
            f"rest, which must fit in {budget} and in its memory):\n\n"
        )
        text += "".join(
            "- {}, {}: {}\n".format(s["fs"], size_label(s["size"]), s["reason"]) for s in skipped
        )
    return text


# The page's measured blocks, each rendered from its own JSON.
SECTIONS = (
    "data",
    "boots",
    "profile",
    "gaps",
    "durability",
    "metrics",
    "odxcheck",
    "thin",
    "caw",
    "ats",
    "space",
    "clone",
)


def marked(name, text):
    return f"<!-- section:{name} -->\n{text}<!-- /section:{name} -->\n"


def block(name):
    """A section's block in the page, markers included."""
    return re.compile(rf"<!-- section:{name} -->\n.*?<!-- /section:{name} -->\n", re.DOTALL)


def render(
    page,
    data=None,
    thin=None,
    caw=None,
    clone=None,
    plots=(),
    profile=None,
    durability=None,
    metrics=None,
    odxcheck=None,
    boots=None,
    gaps=None,
    ats=None,
    space=None,
):
    """page with the blocks of the sections given rendered anew; the rest
    of it, prose and other blocks, as it was."""
    for name, d, fn in (
        ("data", data, lambda d: render_data(d, plots)),
        ("boots", boots, render_boots),
        ("profile", profile, render_profile),
        ("gaps", gaps, render_gaps),
        ("durability", durability, render_durability),
        ("metrics", metrics, render_metrics),
        ("odxcheck", odxcheck, render_odxcheck),
        ("thin", thin, render_thin),
        ("caw", caw, render_caw),
        ("ats", ats, render_ats),
        ("space", space, render_space),
        ("clone", clone, render_clone),
    ):
        if not d:
            continue
        text = marked(name, fn(d))
        page, n = block(name).subn(lambda _, text=text: text, page, count=1)
        if not n:
            raise SystemExit(
                f"report.py: the page has no <!-- section:{name} --> block "
                "for this section: add one where it goes"
            )
    return page


def merge_clone(runs):
    """Full-copy runs of several boots (each of its own file systems) as one:
    every row keeps its own boot's ours-and-LIO pair; the date names each
    boot's file systems."""
    if len(runs) == 1:
        return runs[0]
    # the header names one count of rounds for every row
    if len({run["meta"].get("rounds", 1) for run in runs}) > 1:
        raise SystemExit("report.py: the clone runs differ in rounds")
    first = runs[0]["meta"]
    meta = dict(
        first,
        date=boot_dates(
            runs,
            lambda run: sorted(
                {r["fs"] for r in run["results"]}
                | {s["fs"] for s in run["meta"].get("skipped", [])}
            ),
        ),
        budget_s=None,  # each skip says its own boot's
        skipped=[s for r in runs for s in r["meta"].get("skipped", [])],
    )
    return {"meta": meta, "results": [row for r in runs for row in r["results"]]}


def merge_data(runs):
    """Data-path runs of several boots (each over fabrics of its own) as one:
    every table compares sides measured in one boot; the date names each
    boot's fabrics.  Settings that differ between the boots are refused."""
    if len(runs) == 1:
        return runs[0]
    same_settings(runs, "data")
    seen = set()
    for run in runs:
        tables = {(r["fabric"], r["store"]) for r in run["results"]}
        if tables & seen:
            raise SystemExit(
                "report.py: two data runs measured the same store over the same fabric"
            )
        seen |= tables

    meta = dict(
        runs[0]["meta"],
        fabrics=list(dict.fromkeys(f for run in runs for f in run_fabrics(run))),
        date=boot_dates(runs, lambda run: [FABRIC_TITLE[f] for f in run_fabrics(run)]),
        dates={f: run["meta"]["date"] for run in runs for f in run_fabrics(run)},
    )
    checks = [run["meta"].get("clock_check") for run in runs]
    meta["clock_check"] = (
        None
        if None in checks
        else {
            "moves": sum(c["moves"] for c in checks),
            "back_ns": max(c["back_ns"] for c in checks),
            "skew_bound_ns": max(c["skew_bound_ns"] for c in checks),
        }
    )
    return {"meta": meta, "results": [row for r in runs for row in r["results"]]}


# The sections given once per boot: how their runs merge, and the help.
MERGE = {
    "clone": (merge_clone, "one per boot, each of other file systems"),
    "data": (merge_data, "one per boot, each over other fabrics"),
    "ats": (merge_ats, "one per boot, each over other fabrics"),
    "boots": (
        list,
        (
            "one per boot, each a data run with the same settings; "
            "each fabric over the boots that measured it"
        ),
    ),
    "gaps": (list, ("one per profile run (guest_profile.py), each of one store over one fabric")),
}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in SECTIONS:
        if name in MERGE:
            p.add_argument("--" + name, metavar="JSON", action="append", help=MERGE[name][1])
        else:
            p.add_argument("--" + name, metavar="JSON", help="one run's results")
    p.add_argument("out", help="the page whose blocks are rewritten: docs/benchmarks.md")
    args = p.parse_args(argv[1:])
    loaded = {}
    for name in SECTIONS:
        paths = getattr(args, name)
        if not paths:
            continue
        runs = []
        for path in paths if isinstance(paths, list) else [paths]:
            with open(path) as f:
                runs.append(json.load(f))
        loaded[name] = MERGE[name][0](runs) if name in MERGE else runs[0]
    plots = ()
    if "data" in loaded:
        import plots as plotting

        plots = plotting.draw(loaded["data"], os.path.dirname(os.path.abspath(args.out)))
    with open(args.out) as f:
        page = f.read()
    text = render(page, plots=plots, **loaded)
    with open(args.out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
