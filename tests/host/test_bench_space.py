"""bench/report_space.py renders the VM's 4 KiB I/O beside UNMAP and WRITE
SAME: per store, ours and LIO's read and write latencies, the write p99
ratios to LIO and to ours' idle one, IOPS and the streams' MB/s;
guest_space.py's UNMAP stream frees 1 MiB a command past the VM's range."""

import os
import struct
import sys

from report_run import table_rows

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))

import guest_space
import report
import report_space


def side(rp99, wp99, mbps=None):
    return {
        "read_p50_us": 100.0,
        "read_p99_us": rp99,
        "read_iops": 1000.0,
        "write_p50_us": 120.0,
        "write_p99_us": wp99,
        "write_iops": 999.6,
        "stream_mbps": mbps,
    }


DATA = {
    "meta": {"date": "2026-11-28 22:00 UTC", "kernel": "6.1.0-56-amd64", "rounds": 3, "seconds": 8},
    "results": [
        {"store": "file", "stream": "idle", "ours": side(300, 400), "lio": side(350, 500)},
        {
            "store": "file",
            "stream": "unmap1m-40",
            "ours": side(600, 800, 49.6),
            "lio": side(900, 1600, 48.2),
        },
        {"store": "block", "stream": "ws1m-qd4", "ours": side(500, None), "lio": side(500, 700)},
    ],
}


def test_each_store_has_its_table_with_both_write_ratios():
    text = report_space.render_space(DATA)
    idle = ["idle", "100", "100", "300", "350", "400", "500", "0.80", "1.00"]
    unmap = ["unmap1m-40", "100", "100", "600", "900", "800", "1600", "0.50", "2.00"]
    assert table_rows(text, "file store (XFS on a RAM disk)", "stream") == [
        [*idle, "2000", "2000", "n/a", "n/a"],
        [*unmap, "2000", "2000", "50", "48"],
    ]
    # no idle on the block store, and a figure not measured: n/a ratios
    block = table_rows(text, "block store (RAM disk)", "stream")
    assert block[0][5:9] == ["n/a", "700", "n/a", "n/a"]
    assert "bench/report.py --space build/bench/space.json" in text


def test_report_rewrites_the_space_block_alone():
    page = "<!-- section:space -->\nold\n<!-- /section:space -->\n"
    page += "<!-- section:ats -->\na\n<!-- /section:ats -->\n"
    out = report.render(page, space=DATA)
    assert "old" not in out and "<!-- section:ats -->\na\n" in out
    assert "| unmap1m-40 | 100 |" in out


class Lun:
    block_size = 512


def test_unmap_stream_frees_1_mib_a_command_past_the_vms_range():
    cmds = guest_space.unmap_cmds(Lun())
    lun_bytes, off = guest_space.LUN_BYTES, guest_space.STREAM_OFF
    assert len(cmds) == (lun_bytes - off) // (1 << 20)
    for i, (cdb, data) in enumerate(cmds):
        assert cdb[0] == 0x42 and struct.unpack_from(">H", cdb, 7)[0] == len(data) == 24
        # one descriptor: LBA and NUMBER OF LOGICAL BLOCKS
        assert struct.unpack_from(">HH", data) == (22, 16)
        lba, n = struct.unpack_from(">QI", data, 8)
        assert (lba, n) == ((off + i * (1 << 20)) // 512, 2048)
    # the VM's fio works below the streams
    assert off >= 64 << 20
