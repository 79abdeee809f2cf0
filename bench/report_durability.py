"""The file store's writes with and without their sync, for
docs/benchmarks.md: ours as it runs (the write cache off, every write
synced), ours with the write cache on (io_mode=direct, no sync), and
target_core_file, whose async_io syncs no write with the write cache off
either."""

from plots import side_label
from report_cells import num, ratio

DURABILITY = """`bench/guest_bench.py`, measured {date} (kernel {kernel}), the file
store over tcm_loop, all sides in one boot, {rounds} rounds of {runtime} s runs
rotating which side goes first; each figure is the median of the rounds.
This run alone, after `make module`:

    tests/vm/run.py --kver KVER --mem 12G --timeout 3600 \\
        --log build/vm/durability.log \\
        --append clocksource=tsc --append tsc=reliable -- \\
        /usr/bin/python3 bench/guest_bench.py build/bench/durability.json \\
        --store file --fabric loop --rounds {rounds} --runtime {runtime} \\
        {sides} \\
        {only}
    bench/report.py --durability build/bench/durability.json docs/benchmarks.md
"""

SIDES = ("ours", "ours-wb", "lio-aio", "lio")


def round_ratios(r, a, b):
    """The smallest and largest of a's IOPS over b's, each round's a over
    the same round's b, or n/a."""
    got = [
        rd[a]["iops"] / rd[b]["iops"]
        for rd in r.get("rounds", ())
        if rd.get(a, {}).get("iops") and rd.get(b, {}).get("iops")
    ]
    return f"{min(got):.2f}-{max(got):.2f}" if got else "n/a"


def table(rows, key, spec, title):
    sides = [who for who in SIDES if who in rows[0]]
    head = (
        ["workload"]
        + [side_label("file", who) for who in sides]
        + ["ours / async_io", "ours-wb / async_io"]
    )
    with_rounds = key == "iops" and any("rounds" in r for r in rows)
    if with_rounds:
        head.append("ours-wb / async_io, each round")
    out = [
        f"\n### {title}\n",
        "| {} |".format(" | ".join(head)),
        "|---|" + "---:|" * (len(head) - 1),
    ]
    for r in rows:
        cells = [r["workload"]] + [num(r.get(who, {}).get(key), spec) for who in sides]
        cells += [
            ratio(r.get(a, {}).get(key), r.get("lio-aio", {}).get(key)) for a in ("ours", "ours-wb")
        ]
        if with_rounds:
            cells.append(round_ratios(r, "ours-wb", "lio-aio"))
        out.append("| {} |".format(" | ".join(cells)))
    return "\n".join(out) + "\n"


def render_durability(data):
    m = data["meta"]
    rows = data["results"]
    if any((r["store"], r["fabric"]) != ("file", "loop") for r in rows):
        raise SystemExit(
            "report.py: the durability run has points off the file store over tcm_loop"
        )
    sides = " ".join(f"--side {who}" for who in SIDES if who in rows[0])
    only = " \\\n        ".join("--only {}".format(r["workload"]) for r in rows)
    text = DURABILITY.format(
        date=m["date"],
        kernel=m["kernel"],
        rounds=m["rounds"],
        runtime=m["runtime_s"],
        sides=sides,
        only=only,
    )
    text += table(rows, "iops", "%.0f", "IOPS")
    text += table(rows, "cpu_us_per_io", "%.0f", "CPU µs per I/O")
    return text
