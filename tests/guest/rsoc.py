"""REPORT SUPPORTED OPERATION CODES (SPC-4 6.35): sending it and reading
its one-command and all-commands formats, for the suites that ask a LUN
what it supports."""

import struct

from scsi import expect_good, sg_io

SUPPORTED, NOT_SUPPORTED = 0x3, 0x1  # one-command format's SUPPORT field
ALLOC = 8192


def cdb_rsoc(options=0, opcode=0, sa=0, alloc=ALLOC, rctd=False):
    return struct.pack(
        ">BBBBHIBB", 0xA3, 0x0C, (0x80 if rctd else 0) | options, opcode, sa, alloc, 0, 0
    )


def rsoc(dev, data_in_len=None, **kw):
    alloc = kw.setdefault("alloc", ALLOC)
    return sg_io(dev, cdb_rsoc(**kw), data_in_len=alloc if data_in_len is None else data_in_len)


def report_all(dev, rctd=False):
    """{(opcode, sa): (cdb length, (nominal, recommended) or None)}"""
    d = expect_good(rsoc(dev, rctd=rctd)).data
    assert len(d) == 4 + struct.unpack(">I", d[:4])[0], "COMMAND DATA LENGTH"
    assert len(d) < ALLOC
    out, pos = {}, 4
    while pos < len(d):
        op, sa, flags, cdb_len = struct.unpack(">BxHxBH", d[pos : pos + 8])
        assert bool(flags & 0x02) == rctd, f"CTDP of {op:02x}"
        key = (op, sa if flags & 0x01 else None)
        assert key not in out, f"{key} listed twice"
        tmo = None
        if rctd:
            tmo = timeouts(d[pos + 8 : pos + 20])
        out[key] = (cdb_len, tmo)
        pos += 20 if rctd else 8
    assert pos == len(d)
    return out


def timeouts(desc):
    """The command timeouts descriptor (SPC-4 6.35.4)."""
    length, nominal, recommended = struct.unpack(">H2xII", desc)
    assert length == 0x0A
    return nominal, recommended


def report_one(dev, options, opcode, sa=0, rctd=False):
    """(support, cdb usage data, timeouts or None)"""
    d = expect_good(rsoc(dev, options=options, opcode=opcode, sa=sa, rctd=rctd)).data
    support, size = d[1] & 0x07, struct.unpack(">H", d[2:4])[0]
    if support != SUPPORTED:
        return support, b"", None
    assert bool(d[1] & 0x80) == rctd
    usage = d[4 : 4 + size]
    assert len(usage) == size and usage[0] == opcode
    tmo = timeouts(d[4 + size : 4 + size + 12]) if rctd else None
    assert len(d) == 4 + size + (12 if rctd else 0)
    return support, usage, tmo
