"""What two things ours does on every command cost on the data path, for
docs/benchmarks.md, each a second side of ours beside ours as it runs, in
one boot, each store over tcm_loop:
  metrics   the per-LUN I/O metrics: ours (attrib/io_stats=1, every
            command timed and counted) against ours with io_stats=0;
  odxcheck  the check of every write against change-vulnerable ODX
            tokens: ours with tokens alive on blocks the workload never
            writes against ours with none."""

from report_cells import STORE_TITLE, num, ratio
from report_durability import round_ratios

RUN = """`bench/guest_bench.py`, measured {date} (kernel {kernel}), each store
over tcm_loop, both sides in one boot, {rounds} rounds of {runtime} s runs
rotating which side goes first; each figure is the median of the rounds,
the last column each round's ratio (how far the rounds alone move it).
This run alone, after `make module`:

    tests/vm/run.py --kver KVER --mem 12G --timeout 3600 \\
        --log build/vm/{name}.log \\
        --append clocksource=tsc --append tsc=reliable -- \\
        /usr/bin/python3 bench/guest_bench.py build/bench/{name}.json \\
        --fabric loop --rounds {rounds} --runtime {runtime} \\
        --side ours --side {other} \\
        {only}
    bench/report.py --{name} build/bench/{name}.json docs/benchmarks.md
"""

# name -> (the side measured, the side it is measured against, how the
# columns call each)
CONTRASTS = {
    "metrics": ("ours", "ours-nostats", "io_stats=1", "io_stats=0"),
    "odxcheck": ("ours-tokens", "ours", "tokens", "no token"),
}


def columns(a, b):
    return (
        f"| workload | IOPS {a} | IOPS {b} | ratio | each round "
        f"| p99 µs {a} | p99 µs {b} | CPU µs/IO {a} | CPU µs/IO {b} | ratio |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )


def render_contrast(name, data):
    on_side, off_side, a, b = CONTRASTS[name]
    m = data["meta"]
    rows = data["results"]
    if any(r["fabric"] != "loop" or on_side not in r or off_side not in r for r in rows):
        raise SystemExit(
            f"report.py: the {name} run needs {on_side} and {off_side}, over tcm_loop only"
        )
    names = list(dict.fromkeys(r["workload"] for r in rows))
    text = RUN.format(
        name=name,
        other=off_side if on_side == "ours" else on_side,
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
        text += f"\n### {STORE_TITLE[store]}\n\n" + columns(a, b)
        for r in mine:
            on, off = r[on_side], r[off_side]
            cells = (
                r["workload"],
                num(on.get("iops"), "%.0f"),
                num(off.get("iops"), "%.0f"),
                ratio(on.get("iops"), off.get("iops")),
                round_ratios(r, on_side, off_side),
                num(on.get("lat_p99_us"), "%.0f"),
                num(off.get("lat_p99_us"), "%.0f"),
                num(on.get("cpu_us_per_io"), "%.0f"),
                num(off.get("cpu_us_per_io"), "%.0f"),
                ratio(on.get("cpu_us_per_io"), off.get("cpu_us_per_io")),
            )
            text += "| {} |\n".format(" | ".join(cells))
    return text


def render_metrics(data):
    return render_contrast("metrics", data)


def render_odxcheck(data):
    return render_contrast("odxcheck", data)
