"""bench/report.py renders what the benchmarks measured, ratios included."""

import importlib.util
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.insert(0, BENCH)

import guest_clone  # noqa: E402

_spec = importlib.util.spec_from_file_location("report", os.path.join(BENCH, "report.py"))
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

# A page with an empty block for each section, and nothing else.
PAGE = "".join(report.marked(name, "") for name in report.SECTIONS)


def render(*runs, **named):
    """The sections given, rendered into PAGE."""
    return report.render(PAGE, *runs, **named)


def side(iops, cpu):
    return {
        "iops": iops,
        "mbps": iops * 4096 / 1e6,
        "lat_mean_us": 100.0,
        "lat_p99_us": 250.0,
        "cpu_us_per_io": cpu,
    }


DATA = {
    "meta": {
        "cpus": 2,
        "lun_bytes": 256 << 20,
        "runtime_s": 8,
        "rounds": 3,
        "date": "2026-11-23 04:00 UTC",
        "kernel": "6.1.0-56-amd64",
    },
    "results": [
        {
            "store": "file",
            "workload": "4k-randread-qd32",
            "fabric": "loop",
            "ours": side(12000, 80.0),
            "lio": side(10000, 100.0),
            "lio-aio": side(11000, 120.0),
        },
        {
            "store": "bdev",
            "workload": "4k-randread-qd32",
            "fabric": "iscsi",
            "ours": side(9000, 90.0),
            "lio": side(10000, 100.0),
        },
        {
            "store": "bdev",
            "workload": "64k-randread-qd32",
            "fabric": "loop",
            "table": False,
            "sweep": True,
            "ours": side(900, 90.0),
            "lio": side(1000, 100.0),
        },
    ],
}
THIN = {
    "results": {
        who: {
            step: {"seconds": s, "allocated": a}
            for step, s, a in (("zero", z, 1 << 30), ("unmap", 1.0, 0), ("host", 10.0, 1 << 30))
        }
        for who, z in (("ours", 1.0), ("ours_wb", 0.5), ("lio", 8.0))
    }
}


CAW = {
    "results": {
        who: {
            name: {"caw_per_s": r, "p99_us": 100.0 * m, "mean_us": 50.0}
            for name in ("disjoint-1", "disjoint-8", "disjoint-32", "same-8", "beside-1m")
        }
        for who, r, m in (("ours", 400.0, 1), ("lio", 100.0, 4))
    }
}


