"""bench/report_ats.py renders the heartbeats beside streams: per store,
ours and LIO's p50/p99/worst beat, the p99 ratios to LIO and to ours'
idle p99, the streams' MB/s; guest_ats.py's streams are the commands
ESXi sends and count what each writes."""

import importlib.util
import os
import struct
import sys

import pytest
from report_run import table_rows

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.insert(0, BENCH)

import ats_trace  # noqa: E402
import guest_ats  # noqa: E402
import report_ats  # noqa: E402

_spec = importlib.util.spec_from_file_location("report", os.path.join(BENCH, "report.py"))
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)


def beats(p50, p99, worst, mbps=None):
    return {"beats": 900, "p50_us": p50, "p99_us": p99, "max_us": worst, "stream_mbps": mbps}


DATA = {
    "meta": {
        "date": "2026-11-28 18:00 UTC",
        "kernel": "6.1.0-56-amd64",
        "rounds": 3,
        "seconds": 10,
    },
    "results": [
        {
            "store": "file",
            "stream": "idle",
            "ours": beats(800, 1000, 3000),
            "lio": beats(900, 1200, 5000),
        },
        {
            "store": "file",
            "stream": "seq1m-qd4",
            "ours": beats(1500, 3000, 9000, 510.4),
            "lio": beats(1400, 2000, 8000, 343.0),
        },
        {
            "store": "block",
            "stream": "idle",
            "ours": beats(700, 900, 2000),
            "lio": beats(700, None, 2100),
        },
    ],
}


def rows(text, title):
    return table_rows(text, title, "stream")


def test_each_store_has_its_table_with_both_ratios():
    text = report_ats.render_ats(DATA)
    assert rows(text, "file store (XFS on a RAM disk) over tcm_loop") == [
        ["idle", "800", "900", "1000", "1200", "0.83", "1.00", "3000", "5000", "n/a", "n/a"],
        ["seq1m-qd4", "1500", "1400", "3000", "2000", "1.50", "3.00", "9000", "8000", "510", "343"],
    ]
    # a figure not measured is n/a, and so is its ratio
    assert rows(text, "block store (RAM disk) over tcm_loop")[0][3:6] == ["900", "n/a", "n/a"]
    assert "bench/report.py --ats build/bench/ats.json" in text
    # a run from before --fabric measured tcm_loop alone, and says so
    assert "over tcm_loop,\n" in text and "--fabric" not in text


def test_each_fabric_has_its_tables_and_the_command_names_them():
    iscsi = [dict(r, fabric="iscsi", ours=beats(2000, 4000, 9000)) for r in DATA["results"]]
    loop = [dict(r, fabric="loop") for r in DATA["results"]]
    text = report_ats.render_ats(dict(DATA, results=loop + iscsi))
    assert "over tcm_loop and iSCSI," in text
    assert "--seconds 10 --fabric loop --fabric iscsi" in text
    assert "--timeout 7200" in text and "--timeout 3600" in report_ats.render_ats(DATA)
    # the command as the run was asked for, the tables in the page's order
    meta = dict(DATA["meta"], fabrics=["iscsi", "loop"])
    text = report_ats.render_ats(dict(DATA, meta=meta, results=iscsi + loop))
    assert "--fabric iscsi --fabric loop" in text
    assert text.index("over tcm_loop\n") < text.index("over iSCSI\n")
    assert rows(text, "file store (XFS on a RAM disk) over tcm_loop")[0][3] == "1000"
    got = rows(text, "file store (XFS on a RAM disk) over iSCSI")
    assert [r[0] for r in got] == ["idle", "seq1m-qd4"]
    # ours' idle p99 over iSCSI is the ratio's base there, not tcm_loop's
    assert got[1][3] == "4000" and got[1][6] == "1.00"
    assert rows(text, "block store (RAM disk) over iSCSI")[0][3] == "4000"


