"""The "where the time goes" section of docs/benchmarks.md, from the JSON
bench/guest_profile.py writes."""

PROFILE = """
## Where the CPU time goes

`bench/guest_profile.py`, measured {date} (kernel {kernel}), every side in
the same boot, set up as the data-path benchmark sets them up ({store},
tcm_loop).  While fio runs (after its warm-up), `perf record -a -g` samples
both CPUs every {period_ms:g} ms of their time, idle or not, for {seconds} s;
each sample goes to a column by the code it was taken in, and a column's
share of the samples, times the CPUs, over the I/Os the disk completed per
second between the first and the last sample, is its CPU time per I/O
(µs).  "under backend" counts the samples whose call chain passes through
the backend module (`target_core_vaai`, or `target_core_file`): its own
code and the file system and block work it calls; "under target" those
through any module of the target (LIO's core, tcm_loop, the backend).  "busy" is every column
but idle; perf's own samples are left out of it.  Profiling slows this
guest down, so IOPS here are lower than in the table above and only the
split between the columns is the point.  The guest's clocksource was
`{clocksource}`.

| workload | side | IOPS | busy | backend | under backend | under target | LIO core | tcm_loop | xfs | kernel, rest | fio | user, rest |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
"""

THROUGH = """
Time through a few kernel functions (the samples whose call chain passes
through each), µs per I/O: the sync that makes a write durable
(`xfs_file_fsync`, a write with the write cache off), the mtime update's
transaction (`xfs_vn_update_time`), XFS's direct I/O (`iomap_dio_rw`), a
read from the page cache (`filemap_read`), and the scheduler
(`__schedule`, context switches).

"""
SIDE_TEXT = {"ours": "ours", "lio": "LIO fileio", "lio-aio": "LIO fileio async_io",
             "ours-wb": "ours, write cache on"}
# the buckets after "backend", each in a column of its own
REST = ("LIO core", "tcm_loop", "xfs", "kernel", "fio", "user")


def _row(workload, who, s):
    b = s["buckets"]
    return "| %s | %s | %.0f | %.0f | %.1f | %.0f | %.0f | %s |" % (
        workload, SIDE_TEXT.get(who, who), s["iops"], s["busy_us_per_io"],
        b["backend"], s["under_backend_us_per_io"], s["under_target_us_per_io"],
        " | ".join("%.0f" % b[c] for c in REST))


def _top(s, n):
    return ", ".join("`%s` %.1f" % (t["sym"], t["us_per_io"]) for t in s["top"][:n])


def render_profile(data):
    m = data["meta"]
    text = PROFILE.format(date=m["date"], kernel=m["kernel"], seconds=m["seconds"],
                          period_ms=m["period_ns"] / 1e6,
                          clocksource=m.get("clocksource", "not recorded"),
                          store="file store" if m["store"] == "file" else "block store")
    sides = [w for w in SIDE_TEXT if all(w in r for r in data["results"])]
    text += "\n".join(_row(r["workload"], w, r[w]) for r in data["results"]
                      for w in sides if "buckets" in r[w]) + "\n"
    rows = [(r["workload"], w, r[w]["through_us_per_io"]) for r in data["results"]
            for w in sides if "through_us_per_io" in r[w]]
    if rows:
        funcs = list(rows[0][2])
        text += THROUGH + "| workload | side | %s |\n|---|---|%s\n" % (
            " | ".join(funcs), "---:|" * len(funcs))
        text += "\n".join("| %s | %s | %s |" % (workload, SIDE_TEXT[w], " | ".join(
            "%.1f" % t[f] for f in funcs)) for workload, w, t in rows) + "\n"
    text += "\nThe functions that took most of the busy time, µs per I/O:\n\n"
    for r in data["results"]:
        for w in sides:
            if "top" in r[w]:
                text += "- %s, %s: %s\n" % (r["workload"], SIDE_TEXT[w], _top(r[w], 6))
    return text
