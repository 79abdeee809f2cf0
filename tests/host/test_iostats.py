"""Reading the module's per-LUN I/O metrics (vaai/iostats.py): the files'
format, rates between readings, and percentiles from log2 buckets."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from vaai import iostats
from vaai.iostats import BUCKETS, KINDS, Op


def hist(**at):
    """A histogram with n commands in bucket b for each b=n given as _b."""
    h = [0] * BUCKETS
    for key, n in at.items():
        h[int(key[1:])] = n
    return tuple(h)


def line(cmds, errors, nbytes, lat_us, h):
    return " ".join(map(str, [cmds, errors, nbytes, lat_us, *h])) + "\n"


def test_bounds_double_from_one_microsecond():
    bounds = list(iostats.BOUNDS)
    assert bounds[:4] == [(0, 1), (1, 2), (2, 4), (4, 8)]
    assert bounds[22] == (1 << 21, 1 << 22) and bounds[23] == (1 << 22, float("inf"))


def test_a_file_parses_into_its_figures():
    h = hist(_10=3, _11=1)
    assert iostats.parse(line(4, 1, 8192, 3000, h)) == Op(4, 1, 8192, 3000, h)
    with pytest.raises(ValueError):
        iostats.parse("1 2 3\n")


@pytest.mark.parametrize(
    "h, q, want",
    [
        (hist(), 0.99, None),
        # 100 commands of 512 to 1024 µs: the 99th is 99 % of the way up
        (hist(_10=100), 0.99, 512 + 512 * 0.99),
        # 98 fast, 2 slow: the 99th is halfway into the slow bucket
        (hist(_1=98, _20=2), 0.99, (1 << 19) + (1 << 19) * 0.5),
        (hist(_1=98, _20=2), 0.5, 1 + 1 * (50 / 98)),
        # past the last bound the histogram tells only the bound
        (hist(_23=5), 0.99, float(1 << 22)),
    ],
)
def test_percentile_within_its_bucket(h, q, want):
    got = iostats.percentile(h, q)
    assert got == pytest.approx(want) if want is not None else got is None


def test_read_takes_every_lun_with_every_file(tmp_path):
    for name, complete in (("ds1", True), ("ds2", False)):
        attrib = tmp_path / "vaai_0" / name / "attrib"
        attrib.mkdir(parents=True)
        for kind in KINDS if complete else KINDS[:3]:
            (attrib / f"stats_io_{kind}").write_text(line(2, 0, 1024, 10, hist(_3=2)))
    got = iostats.read(str(tmp_path))
    assert list(got) == ["ds1"], "a LUN without every file is left out"
    assert set(got["ds1"]) == set(KINDS)
    assert got["ds1"]["ats"] == Op(2, 0, 1024, 10, hist(_3=2))
    assert iostats.read(str(tmp_path), names=["ds9"]) == {}


def test_an_interval_gives_rates_and_latency():
    before = Op(10, 0, 4096, 100, hist(_3=10))
    after = Op(110, 2, 4096 + 50_000_000, 100 + 200_000, hist(_3=10, _11=100))
    s = iostats.summary(iostats.since(before, after), seconds=2.0)
    assert s["iops"] == 50.0 and s["mb_per_s"] == 25.0 and s["failed"] == 2
    assert s["avg_ms"] == 2.0
    assert s["p99_ms"] == pytest.approx((1024 + 1024 * 0.99) / 1000)
    idle = iostats.summary(iostats.since(after, after), seconds=2.0)
    assert idle == {"iops": 0.0, "mb_per_s": 0.0, "failed": 0, "avg_ms": None, "p99_ms": None}
