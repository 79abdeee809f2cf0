"""bench/guest_profile.py reads perf script's samples into CPU time per I/O
by where it was spent; bench/report_profile.py renders that."""

import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.insert(0, BENCH)

import guest_profile  # noqa: E402
import report  # noqa: E402
import report_profile  # noqa: E402
from report_run import run_report  # noqa: E402

# What `perf script -F comm,time,ip,sym,dso` prints for samples with call
# chains: a header line, then one indented line per frame, leaf first.
SCRIPT = """\
fio  1234.500000:
\t ffffffffc0a1b2c3 vaai_file_submit_rw+0x23 ([target_core_vaai])
\t ffffffffc0a00000 __target_execute_cmd ([target_core_mod])

swapper     0 [001] 1234.502000:
\t ffffffff81000000 native_safe_halt+0x7 ([kernel.kallsyms])
\t ffffffff81000010 default_idle ([kernel.kallsyms])

fio  1234.504000:
\t ffffffffc0b00100 xfs_ilock ([xfs])
\t ffffffffc0a1b2c3 vaai_file_direct_submit+0x40 ([target_core_vaai])

fio  1234.506000:
\t 55555 fio_gettime (/usr/bin/fio)

kworker/1:1  1234.508000:
\t ffffffff81000300 blk_mq_run_hw_queue ([kernel.kallsyms])
\t ffffffffc0c00300 tcm_loop_queuecommand ([tcm_loop])

perf  1234.510000:
\t ffffffff81000200 memcpy ([kernel.kallsyms])
"""


def test_parse_script_keeps_comm_time_and_chain():
    samples = guest_profile.parse_script(SCRIPT)
    assert len(samples) == 6
    assert samples[0] == (
        "fio",
        1234.5,
        [("vaai_file_submit_rw", "target_core_vaai"), ("__target_execute_cmd", "target_core_mod")],
    )
    assert samples[1][0:2] == ("swapper", 1234.502)
    assert samples[1][2][0] == ("native_safe_halt", "kernel.kallsyms")
    assert samples[3][2] == [("fio_gettime", "fio")]
    assert samples[5][0] == "perf"


def test_attribute_splits_cpu_per_io_by_where_it_ran():
    samples = guest_profile.parse_script(SCRIPT)
    # 6 samples of 2 CPUs at 1000 I/Os a second: each sample is 1/6 of
    # 2 ms of CPU per I/O, 333 µs.
    got = guest_profile.attribute(samples, 2, 1000)
    one = 2 * 1e6 / 1000 / 6
    assert got["samples"] == 6 and got["profiler_samples"] == 1
    assert got["buckets"]["backend"] == pytest.approx(one)
    assert got["buckets"]["xfs"] == pytest.approx(one)
    assert got["buckets"]["fio"] == pytest.approx(one)
    assert got["buckets"]["kernel"] == pytest.approx(one)
    assert got["buckets"]["LIO core"] == 0
    assert got["idle_us_per_io"] == pytest.approx(one)
    # busy: all but idle and the profiler's own sample
    assert got["busy_us_per_io"] == pytest.approx(4 * one)
    # both samples with the backend in their chain, the xfs one included;
    # the target's: those and the kernel one called from tcm_loop
    assert got["under_backend_us_per_io"] == pytest.approx(2 * one)
    assert got["under_target_us_per_io"] == pytest.approx(3 * one)
    assert {t["sym"] for t in got["top"]} == {
        "vaai_file_submit_rw",
        "xfs_ilock",
        "fio_gettime",
        "blk_mq_run_hw_queue",
    }


def test_attribute_without_samples_or_io():
    assert guest_profile.attribute([], 2, 1000) is None
    assert guest_profile.attribute(guest_profile.parse_script(SCRIPT), 2, 0) is None


def test_disk_rate_interpolates_and_refuses_outside_its_readings():
    rate = guest_profile.DiskRate.__new__(guest_profile.DiskRate)
    rate.points = [(10.0, 0), (10.5, 4096), (11.0, 4096 * 3)]
    assert rate.at(10.25) == pytest.approx(2048)
    assert rate.at(10.75) == pytest.approx(4096 * 2)
    with pytest.raises(ValueError):
        rate.at(9.0)
    with pytest.raises(ValueError):
        rate.at(11.5)


