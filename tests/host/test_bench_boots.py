"""bench/report_boots.py renders the data path of several boots side by
side: ours over LIO's best per point and boot, and which points lean the
same way beyond the noise in every boot; report.py places it after the
data path and refuses runs it cannot compare."""

import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.insert(0, BENCH)

import report  # noqa: E402
import report_boots  # noqa: E402
from report_run import run_report, table_rows  # noqa: E402

META = {
    "rounds": 3,
    "runtime_s": 3,
    "lun_bytes": 1 << 28,
    "kernel": "6.1.0-56-amd64",
    "clocksource": "tsc",
}


def side(iops, cpu):
    return {"iops": iops, "cpu_us_per_io": cpu}


def point(workload, ours, lio, aio=None, store="file", table=True):
    r = {
        "store": store,
        "fabric": "loop",
        "workload": workload,
        "table": table,
        "ours": ours,
        "lio": lio,
    }
    if aio:
        r["lio-aio"] = aio
    return r


def run(date, rows):
    return {"meta": dict(META, date=date), "results": rows}


# qd1: lower IOPS and more CPU in both boots, against whichever LIO side
# is best in that boot; qd32: beyond the noise in one boot only; 64k:
# higher and less in both; the sweep point is no table point.
BOOT1 = run(
    "2026-11-25 05:52 UTC",
    [
        point("4k-randwrite-qd1", side(800, 400.0), side(700, 500.0), side(1000, 300.0)),
        point("4k-randwrite-qd32", side(800, 300.0), side(1000, 300.0)),
        point("64k-seqread-qd8", side(1300, 200.0), side(1000, 300.0)),
        point("16k-randread-qd32", side(10, 1.0), side(1000, 300.0), table=False),
        point("4k-randread-qd1", side(1000, 250.0), side(1000, 260.0), store="bdev"),
    ],
)
BOOT2 = run(
    "2026-11-25 11:39 UTC",
    [
        point("4k-randwrite-qd1", side(850, 420.0), side(1000, 350.0), side(900, 360.0)),
        point("4k-randwrite-qd32", side(1000, 300.0), side(1000, 300.0)),
        point("64k-seqread-qd8", side(1200, 240.0), side(1000, 300.0)),
        point("16k-randread-qd32", side(10, 1.0), side(1000, 300.0), table=False),
        point("4k-randread-qd1", side(1000, 250.0), side(1000, 260.0), store="bdev"),
    ],
)


def rows(text, title):
    return table_rows(text, title, stop="\nOf the")


def test_each_boot_has_its_own_ratio_columns_and_the_leaning_ones_are_marked():
    text = report_boots.render_boots([BOOT1, BOOT2])
    head, qd1, qd32, seq = rows(text, "file store (XFS on a RAM disk) over tcm_loop")
    assert head == [
        "workload",
        "IOPS 11-25 05:52",
        "IOPS 11-25 11:39",
        "IOPS, every boot",
        "CPU/IO 11-25 05:52",
        "CPU/IO 11-25 11:39",
        "CPU/IO, every boot",
    ]
    # 800/1000 and 850/1000; 400/300 and 420/350
    assert qd1 == ["4k-randwrite-qd1", "0.80", "0.85", "lower", "1.33", "1.20", "more"]
    assert qd32 == ["4k-randwrite-qd32", "0.80", "1.00", "", "1.00", "1.00", ""]
    assert seq == ["64k-seqread-qd8", "1.30", "1.20", "higher", "0.67", "0.80", "less"]


def test_the_count_covers_both_stores_and_leaves_out_sweep_points():
    text = report_boots.render_boots([BOOT1, BOOT2])
    assert rows(text, "block store (RAM disk) over tcm_loop")[1] == [
        "4k-randread-qd1",
        "1.00",
        "1.00",
        "",
        "0.96",
        "0.96",
        "",
    ]
    assert "16k-randread" not in text
    assert (
        "Of the 4 points: IOPS lower than LIO's best in every boot at 1, higher at 1; "
        "CPU per I/O more in every boot at 1, less at 1;"
    ) in text


