"""RECEIVE ROD TOKEN INFORMATION (84h/07h): how the last POPULATE TOKEN or
WRITE USING TOKEN of a list identifier ended, told once, to the nexus that
sent it (docs/odx.md)."""

import struct

import pytest
from conftest import MiB
from scsi import (
    CHECK_CONDITION,
    COPY_ABORTED,
    COPY_DONE,
    COPY_FAILED,
    GOOD,
    ILLEGAL_REQUEST,
    ROD_TOKEN_LEN,
    ROD_TYPE_PIT_VULNERABLE,
    SA_POPULATE_TOKEN,
    SA_WRITE_USING_TOKEN,
    decode_sense,
    expect_good,
    expect_sense,
    make_token,
    populate_token,
    rrti,
    token_info,
    write_using_token,
)
from sense_codes import COPY_TARGET_DATA_UNDERRUN, INVALID_FIELD_IN_CDB

# over_fabrics("iscsi"): the copy itself never crosses the fabric, and FC
# carries parameter lists and sense for EXTENDED COPY's suites already;
# decided before any store is touched: the file store stands for both
pytestmark = pytest.mark.stores("file")

FINISHED = 0xFFFFFFFE  # ESTIMATED STATUS UPDATE DELAY
BLOCKS = 0xF1  # TRANSFER COUNT UNITS


def gone(sg, list_id):
    expect_sense(rrti(sg, list_id), ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)


def done(info, sa, blocks):
    """A success: no sense, the count in blocks."""
    assert (info.sa, info.status, info.delay, info.scsi_status, info.sense) == (
        sa,
        COPY_DONE,
        FINISHED,
        GOOD,
        b"",
    ), info
    assert (info.units, info.transfer_count) == (BLOCKS, blocks), info


@pytest.mark.over_fabrics("iscsi")
@pytest.mark.parametrize("block_size", [512, 4096])
def test_after_populate_token_the_token(make_lun, block_size):
    lun = make_lun(size=16 * MiB, block_size=block_size)
    expect_good(populate_token(lun.sg, [(0, 8), (64, 24)], 5))
    info = token_info(lun.sg, 5)
    done(info, SA_POPULATE_TOKEN, 32)
    assert info.descriptors_len == 2 + ROD_TOKEN_LEN
    assert len(info.token) == ROD_TOKEN_LEN
    assert struct.unpack(">I", info.token[0:4])[0] == ROD_TYPE_PIT_VULNERABLE
    assert int.from_bytes(info.token[48:64], "big") == 32 * block_size
    assert len(info.raw) == 32 + info.raw[13] + 4 + 514


def test_after_write_using_token_the_blocks_written(lun):
    expect_good(write_using_token(lun.sg, make_token(lun.sg, [(0, 64)]), [(1000, 64)], 5))
    info = token_info(lun.sg, 5)
    done(info, SA_WRITE_USING_TOKEN, 64)
    assert (info.descriptors_len, info.token) == (0, None)


def test_after_an_underrun_the_sense_and_the_blocks_written(lun):
    res = write_using_token(lun.sg, make_token(lun.sg, [(0, 40)]), [(1000, 64)], 5)
    expect_sense(res, COPY_ABORTED, *COPY_TARGET_DATA_UNDERRUN)
    info = token_info(lun.sg, 5)
    assert (info.sa, info.status, info.scsi_status, info.transfer_count) == (
        SA_WRITE_USING_TOKEN,
        COPY_FAILED,
        CHECK_CONDITION,
        40,
    ), info
    s = decode_sense(info.sense)
    assert (s.key, s.asc, s.ascq, s.info) == (COPY_ABORTED, *COPY_TARGET_DATA_UNDERRUN, 40)
    assert info.descriptors_len == 0


def test_reported_once(lun):
    expect_good(populate_token(lun.sg, [(0, 8)], 5))
    token_info(lun.sg, 5)
    gone(lun.sg, 5)


def test_answer_cut_short_is_not_the_report(lun):
    expect_good(populate_token(lun.sg, [(0, 8)], 5))
    cut = expect_good(rrti(lun.sg, 5, alloc_len=8)).data
    assert len(cut) == 8 and cut[4] == SA_POPULATE_TOKEN
    assert struct.unpack(">I", cut[0:4])[0] >= 28 + 4 + 514
    assert token_info(lun.sg, 5).token is not None
    gone(lun.sg, 5)


def test_unknown_list_identifier(lun):
    gone(lun.sg, 0x12345678)


def test_later_command_of_a_list_identifier_replaces_the_report(lun):
    tok = make_token(lun.sg, [(0, 8)], list_id=5)
    expect_good(populate_token(lun.sg, [(0, 8)], 6))
    expect_good(write_using_token(lun.sg, tok, [(1000, 8)], 6))
    done(token_info(lun.sg, 6), SA_WRITE_USING_TOKEN, 8)
    gone(lun.sg, 6)


def test_list_identifiers_are_reported_apart(lun):
    expect_good(populate_token(lun.sg, [(0, 8)], 5))
    expect_good(populate_token(lun.sg, [(0, 16)], 6))
    assert token_info(lun.sg, 6).transfer_count == 16
    assert token_info(lun.sg, 5).transfer_count == 8


@pytest.mark.over_fabrics("iscsi")
def test_report_belongs_to_the_nexus_that_sent_the_command(lun, over_iscsi):
    expect_good(populate_token(lun.sg, [(0, 8)], 5))
    other = over_iscsi(lun)
    res = rrti(other, 5)
    if res.status != GOOD:  # a unit attention from the login may come first
        res = rrti(other, 5)
    expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)
    assert token_info(lun.sg, 5).token is not None