def test_render_profile_table():
    samples = guest_profile.parse_script(SCRIPT)
    side = dict(guest_profile.attribute(samples, 2, 1000), iops=1000.0)
    data = {
        "meta": {
            "date": "2026-11-25 03:00 UTC",
            "kernel": "6.1.0-56-amd64",
            "cpus": 2,
            "store": "file",
            "seconds": 5,
            "period_ns": 2000000,
        },
        "results": [{"workload": "4k-randwrite-qd32", "ours": side, "lio": side, "lio-aio": side}],
    }
    text = report_profile.render_profile(data)
    buckets = text[: text.index("Time through the named functions")]
    rows = [line for line in buckets.splitlines() if line.startswith("| 4k-randwrite-qd32 |")]
    assert [r.split(" | ")[1] for r in rows] == [
        "vaai (ours)",
        "target_core_file",
        "target_core_file async_io",
    ]
    cells = rows[0].strip("| ").split(" | ")
    # IOPS, busy, backend, under backend, under target, LIO core
    assert cells[2:8] == ["1000", "1333", "333.3", "667", "1000", "0"]
    assert "every 2 ms" in text and "for 5 s" in text
    assert "`vaai_file_submit_rw` 333.3" in text


def test_module_frames_named_by_kallsyms(tmp_path):
    """perf script without the module files calls every kernel frame
    kernel.kallsyms; /proc/kallsyms says which are a module's."""
    kallsyms = tmp_path / "kallsyms"
    kallsyms.write_text(
        "ffffffff81000300 T blk_mq_run_hw_queue\n"
        "ffffffffc0c00300 t tcm_loop_queuecommand\t[tcm_loop]\n"
        "ffffffffc0a00000 T __target_execute_cmd\t[target_core_mod]\n"
    )
    modsyms = guest_profile.module_symbols(str(kallsyms))
    assert modsyms == {
        "tcm_loop_queuecommand": "tcm_loop",
        "__target_execute_cmd": "target_core_mod",
    }
    text = (
        "kworker/0:1H  10.000000: \n"
        "\t ffffffffc0c00300 tcm_loop_queuecommand ([kernel.kallsyms])\n"
        "\t ffffffff81000300 blk_mq_run_hw_queue ([kernel.kallsyms])\n"
    )
    [(comm, _t, chain)] = guest_profile.parse_script(text, modsyms)
    assert chain == [
        ("tcm_loop_queuecommand", "tcm_loop"),
        ("blk_mq_run_hw_queue", "kernel.kallsyms"),
    ]
    assert guest_profile.bucket(comm, chain) == "fabric"


THROUGH_SCRIPT = """\
kworker/0:2  20.000000:
\t ffffffff81000400 blkdev_issue_flush ([kernel.kallsyms])
\t ffffffffc0b00400 xfs_file_fsync ([xfs])
\t ffffffff81000500 iomap_dio_rw ([kernel.kallsyms])
\t ffffffffc0a1b2c3 vaai_file_direct_submit ([target_core_vaai])

fio  20.002000:
\t ffffffff81000600 finish_task_switch ([kernel.kallsyms])
\t ffffffff81000700 __schedule ([kernel.kallsyms])

swapper  20.004000:
\t ffffffff81000000 native_safe_halt ([kernel.kallsyms])

fio  20.006000:
\t ffffffff81000800 read_tsc ([kernel.kallsyms])
"""


def test_time_through_named_functions_counts_every_chain_that_passes():
    got = guest_profile.attribute(guest_profile.parse_script(THROUGH_SCRIPT), 2, 1000)
    one = 2 * 1e6 / 1000 / 4
    assert list(got["through_us_per_io"]) == list(guest_profile.THROUGH)
    through = got["through_us_per_io"]
    assert through["xfs_file_fsync"] == pytest.approx(one)
    assert through["iomap_dio_rw"] == pytest.approx(one)
    assert through["__schedule"] == pytest.approx(one)
    assert through["filemap_read"] == 0 and through["xfs_vn_update_time"] == 0


