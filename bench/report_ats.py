"""ATS heartbeats beside streams (bench/guest_ats.py), for
docs/benchmarks.md: per fabric and store, each stream's heartbeat p50, p99 and worst
beat on ours and on LIO, ours' p99 over its own idle p99 (issue 28 asks
2x at most) and over LIO's, and what the stream moved on each."""

from ats_trace import PHASES, mean_ran
from report_cells import FABRIC_TITLE, boot_dates, num, ratio, same_settings, store_tables

ATS = """`bench/guest_ats.py` (kernel {kernel}), measured {date}, over {fabrics},
both sides of a table in one boot, {rounds} rounds of {seconds} s of heartbeats per
stream rotating which side goes first;
{how} This run alone, after
`make module build/bench/sgloop build/bench/heartbeat`:

    tests/vm/run.py --kver KVER --mem 12G --timeout {timeout} \\
        --log build/vm/ats.log \\
        --append clocksource=tsc --append tsc=reliable -- \\
        /usr/bin/python3 bench/guest_ats.py build/bench/ats.json \\
        --rounds {rounds} --seconds {seconds}{fabric_args}{trace}
    bench/report.py --ats build/bench/ats.json docs/benchmarks.md
"""

# how the table's figures come from the rounds: each beat kept (since
# 2026-11-30), or only each round's percentiles
POOLED = (
    "p50 and p99 are those of all the rounds' beats together, MB/s the\n"
    "median of the rounds, the worst beat the worst of all of them."
)
MEDIANS = (
    "p50, p99 and MB/s are the medians of the rounds, the worst beat\nthe worst of all of them."
)

STORE = {"file": "file store (XFS on a RAM disk)", "block": "block store (RAM disk)"}

COLUMNS = (
    "| stream | p50 µs ours | p50 µs LIO | p99 µs ours | p99 µs LIO | p99 ours/LIO "
    "| p99 ours/idle | worst µs ours | worst µs LIO | stream MB/s ours | stream MB/s LIO |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
)


def idle_p99(rows, key):
    """ours' idle figure of key among a store's rows, or None."""
    return next((r["ours"][key] for r in rows if r["stream"] == "idle"), None)


def ats_cells(r, rows):
    o, lio = r["ours"], r["lio"]
    return (
        r["stream"],
        num(o["p50_us"], "%.0f"),
        num(lio["p50_us"], "%.0f"),
        num(o["p99_us"], "%.0f"),
        num(lio["p99_us"], "%.0f"),
        ratio(o["p99_us"], lio["p99_us"]),
        ratio(o["p99_us"], idle_p99(rows, "p99_us")),
        num(o["max_us"], "%.0f"),
        num(lio["max_us"], "%.0f"),
        num(o.get("stream_mbps"), "%.0f"),
        num(lio.get("stream_mbps"), "%.0f"),
    )


def _kept_beats(data):
    return any("lat_us" in rd["ours"] for r in data["results"] for rd in r.get("rounds", ()))


def fabrics_of(data):
    """The fabrics data measured, in the page's order; a run from before
    guest_ats.py had --fabric measured tcm_loop alone."""
    got = {r.get("fabric", "loop") for r in data["results"]}
    return [f for f in FABRIC_TITLE if f in got]


# what the runs merged into one section must share: the header names it once
MERGED_SETTINGS = (
    "kernel",
    "rounds",
    "seconds",
    "trace",
    "durable",
    "lun_bytes",
    "clocksource",
    "bdevs",
)


def merge_ats(runs):
    """Heartbeat runs of several boots, each over fabrics of its own, as
    one: every table compares sides measured in one boot; the date names
    each boot's fabrics, the command runs them all in one boot.  Runs of
    other settings, or that measured a fabric twice, are refused."""
    if len(runs) == 1:
        return runs[0]
    same_settings(runs, "ats", MERGED_SETTINGS)
    if len({_kept_beats(run) for run in runs}) > 1:
        raise SystemExit("report.py: the ats runs differ in what they kept of the beats")
    seen = set()
    for run in runs:
        got = set(fabrics_of(run))
        if got & seen:
            raise SystemExit("report.py: two ats runs measured the same fabric")
        if set(run["meta"].get("fabrics", got)) - got:
            raise SystemExit("report.py: an ats run lacks a fabric it was asked for")
        seen |= got
    meta = dict(
        runs[0]["meta"],
        fabrics=[f for f in FABRIC_TITLE if f in seen],
        date=boot_dates(runs, lambda run: [FABRIC_TITLE[f] for f in fabrics_of(run)]),
    )
    return {"meta": meta, "results": [row for run in runs for row in run["results"]]}


