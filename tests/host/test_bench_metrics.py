"""bench/report_metrics.py renders what the I/O metrics cost: ours with
attrib/io_stats=1 against io_stats=0 per store, the median and each
round's ratio; report.py puts it in its own block; guest_bench.py runs
the io_stats=0 side on both stores when asked."""

import importlib.util
import os
import sys

import pytest
from report_run import table_rows

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.insert(0, BENCH)

import guest_bench  # noqa: E402
import report_metrics  # noqa: E402

_spec = importlib.util.spec_from_file_location("report", os.path.join(BENCH, "report.py"))
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)


def side(iops, cpu, p99=100.0):
    return {"iops": iops, "cpu_us_per_io": cpu, "lat_p99_us": p99}


def row(store, workload, on, off, rounds=()):
    return {
        "store": store,
        "fabric": "loop",
        "workload": workload,
        "ours": on,
        "ours-nostats": off,
        "rounds": list(rounds),
    }


DATA = {
    "meta": {
        "date": "2026-11-28 01:00 UTC",
        "kernel": "6.1.0-56-amd64",
        "rounds": 2,
        "runtime_s": 3,
    },
    "results": [
        row(
            "file",
            "4k-randread-qd32",
            side(980, 410.0),
            side(1000, 400.0),
            [
                {"ours": side(950, 0), "ours-nostats": side(1000, 0)},
                {"ours": side(1010, 0), "ours-nostats": side(1000, 0)},
            ],
        ),
        row("bdev", "4k-randread-qd32", side(1200, 300.0, 90.0), side(1200, None, 80.0)),
    ],
}


def cells(text, title):
    return table_rows(text, title, "workload")


def test_each_store_has_its_table_with_ratios_and_each_round():
    text = report_metrics.render_metrics(DATA)
    assert cells(text, "file store (XFS on a RAM disk)") == [
        ["4k-randread-qd32", "980", "1000", "0.98", "0.95-1.01", "100", "100", "410", "400", "1.02"]
    ]
    # a figure not measured is n/a, and so is its ratio
    assert cells(text, "block store (RAM disk)") == [
        ["4k-randread-qd32", "1200", "1200", "1.00", "n/a", "90", "80", "300", "n/a", "n/a"]
    ]
    assert "--side ours --side ours-nostats \\\n        --only 4k-randread-qd32\n" in text


def test_a_run_without_the_io_stats_0_side_is_refused():
    bad = {"meta": DATA["meta"], "results": [dict(DATA["results"][0])]}
    del bad["results"][0]["ours-nostats"]
    with pytest.raises(SystemExit, match="needs ours and ours-nostats"):
        report_metrics.render_metrics(bad)


def test_report_rewrites_the_metrics_block_alone():
    page = "# x\n<!-- section:metrics -->\nold\n<!-- /section:metrics -->\nprose\n"
    out = report.render(page, metrics=DATA)
    assert "old" not in out and out.endswith("<!-- /section:metrics -->\nprose\n")
    assert "| 4k-randread-qd32 | 980 | 1000 | 0.98 |" in out


def test_the_io_stats_0_side_runs_on_both_stores_when_named():
    assert guest_bench.pick_sides(["ours", "ours-nostats"]) == {
        "file": ("ours", "ours-nostats"),
        "bdev": ("ours", "ours-nostats"),
    }
    assert set(guest_bench.BDEVS) == set(guest_bench.KNOWN_SIDES["bdev"])


def test_the_token_check_is_ours_with_tokens_against_ours():
    data = {
        "meta": DATA["meta"],
        "results": [
            {
                "store": "bdev",
                "fabric": "loop",
                "workload": "4k-randwrite-qd32",
                "ours": side(1000, 300.0, 80.0),
                "ours-tokens": side(990, 303.0, 82.0),
                "rounds": [
                    {"ours": side(1000, 0), "ours-tokens": side(970, 0)},
                    {"ours": side(1000, 0), "ours-tokens": side(1020, 0)},
                ],
            }
        ],
    }
    text = report_metrics.render_odxcheck(data)
    assert "| IOPS tokens | IOPS no token |" in text
    assert cells(text, "block store (RAM disk)") == [
        ["4k-randwrite-qd32", "990", "1000", "0.99", "0.97-1.02", "82", "80", "303", "300", "1.01"]
    ]
    assert "--side ours --side ours-tokens \\\n" in text
    assert "bench/report.py --odxcheck build/bench/odxcheck.json" in text
    page = "<!-- section:odxcheck -->\nold\n<!-- /section:odxcheck -->\n"
    assert "| 4k-randwrite-qd32 | 990 |" in report.render(page, odxcheck=data)
    del data["results"][0]["ours-tokens"]
    with pytest.raises(SystemExit, match="needs ours-tokens and ours"):
        report_metrics.render_odxcheck(data)


def test_the_tokens_side_has_a_ram_disk_of_its_own_and_tokens_past_fio():
    assert guest_bench.pick_sides(["ours", "ours-tokens"]) == {
        "file": ("ours", "ours-tokens"),
        "bdev": ("ours", "ours-tokens"),
    }
    assert len(set(guest_bench.BDEVS.values())) == len(guest_bench.BDEVS)
    # the last token's last range ends within the second LUN_BYTES
    b = guest_bench
    end = (b.LUN_BYTES // 512) + ((b.TOKENS * b.RANGES - 1) * 2 + 1) * b.RANGE_BLOCKS
    assert end * 512 <= 2 * b.LUN_BYTES