def test_a_point_one_boot_lacks_is_left_out():
    short = run(
        "2026-11-25 12:00 UTC",
        [r for r in BOOT2["results"] if r["workload"] != "4k-randwrite-qd32"],
    )
    text = report_boots.render_boots([BOOT1, short])
    assert "4k-randwrite-qd32" not in text and "4k-randwrite-qd1" in text


def test_each_fabric_is_compared_over_the_boots_that_measured_it():
    iscsi = [dict(r, fabric="iscsi") for r in BOOT2["results"]]
    text = report_boots.render_boots(
        [BOOT1, run("2026-11-25 06:44 UTC", iscsi), BOOT2, run("2026-11-25 12:30 UTC", iscsi)]
    )
    assert (
        "\n- tcm_loop: 2026-11-25 05:52 UTC, 2026-11-25 11:39 UTC\n"
        "- iSCSI: 2026-11-25 06:44 UTC, 2026-11-25 12:30 UTC\n"
    ) in text
    assert rows(text, "file store (XFS on a RAM disk) over iSCSI")[1] == [
        "4k-randwrite-qd1",
        "0.85",
        "0.85",
        "lower",
        "1.20",
        "1.20",
        "more",
    ]
    assert "Of the 8 points" in text


@pytest.mark.parametrize(
    "other",
    [
        # no fabric measured twice
        run("2026-11-25 12:00 UTC", [dict(r, fabric="iscsi") for r in BOOT2["results"]]),
        {"meta": dict(BOOT2["meta"], rounds=4), "results": BOOT2["results"]},
        run(
            "2026-11-25 12:00 UTC",
            [{k: v for k, v in r.items() if k != "ours"} for r in BOOT2["results"]],
        ),
    ],
)
def test_runs_that_cannot_be_compared_are_refused(other):
    with pytest.raises(SystemExit):
        report_boots.render_boots([BOOT1, other])


def test_a_run_given_twice_or_left_without_a_second_boot_is_refused():
    with pytest.raises(SystemExit, match="twice"):
        report_boots.render_boots([BOOT1, BOOT2, BOOT1])
    iscsi = run("2026-11-25 06:44 UTC", [dict(r, fabric="iscsi") for r in BOOT2["results"]])
    with pytest.raises(SystemExit, match="no other run measured"):
        report_boots.render_boots([BOOT1, BOOT2, iscsi])


def test_runs_of_other_lio_sides_are_refused():
    """Without async_io in one boot, LIO's best would be another side's."""
    no_aio = run(
        "2026-11-25 12:00 UTC",
        [{k: v for k, v in r.items() if k != "lio-aio"} for r in BOOT2["results"]],
    )
    with pytest.raises(SystemExit, match="other sides"):
        report_boots.render_boots([BOOT1, no_aio])


def test_one_boot_is_refused():
    with pytest.raises(SystemExit):
        report_boots.render_boots([BOOT1])


def test_report_renders_it_into_its_block_and_keeps_it(tmp_path):
    out = run_report(
        tmp_path,
        "--boots",
        (BOOT1, BOOT2),
        "<!-- section:data -->\nDATA\n<!-- /section:data -->\n\n"
        "<!-- section:boots -->\n<!-- /section:boots -->\n\n"
        "<!-- section:profile -->\nPROFILE\n<!-- /section:profile -->\n",
    )
    page = out.read_text()
    assert page.index("DATA") < page.index("Boots of kernel") < page.index("PROFILE")
    assert "\n    bench/report.py --boots RUN1.json --boots RUN2.json docs/benchmarks.md\n" in page
    # rendering something else keeps it
    assert report.main(["report.py", str(out)]) == 0
    assert out.read_text() == page


def test_a_ratio_the_table_shows_as_0_90_is_not_beyond_the_noise():
    assert report_boots.lean([0.896, 0.85], "lower", "higher") == ""
    assert report_boots.lean([0.894, 0.85], "lower", "higher") == "lower"
    assert report_boots.lean([1.104, 1.3], "lower", "higher") == ""
    assert report_boots.lean([1.3, None], "lower", "higher") == ""
