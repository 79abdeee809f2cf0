"""The per-LUN I/O metrics the module keeps (attrib/stats_io_<kind>):
commands, failed, bytes and latency per kind of command, the latency as a
histogram of log2-microsecond buckets; read here, turned into rates and
percentiles between two readings.

A file holds "commands failed bytes latency_sum_us b0 ... b23": bucket b
counts latencies below 2^b µs (and, past b = 0, at least 2^(b-1)); the
last bucket holds the rest.
"""

import glob
import os
from collections import namedtuple

CORE = "/sys/kernel/config/target/core"
KINDS = ("read", "write", "ats", "zero", "unmap", "clone", "odx")
BUCKETS = 24

Op = namedtuple("Op", "cmds errors bytes lat_us hist")


# (lower, upper) µs of each bucket; the last one's upper is infinite.
BOUNDS = tuple(
    (0 if b == 0 else 1 << (b - 1), float("inf") if b == BUCKETS - 1 else 1 << b)
    for b in range(BUCKETS)
)


def parse(text):
    v = [int(x) for x in text.split()]
    if len(v) != 4 + BUCKETS:
        raise ValueError(f"{len(v)} numbers, not {4 + BUCKETS}")
    return Op(*v[:4], tuple(v[4:]))


def read(root=CORE, names=None):
    """{backstore name: {kind: Op}} for every vaai backstore (or those
    named) whose module keeps the metrics."""
    out = {}
    for dev in sorted(glob.glob(os.path.join(root, "vaai_*", "*"))):
        name = os.path.basename(dev)
        if names and name not in names:
            continue
        try:
            ops = {}
            for kind in KINDS:
                with open(os.path.join(dev, "attrib", f"stats_io_{kind}")) as f:
                    ops[kind] = parse(f.read())
        except (OSError, ValueError):
            continue  # an older module, not enabled yet, or removed as we read
        out[name] = ops
    return out


def since(before, after):
    """What happened between two readings of one kind, as an Op."""
    return Op(
        after.cmds - before.cmds,
        after.errors - before.errors,
        after.bytes - before.bytes,
        after.lat_us - before.lat_us,
        tuple(a - b for a, b in zip(after.hist, before.hist)),
    )


def percentile(hist, q):
    """The q-quantile (0 < q <= 1) of the latencies in hist, in µs, by
    linear interpolation within its bucket (as Prometheus'
    histogram_quantile does); None for no commands.  In the last bucket,
    its lower bound: the histogram says no more."""
    total = sum(hist)
    if not total:
        return None
    rank = q * total
    seen = 0
    for (lo, hi), n in zip(BOUNDS, hist):
        if n and seen + n >= rank:
            if hi == float("inf"):
                return float(lo)
            return lo + (hi - lo) * (rank - seen) / n
        seen += n
    return float(BOUNDS[-1][0])


def summary(op, seconds):
    """Rates and latency of one kind over an interval: commands/s, MB/s
    (10^6 bytes), failed, average and 99th percentile latency in ms."""
    avg = op.lat_us / op.cmds / 1000 if op.cmds else None
    p99 = percentile(op.hist, 0.99)
    return {
        "iops": op.cmds / seconds,
        "mb_per_s": op.bytes / 1e6 / seconds,
        "failed": op.errors,
        "avg_ms": avg,
        "p99_ms": None if p99 is None else p99 / 1000,
    }


# The live view's columns (esxtop's disk device view where it has one),
# in display order.
COLUMNS = (
    "CMDS/s",
    "READS/s",
    "WRITES/s",
    "MBREAD/s",
    "MBWRTN/s",
    "AVG_ms",
    "P99_ms",
    "ATS_P99_ms",
)


def columns(before, after, seconds):
    """{name: {column: value or None}} between two readings `seconds`
    apart, of the LUNs in both: commands of every kind, reads and writes
    per second, MB (10^6 bytes) read and written per second, the average
    and 99th-percentile latency of reads and writes together, in ms, and
    ATS's 99th percentile (None where no command of the kind came)."""
    out = {}
    for name, now in after.items():
        then = before.get(name)
        if then is None or seconds <= 0:
            continue
        d = {kind: since(then[kind], now[kind]) for kind in KINDS}
        rw = [d["read"], d["write"]]
        cmds = sum(op.cmds for op in rw)
        hist = [a + b for a, b in zip(d["read"].hist, d["write"].hist)]
        p99, ats = percentile(hist, 0.99), percentile(d["ats"].hist, 0.99)
        out[name] = {
            "CMDS/s": sum(op.cmds for op in d.values()) / seconds,
            "READS/s": d["read"].cmds / seconds,
            "WRITES/s": d["write"].cmds / seconds,
            "MBREAD/s": d["read"].bytes / 1e6 / seconds,
            "MBWRTN/s": d["write"].bytes / 1e6 / seconds,
            "AVG_ms": sum(op.lat_us for op in rw) / cmds / 1000 if cmds else None,
            "P99_ms": None if p99 is None else p99 / 1000,
            "ATS_P99_ms": None if ats is None else ats / 1000,
        }
    return out


def as_dict(ops):
    """One LUN's reading for JSON: {kind: {cmds, errors, bytes, lat_us,
    hist}}."""
    return {kind: dict(op._asdict(), hist=list(op.hist)) for kind, op in ops.items()}