def test_runs_of_two_boots_make_one_section_each_fabric_from_its_own():
    loop = dict(DATA, results=[dict(r, fabric="loop") for r in DATA["results"]])
    iscsi_meta = dict(DATA["meta"], date="2026-11-29 09:00 UTC", fabrics=["iscsi"])
    iscsi = {
        "meta": iscsi_meta,
        "results": [dict(r, fabric="iscsi", ours=beats(2000, 4000, 9000)) for r in DATA["results"]],
    }
    text = report_ats.render_ats(report_ats.merge_ats([loop, iscsi]))
    assert "2026-11-28 18:00 UTC (tcm_loop); 2026-11-29 09:00 UTC (iSCSI)" in text
    assert "--fabric loop --fabric iscsi" in text
    assert rows(text, "file store (XFS on a RAM disk) over tcm_loop")[1][3] == "3000"
    assert rows(text, "file store (XFS on a RAM disk) over iSCSI")[1][3] == "4000"
    # the page's ats block takes both, from report.py's command line
    assert report.MERGE["ats"][0] is report_ats.merge_ats
    # a fabric measured twice, or other settings, are refused
    with pytest.raises(SystemExit, match="same fabric"):
        report_ats.merge_ats([loop, loop])
    for key, value in (("rounds", 2), ("durable", True), ("clocksource", "hpet")):
        other = dict(iscsi, meta=dict(iscsi_meta, **{key: value}))
        with pytest.raises(SystemExit, match=f"differ in {key}"):
            report_ats.merge_ats([loop, other])
    # a run cut short before a fabric it was asked for
    cut = dict(iscsi, meta=dict(iscsi_meta, fabrics=["iscsi", "fc"]))
    with pytest.raises(SystemExit, match="lacks a fabric"):
        report_ats.merge_ats([loop, cut])
    # the tables in the page's order, whichever run came first
    text = report_ats.render_ats(report_ats.merge_ats([iscsi, loop]))
    assert text.index("over tcm_loop\n") < text.index("over iSCSI\n")


def test_report_rewrites_the_ats_block_alone():
    page = (
        "<!-- section:caw -->\nc\n<!-- /section:caw -->\n"
        "<!-- section:ats -->\nold\n<!-- /section:ats -->\n"
    )
    out = report.render(page, ats=DATA)
    assert "old" not in out and "<!-- section:caw -->\nc\n" in out
    assert "| seq1m-qd4 | 1500 |" in out


def test_beats_of_every_round_are_pooled_for_p50_and_p99():
    # one round's p99 is its slowest few beats: the rounds' beats together
    one = {"lat_us": list(range(1, 101))}
    two = {"lat_us": list(range(1001, 1101))}
    got = guest_ats.pooled([{"ours": one}, {"ours": two}], "ours")
    assert got == {"beats": 200, "p50_us": 1001, "p99_us": 1098}
    assert guest_ats.percentile(sorted(one["lat_us"]), 0.99) == 99
    data = dict(DATA, results=[dict(DATA["results"][0], rounds=[{"ours": one, "lio": one}])])
    assert "all the rounds' beats together" in report_ats.render_ats(data)
    assert "the medians of the rounds" in report_ats.render_ats(DATA)


class Lun:
    naa, block_size = bytes(range(16)), 512


def test_write_same_stream_zeroes_1_mib_at_a_time_past_the_beat():
    cmds = guest_ats.write_same_cmds(Lun())
    assert len(cmds) == (guest_ats.LUN_BYTES - guest_ats.STREAM_OFF) // (1 << 20)
    cdb, data = cmds[0]
    assert cdb[0] == 0x93 and data == bytes(512)
    assert struct.unpack_from(">Q", cdb, 2)[0] == guest_ats.STREAM_OFF // 512
    assert guest_ats._bytes_per_cmd(cmds[0]) == 1 << 20