def test_caw_table():
    text = render(DATA, THIN, CAW)
    row = next(lio for lio in text.splitlines() if lio.startswith("| disjoint-8 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells == ["disjoint-8", "400", "100", "4.00", "100", "400", "0.25"]


def data_rows(text):
    return [
        [c.strip() for c in lio.strip("|").split("|")]
        for lio in text.splitlines()
        if lio.startswith(("| 4k-", "| 64k-"))
    ]


def test_table_rows_compare_with_the_best_lio_backstore():
    text = render(DATA, THIN, CAW)
    file_row, bdev_row = data_rows(text)
    # IOPS against the better of fileio (10000) and fileio async_io (11000),
    # CPU/IO against the lower of the two (100.0)
    assert file_row[1:4] == ["12000", "11000", "1.09"]
    assert file_row[-3:] == ["80.0", "100.0", "0.80"]
    assert bdev_row[1:4] == ["9000", "10000", "0.90"]


def test_sweep_points_are_plotted_not_tabled():
    assert len(data_rows(render(DATA, THIN, CAW))) == 2


def test_tables_are_per_store_and_fabric():
    text = render(DATA, THIN, CAW)
    assert "### file store (XFS on a RAM disk) over tcm_loop" in text
    assert "### block store (RAM disk) over iSCSI" in text
    assert "### block store (RAM disk) over tcm_loop" not in text


def test_targets_are_counted():
    text = render(DATA, THIN, CAW)
    assert (
        "Of the 2 points above: IOPS at least LIO's best at 1; p99 no higher at 2; "
        "on the file store, CPU/IO at least 15 % below LIO's best at 1 of 1."
    ) in text


def test_a_figure_not_measured_is_na_and_meets_no_target():
    point = dict(DATA["results"][0], ours=dict(side(12000, 80.0), cpu_us_per_io=None))
    text = render(dict(DATA, results=[point]), THIN, CAW)
    assert data_rows(text)[0][-3:] == ["n/a", "100.0", "n/a"]
    assert "CPU/IO at least 15 % below LIO's best at 0 of 1." in text


def block(text, name):
    return report.block(name).search(text).group(0)


def test_sections_not_rendered_are_kept_from_the_page():
    page = render(DATA, THIN, CAW, CLONE)
    newer = dict(DATA, results=[dict(DATA["results"][0], ours=side(20000, 50.0))])
    text = report.render(page, newer)
    assert data_rows(text)[0][1] == "20000"
    for name in ("thin", "caw", "clone"):
        assert block(text, name) == block(page, name)


def test_the_prose_around_the_blocks_is_kept_as_written():
    page = (
        "# Benchmarks\n\nHow it is measured.\n\n"
        + report.marked("data", "old\n")
        + "\nWhere the time goes.\n\n"
        + report.marked("thin", "old\n")
        + "\nEnd.\n"
    )
    text = report.render(page, DATA)
    assert text.startswith("# Benchmarks\n\nHow it is measured.\n\n<!-- section:data -->")
    assert "old\n<!-- /section:data" not in text
    assert text.endswith("\nWhere the time goes.\n\n" + report.marked("thin", "old\n") + "\nEnd.\n")


def test_a_page_without_the_sections_block_is_refused():
    with pytest.raises(SystemExit, match="section:thin"):
        report.render(report.marked("data", ""), DATA, THIN)


def test_thin_table_reports_time_ratio_and_allocation():
    text = render(DATA, THIN, CAW)
    row = next(lio for lio in text.splitlines() if lio.startswith("| zero |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells == ["zero", "1.00", "8.00", "0.12", "0.50", "1024 MiB", "1024 MiB"]


def copy(seconds, allocated, shared):
    return {
        "seconds": seconds,
        "sync_seconds": 0.01,
        "allocated": allocated,
        "mapped": allocated,
        "shared": shared,
        "fs_used": allocated - shared,
    }


GiB = 1 << 30
CLONE = {
    "meta": {
        "budget_s": 600,
        "host_bs": 4 << 20,
        "skipped": [
            {
                "fs": "ext4",
                "size": 4 * GiB,
                "reason": "estimated 700 s, 90 s of the 600 s budget left",
            }
        ],
    },
    "results": [
        {
            "fs": "xfs",
            "size": GiB,
            "copy": "across",
            "method": "xcopy",
            "cmd_bytes": 4 << 20,
            "depth": 4,
            "ours": copy(0.25, GiB, GiB),
            "lio": copy(20.0, GiB, 0),
        },
        {
            "fs": "xfs",
            "size": GiB,
            "copy": "across",
            "method": "xcopy",
            "cmd_bytes": 16 << 20,
            "ours": copy(0.5, GiB, GiB),
            "lio": {"error": "expected GOOD, got status=0x02"},
        },
        {
            "fs": "xfs",
            "size": GiB,
            "copy": "across",
            "method": "host",
            "cmd_bytes": 4 << 20,
            "ours": copy(10.0, GiB, 0),
        },
    ],
}


def clone_row(text, start):
    row = [lio for lio in text.splitlines() if lio.startswith(start)]
    return [c.strip() for c in row[0].strip("|").split("|")]


def test_clone_table_reports_ratios_host_and_sharing():
    text = render(DATA, THIN, CAW, CLONE)
    assert clone_row(text, "| xfs | 1 GiB | across | 4 MiB | 4 |") == [
        "xfs",
        "1 GiB",
        "across",
        "4 MiB",
        "4",
        "0.25",
        "20.00",
        "80.00",
        "10.00",
        "40.00",
        "0 MiB",
        "1024 MiB",
        "1024 MiB",
        "0 MiB",
    ]


def test_clone_failed_copy_is_never_a_time():
    text = render(DATA, THIN, CAW, CLONE)
    cells = clone_row(text, "| xfs | 1 GiB | across | 16 MiB |")
    assert cells[4:8] == ["1", "0.50", "failed", "n/a"]
    assert cells[11] == "n/a"
    # host rows feed the host column, they are not rows of their own
    assert len([lio for lio in text.splitlines() if lio.startswith("| xfs |")]) == 2


def test_clone_skipped_points_say_why():
    text = render(DATA, THIN, CAW, CLONE)
    assert "- ext4, 4 GiB: estimated 700 s, 90 s of the 600 s budget left" in text


def test_clone_runs_of_two_boots_keep_their_rows_and_dates():
    ext4 = {
        "meta": {"date": "2026-11-24 15:00 UTC", "budget_s": 900, "skipped": []},
        "results": [
            dict(CLONE["results"][0], fs="ext4", ours=copy(4.0, GiB, 0), lio=copy(6.0, GiB, 0))
        ],
    }
    xfs = dict(CLONE, meta=dict(CLONE["meta"], date="2026-11-24 14:00 UTC"))
    text = render(clone=report.merge_clone([xfs, ext4]))
    assert "2026-11-24 14:00 UTC (ext4, xfs); 2026-11-24 15:00 UTC (ext4)" in text
    assert clone_row(text, "| ext4 | 1 GiB | across | 4 MiB |")[5:8] == ["4.00", "6.00", "1.50"]
    assert clone_row(text, "| xfs | 1 GiB | across | 4 MiB |")[5:8] == ["0.25", "20.00", "80.00"]


def test_clone_section_optional():
    assert block(render(DATA, THIN, CAW), "clone") == report.marked("clone", "")


def counted(result, **per_side):
    """result with context switches per I/O added to each side."""
    out = dict(result)
    for who, ctxt in per_side.items():
        out[who] = dict(result[who], ctxt_per_io=ctxt)
    return out


def events_rows(text):
    part = text[text.index("### Context switches per I/O") :]
    return [
        [c.strip() for c in lio.strip("|").split("|")]
        for lio in part.splitlines()
        if lio.startswith("| 4k-")
    ]


def test_context_switches_per_io_are_tabled_per_side():
    results = [
        counted(DATA["results"][0], ours=1.0, lio=3.0, **{"lio-aio": None}),
        counted(DATA["results"][1], ours=0.5, lio=2.0),
    ]
    text = render(dict(DATA, results=results))
    assert "#### file store (XFS on a RAM disk) over tcm_loop" in text
    assert "#### block store (RAM disk) over iSCSI" in text
    heads = [lio for lio in text.splitlines() if lio.startswith("| workload | vaai (ours)")]
    assert heads == [
        "| workload | vaai (ours) | target_core_file | target_core_file async_io |",
        "| workload | vaai (ours) | target_core_iblock |",
    ]
    assert events_rows(text) == [
        ["4k-randread-qd32", "1.00", "3.00", "n/a"],
        ["4k-randread-qd32", "0.50", "2.00"],
    ]


def test_results_without_the_counts_have_no_events_table():
    assert "Context switches per I/O" not in render(DATA)


def test_the_clocksource_of_the_run_is_named():
    assert "the guest's clocksource was `not recorded`" in render(DATA)
    text = render(dict(DATA, meta=dict(DATA["meta"], clocksource="tsc")))
    assert "the guest's clocksource was `tsc`" in text


def test_the_clock_check_of_the_run_is_reported():
    check = {"moves": 1200, "back_ns": 0, "skew_bound_ns": 31000}
    text = render(dict(DATA, meta=dict(DATA["meta"], clocksource="tsc", clock_check=check)))
    assert (
        "clocksource was `tsc` (a process moved 1200 times between two CPUs: "
        "their monotonic clocks agree within 31 µs and never went back)"
    ) in text
    text = render(dict(DATA, meta=dict(DATA["meta"], clock_check=dict(check, back_ns=350))))
    assert "and went back by up to 350 ns)" in text


def data_run(fabric, date, **meta):
    return {
        "meta": dict(DATA["meta"], fabrics=[fabric], date=date, **meta),
        "results": [dict(r, fabric=fabric) for r in DATA["results"][:1]],
    }


def test_data_runs_of_two_boots_make_one_section_with_both_dates():
    merged = report.merge_data(
        [data_run("loop", "2026-11-25 05:52 UTC"), data_run("iscsi", "2026-11-25 06:47 UTC")]
    )
    text = render(merged)
    assert "measured 2026-11-25 05:52 UTC (tcm_loop); 2026-11-25 06:47 UTC (iSCSI)" in text
    assert "### file store (XFS on a RAM disk) over tcm_loop" in text
    assert "### file store (XFS on a RAM disk) over iSCSI" in text
    # the plots, of tcm_loop only, name that boot alone
    assert merged["meta"]["dates"] == {
        "loop": "2026-11-25 05:52 UTC",
        "iscsi": "2026-11-25 06:47 UTC",
    }


def test_data_runs_that_differ_in_method_or_overlap_are_refused():
    with pytest.raises(SystemExit, match="differ in rounds"):
        report.merge_data([data_run("loop", "a"), data_run("iscsi", "b", rounds=1)])
    with pytest.raises(SystemExit, match="same store over the same fabric"):
        report.merge_data([data_run("loop", "a"), data_run("loop", "b")])


def test_data_runs_of_other_stores_over_one_fabric_merge():
    bdev = data_run("loop", "b")
    bdev["results"][0] = dict(bdev["results"][0], store="bdev")
    merged = report.merge_data([data_run("loop", "a"), bdev])
    assert merged["meta"]["fabrics"] == ["loop"]
    assert merged["meta"]["date"] == "a (tcm_loop); b (tcm_loop)"


def test_merged_clock_checks_keep_the_worst():
    one = {"moves": 10, "back_ns": 0, "skew_bound_ns": 20000}
    two = {"moves": 5, "back_ns": 300, "skew_bound_ns": 9000}
    merged = report.merge_data(
        [data_run("loop", "a", clock_check=one), data_run("iscsi", "b", clock_check=two)]
    )
    assert merged["meta"]["clock_check"] == {"moves": 15, "back_ns": 300, "skew_bound_ns": 20000}
    merged = report.merge_data([data_run("loop", "a", clock_check=one), data_run("iscsi", "b")])
    assert merged["meta"]["clock_check"] is None


def test_clone_block_store_rows_have_no_space_columns():
    """On the block store there is no file system to measure space in: the
    space cells say so, the times and ratios are there."""
    block = dict(copy(2.0, GiB, 0), allocated=None, mapped=None, shared=None, fs_used=None)
    run = {
        "meta": {"date": "2026-11-28 12:00 UTC", "budget_s": 900, "skipped": []},
        "results": [
            dict(CLONE["results"][0], fs="block", ours=block, lio=dict(block, seconds=8.0)),
            dict(CLONE["results"][2], fs="block", ours=dict(block, seconds=4.0)),
        ],
    }
    cells = clone_row(render(clone=run), "| block | 1 GiB | across | 4 MiB |")
    assert cells[4:10] == ["4", "2.00", "8.00", "4.00", "4.00", "2.00"]
    assert cells[10:] == ["n/a"] * 4


def test_clone_rounds_are_named_in_the_header():
    one = render(clone=CLONE)
    assert "median of" not in block(one, "clone")
    three = dict(CLONE, meta=dict(CLONE["meta"], rounds=3))
    assert "seconds: the median of 3 rounds, interleaved" in block(render(clone=three), "clone")
    with pytest.raises(SystemExit, match="differ in rounds"):
        report.merge_clone([CLONE, three])


def test_clone_median_round_keeps_every_rounds_seconds():
    runs = [copy(3.0, GiB, 0), copy(1.0, GiB, 0), copy(2.0, GiB, 0), copy(9.0, GiB, 0)]
    mid = guest_clone.median_round(runs)
    # the lower of the middle two, as measured (not an average)
    assert mid["seconds"] == 2.0 and mid["rounds"] == [3.0, 1.0, 2.0, 9.0]
    failed = {"error": "miscompare at byte 0"}
    assert guest_clone.median_round([copy(1.0, GiB, 0), failed]) == failed


def test_clone_two_initiators_have_rows_and_a_host_copy_of_their_own():
    one, host = CLONE["results"][0], CLONE["results"][2]
    two = dict(one, initiators=2, ours=copy(0.5, GiB, GiB))
    two_host = dict(host, initiators=2, ours=copy(20.0, GiB, 0))
    text = render(clone=dict(CLONE, results=[one, host, two, two_host]))
    assert clone_row(text, "| xfs | 1 GiB | across | 4 MiB | 4 |")[8:10] == ["10.00", "40.00"]
    cells = clone_row(text, "| xfs | 1 GiB | across | 4 MiB | 4 each from 2 initiators |")
    # the two-initiator copy against the host's copy from two initiators
    assert cells[5:10] == ["0.50", "20.00", "40.00", "20.00", "40.00"]
