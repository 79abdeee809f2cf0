"""RECEIVE COPY RESULTS (LID1): OPERATING PARAMETERS that match what the
parser enforces, COPY STATUS and FAILED SEGMENT DETAILS of held copies."""

import os
import struct

import pytest
from conftest import MiB, export_beside, sh
from scsi import (
    DATA_PROTECT,
    GOOD,
    ILLEGAL_REQUEST,
    cscd_e4,
    decode_sense,
    expect_good,
    expect_sense,
    naa_of,
    receive_copy_results,
    seg_b2b,
    write_blocks,
    xcopy,
    xcopy_list,
)
from sense_codes import INVALID_FIELD_IN_CDB, SPACE_ALLOCATION_FAILED
from vaai import VaaiStorageObject
from vaai.export import sg_of

COPY_STATUS, OP_PARAMS, FAILED_SEGMENTS = 0x00, 0x03, 0x04
HOLD, NO_HOLD = 0, 2


def cscd(lun):
    return cscd_e4(naa_of(lun.sg), lun.block_size)


def copy_status(lun, list_id):
    res = expect_good(receive_copy_results(lun.sg, COPY_STATUS, list_id))
    d = res.data
    # (over FC the initiator reports no residual: the rest reads as zeros)
    assert struct.unpack(">I", d[0:4])[0] == 8 and len(d) >= 12
    unit = d[7]
    return {
        "state": d[4] & 0x7F,
        "hdd": d[4] >> 7,
        "segments": struct.unpack(">H", d[5:7])[0],
        "bytes": struct.unpack(">I", d[8:12])[0] << (10 * unit),
    }


def test_operating_parameters(make_lun):
    lun = make_lun(block_size=4096)
    d = expect_good(receive_copy_results(lun.sg, OP_PARAMS)).data
    assert struct.unpack(">I", d[0:4])[0] == 42 and len(d) >= 46
    assert d[4] & 0x01  # SNLID
    max_cscds, max_segs, max_desc, max_seg_len, max_inline, held = struct.unpack(">HHIIII", d[8:28])
    assert (max_cscds, max_segs, max_desc) == (32, 256, 32 * 32 + 256 * 28)
    assert (max_seg_len, max_inline, held) == (256 * MiB, 0, 0)
    assert struct.unpack(">H", d[34:36])[0] == 32  # TOTAL CONCURRENT COPIES
    assert d[36] == 32  # MAXIMUM CONCURRENT COPIES
    assert 1 << d[37] == 4096  # DATA SEGMENT GRANULARITY
    assert list(d[44 : 44 + d[43]]) == [0x02, 0xE4]
    out = sh("sg_copy_results", "--params", lun.sg)
    assert "Maximum segment descriptor count: 256" in out


def test_allocation_length_cuts_the_answer(lun):
    res = expect_good(receive_copy_results(lun.sg, OP_PARAMS, alloc_len=8))
    assert len(res.data) == 8 and struct.unpack(">I", res.data[0:4])[0] == 42


def test_unsupported_service_actions(lun):
    for sa in (0x01, 0x02, 0x05, 0x07, 0x1F):
        expect_sense(receive_copy_results(lun.sg, sa), ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)


@pytest.mark.over_fabrics
def test_held_copy_reports_completion_once(lun):
    expect_good(write_blocks(lun.sg, 0, os.urandom(MiB), 512))
    p = xcopy_list(
        [cscd(lun)],
        [seg_b2b(0, 0, 1024, 0, 4096), seg_b2b(0, 0, 1024, 0, 8192)],
        list_id=7,
        usage=HOLD,
    )
    expect_good(xcopy(lun.sg, p))
    # an answer cut short by the allocation length does not count as read
    cut = expect_good(receive_copy_results(lun.sg, COPY_STATUS, 7, alloc_len=6)).data
    assert len(cut) == 6 and cut[4] == 1
    st = copy_status(lun, 7)
    assert st == {"state": 1, "hdd": 0, "segments": 2, "bytes": 2 * 1024 * 512}
    # reported: gone
    expect_sense(
        receive_copy_results(lun.sg, COPY_STATUS, 7), ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB
    )
    # a successful copy has no failed segment details to give
    expect_good(xcopy(lun.sg, p))
    d = expect_good(receive_copy_results(lun.sg, FAILED_SEGMENTS, 7)).data
    assert d[:4] == bytes(4)


def test_copies_not_held_are_not_listed(lun):
    for usage, list_id in ((NO_HOLD, 3), (3, 0)):
        expect_good(
            xcopy(
                lun.sg,
                xcopy_list([cscd(lun)], [seg_b2b(0, 0, 8, 0, 100)], list_id=list_id, usage=usage),
            )
        )
        expect_sense(
            receive_copy_results(lun.sg, COPY_STATUS, list_id),
            ILLEGAL_REQUEST,
            *INVALID_FIELD_IN_CDB,
        )


@pytest.mark.over_fabrics
def test_failed_held_copy_gives_its_sense(make_lun, small_fs):
    """A copy into a LUN whose file system fills up: COPY STATUS says it
    failed, FAILED SEGMENT DETAILS gives the sense the command got."""
    _, mnt = small_fs
    a = make_lun(size=16 * MiB)
    expect_good(write_blocks(a.sg, 0, os.urandom(16 * MiB), 512))
    so = VaaiStorageObject("rcr_enospc", path=os.path.join(mnt, "lun"), size=64 * MiB)
    disk = None
    try:
        disk = export_beside(so, a)
        sg = sg_of(disk)
        p = xcopy_list(
            [cscd(a), cscd_e4(naa_of(sg), 512)],
            [seg_b2b(0, 1, 8, 0, 0), seg_b2b(0, 1, 32768, 0, 8)],
            list_id=9,
            usage=HOLD,
        )
        expect_sense(xcopy(a.sg, p), DATA_PROTECT, *SPACE_ALLOCATION_FAILED)
        st = copy_status(a, 9)
        assert st["state"] == 2 and st["segments"] == 1
        d = expect_good(receive_copy_results(a.sg, FAILED_SEGMENTS, 9)).data
        sense_len = struct.unpack(">H", d[58:60])[0]
        assert struct.unpack(">I", d[0:4])[0] == 56 + sense_len
        assert d[56] == 0x02  # CHECK CONDITION
        s = decode_sense(d[60 : 60 + sense_len])
        assert (s.key, s.asc, s.ascq) == (DATA_PROTECT, *SPACE_ALLOCATION_FAILED)
        # read: gone
        expect_sense(
            receive_copy_results(a.sg, FAILED_SEGMENTS, 9), ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB
        )
    finally:
        a.fabric.unexport(so, disk)
        so.delete()


@pytest.mark.over_fabrics
def test_results_belong_to_the_nexus_that_sent_the_copy(lun, over_iscsi):
    expect_good(
        xcopy(lun.sg, xcopy_list([cscd(lun)], [seg_b2b(0, 0, 8, 0, 100)], list_id=11, usage=HOLD))
    )
    other = over_iscsi(lun)
    res = receive_copy_results(other, COPY_STATUS, 11)
    if res.status != GOOD:  # a unit attention from the login may come first
        res = receive_copy_results(other, COPY_STATUS, 11)
    expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)
    assert copy_status(lun, 11)["state"] == 1
