"""Host-side tests of the counter reader and its three renderings."""

import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from vaai import stats


def fake_lun(root, hba, name, block=512, **values):
    attrib = os.path.join(root, hba, name, "attrib")
    os.makedirs(attrib)
    for key, _ in stats.COUNTERS:
        with open(os.path.join(attrib, "stats_" + key), "w") as f:
            f.write(f"{values.get(key, 0)}\n")
    with open(os.path.join(attrib, "block_size"), "w") as f:
        f.write(f"{block}\n")


def test_read_finds_vaai_luns_only_and_converts_blocks(tmp_path):
    fake_lun(str(tmp_path), "vaai_0", "ds1", block=4096, zero_blocks=3, unmap_blocks=2, ats=7)
    fake_lun(str(tmp_path), "vaai_1", "ds2", clone_read=1)
    fake_lun(str(tmp_path), "fileio_0", "other", ats=99)
    got = stats.read(str(tmp_path))
    assert sorted(got) == ["ds1", "ds2"]
    assert got["ds1"]["ats"] == 7
    assert got["ds1"]["zero_bytes"] == 3 * 4096
    assert got["ds1"]["unmap_bytes"] == 2 * 4096
    assert stats.read(str(tmp_path), names=["ds2"]).keys() == {"ds2"}


def test_read_skips_a_lun_without_counters(tmp_path):
    os.makedirs(str(tmp_path / "vaai_0" / "new" / "attrib"))
    fake_lun(str(tmp_path), "vaai_0", "ds1")
    assert list(stats.read(str(tmp_path))) == ["ds1"]


def counters(**values):
    c = {key: 0 for key, _ in stats.COUNTERS}
    c.update(zero_bytes=0, unmap_bytes=0)
    c.update(values)
    return c


def test_rates_are_mb_per_second_between_readings():
    before = {"ds1": counters(clone_read_bytes=0, zero_bytes=1000000)}
    after = {"ds1": counters(clone_read_bytes=20000000, zero_bytes=5000000), "new": counters()}
    r = stats.rates(before, after, 2.0)
    assert r["ds1"]["MBC_RD/s"] == 10.0
    assert r["ds1"]["MBZERO/s"] == 2.0
    assert r["ds1"]["MBDEL/s"] == 0.0
    assert "new" not in r  # no earlier reading: no rate


def test_table_uses_esxtop_columns_and_aligns():
    text = stats.table(
        {
            "ds1": counters(ats=12345, ats_miscompare=2, in_flight=7),
            "a-much-longer-name": counters(),
        }
    )
    lines = text.splitlines()
    head = lines[0].split()
    assert head[:5] == ["BACKSTORE", "ACTV", "ATS", "ATSF", "ATS_ERR"]
    assert "rw_deferred" not in text  # not an esxtop column
    for col in ("ZERO", "ZERO_F", "CLONE_RD", "CLONE_WR", "CLONE_F", "UNMAP", "UNMAP_F"):
        assert col in head
    assert "MBC_RD/s" not in head
    for line in lines:  # numbers right-aligned under their headings
        assert [m.end() for m in re.finditer(r"\S+", line)][1:] == [
            m.end() for m in re.finditer(r"\S+", lines[0])
        ][1:]
    row = dict(zip(head, lines[2].split()))  # rows sorted by name
    assert row["BACKSTORE"] == "ds1" and row["ATS"] == "12345" and row["ATSF"] == "2"
    assert row["ACTV"] == "7"


def test_table_with_rates_shows_dashes_for_new_luns():
    text = stats.table(
        {"ds1": counters(), "ds2": counters()}, {"ds1": {col: 1.5 for col, _ in stats.RATES}}
    )
    head, r1, r2 = [line.split() for line in text.splitlines()]
    assert head[-4:] == ["MBZERO/s", "MBC_RD/s", "MBC_WR/s", "MBDEL/s"]
    assert r1[-4:] == ["1.5"] * 4
    assert r2[-4:] == ["-"] * 4


def test_json_carries_every_counter_and_rates():
    doc = json.loads(stats.as_json({"ds1": counters(unmap=3)}, {"ds1": {"MBDEL/s": 4.0}}))
    assert doc["ds1"]["unmap"] == 3
    assert doc["ds1"]["mb_per_s"] == {"MBDEL/s": 4.0}
    assert {k for k, _ in stats.COUNTERS} <= set(doc["ds1"])


def test_json_carries_the_io_metrics_and_their_rates():
    from vaai import iostats

    op = iostats.Op(3, 1, 12288, 300, (0,) * 7 + (3,) + (0,) * 16)
    io = {"ds1": dict.fromkeys(iostats.KINDS, op)}
    rates = {"ds1": dict.fromkeys(iostats.COLUMNS, 1.5)}
    doc = json.loads(stats.as_json({"ds1": counters()}, None, io, rates))
    assert doc["ds1"]["io"]["ats"] == {
        "cmds": 3,
        "errors": 1,
        "bytes": 12288,
        "lat_us": 300,
        "hist": list(op.hist),
    }
    assert doc["ds1"]["io_per_s"]["P99_ms"] == 1.5
    assert "io" not in json.loads(stats.as_json({"ds2": counters()}, None, io, rates))["ds2"]
