"""What LIO core keeps doing for a vaai LUN: VERIFY, REPORT LUNS, persistent
reservations."""

import re
import struct

from conftest import sh
from scsi import ILLEGAL_REQUEST, expect_good, expect_sense, sg_io, write_blocks
from sense_codes import LBA_OUT_OF_RANGE


def test_verify_without_bytchk_is_good(lun):
    cdb = struct.pack(">BBIBHB", 0x2F, 0, 0, 0, 64, 0)  # VERIFY (10)
    expect_good(sg_io(lun.sg, cdb))


def test_verify_past_the_end_is_refused(lun):
    cdb = struct.pack(">BBQIBB", 0x8F, 0, lun.last_lba, 2, 0, 0)  # VERIFY (16)
    expect_sense(sg_io(lun.sg, cdb), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)


def test_report_luns_lists_lun_0(lun):
    assert re.search(r"LUN 0\b|^\s*0000000000000000", sh("sg_luns", lun.sg), re.MULTILINE)


def test_persistent_reservation_is_honoured(lun):
    sh("sg_persist", "--out", "--register", "--param-sark=0xabc", lun.sg)
    assert "0xabc" in sh("sg_persist", "--in", "--read-keys", lun.sg)
    sh("sg_persist", "--out", "--reserve", "--param-rk=0xabc", "--prout-type=1", lun.sg)
    assert "Write Exclusive" in sh("sg_persist", "--in", "--read-reservation", lun.sg)
    # the holder writes; the reservation is LIO core's, the write ours
    expect_good(write_blocks(lun.sg, 0, bytes(512), 512))
    sh("sg_persist", "--out", "--release", "--param-rk=0xabc", "--prout-type=1", lun.sg)
    sh("sg_persist", "--out", "--register", "--param-rk=0xabc", "--param-sark=0", lun.sg)
    assert "0xabc" not in sh("sg_persist", "--in", "--read-keys", lun.sg)
