"""Render bench results (JSON from guest_bench.py, guest_thin.py,
guest_caw.py, guest_clone.py and guest_profile.py) as docs/benchmarks.md.

    report.py [--data RESULTS.json ...] [--boots RESULTS.json ...]
              [--profile PROFILE.json] [--gaps PROFILE.json ...]
              [--durability DURABILITY.json]
              [--thin THIN.json] [--caw CAW.json] [--clone CLONE.json ...] OUT.md

Each section given is rendered anew (the data path with its plots, PNG
files beside OUT.md); the sections not given are kept from OUT.md as they
were, each with the date it was measured.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from report_boots import render_boots  # noqa: E402
from report_cells import (FABRIC_TITLE, STORE_TITLE, best, need_ours,  # noqa: E402
                          num, ratio, run_fabrics, same_settings)
from report_durability import render_durability  # noqa: E402
from report_events import render_events  # noqa: E402
from report_profile import render_gaps, render_profile  # noqa: E402

HEADER = """# Benchmarks

Every figure compares our backend (`vaai`) with upstream LIO on the same
backing store, in the same VM boot: `target_core_file` for the file store,
`target_core_iblock` for the block device store.  Absolute numbers from an
emulated guest (QEMU without KVM, 2 vCPUs) mean little; the ratios are the
point.  Each table below compares sides measured in the same boot; each
section gives the date of its boot (or boots).

## How to reproduce

    make bench

