"""The dm-log-writes log reader of the power-cut replay
(tests/powercut/writelog.py), on logs laid out as the kernel writes them."""

import io
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "powercut"))

import writelog

SECTOR = 512


def log(entries, sectorsize=SECTOR, count=None):
    """entries: (sector, nr_sectors, flags, payload); payload is a mark's
    text or a write's data."""
    out = bytearray(writelog.SUPER.pack(writelog.MAGIC, 1, count or len(entries), sectorsize))
    out += bytes(sectorsize - len(out))
    for sector, nr, flags, payload in entries:
        mark = payload if flags & writelog.MARK else b""
        head = writelog.ENTRY.pack(sector, nr, flags, len(mark)) + mark
        out += head + bytes(sectorsize - len(head))
        if not flags & (writelog.MARK | writelog.DISCARD):
            out += payload
    return io.BytesIO(bytes(out))


def test_writes_marks_flushes_and_discards_come_back_in_order():
    data = b"\x5a" * (2 * SECTOR)
    f = log(
        [
            (8, 2, writelog.FUA, data),
            (0, 0, writelog.MARK, b"e1"),
            (0, 0, writelog.FLUSH, b""),
            (16, 4, writelog.DISCARD, b""),
            (1, 1, 0, b"\x01" * SECTOR),
        ]
    )
    got = list(writelog.entries(f))
    assert [(e.offset, e.length, e.flags) for e in got] == [
        (8 * SECTOR, 2 * SECTOR, writelog.FUA),
        (0, 0, writelog.MARK),
        (0, 0, writelog.FLUSH),
        (16 * SECTOR, 4 * SECTOR, writelog.DISCARD),
        (SECTOR, SECTOR, 0),
    ]
    assert got[0].data == data and got[1].mark == "e1" and got[3].data == b""
    assert got[4].data == b"\x01" * SECTOR


def test_a_4096_byte_sector_log_counts_in_its_sectors():
    f = log([(2, 1, 0, b"\x07" * 4096)], sectorsize=4096)
    (e,) = writelog.entries(f)
    assert (e.offset, e.length, e.data) == (8192, 4096, b"\x07" * 4096)


def test_a_log_that_is_not_one_is_refused():
    with pytest.raises(writelog.LogError, match="not a dm-log-writes log"):
        list(writelog.entries(io.BytesIO(bytes(4096))))


def test_a_log_that_ends_early_is_refused():
    f = log([(0, 1, 0, b"\x01" * SECTOR)], count=2)
    with pytest.raises(writelog.LogError, match="ends inside entry 1"):
        list(writelog.entries(f))
