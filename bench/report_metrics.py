"""What the per-LUN I/O metrics cost on the data path, for
docs/benchmarks.md: ours as it runs (attrib/io_stats=1, every command
timed and counted) against ours with io_stats=0, in one boot, each store
over tcm_loop."""

from report_cells import STORE_TITLE, num, ratio
from report_durability import round_ratios

METRICS = """`bench/guest_bench.py`, measured {date} (kernel {kernel}), each store
over tcm_loop, both sides in one boot, {rounds} rounds of {runtime} s runs
rotating which side goes first; each figure is the median of the rounds,
the last column each round's ratio (how far the rounds alone move it).
This run alone, after `make module`:

    tests/vm/run.py --kver KVER --mem 12G --timeout 3600 \\
        --log build/vm/metrics.log \\
        --append clocksource=tsc --append tsc=reliable -- \\
        /usr/bin/python3 bench/guest_bench.py build/bench/metrics.json \\
        --fabric loop --rounds {rounds} --runtime {runtime} \\
        --side ours --side ours-nostats \\
        {only}
    bench/report.py --metrics build/bench/metrics.json docs/benchmarks.md
"""

COLUMNS = (
    "| workload | IOPS io_stats=1 | IOPS io_stats=0 | ratio | each round "
    "| p99 µs io_stats=1 | p99 µs io_stats=0 "
    "| CPU µs/IO io_stats=1 | CPU µs/IO io_stats=0 | ratio |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
)


def render_metrics(data):
    m = data["meta"]
    rows = data["results"]
    if any(r["fabric"] != "loop" or "ours-nostats" not in r for r in rows):
        raise SystemExit(
            "report.py: the metrics run needs ours and ours-nostats, over tcm_loop only"
        )
    names = list(dict.fromkeys(r["workload"] for r in rows))
    text = METRICS.format(
        date=m["date"],
        kernel=m["kernel"],
        rounds=m["rounds"],
        runtime=m["runtime_s"],
        only=" \\\n        ".join(f"--only {w}" for w in names),
    )
    for store in ("file", "bdev"):
        mine = [r for r in rows if r["store"] == store]
        if not mine:
            continue
        text += f"\n### {STORE_TITLE[store]}\n\n" + COLUMNS
        for r in mine:
            on, off = r["ours"], r["ours-nostats"]
            cells = (
                r["workload"],
                num(on.get("iops"), "%.0f"),
                num(off.get("iops"), "%.0f"),
                ratio(on.get("iops"), off.get("iops")),
                round_ratios(r, "ours", "ours-nostats"),
                num(on.get("lat_p99_us"), "%.0f"),
                num(off.get("lat_p99_us"), "%.0f"),
                num(on.get("cpu_us_per_io"), "%.0f"),
                num(off.get("cpu_us_per_io"), "%.0f"),
                ratio(on.get("cpu_us_per_io"), off.get("cpu_us_per_io")),
            )
            text += "| {} |\n".format(" | ".join(cells))
    return text
