"""The data path measured again in other boots, for docs/benchmarks.md:
ours over LIO's best at each point, boot by boot, and which of those
ratios lean the same way in every boot."""

from plots import LABEL
from report_cells import FABRIC_TITLE, STORE_TITLE, best, need_ours, num, run_fabrics, same_settings

# A ratio within this of 1 is noise (the page's "Reading the numbers").
NOISE = 0.10

BOOTS = """Boots of kernel {kernel}, each {rounds} rounds of {runtime} s runs:

{dates}

This block is rendered with

    bench/report.py {args} docs/benchmarks.md
"""


def short(meta):
    """A boot's date in a column head: month-day and time."""
    return meta["date"][5:16]


def lean(ratios, low, high):
    """low if every ratio is below 1 - NOISE, high if every one is above
    1 + NOISE, else nothing; as the table shows them, to two places."""
    if None in ratios:
        return ""
    ratios = [round(x, 2) for x in ratios]
    if all(x < 1 - NOISE for x in ratios):
        return low
    if all(x > 1 + NOISE for x in ratios):
        return high
    return ""


def point_ratio(r, key):
    """Ours over LIO's best at this point, or None where not measured."""
    lio = best(r, key)
    ours = r["ours"][key]
    return ours / lio if ours and lio else None


def table(runs, fabric, store):
    """One store's points over one fabric that every boot measured."""
    by_boot = [
        {
            r["workload"]: r
            for r in run["results"]
            if (r["fabric"], r["store"]) == (fabric, store) and r.get("table")
        }
        for run in runs
    ]
    names = [w for w in by_boot[0] if all(w in b for b in by_boot)]
    if not names:
        return "", []
    heads = [short(run["meta"]) for run in runs]
    head = (
        ["workload"]
        + [f"IOPS {h}" for h in heads]
        + ["IOPS, every boot"]
        + [f"CPU/IO {h}" for h in heads]
        + ["CPU/IO, every boot"]
    )
    out = [
        f"\n### {STORE_TITLE[store]} over {FABRIC_TITLE[fabric]}\n",
        "| {} |".format(" | ".join(head)),
        "|---|" + "---:|" * (len(head) - 1),
    ]
    leans = []
    for w in names:
        rows = [b[w] for b in by_boot]
        iops = [point_ratio(r, "iops") for r in rows]
        cpu = [point_ratio(r, "cpu_us_per_io") for r in rows]
        li, lc = lean(iops, "lower", "higher"), lean(cpu, "less", "more")
        leans.append((li, lc))
        cells = [w] + [num(x, "%.2f") for x in iops] + [li] + [num(x, "%.2f") for x in cpu] + [lc]
        out.append("| {} |".format(" | ".join(cells)))
    return "\n".join(out) + "\n", leans


def sides(run, fabric):
    """Each store's sides over fabric in run: what "LIO's best" picks from."""
    got = {}
    for r in run["results"]:
        if r["fabric"] == fabric:
            got.setdefault(r["store"], set()).update(k for k in r if k in LABEL)
    return got


def render_boots(runs):
    """Each fabric's points over the boots that measured it, two at least."""
    same_settings(runs, "boots")
    need_ours(runs, "--boots")
    dates = [run["meta"]["date"] for run in runs]
    if len(set(dates)) < len(dates):
        raise SystemExit("report.py: --boots was given one boot's run twice")
    by_fabric = {f: [run for run in runs if f in run_fabrics(run)] for f in FABRIC_TITLE}
    by_fabric = {f: got for f, got in by_fabric.items() if len(got) > 1}
    if not by_fabric:
        raise SystemExit("report.py: --boots wants two boots or more over one fabric")
    if not all(set(run_fabrics(run)) & set(by_fabric) for run in runs):
        raise SystemExit("report.py: a --boots run is over a fabric no other run measured")
    for f, got in by_fabric.items():
        if any(sides(run, f) != sides(got[0], f) for run in got):
            raise SystemExit(f"report.py: the --boots runs over {FABRIC_TITLE[f]} ran other sides")
    m = runs[0]["meta"]
    dates = "\n".join(
        "- {}: {}".format(FABRIC_TITLE[f], ", ".join(run["meta"]["date"] for run in got))
        for f, got in by_fabric.items()
    )
    text = BOOTS.format(
        rounds=m["rounds"],
        runtime=m["runtime_s"],
        kernel=m["kernel"],
        dates=dates,
        args=" ".join(f"--boots RUN{i + 1}.json" for i in range(len(runs))),
    )
    leans = []
    for fabric, got in by_fabric.items():
        for store in STORE_TITLE:
            part, found = table(got, fabric, store)
            text += part
            leans += found
    iops = [li for li, _ in leans]
    cpu = [lc for _, lc in leans]
    text += (
        f"\nOf the {len(leans)} points: IOPS lower than LIO's best in every boot at "
        f"{iops.count('lower')}, higher at {iops.count('higher')}; CPU per I/O more in "
        f"every boot at {cpu.count('more')}, less at {cpu.count('less')}; "
        "at the others, not beyond the noise the same way in every boot.\n"
    )
    return text
