"""4 KiB random I/O beside UNMAP and WRITE SAME (bench/guest_space.py),
for docs/benchmarks.md: per store, the VM's read p50 and p99 and write p99
on ours and on LIO beside each stream, ours' write p99 over LIO's and over its
own idle one, and what the stream moved on each."""

from report_ats import STORE, idle_p99
from report_cells import num, ratio, store_tables

SPACE = """`bench/guest_space.py`, measured {date} (kernel {kernel}), over tcm_loop,
both sides in one boot, {rounds} rounds of {seconds} s of VM I/O per stream
rotating which side goes first; every figure the median of the rounds.
This run alone, after `make module build/bench/sgloop`:

    tests/vm/run.py --kver KVER --mem 12G --timeout 3600 \\
        --log build/vm/space.log \\
        --append clocksource=tsc --append tsc=reliable -- \\
        /usr/bin/python3 bench/guest_space.py build/bench/space.json \\
        --rounds {rounds} --seconds {seconds}
    bench/report.py --space build/bench/space.json docs/benchmarks.md
"""

COLUMNS = (
    "| stream | read p50 µs ours | read p50 µs LIO | read p99 µs ours | read p99 µs LIO "
    "| write p99 µs ours | write p99 µs LIO | write p99 ours/LIO | write p99 ours/idle "
    "| IOPS ours | IOPS LIO | stream MB/s ours | stream MB/s LIO |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
)


def iops(side):
    return side["read_iops"] + side["write_iops"]


def space_cells(r, rows):
    o, lio = r["ours"], r["lio"]
    return (
        r["stream"],
        num(o["read_p50_us"], "%.0f"),
        num(lio["read_p50_us"], "%.0f"),
        num(o["read_p99_us"], "%.0f"),
        num(lio["read_p99_us"], "%.0f"),
        num(o["write_p99_us"], "%.0f"),
        num(lio["write_p99_us"], "%.0f"),
        ratio(o["write_p99_us"], lio["write_p99_us"]),
        ratio(o["write_p99_us"], idle_p99(rows, "write_p99_us")),
        num(iops(o), "%.0f"),
        num(iops(lio), "%.0f"),
        num(o.get("stream_mbps"), "%.0f"),
        num(lio.get("stream_mbps"), "%.0f"),
    )


def render_space(data):
    m = data["meta"]
    text = SPACE.format(
        date=m["date"], kernel=m["kernel"], rounds=m["rounds"], seconds=m["seconds"]
    )
    return text + store_tables(data, STORE, COLUMNS, space_cells)
