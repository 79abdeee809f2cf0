"""The "where the time goes" sections of docs/benchmarks.md, from the JSON
bench/guest_profile.py writes: the profile of the data path, and the
profiles of the points where ours stayed behind in every boot ("gaps")."""
from plots import LABEL, side_label
from report_cells import FABRIC_TITLE, STORE_TITLE

PROFILE = """
## Where the CPU time goes

`bench/guest_profile.py`, measured {date} (kernel {kernel}), every side in
the same boot, set up as the data-path benchmark sets them up ({store},
{fabric}).  While fio runs (after its warm-up), `perf record -a -g` samples
both CPUs every {period_ms:g} ms of their time, idle or not, for {seconds} s;
each sample goes to a column by the code it was taken in, and a column's
share of the samples, times the CPUs, over the I/Os the disk completed per
second between the first and the last sample, is its CPU time per I/O
(µs).  "under backend" counts the samples whose call chain passes through
the backend module (`target_core_vaai`, or `target_core_file`): its own
code and the file system and block work it calls; "under target" those
through any module of the target (LIO's core, {fabric}, the backend).  "busy" is every column
but idle; perf's own samples are left out of it.  Profiling slows this
guest down, so IOPS here are lower than in the table above and only the
split between the columns is the point.  The guest's clocksource was
`{clocksource}`.
"""

GAPS = """
## Where the time goes where ours stays behind

The points where ours' IOPS were below LIO's best beyond the noise in
every boot (the boot-to-boot section), profiled as in the section above:
`bench/guest_profile.py` with `--store`, `--fabric` and `--workload` set to
the point, each side of the store in the same boot, with the same columns
and the RAM disk's copy of the data (`brd_submit_bio`) added to the
functions timed.  The profiler's own samples (perf, the command it times,
the script's thread that reads the disk's counters every 20 ms) are left
out of "busy".  Over iSCSI, "iSCSI target" is the samples taken in
`iscsi_target_mod`'s own code, and "initiator" those in open-iscsi's
kernel modules (`iscsi_tcp`, `libiscsi`, `libiscsi_tcp`); the TCP and
loopback work is in "kernel, rest".  "under target" counts the target's
receive and transmit threads' whole time with the TCP work they call,
which over loopback includes the initiator's receive, run in a softirq
under the target's sends.  Profiling slows the guest down, so only the
split between the columns is the point.
"""

THROUGH = """
Time through a few kernel functions (the samples whose call chain passes
through each), µs per I/O: the sync that makes a write durable
(`xfs_file_fsync`, a write with the write cache off), the mtime update's
transaction (`xfs_vn_update_time`), XFS's direct I/O (`iomap_dio_rw`), a
read from the page cache (`filemap_read`), the RAM disk's copy of the data
(`brd_submit_bio`), and the scheduler (`__schedule`, context switches).

"""
FABRIC_TEXT = {"loop": "tcm_loop", "iscsi": "iSCSI target"}
STORE_TEXT = {"file": "file store", "bdev": "block store"}


def _rest(fabric):
    """The buckets after "backend", each in a column of its own, with their
    headings: the initiator's only over iSCSI (tcm_loop is both)."""
    rest = [("LIO core", "LIO core"), ("fabric", FABRIC_TEXT[fabric])]
    if fabric != "loop":
        rest.append(("initiator", "initiator"))
    return rest + [("xfs", "xfs"), ("kernel", "kernel, rest"), ("fio", "fio"),
                   ("user", "user, rest")]


def _row(workload, side, s, rest):
    b = s["buckets"]
    return "| %s | %s | %.0f | %.0f | %.1f | %.0f | %.0f | %s |" % (
        workload, side, s["iops"], s["busy_us_per_io"],
        b["backend"], s["under_backend_us_per_io"], s["under_target_us_per_io"],
        " | ".join("%.0f" % b[c] for c, _ in rest))


def _top(s, n):
    return ", ".join("`%s` %.1f" % (t["sym"], t["us_per_io"]) for t in s["top"][:n])


def profile_tables(data, through=THROUGH):
    """One profile run's tables: the columns, the time through the named
    functions (after the text through), and each side's busiest functions."""
    rest = _rest(data["meta"].get("fabric", "loop"))
    store = data["meta"]["store"]
    text = ("| workload | side | IOPS | busy | backend | under backend | under target | %s |\n"
            "|---|---|%s\n" % (" | ".join(h for _, h in rest), "---:|" * (5 + len(rest))))
    sides = [w for w in LABEL if all(w in r for r in data["results"])]
    text += "\n".join(_row(r["workload"], side_label(store, w), r[w], rest)
                      for r in data["results"] for w in sides if "buckets" in r[w]) + "\n"
    rows = [(r["workload"], w, r[w]["through_us_per_io"]) for r in data["results"]
            for w in sides if "through_us_per_io" in r[w]]
    if rows:
        funcs = list(rows[0][2])
        text += through + "| workload | side | %s |\n|---|---|%s\n" % (
            " | ".join(funcs), "---:|" * len(funcs))
        text += "\n".join("| %s | %s | %s |" % (workload, side_label(store, w), " | ".join(
            "%.1f" % t[f] for f in funcs)) for workload, w, t in rows) + "\n"
    text += "\nThe functions that took most of the busy time, µs per I/O:\n\n"
    for r in data["results"]:
        for w in sides:
            if "top" in r[w]:
                text += "- %s, %s: %s\n" % (r["workload"], side_label(store, w),
                                             _top(r[w], 6))
    return text


def render_profile(data):
    m = data["meta"]
    return PROFILE.format(date=m["date"], kernel=m["kernel"], seconds=m["seconds"],
                          period_ms=m["period_ns"] / 1e6,
                          fabric=FABRIC_TITLE[m.get("fabric", "loop")],
                          clocksource=m.get("clocksource", "not recorded"),
                          store=STORE_TEXT[m["store"]]) + "\n" + profile_tables(data)


# The gaps section's runs in this order: tcm_loop before iSCSI, each fabric's
# file store before its block store.
GAPS_ORDER = [(f, st) for f in FABRIC_TITLE for st in STORE_TITLE]


def render_gaps(runs):
    """Several profile runs, each of one store over one fabric, each under a
    heading of its own."""
    text = GAPS
    for data in sorted(runs, key=lambda d: GAPS_ORDER.index(
            (d["meta"].get("fabric", "loop"), d["meta"]["store"]))):
        m = data["meta"]
        text += ("\n### %s over %s\n\nMeasured %s (kernel %s), %s s per side, a "
                 "sample every %g ms, clocksource `%s`.\n\n" % (
                     STORE_TITLE[m["store"]], FABRIC_TITLE[m.get("fabric", "loop")],
                     m["date"], m["kernel"], m["seconds"], m["period_ns"] / 1e6,
                     m.get("clocksource", "not recorded")))
        text += profile_tables(data, "\nTime through the named functions, µs per I/O:\n\n")
    return text