def test_render_profile_tables_the_time_through_named_functions():
    side = dict(
        guest_profile.attribute(guest_profile.parse_script(THROUGH_SCRIPT), 2, 1000), iops=1000.0
    )
    data = {
        "meta": {
            "date": "2026-11-25 03:00 UTC",
            "kernel": "6.1.0-56-amd64",
            "cpus": 2,
            "store": "bdev",
            "seconds": 5,
            "period_ns": 2000000,
        },
        "results": [{"workload": "4k-randwrite-qd32", "ours": side, "lio": side}],
    }
    text = report_profile.render_profile(data)
    head = [
        line for line in text.splitlines() if line.startswith("| workload | side | xfs_file_fsync")
    ]
    assert head == ["| workload | side | {} |".format(" | ".join(guest_profile.THROUGH))]
    rows = [
        line
        for line in text[text.index(head[0]) :].splitlines()
        if line.startswith("| 4k-randwrite-qd32 |")
    ]
    # the block store's LIO side is target_core_iblock
    assert rows == [
        ("| 4k-randwrite-qd32 | vaai (ours) | 500.0 | 0.0 | 500.0 | 0.0 | 0.0 | 500.0 |"),
        ("| 4k-randwrite-qd32 | target_core_iblock | 500.0 | 0.0 | 500.0 | 0.0 | 0.0 | 500.0 |"),
    ]


def test_module_files_perf_found_are_named_like_the_others():
    """perf names the module's file when it finds it: the module's name is
    its dso all the same; a module without a bucket is the kernel's."""
    text = (
        "kworker/1:0  30.000000: \n"
        "\t ffffffffc0a3e0cc brd_submit_bio (/lib/modules/6.1.0-56-amd64/"
        "kernel/drivers/block/brd.ko)\n"
        "\t ffffffffc0a3e398 fd_execute_rw (/lib/modules/6.1.0-56-amd64/"
        "kernel/drivers/target/target_core_file.ko)\n"
        "\t ffffffffc09e8a35 __target_execute_cmd (/lib/modules/6.1.0-56-amd64/"
        "kernel/drivers/target/target_core_mod.ko.xz)\n"
        "\t     7f334d1fe110 [unknown] ([unknown])\n"
    )
    [(_, _, chain)] = guest_profile.parse_script(text)
    assert chain == [
        ("brd_submit_bio", "kernel.kallsyms"),
        ("fd_execute_rw", "target_core_file"),
        ("__target_execute_cmd", "target_core_mod"),
        ("[unknown]", "unknown"),
    ]
    got = guest_profile.attribute(guest_profile.parse_script(text), 2, 1000)
    assert got["buckets"]["kernel"] > 0 and got["under_backend_us_per_io"] > 0


def test_reparse_computes_the_figures_again_from_the_kept_text(tmp_path, monkeypatch):
    import gzip
    import json

    raw = tmp_path / "profile"
    raw.mkdir()
    with gzip.open(raw / "4k-randwrite-qd32-ours.txt.gz", "wt") as f:
        f.write(THROUGH_SCRIPT)
    (raw / "modules.json").write_text(json.dumps({}))
    out = tmp_path / "profile.json"
    out.write_text(
        json.dumps(
            {
                "meta": {"cpus": 2},
                "results": [
                    {
                        "workload": "4k-randwrite-qd32",
                        "ours": {"iops": 1000.0, "busy_us_per_io": 1.0},
                    }
                ],
            }
        )
    )
    monkeypatch.setattr(sys, "argv", ["guest_profile.py", str(out), "--reparse"])
    assert guest_profile.main() == 0
    ours = json.loads(out.read_text())["results"][0]["ours"]
    assert ours["iops"] == 1000.0
    assert ours["busy_us_per_io"] == pytest.approx(3 * 500.0)
    assert ours["through_us_per_io"]["xfs_file_fsync"] == pytest.approx(500.0)


ISCSI_SCRIPT = """\
iscsi_trx  40.000000:
\t ffffffff81000900 tcp_recvmsg ([kernel.kallsyms])
\t ffffffffc0d00100 iscsit_get_rx_pdu ([iscsi_target_mod])

kworker/u4:1  40.002000:
\t ffffffffc0e00100 iscsi_sw_tcp_xmit_segment ([iscsi_tcp])
\t ffffffffc0e10100 iscsi_xmitworker ([libiscsi])

fio  40.004000:
\t ffffffff81000a00 tcp_sendmsg ([kernel.kallsyms])

kworker/1:1H  40.006000:
\t ffffffffc0e20100 iscsi_tcp_recv_skb ([libiscsi_tcp])
"""