boots the VM once (`tests/vm/run.py`, 12 GiB of guest memory for the RAM
disks, the TSC as the guest's clock: `--append clocksource=tsc --append
tsc=reliable`), runs `bench/guest-bench.sh` inside it (data path, the file
store's writes synced and not, thin provisioning, ATS, full copy; the data
path alone is 3 rounds of 180 fio runs, 3 s each after 1 s of warm-up, its
profile about 12 minutes, the writes synced and not about 10) and renders this
page with `bench/report.py` from `build/bench/*.json`.  One part alone, e.g. the data
path: `tests/vm/run.py --kver KVER --log build/vm/bench-console.log --mem 12G
--append clocksource=tsc --append tsc=reliable -- /usr/bin/python3
bench/guest_bench.py build/bench/results.json` (KVER: the guest kernel,
`/boot/vmlinuz-KVER`, the one `make bench` boots), then `bench/report.py
--data build/bench/results.json docs/benchmarks.md`, which replaces that
section and its plots and keeps the others as they were (`--data` once per
boot, e.g. `--fabric loop` in one and `--fabric iscsi` in another;
`--boots` once per data run, two boots or more of a fabric, puts those
boots side by side).  The full copy sends its
commands with `build/bench/sgloop` (`make build/bench/sgloop`; `make bench`
builds it); `--clone` may be given once per boot, each boot's JSON holding
other file systems (`guest_clone.py --fs xfs`, then `--fs ext4`).  The
full-copy table (both file systems, 1 and 4 GiB) took 62 minutes of guest
time in one boot (`--budget 3600`; `make bench` gives it 4000 s, as a size
starts only if its estimate fits what is left).  Where the data path's CPU
time goes: the same `tests/vm/run.py` line with `-- /usr/bin/python3
bench/guest_profile.py build/bench/profile.json` (Debian's `linux-perf`,
which `tests/vm/deps.sh` installs), then `bench/report.py --profile
build/bench/profile.json docs/benchmarks.md`; perf script's text of each
run stays in `build/bench/profile/`, and `bench/guest_profile.py
build/bench/profile.json --reparse` attributes it again (on the host too,
with `/usr/bin/python3`, which has rtslib).  One point of one store over
one fabric, e.g. `guest_profile.py OUT.json --store bdev --fabric iscsi
--workload 64k-seqwrite-qd8`: the section on the points behind in every
boot holds the runs given in one call of `bench/report.py --gaps A.json
--gaps B.json ... docs/benchmarks.md`, now `bench/data/gap-*.json`.
Where one EXTENDED COPY's time goes: the same line with `--mem 6G --
/usr/bin/python3 bench/guest_xcopy_cost.py build/bench/xcopy_cost.json`.
`bench/data/` keeps the JSON of the runs shown here that were measured
from 2026-11-25 14:56 UTC on (the points behind in every boot), so that
section renders again from a clean clone (the perf text its runs were
counted from stays in `build/bench/`, not in the repository); the
earlier runs' JSON was not kept.

Reading the numbers: the guest is emulated (no KVM) on 2 vCPUs and every
store lives in RAM, so "I/O" is CPU work and the CPU is the bottleneck
almost everywhere. Gains that come from overlapping device waits (parallel
COMPARE AND WRITEs, batched log forces) barely show here; between runs of
the same build, one side's IOPS at one point move by 20-30 % (largest
minus smallest of three rounds, at the median point), so a ratio within
about ±10 % of 1 is noise, and a ratio beyond that in one boot need not
be there in the next ("Boot to boot", after the data path's tables).
"""

DATA = """
## Data path: READ and WRITE

`bench/guest_bench.py`, measured {date} (kernel {kernel}), the sides of
each table in the same boot.

- Stores: the file LUNs are {lun_mib} MiB files on XFS on a RAM disk (brd),
  one per side, written out in full first so no side reads holes; the block
  LUNs are RAM disks of their own.
- Sides: on the file store, ours (write cache off, so `io_mode=auto` does
  direct I/O), `target_core_file` buffered (LIO fileio, `write_back=0`) and
  `target_core_file` with `async_io=1`; on the block store, ours and
  `target_core_iblock`.  Write cache off everywhere.
- Fabrics: {fabrics}.  All sides of a store are exported at once.
- fio {{libaio, O_DIRECT}} on the guest's /dev/sdX, one job, {runtime} s per
  run after 1 s of warm-up; {rounds}.
- Mixed workloads (randrw70: 70 % reads; randrw90, the database profile)
  count reads and writes together; their p99 is the worse direction's.
- Latency, mean and p99, is fio's `lat`: from submission to completion.
  (fio's `clat` leaves out the time inside io_submit, which is most of it
  when the target completes a command before io_submit returns.)
- CPU/IO: busy CPU time of the whole guest (all of /proc/stat but idle and
  iowait) over the middle of the run (from the end of the warm-up second to
  half a second before the end), divided by the I/Os the initiator's disk
  completed in that window (its bytes over the block size).  It includes
  fio and the initiator side, which are the same for every side, but not
  fio's start-up and exit.
- Clock: the guest's clocksource was `{clocksource}`{clock_check}.  `make bench` boots
  the guest with `clocksource=tsc tsc=reliable`: without them the guest
  kernel finds the emulated TSCs unsynchronized and reads the emulated
  HPET, each read (the kernel's and fio's) a trip through the emulator;
  that was about a quarter of the busy CPU per I/O in a profile on the
  HPET, more for direct I/O than for page-cache reads.
- LIO best: for each column the better of LIO's backstores for that store
  (higher IOPS and MB/s, lower latency and CPU/IO), so a ratio compares
  with whichever LIO does best at that point.  Ratio = ours / LIO best:
  above 1 is better for IOPS, below 1 for latency and CPU/IO.
"""


DATA_COLS = ("| workload | IOPS ours | IOPS LIO | ratio | MB/s ours | MB/s LIO "
             "| mean µs ours | mean µs LIO | p99 µs ours | p99 µs LIO | ratio "
             "| CPU µs/IO ours | CPU µs/IO LIO | ratio |\n"
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")


def row(r):
    o = r["ours"]
    lb = {k: best(r, k) for k in o}
    cells = [r["workload"]]
    for key, spec, rated in (("iops", "%.0f", True), ("mbps", "%.1f", False),
                             ("lat_mean_us", "%.0f", False),
                             ("lat_p99_us", "%.0f", True),
                             ("cpu_us_per_io", "%.1f", True)):
        cells += [num(o[key], spec), num(lb[key], spec)]
        if rated:
            cells.append(ratio(o[key], lb[key]))
    return "| %s |" % " | ".join(cells)


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
    return ("\nOf the %d points above: IOPS at least LIO's best at %d; p99 no "
            "higher at %d; on the file store, CPU/IO at least 15 %% below LIO's "
            "best at %d of %d.\n" % (n, iops, p99, cpu, len(file_rows)))


def clock_check(meta):
    """What guestlib.clock_check() saw before the run, if it ran."""
    c = meta.get("clock_check")
    if not c:
        return ""
    text = (" (a process moved %d times between two CPUs: their monotonic "
            "clocks agree within %.0f µs" % (c["moves"], c["skew_bound_ns"] / 1e3))
    if c["back_ns"]:
        return text + ", and went back by up to %d ns)" % c["back_ns"]
    return text + " and never went back)"


def render_data(data, plots):
    m = data["meta"]
    need_ours([data], "data")
    fabrics = [FABRIC_TEXT[f] for f in m.get("fabrics", run_fabrics(data))]
    rounds = ("one round: each figure is a single run (one side's IOPS move by "
              "about 20 % between runs)" if m["rounds"] == 1 else
              "%d rounds, rotating which side runs first; each figure is the "
              "median of the rounds" % m["rounds"])
    text = DATA.format(date=m["date"], kernel=m["kernel"], lun_mib=m["lun_bytes"] >> 20,
                       runtime=m["runtime_s"], rounds=rounds,
                       fabrics=", and ".join(fabrics),
                       clocksource=m.get("clocksource", "not recorded"),
                       clock_check=clock_check(m))
    rows = [r for r in data["results"] if r.get("table", True)]
    tables = []
    for fabric in ("loop", "iscsi"):
        for store in ("file", "bdev"):
            sel = [r for r in rows if r["fabric"] in (fabric, "tcm_loop" if fabric == "loop"
                                                      else fabric) and r["store"] == store]
            if sel:
                title = "%s over %s" % (STORE_TITLE[store], FABRIC_TITLE[fabric])
                tables.append((title, store, sel))
                text += "\n### %s\n\n" % title
                text += DATA_COLS + "\n".join(row(r) for r in sel) + "\n"
    text += targets(rows)
    text += render_events(tables)
    for name, what in plots:
        text += "\n![%s](%s)\n" % (what, name)
    return text


THIN = """
## Thin provisioning: zeroing and space reclamation

On a fresh 1 GiB sparse file per step, on XFS on a RAM disk, exported over
tcm_loop (`bench/guest_thin.py`, measured {date}):

- **zero**: 1 GiB in 1 MiB WRITE SAME(16) commands with one zero block, as
  ESXi eager-zeroes a VMDK;
- **unmap**: 1 GiB in 1 MiB UNMAP ranges, one per command (VMFS-6's unit),
  after writing the file out in full (LIO ships UNMAP off; it was turned on
  with `emulate_tpu=1` for this);
- **host**: 1 GiB of zeros in 1 MiB WRITE(16) commands, what a host does
  without the offload.

Allocated is the backing file's `st_blocks` after the step. Lower is better
for both; ratio = ours / LIO. Both sides run with the write cache off
(`emulate_write_cache=0`), where our backend makes each WRITE SAME and UNMAP
durable (fdatasync of the range) before GOOD; LIO's fileio punches holes
without syncing them. "ours, WC on" is our backend with the write cache on,
which leaves that to SYNCHRONIZE CACHE.

| step | seconds ours | seconds LIO | ratio | seconds ours, WC on | allocated ours | allocated LIO |
|---|---:|---:|---:|---:|---:|---:|
"""


def mib(n):
    return "%.0f MiB" % (n / (1 << 20))


def render_thin(data):
    o, l = data["results"]["ours"], data["results"]["lio"]
    wb = data["results"]["ours_wb"]
    rows = ["| %s | %.2f | %.2f | %s | %.2f | %s | %s |" % (
        step, o[step]["seconds"], l[step]["seconds"],
        ratio(o[step]["seconds"], l[step]["seconds"]), wb[step]["seconds"],
        mib(o[step]["allocated"]), mib(l[step]["allocated"]))
        for step in ("zero", "unmap", "host")]
    return THIN.format(date=data.get("meta", {}).get("date", "?")) + "\n".join(rows) + "\n"


CAW = """
## ATS: COMPARE AND WRITE

`bench/guest_caw.py`, measured {date}: 1-block COMPARE AND WRITE increments of a
counter block over tcm_loop, on 256 MiB files on XFS on a RAM disk, write
cache off on both sides. disjoint-N: N streams, each on its own block;
same-8: 8 streams on one block (read, CAW, retry on miscompare; only
successes count); beside-1m: one stream while fio writes 1 MiB blocks
sequentially (queue depth 4) to another region of the LUN. Successful CAWs
per second (higher is better) and p99 latency of a CAW (lower is better);
ratio = ours / LIO.

| streams | CAW/s ours | CAW/s LIO | ratio | p99 µs ours | p99 µs LIO | ratio |
|---|---:|---:|---:|---:|---:|---:|
"""


def render_caw(data):
    o, l = data["results"]["ours"], data["results"]["lio"]
    rows = ["| %s | %.0f | %.0f | %s | %.0f | %.0f | %s |" % (
        name, o[name]["caw_per_s"], l[name]["caw_per_s"],
        ratio(o[name]["caw_per_s"], l[name]["caw_per_s"]),
        o[name]["p99_us"] or 0, l[name]["p99_us"] or 0,
        ratio(o[name]["p99_us"], l[name]["p99_us"]))
        for name in ("disjoint-1", "disjoint-8", "disjoint-32", "same-8", "beside-1m")]
    writer = "\nDuring beside-1m the sequential writer moved %.0f MB/s on ours and %.0f MB/s on LIO.\n" % (
        o["beside-1m"].get("writer_mbps", 0), l["beside-1m"].get("writer_mbps", 0))
    return CAW.format(date=data.get("meta", {}).get("date", "?")) + "\n".join(rows) + "\n" + writer


CLONE = """
## Full copy: EXTENDED COPY

`bench/guest_clone.py`, measured {date} (kernel {kernel}), ours and LIO in
the same boot. For each file system on a RAM disk (XFS
made with `-m reflink=1`, and ext4) and each clone size, a source file is
filled with data that is neither zero nor repeating (a random MiB, every
512-byte block stamped with its number), then copied over tcm_loop:

- **across**: from a LUN on the source file to a LUN on a new sparse file of
  the same size, both LUNs in one target (ours and LIO alike only accept
  LUNs of the I_T nexus the command came on);
- **within**: from the first half of a LUN to its empty second half.

**ours** and **LIO** get one EXTENDED COPY (LID1) per 4 or 16 MiB (the
command size), one at a time, sent to the source LUN, each with two
identification CSCD descriptors and one block-to-block segment, as ESXi
sends them. The commands are built beforehand and sent by a small C
program (`bench/sgloop.c`, one SG_IO each), whose own clock times them: in
this emulated guest an SG_IO call from Python costs about as much as the
command's trip through tcm_loop, and is no part of either target. LIO is
`target_core_file` (write_back=0, XCOPY on by default),
which copies with its own READs and WRITEs of up to 8 MiB, one at a time.
Ours shares the extents where the file system can (XFS reflink, through
`vfs_copy_file_range`); on ext4 it moves 1 MiB chunks with direct I/O, four
at a time (docs/xcopy.md). **host** is the copy
without the offload, on our LUNs: `dd iflag=direct oflag=direct bs={host_mib}M`
from one /dev/sdX to the other (or to the second half of the same one),
timed once per copy and shown beside both command sizes.

Before each copy the destination range is punched out and the page cache
dropped; the time runs from the first command to the last GOOD plus a
`syncfs` of the backing file system, so every side is timed to a durable
copy (write cache off on both). Each destination is then compared block for
block with the source; a wrong copy fails the run instead of being timed.
Ratios are LIO's (or the host's) seconds over ours: higher is better for
ours. New space: how much the file system's used space grew with the copy
(statfs); shared: how much of the destination range FIEMAP flags as shared
extents. (The destination file's `st_blocks` grows by the full size either
way: a shared extent counts in both files.)

| fs | size | copy | command | seconds ours | seconds LIO | LIO/ours | seconds host | host/ours | new space ours | new space LIO | shared ours | shared LIO |
|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
"""


def size_label(n):
    return "%d GiB" % (n >> 30) if n >= 1 << 30 and n % (1 << 30) == 0 else mib(n)


def _get(m, key):
    """A measured value, or None where the side was not measured or failed."""
    return None if not m or "error" in m else m[key]


def _secs(m):
    if m and "error" in m:
        return "failed"
    v = _get(m, "seconds")
    if v is None:
        return "n/a"
    return "%.2f" % v if v >= 0.1 else "%.3f" % v     # a reflink can take milliseconds


def _bytes(m, key):
    v = _get(m, key)
    return "n/a" if v is None else mib(v)


def render_clone(data):
    res = data["results"]
    host = {(r["fs"], r["size"], r["copy"]): r["ours"] for r in res if r["method"] == "host"}
    rows = []
    for r in res:
        if r["method"] != "xcopy":
            continue
        o, l = r.get("ours"), r.get("lio")
        h = host.get((r["fs"], r["size"], r["copy"]))
        rows.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["fs"], size_label(r["size"]), r["copy"], size_label(r["cmd_bytes"]),
            _secs(o), _secs(l), ratio(_get(l, "seconds"), _get(o, "seconds")),
            _secs(h), ratio(_get(h, "seconds"), _get(o, "seconds")),
            _bytes(o, "fs_used"), _bytes(l, "fs_used"),
            _bytes(o, "shared"), _bytes(l, "shared")))
    m = data["meta"]
    text = CLONE.format(host_mib=m.get("host_bs", 4 << 20) >> 20, date=m.get("date", "?"),
                        kernel=m.get("kernel", "?")) + "\n".join(rows) + "\n"
    skipped = m.get("skipped", [])
    if skipped:
        budget = ("%d s of guest time" % m["budget_s"] if m.get("budget_s")
                  else "the run's budget of guest time")
        text += ("\nNot measured (a small run per file system first estimates the "
                 "rest, which must fit in %s and in its memory):\n\n" % budget)
        text += "".join("- %s, %s: %s\n" % (s["fs"], size_label(s["size"]), s["reason"])
                        for s in skipped)
    return text


# The page's sections in order.  "analysis" is written by hand (where the
# time goes, from profiling the guest) and only ever kept.
SECTIONS = ("data", "boots", "profile", "gaps", "analysis", "durability", "thin", "caw",
            "clone")
RENDERED = ("data", "boots", "profile", "gaps", "durability", "thin", "caw", "clone")


def marked(name, text):
    return "<!-- section:%s -->\n%s<!-- /section:%s -->\n" % (name, text, name)


def kept_sections(path):
    """The sections of an existing page, by name, with their markers."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        page = f.read()
    for name in SECTIONS:
        m = re.search(r"<!-- section:%s -->\n.*?<!-- /section:%s -->\n" % (name, name),
                      page, re.S)
        if m:
            out[name] = m.group(0)
    return out


def render(data=None, thin=None, caw=None, clone=None, kept=None, plots=(),
           profile=None, durability=None, boots=None, gaps=None):
    """The page: the sections given rendered anew, the others from kept
    (section name -> marked text of an earlier page)."""
    sections = dict(kept or {})
    if data:
        sections["data"] = marked("data", render_data(data, plots))
    for name, fn, d in (("boots", render_boots, boots),
                        ("profile", render_profile, profile),
                        ("gaps", render_gaps, gaps),
                        ("durability", render_durability, durability),
                        ("thin", render_thin, thin), ("caw", render_caw, caw),
                        ("clone", render_clone, clone)):
        if d:
            sections[name] = marked(name, fn(d))
    return HEADER + "".join("\n" + sections[n] for n in SECTIONS if n in sections)


def boot_dates(runs, parts):
    """Each boot's date with what it measured (parts(run): names)."""
    return "; ".join("%s (%s)" % (run["meta"].get("date", "?"), ", ".join(parts(run)))
                     for run in runs)


def merge_clone(runs):
    """Full-copy runs of several boots (each of its own file systems) as one:
    every row keeps its own boot's ours-and-LIO pair; the date names each
    boot's file systems."""
    if len(runs) == 1:
        return runs[0]
    first = runs[0]["meta"]
    meta = dict(first, date=boot_dates(runs, lambda run: sorted(
                    {r["fs"] for r in run["results"]} |
                    {s["fs"] for s in run["meta"].get("skipped", [])})),
                budget_s=None,        # each skip says its own boot's
                skipped=[s for r in runs for s in r["meta"].get("skipped", [])])
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
            raise SystemExit("report.py: two data runs measured the same store "
                             "over the same fabric")
        seen |= tables

    meta = dict(runs[0]["meta"],
                fabrics=list(dict.fromkeys(f for run in runs for f in run_fabrics(run))),
                date=boot_dates(runs, lambda run: [FABRIC_TITLE[f] for f in run_fabrics(run)]),
                dates={f: run["meta"]["date"] for run in runs for f in run_fabrics(run)})
    checks = [run["meta"].get("clock_check") for run in runs]
    meta["clock_check"] = None if None in checks else {
        "moves": sum(c["moves"] for c in checks),
        "back_ns": max(c["back_ns"] for c in checks),
        "skew_bound_ns": max(c["skew_bound_ns"] for c in checks)}
    return {"meta": meta, "results": [row for r in runs for row in r["results"]]}


# The sections given once per boot: how their runs merge, and the help.
MERGE = {"clone": (merge_clone, "one per boot, each of other file systems"),
         "data": (merge_data, "one per boot, each over other fabrics"),
         "boots": (list, "one per boot, each a data run with the same settings; "
                         "each fabric over the boots that measured it"),
         "gaps": (list, "one per profile run (guest_profile.py), each of one "
                        "store over one fabric")}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in RENDERED:
        if name in MERGE:
            p.add_argument("--" + name, metavar="JSON", action="append",
                           help=MERGE[name][1])
        else:
            p.add_argument("--" + name, metavar="JSON")
    p.add_argument("out")
    args = p.parse_args(argv[1:])
    loaded = {}
    for name in RENDERED:
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
    text = render(kept=kept_sections(args.out), plots=plots, **loaded)
    with open(args.out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