def test_xcopy_stream_copies_its_first_half_to_its_second_in_4_mib():
    cmds = guest_ats.xcopy_within(Lun())
    half = (guest_ats.LUN_BYTES - guest_ats.STREAM_OFF) // 2
    assert len(cmds) == half // (4 << 20)
    assert {guest_ats._bytes_per_cmd(c) for c in cmds} == {4 << 20}
    # the first segment: from STREAM_OFF to STREAM_OFF + half
    _, data = cmds[0]
    seg = 16 + struct.unpack_from(">H", data, 2)[0]
    src, dst = struct.unpack_from(">QQ", data, seg + 12)
    assert (src, dst) == (guest_ats.STREAM_OFF // 512, (guest_ats.STREAM_OFF + half) // 512)
    assert guest_ats.BEAT_LBA * 512 < guest_ats.STREAM_OFF


def event(t, name, cpu=0):
    return (
        f"       heartbeat-99      [{cpu:03d}] .....  {t:.6f}: {name}: host_no=2 cmnd=(raw=89 00)\n"
    )


def test_a_beats_phases_come_from_its_five_events():
    text = "# tracer: nop\n"
    for k, t in enumerate((10.0, 20.0)):
        text += event(t, "scsi_dispatch_cmd_start")
        text += event(t + 0.000100 * (k + 1), "target_sequencer_start", cpu=1)
        text += event(t + 0.000300 * (k + 1), "ats_execute_lio", cpu=1)
        text += event(t + 0.000400 * (k + 1), "target_cmd_complete", cpu=1)
        text += event(t + 0.000450 * (k + 1), "scsi_dispatch_cmd_done")
    beats = ats_trace.phases(text)
    assert [round(b["to_target"]) for b in beats] == [100, 200]
    assert [round(b["queued"]) for b in beats] == [200, 400]
    assert [round(b["in_backend"]) for b in beats] == [100, 200]
    assert [round(b["back"]) for b in beats] == [50, 100]
    s = ats_trace.summary(beats)
    # the slowest 1 % of two beats is the slower one
    assert round(s["queued"]["slowest_mean_us"]) == 400
    assert round(s["to_target"]["p50_us"]) == 200
    assert "initiator" not in s


def test_the_initiator_phase_is_the_heartbeats_own_time_less_the_traced_ones():
    beats = [
        {"to_target": 100.0, "queued": 200.0, "in_backend": 100.0, "back": 50.0},
        {"to_target": 100.0, "queued": 100.0, "in_backend": 100.0, "back": 50.0},
    ]
    ats_trace.with_initiator(beats, [550.0, 20350.0])
    assert [round(b["initiator"]) for b in beats] == [100, 20000]
    s = ats_trace.summary(beats)
    # the slowest beat is the one that waited in the initiator
    assert round(s["initiator"]["slowest_mean_us"]) == 20000
    assert round(s["queued"]["slowest_mean_us"]) == 100
    with pytest.raises(ValueError, match="the heartbeat 1"):
        ats_trace.with_initiator(beats, [550.0])


def test_events_out_of_step_are_refused_not_paired_wrongly():
    text = event(10.0, "scsi_dispatch_cmd_start") + event(9.0, "target_sequencer_start")
    text += event(10.05, "ats_execute_ours")
    text += event(10.1, "target_cmd_complete") + event(10.2, "scsi_dispatch_cmd_done")
    with pytest.raises(ValueError):
        ats_trace.phases(text)


def test_a_beat_missing_an_event_is_refused_not_dropped():
    text = "".join(
        event(10.0 + k, name)
        for k in range(2)
        for name in ("scsi_dispatch_cmd_start", "target_sequencer_start", "ats_execute_ours")
    )
    text += event(10.5, "target_cmd_complete") + event(10.6, "scsi_dispatch_cmd_done")
    with pytest.raises(ValueError, match="unequal counts"):
        ats_trace.phases(text)


def test_a_trace_of_both_sides_at_once_is_refused():
    text = event(10.0, "scsi_dispatch_cmd_start") + event(10.01, "target_sequencer_start")
    text += event(10.02, "ats_execute_ours") + event(10.03, "ats_execute_lio")
    with pytest.raises(ValueError, match="both sides"):
        ats_trace.phases(text)


def test_the_trace_table_shows_each_sides_slowest_beats():
    data = {"meta": DATA["meta"], "results": [dict(DATA["results"][1])]}
    tr = {
        ph: {"p50_us": 1, "p99_us": 2, "slowest_mean_us": v}
        for ph, v in (("to_target", 10), ("queued", 4000), ("in_backend", 300), ("back", 20))
    }
    data["results"][0]["rounds"] = [{"ours": {"trace": tr}, "lio": {"trace": None}}]
    text = report_ats.render_ats(data)
    # a trace from before the initiator phase: n/a there
    assert "| seq1m-qd4 | ours | n/a | 10 | 4000 | 300 | 20 |" in text
    assert "| seq1m-qd4 | LIO | n/a | n/a | n/a | n/a | n/a |" in text
    tr["initiator"] = {"p50_us": 1, "p99_us": 2, "slowest_mean_us": 70}
    assert "| seq1m-qd4 | ours | 70 | 10 | 4000 | 300 | 20 |" in report_ats.render_ats(data)
    # no trace, no table
    del data["results"][0]["rounds"]
    data["results"][0]["rounds"] = [{"ours": {}, "lio": {}}]
    assert "slowest beats" not in report_ats.render_ats(data)


def switch(t, cpu, nxt):
    return (
        f"          <idle>-0       [{cpu:03d}] d..2.  {t:.6f}: sched_switch: prev_comm=x "
        f"prev_pid=1 prev_prio=120 prev_state=S ==> next_comm={nxt} next_pid=7 next_prio=120\n"
    )


def test_what_ran_while_a_beat_was_queued_is_timed_on_the_cpu_that_started_it():
    text = switch(9.9, 1, "kworker/u4:3")  # running before the beat came
    text += switch(9.95, 0, "sgloop")  # the other CPU: not counted
    text += event(10.0, "scsi_dispatch_cmd_start")
    text += event(10.000100, "target_sequencer_start")
    text += switch(10.000600, 1, "kworker/u4:7")
    text += switch(10.001600, 1, "kworker/1:2")
    text += event(10.001700, "ats_execute_ours", cpu=1)
    text += switch(10.0018, 0, "kworker/u4:7")
    text += event(10.0019, "target_cmd_complete", cpu=1)
    text += event(10.002, "scsi_dispatch_cmd_done")
    (ran,) = ats_trace.queued_ran(text)
    assert {k: round(v) for k, v in ran.items()} == {"kworker/uN:N": 1500, "kworker/N:N": 100}
    beats = ats_trace.phases(text)
    beats[0]["ran"] = ran
    s = ats_trace.summary(beats)
    assert list(s["queued_ran"]) == ["kworker/uN:N", "kworker/N:N"]
    assert round(s["queued"]["slowest_mean_us"]) == 1600


def test_the_trace_table_says_what_ran_while_the_slowest_beats_waited():
    data = {"meta": dict(DATA["meta"], trace="sched"), "results": [dict(DATA["results"][1])]}
    tr = {ph: {"p50_us": 1, "p99_us": 2, "slowest_mean_us": 5} for ph in ats_trace.PHASES}
    one = dict(tr, queued_ran={"kworker/uN:N": 3000.0, "sgloop": 200.0, "heartbeat": 50.0})
    two = dict(tr, queued_ran={"kworker/uN:N": 1000.0, "kworker/N:N": 900.0})
    data["results"][0]["rounds"] = [
        {"ours": {"trace": one}, "lio": {"trace": tr}},
        {"ours": {"trace": two}, "lio": {"trace": tr}},
    ]
    text = report_ats.render_ats(data)
    assert "--trace-sched" in text
    # the mean of the rounds' means, the three that ran longest
    assert "| seq1m-qd4 | ours | kworker/uN:N 2000, kworker/N:N 450, sgloop 100 |" in text
    assert "| seq1m-qd4 | LIO | n/a |" in text
