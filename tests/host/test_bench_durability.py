"""bench/report_durability.py renders the file store's writes synced and
not: each side's figures and ours over target_core_file async_io, per
round where the rounds were kept; report.py places it after the analysis."""

import importlib.util
import os
import sys

import pytest
from report_run import table_rows

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.insert(0, BENCH)

import report_durability  # noqa: E402

_spec = importlib.util.spec_from_file_location("report", os.path.join(BENCH, "report.py"))
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)


def side(iops, cpu):
    return {"iops": iops, "cpu_us_per_io": cpu}


ROUNDS = [
    {"ours": side(900, 0), "ours-wb": side(1100, 0), "lio-aio": side(1000, 0), "lio": side(800, 0)},
    {"ours": side(800, 0), "ours-wb": side(1400, 0), "lio-aio": side(1600, 0), "lio": side(700, 0)},
]
DATA = {
    "meta": {
        "date": "2026-11-25 09:05 UTC",
        "kernel": "6.1.0-56-amd64",
        "rounds": 2,
        "runtime_s": 3,
    },
    "results": [
        {
            "store": "file",
            "fabric": "loop",
            "workload": "4k-randwrite-qd32",
            "ours": side(850, 400.0),
            "ours-wb": side(1250, 300.0),
            "lio-aio": side(1300, 320.0),
            "lio": side(750, 500.0),
            "rounds": ROUNDS,
        },
        {
            "store": "file",
            "fabric": "loop",
            "workload": "4k-randwrite-qd1",
            "ours": side(500, 400.0),
            "ours-wb": side(600, 300.0),
            "lio-aio": side(400, 320.0),
            "lio": side(300, None),
        },
    ],
}


def rows(text, title):
    return table_rows(text, title)


def test_iops_of_every_side_and_ours_over_async_io():
    head, qd32, qd1 = rows(report_durability.render_durability(DATA), "IOPS")
    assert head == [
        "workload",
        "vaai (ours)",
        "vaai, write cache on",
        "target_core_file async_io",
        "target_core_file",
        "ours / async_io",
        "ours-wb / async_io",
        "ours-wb / async_io, each round",
    ]
    assert qd32 == ["4k-randwrite-qd32", "850", "1250", "1300", "750", "0.65", "0.96", "0.88-1.10"]
    # a point without its rounds says so
    assert qd1 == ["4k-randwrite-qd1", "500", "600", "400", "300", "1.25", "1.50", "n/a"]


def test_cpu_per_io_has_no_round_column_and_says_what_was_not_measured():
    head, qd32, qd1 = rows(report_durability.render_durability(DATA), "CPU µs per I/O")
    assert len(head) == 7
    assert qd32[1:] == ["400", "300", "320", "500", "1.25", "0.94"]
    assert qd1[4] == "n/a"


def test_the_text_gives_the_command_that_measured_it():
    text = report_durability.render_durability(DATA)
    assert "2026-11-25 09:05 UTC" in text and "2 rounds of 3 s runs" in text
    assert "--rounds 2 --runtime 3 \\\n" in text
    assert "--side ours --side ours-wb --side lio-aio --side lio \\\n" in text
    assert "--only 4k-randwrite-qd32 \\\n        --only 4k-randwrite-qd1\n" in text


def test_only_the_file_store_over_tcm_loop_is_rendered():
    other = dict(DATA["results"][0], fabric="iscsi")
    with pytest.raises(SystemExit):
        report_durability.render_durability(dict(DATA, results=DATA["results"] + [other]))


def test_report_refuses_a_data_run_without_ours():
    lio_only = {
        "meta": DATA["meta"],
        "results": [{k: v for k, v in DATA["results"][0].items() if k not in ("ours", "ours-wb")}],
    }
    with pytest.raises(SystemExit):
        report.render(report.marked("data", ""), data=lio_only)


def test_report_takes_it_from_the_command_line_into_its_block(tmp_path):
    src = tmp_path / "d.json"
    src.write_text(__import__("json").dumps(DATA))
    out = tmp_path / "b.md"
    out.write_text("notes\n\n" + report.marked("durability", "") + "\nafter\n")
    assert report.main(["report.py", "--durability", str(src), str(out)]) == 0
    text = out.read_text()
    assert text.startswith("notes\n\n<!-- section:durability -->\n")
    assert "| 4k-randwrite-qd32 | 850 |" in text and text.endswith("\nafter\n")
    # rendering something else keeps it
    assert report.main(["report.py", str(out)]) == 0
    assert out.read_text() == text