def render_ats(data):
    m = data["meta"]
    fabrics = fabrics_of(data)
    # as the run was asked for; an hour of VM per fabric
    ran = m.get("fabrics", fabrics)
    text = ATS.format(
        date=m["date"],
        kernel=m["kernel"],
        fabrics=" and ".join(FABRIC_TITLE[f] for f in fabrics),
        rounds=m["rounds"],
        seconds=m["seconds"],
        timeout=3600 * len(ran),
        fabric_args="".join(f" --fabric {f}" for f in ran) if ran != ["loop"] else "",
        trace={True: " --trace", "sched": " --trace-sched"}.get(m.get("trace"), ""),
        how=POOLED if _kept_beats(data) else MEDIANS,
    )
    for fabric in fabrics:
        rows = [r for r in data["results"] if r.get("fabric", "loop") == fabric]
        titles = {st: f"{title} over {FABRIC_TITLE[fabric]}" for st, title in STORE.items()}
        text += store_tables({"results": rows}, titles, COLUMNS, ats_cells, render_trace)
    return text


TRACE = """
#### Where the slowest beats waited

From `guest_ats.py --trace` (bench/ats_trace.py): for the slowest 1 % of
each point's beats, the mean µs of each phase, the median of the rounds:
in the initiator (the beat's time as the heartbeat program took it less
the four phases after it: the system call, a tag of the LUN's queue, the
completion's way back), to target (the initiator's dispatch to LIO
core's CDB), queued (LIO's per-CPU submission queue, to the backend's
COMPARE AND WRITE), in the backend (range lock, read, compare, write, to
LIO's status), back (to the initiator's SCSI layer).

| stream | side | in the initiator | to target | queued | in the backend | back |
|---|---|---:|---:|---:|---:|---:|
"""


def slowest(rounds, who, phase):
    vals = sorted(
        rd[who]["trace"][phase]["slowest_mean_us"]
        for rd in rounds
        if phase in (rd[who].get("trace") or {})
    )
    return vals[len(vals) // 2] if vals else None


SIDE_LABELS = (("ours", "ours"), ("lio", "LIO"))

RAN = """
From `guest_ats.py --trace-sched`: while the slowest 1 % of beats were
queued, what ran on the CPU that then started them (kworker/uN:N: a
worker of the unbound workqueues, ours' copies among them; kworker/N:N:
a per-CPU one, LIO's submission and completion work among them), mean
µs over those beats and the rounds, the three that ran longest.

| stream | side | ran meanwhile |
|---|---|---|
"""


def ran_meanwhile(rounds, who):
    """The three kinds of task that ran longest while who's slowest beats
    were queued, "task µs" each, over the rounds that traced them."""
    got = [
        rd[who]["trace"]["queued_ran"]
        for rd in rounds
        if "queued_ran" in (rd[who].get("trace") or {})
    ]
    top = list(mean_ran(got).items())[:3] if got else []
    return ", ".join(f"{task} {us:.0f}" for task, us in top) or "n/a"


def render_trace(rows):
    traced = [
        rd[who].get("trace") or {}
        for r in rows
        for rd in r.get("rounds", ())
        for who in ("ours", "lio")
    ]
    if not any(traced):
        return ""
    text = TRACE
    for r in rows:
        for who, label in SIDE_LABELS:
            cells = [r["stream"], label] + [
                num(slowest(r["rounds"], who, ph), "%.0f") for ph in PHASES
            ]
            text += "| {} |\n".format(" | ".join(cells))
    if any("queued_ran" in t for t in traced):
        text += RAN
        for r in rows:
            for who, label in SIDE_LABELS:
                text += f"| {r['stream']} | {label} | {ran_meanwhile(r['rounds'], who)} |\n"
    return text