def test_iscsi_target_is_the_fabric_and_the_initiator_apart():
    """Over iSCSI the target's module is the fabric bucket, and its chains
    (with the TCP work they call) are the target's; open-iscsi's modules
    are the initiator, not the target."""
    samples = guest_profile.parse_script(ISCSI_SCRIPT)
    assert [guest_profile.bucket(c, ch) for c, _, ch in samples] == [
        "kernel",
        "initiator",
        "kernel",
        "initiator",
    ]
    got = guest_profile.attribute(samples, 2, 1000)
    one = 2 * 1e6 / 1000 / 4
    assert got["buckets"]["initiator"] == pytest.approx(2 * one)
    assert got["buckets"]["fabric"] == 0
    assert got["under_target_us_per_io"] == pytest.approx(one)
    [(_, _, chain)] = guest_profile.parse_script(
        "iscsi_ttx  41.0: \n\t ffffffffc0d00200 iscsit_send_datain ([iscsi_target_mod])\n"
    )
    assert guest_profile.bucket("iscsi_ttx", chain) == "fabric"


def _iscsi_run(store="file", date="2026-11-25 15:00 UTC", fabric="iscsi"):
    side = dict(
        guest_profile.attribute(guest_profile.parse_script(ISCSI_SCRIPT), 2, 1000), iops=1000.0
    )
    return {
        "meta": {
            "date": date,
            "kernel": "6.1.0-56-amd64",
            "cpus": 2,
            "store": store,
            "fabric": fabric,
            "seconds": 5,
            "period_ns": 2000000,
            "clocksource": "tsc",
        },
        "results": [{"workload": "4k-randread-qd32", "ours": side, "lio": side}],
    }


def test_an_iscsi_profile_has_the_target_and_initiator_columns():
    text = report_profile.render_profile(_iscsi_run())
    head = [line for line in text.splitlines() if line.startswith("| workload | side | IOPS")]
    assert head == [
        (
            "| workload | side | IOPS | busy | backend | under backend | "
            "under target | LIO core | iSCSI target | initiator | xfs | "
            "kernel, rest | fio | user, rest |"
        )
    ]
    table = text[text.index(head[0]) :].splitlines()[:4]
    assert len({line.count("|") for line in table}) == 1
    row = next(
        line
        for line in text.splitlines()
        if line.startswith("| 4k-randread-qd32 | vaai (ours) | 1000")
    )
    # LIO core, iSCSI target, initiator: 0, 0 and half of 2 ms
    assert row.strip("| ").split(" | ")[7:10] == ["0", "0", "1000"]
    assert "the file store over iSCSI" in " ".join(text.split())
    # over tcm_loop, no initiator column
    assert "| tcm_loop | xfs |" in report_profile.render_profile(_iscsi_run(fabric="loop"))


def test_gaps_section_heads_each_run_and_follows_the_profile(tmp_path):
    # given in any order, rendered tcm_loop first, then each fabric's file store
    out = run_report(
        tmp_path,
        "--gaps",
        (
            _iscsi_run("bdev", "2026-11-25 15:10 UTC"),
            _iscsi_run("file"),
            _iscsi_run("file", "2026-11-25 14:50 UTC", "loop"),
        ),
        "<!-- section:profile -->\nPROFILE\n<!-- /section:profile -->\n\n"
        "<!-- section:gaps -->\n<!-- /section:gaps -->\n\nNOTES\n",
    )
    page = out.read_text()
    file_head = "### file store (XFS on a RAM disk) over iSCSI\n\nMeasured 2026-11-25 15:00 UTC"
    bdev_head = "### block store (RAM disk) over iSCSI\n\nMeasured 2026-11-25 15:10 UTC"
    loop_head = "### file store (XFS on a RAM disk) over tcm_loop\n\nMeasured 2026-11-25 14:50"
    assert (
        page.index("PROFILE")
        < page.index("<!-- section:gaps -->")
        < page.index(loop_head)
        < page.index(file_head)
        < page.index(bdev_head)
        < page.index("NOTES")
    )
    assert page.count("| workload | side | IOPS") == 3
    # what the named functions are is the page's prose: each run has a caption
    assert page.count("Time through the named functions, µs per I/O:") == 3
    assert report.main(["report.py", str(out)]) == 0
    assert out.read_text() == page


def test_the_profilers_own_threads_are_left_out():
    """perf, the sleep it times and the script's thread reading the disk's
    counters are the profiler's, not the I/O's."""
    text = "".join(
        f"{comm}  50.{i:06d}: \n\t ffffffff81000800 read_tsc ([kernel.kallsyms])\n\n"
        for i, comm in enumerate(("perf", "perf-exec", "sleep", "python3", "fio"))
    )
    got = guest_profile.attribute(guest_profile.parse_script(text), 2, 1000)
    assert got["profiler_samples"] == 4
    assert got["busy_us_per_io"] == pytest.approx(2 * 1e6 / 1000 / 5)
