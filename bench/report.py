"""Render bench results (JSON from guest_bench.py) as docs/benchmarks.md.

    report.py RESULTS.json OUT.md
"""
import json
import sys

HEADER = """# Benchmarks

Every figure compares our backend (`vaai`) with upstream LIO on the same
backing store, in the same VM boot: `target_core_file` for the file store,
`target_core_iblock` for the block device store.  Absolute numbers from an
emulated guest (QEMU without KVM, {cpus} vCPUs) mean little; the ratios are
the point.

## How to reproduce

    make bench

boots the VM once (`tests/vm/run.py`), runs `bench/guest_bench.py` inside it
and renders this page with `bench/report.py` from `build/bench/results.json`.

## Method

- Stores: the file LUNs are {lun_mib} MiB files on XFS on a RAM disk (brd),
  written out in full first so neither side reads holes; the block LUNs are
  RAM disks of their own.  Ours and LIO's are identical in size and kind.
- Fabric: tcm_loop; fio {{libaio, O_DIRECT}} on the guest's /dev/sdX, one job,
  {runtime} s per run after 1 s of warm-up.
- Write cache off on both sides (LIO fileio `write_back=0`).
- {rounds} rounds per point, alternating which side runs first; the table
  shows the median of each metric.
- CPU/IO: busy CPU time of the whole guest (all of /proc/stat but idle and
  iowait) during the run, divided by the I/Os completed; it includes fio and
  the initiator side, which are the same for both.
- Ratio = ours / LIO.  For IOPS and MB/s higher is better; for latency and
  CPU/IO lower is better.

## Results ({date}, kernel {kernel})

| store | workload | IOPS ours | IOPS LIO | ratio | MB/s ours | MB/s LIO | p99 µs ours | p99 µs LIO | CPU µs/IO ours | CPU µs/IO LIO | ratio |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
"""


def ratio(a, b):
    return "%.2f" % (a / b) if a and b else "n/a"


def row(r):
    o, l = r["ours"], r["lio"]
    return "| %s | %s | %.0f | %.0f | %s | %.1f | %.1f | %.0f | %.0f | %.1f | %.1f | %s |" % (
        r["store"], r["workload"], o["iops"], l["iops"], ratio(o["iops"], l["iops"]),
        o["mbps"], l["mbps"], o["lat_p99_us"], l["lat_p99_us"],
        o["cpu_us_per_io"], l["cpu_us_per_io"],
        ratio(o["cpu_us_per_io"], l["cpu_us_per_io"]))


def render(data):
    m = data["meta"]
    text = HEADER.format(cpus=m["cpus"], lun_mib=m["lun_bytes"] >> 20,
                         runtime=m["runtime_s"], rounds=m["rounds"],
                         date=m["date"], kernel=m["kernel"])
    return text + "\n".join(row(r) for r in data["results"]) + "\n"


def main(argv):
    with open(argv[1]) as f:
        data = json.load(f)
    with open(argv[2], "w") as f:
        f.write(render(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
