"""DPO and FUA, one answer everywhere (SBC-4 6.5.1): every command that has
the bits accepts them exactly when MODE SENSE's DPOFUA bit is set (LIO
core sets it with the write cache on), and REPORT SUPPORTED OPERATION CODES
shows them as usable exactly then.  A refused command changes nothing."""

import os
import struct

import pytest
from rsoc import report_one
from scsi import (
    ILLEGAL_REQUEST,
    compare_and_write,
    expect_good,
    expect_sense,
    read_blocks,
    sg_io,
    write_blocks,
)
from sense_codes import INVALID_FIELD_IN_CDB

pytestmark = pytest.mark.stores("file")
DPO, FUA = 0x10, 0x08
BS = 512


def dpofua_bit(sg):
    """DPOFUA in MODE SENSE (6)'s device-specific parameter."""
    d = expect_good(sg_io(sg, bytes([0x1A, 0x08, 0x3F, 0, 0xFF, 0]), data_in_len=255)).data
    return bool(d[2] & 0x10)


def rw_cdb(opcode, b1, lba, n):
    """READ/WRITE/WRITE AND VERIFY/VERIFY (10, 12, 16) and ORWRITE (16)
    with byte 1 = b1."""
    if opcode in (0x28, 0x2A, 0x2E, 0x2F):
        return struct.pack(">BBIBHB", opcode, b1, lba, 0, n, 0)
    if opcode in (0xA8, 0xAA, 0xAE, 0xAF):
        return struct.pack(">BBIIBB", opcode, b1, lba, n, 0, 0)
    return struct.pack(">BBQIBB", opcode, b1, lba, n, 0, 0)


# opcode: (bits it has, data-out, data-in, or data-out OR-ed into the medium)
COMMANDS = {
    0x28: (DPO | FUA, "in"),
    0xA8: (DPO | FUA, "in"),
    0x88: (DPO | FUA, "in"),
    0x2A: (DPO | FUA, "out"),
    0xAA: (DPO | FUA, "out"),
    0x8A: (DPO | FUA, "out"),
    0x2E: (DPO, "out"),
    0xAE: (DPO, "out"),
    0x8E: (DPO, "out"),
    0x8B: (DPO | FUA, "or"),
    0x2F: (DPO, None),
    0xAF: (DPO, None),
    0x8F: (DPO, None),
}


def send(lun, opcode, b1, data):
    way = COMMANDS[opcode][1]
    cdb = rw_cdb(opcode, b1, 16, 1)
    if way == "in":
        return sg_io(lun.sg, cdb, data_in_len=BS)
    return sg_io(lun.sg, cdb, data_out=data if way in ("out", "or") else None)


def on_medium(lun, lba, n=1):
    with open(lun.backing.image, "rb") as f:
        f.seek(lba * BS)
        return f.read(n * BS)


@pytest.mark.parametrize("wce", [0, 1], ids=["wce0", "wce1"])
def test_dpo_fua_answered_as_mode_sense_says(lun, wce):
    lun.so.set_attribute("emulate_write_cache", wce)
    supported = dpofua_bit(lun.sg)
    assert supported == bool(wce)
    for opcode, (bits, way) in COMMANDS.items():
        _, usage, _ = report_one(lun.sg, 1, opcode)
        assert usage[1] & (DPO | FUA) == (bits if supported else 0), hex(opcode)
        for b1 in (DPO, FUA, DPO | FUA):
            if b1 & ~bits:
                continue
            old = on_medium(lun, 16)
            data = os.urandom(BS)
            res = send(lun, opcode, b1, data)
            if supported:
                expect_good(res)
                if way == "out":
                    assert on_medium(lun, 16) == data, hex(opcode)
                if way == "or":
                    assert on_medium(lun, 16) == bytes(a | b for a, b in zip(old, data))
            else:
                expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)
                assert on_medium(lun, 16) == old, hex(opcode)


@pytest.mark.parametrize("wce", [0, 1], ids=["wce0", "wce1"])
def test_compare_and_write_dpo_fua(lun, wce):
    lun.so.set_attribute("emulate_write_cache", wce)
    _, usage, _ = report_one(lun.sg, 1, 0x89)
    assert usage[1] & (DPO | FUA) == (DPO | FUA if wce else 0)
    for flags in (DPO, FUA, DPO | FUA):
        old, new = os.urandom(BS), os.urandom(BS)
        expect_good(write_blocks(lun.sg, 7, old, BS))
        res = compare_and_write(lun.sg, 7, old, new, BS, flags=flags)
        if wce:
            expect_good(res)
            assert on_medium(lun, 7) == new
        else:
            expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)
            assert expect_good(read_blocks(lun.sg, 7, 1, BS)).data == old
