"""The refusals of docs/odx.md for POPULATE TOKEN and WRITE USING TOKEN:
each answered with its exact sense, the field pointer where the table
names one, and nothing written."""

import os
import struct
import time

import pytest
from conftest import MiB, fill, read
from scsi import (
    DATA_PROTECT,
    ILLEGAL_REQUEST,
    PT_HDR,
    RANGE_LEN,
    ROD_TOKEN_BODY,
    ROD_TYPE_AUR,
    ROD_TYPE_ZERO,
    WUT_HDR,
    cdb_populate_token,
    cdb_write_using_token,
    clear_unit_attention,
    expect_good,
    expect_sense,
    field_pointer,
    make_token,
    populate_token_list,
    rrti,
    sg_io,
    write_using_token,
    wut_list,
)
from sense_codes import (
    INVALID_COMMAND_OPERATION_CODE,
    INVALID_FIELD_IN_PARAMETER_LIST,
    LBA_OUT_OF_RANGE,
    PARAMETER_LIST_LENGTH_ERROR,
    TOKEN_EXPIRED,
    TOKEN_INVALID_LENGTH,
    TOKEN_UNKNOWN,
    TOKEN_UNSUPPORTED_TYPE,
    TOO_MANY_SEGMENT_DESCRIPTORS,
    WRITE_PROTECTED,
)
from thin import stat

# over_fabrics("iscsi"): the copy itself never crosses the fabric, and FC
# carries parameter lists and sense for EXTENDED COPY's suites already;
# decided before any store is touched: the file store stands for both
pytestmark = pytest.mark.stores("file")

GiB = 1 << 30
LIST_ID = 9
DEST = 2000  # where a refused WRITE USING TOKEN would have written
CMDS = ("pt", "wut")
HDR = {"pt": PT_HDR, "wut": WUT_HDR}
RDL = {"pt": 14, "wut": 534}  # RANGE DESCRIPTOR LIST LENGTH


@pytest.fixture
def src(make_lun):
    lun = make_lun(size=16 * MiB)
    fill(lun, 0, 64)
    fill(lun, DEST, 64)
    return lun


@pytest.fixture
def token(src):
    return make_token(src.sg, [(0, 64)])


def plist(cmd, token, ranges, **kw):
    if cmd == "pt":
        return populate_token_list(ranges, **kw)
    return wut_list(token, ranges, **kw)


def cdb(cmd, param_len):
    return (cdb_populate_token if cmd == "pt" else cdb_write_using_token)(LIST_ID, param_len)


def refused(lun, cmd, params, sense, field=None, key=ILLEGAL_REQUEST, cdb_len=None, **sent):
    """The command is refused with this sense (and field pointer), and the
    blocks a WRITE USING TOKEN would write are as they were."""
    before = read(lun, DEST, 64)
    sent.setdefault("data_out", params)
    res = sg_io(lun.sg, cdb(cmd, len(params) if cdb_len is None else cdb_len), **sent)
    s = expect_sense(res, key, *sense)
    if field is not None:
        assert field_pointer(s) == (field, None)
    assert read(lun, DEST, 64) == before
    return s


# --- the lists: each refusal for POPULATE TOKEN, then for WRITE USING TOKEN ---


def test_list_shorter_than_its_header_or_than_its_lengths_say(src, token):
    for cmd in CMDS:
        refused(
            src, cmd, plist(cmd, token, [(DEST, 64)])[: HDR[cmd] - 1], PARAMETER_LIST_LENGTH_ERROR
        )
        for past in ({"data_len": HDR[cmd] - 2 + 2 * RANGE_LEN}, {"rdl": 2 * RANGE_LEN}):
            refused(src, cmd, plist(cmd, token, [(DEST, 64)], **past), PARAMETER_LIST_LENGTH_ERROR)


def test_data_length_too_short_for_its_ranges(src, token):
    for cmd in CMDS:
        refused(
            src,
            cmd,
            plist(cmd, token, [(DEST, 64)], data_len=HDR[cmd] - 2),
            INVALID_FIELD_IN_PARAMETER_LIST,
            field=0,
        )


def test_no_range_descriptors_or_a_length_not_a_multiple_of_16(src, token):
    for cmd in CMDS:
        refused(src, cmd, plist(cmd, token, []), INVALID_FIELD_IN_PARAMETER_LIST, field=RDL[cmd])
        refused(
            src,
            cmd,
            plist(cmd, token, [(DEST, 32), (DEST + 32, 32)], rdl=24),
            INVALID_FIELD_IN_PARAMETER_LIST,
            field=RDL[cmd],
        )


def test_more_than_64_ranges(src, token):
    for cmd in CMDS:
        refused(
            src,
            cmd,
            plist(cmd, token, [(DEST + k, 1) for k in range(65)]),
            TOO_MANY_SEGMENT_DESCRIPTORS,
            field=RDL[cmd],
        )


@pytest.mark.over_fabrics("iscsi")
def test_range_past_the_last_lba(src, token):
    for cmd in CMDS:
        for lba in (src.last_lba, 2**64 - 1):  # the second wraps
            refused(
                src,
                cmd,
                plist(cmd, token, [(DEST, 8), (lba, 2)]),
                LBA_OUT_OF_RANGE,
                field=HDR[cmd] + RANGE_LEN,
            )


def test_overlapping_ranges_name_the_later(src, token):
    for cmd in CMDS:
        refused(
            src,
            cmd,
            plist(cmd, token, [(DEST, 16), (DEST + 32, 16), (DEST + 8, 4)]),
            INVALID_FIELD_IN_PARAMETER_LIST,
            field=HDR[cmd] + 2 * RANGE_LEN,
        )


def test_more_than_1_gib_in_all(make_lun):
    big = make_lun(size=GiB + 4 * MiB)  # sparse
    fill(big, DEST, 64)
    tok, n = make_token(big.sg, [(0, 64)]), GiB // 512
    for cmd in CMDS:
        refused(
            big,
            cmd,
            plist(cmd, tok, [(0, n), (n, 1)]),
            INVALID_FIELD_IN_PARAMETER_LIST,
            field=RDL[cmd],
        )


# --- POPULATE TOKEN's own fields -----------------------------------------------


def test_inactivity_timeout_above_3600(src):
    refused(
        src,
        "pt",
        populate_token_list([(0, 64)], timeout=3601),
        INVALID_FIELD_IN_PARAMETER_LIST,
        field=4,
    )


def test_rtv_with_a_type_we_do_not_make(src):
    for rod_type in (ROD_TYPE_ZERO, 0x00800003):  # zero; point in time, reserved
        refused(
            src,
            "pt",
            populate_token_list([(0, 64)], rtv=True, rod_type=rod_type),
            INVALID_FIELD_IN_PARAMETER_LIST,
            field=8,
        )


# --- WRITE USING TOKEN's token ---------------------------------------------------


def with_bytes(token, pos, new):
    t = bytearray(token)
    t[pos : pos + len(new)] = new
    return bytes(t)


def test_rod_type_we_do_not_take(src, token):
    tok = with_bytes(token, 0, struct.pack(">I", 0x00800000))
    refused(src, "wut", wut_list(tok, [(DEST, 64)]), TOKEN_UNSUPPORTED_TYPE, field=16)


def test_rod_token_length_not_01f8(src, token):
    tok = with_bytes(token, 6, struct.pack(">H", ROD_TOKEN_BODY - 8))
    refused(src, "wut", wut_list(tok, [(DEST, 64)]), TOKEN_INVALID_LENGTH, field=22)


def test_token_we_did_not_make_changed_or_deleted_is_unknown(src, token):
    made_up = struct.pack(">IxxH", ROD_TYPE_AUR, ROD_TOKEN_BODY) + os.urandom(504)
    refused(src, "wut", wut_list(made_up, [(DEST, 64)]), TOKEN_UNKNOWN)
    # reserved, identifier, creator, bytes represented, block length, creator
    # again, the random part, the last
    for pos in (5, 12, 30, 60, 98, 140, 200, 511):
        changed = with_bytes(token, pos, bytes([token[pos] ^ 0x01]))
        refused(src, "wut", wut_list(changed, [(DEST, 64)]), TOKEN_UNKNOWN)
    data = read(src, 0, 64)
    expect_good(write_using_token(src.sg, token, [(1000, 64)], LIST_ID, del_tkn=True))
    assert read(src, 1000, 64) == data
    refused(src, "wut", wut_list(token, [(DEST, 64)]), TOKEN_UNKNOWN)


def test_expired_token(src):
    tok = make_token(src.sg, [(0, 64)], timeout=1)
    time.sleep(2.5)
    refused(src, "wut", wut_list(tok, [(DEST, 64)]), TOKEN_EXPIRED)


def test_each_use_restarts_the_inactivity_timeout(src):
    tok = make_token(src.sg, [(0, 64)], timeout=2)
    for lba in (1000, 3000):  # the second 2.6 s after the token
        time.sleep(1.3)
        expect_good(write_using_token(src.sg, tok, [(lba, 64)], LIST_ID))
    assert read(src, 3000, 64) == read(src, 0, 64)


def test_offset_into_rod_at_or_past_the_end(src, token):
    for offset in (64, 2**64 - 1):
        refused(
            src,
            "wut",
            wut_list(token, [(DEST, 1)], offset=offset),
            INVALID_FIELD_IN_PARAMETER_LIST,
            field=8,
        )


def test_a_refused_write_does_not_delete_the_token(src, token):
    """DEL_TKN takes effect only once the copy starts: a WRITE USING TOKEN
    refused after the token was found leaves it for the next one."""
    refused(
        src,
        "wut",
        wut_list(token, [(DEST, 1)], offset=64, del_tkn=True),
        INVALID_FIELD_IN_PARAMETER_LIST,
        field=8,
    )
    expect_good(write_using_token(src.sg, token, [(1000, 64)], LIST_ID))
    assert read(src, 1000, 64) == read(src, 0, 64)


def test_token_of_a_deleted_lun_is_unknown(make_lun):
    a = make_lun(size=16 * MiB)
    b = make_lun(size=16 * MiB, beside=a)
    fill(b, DEST, 64)
    tok = make_token(a.sg, [(0, 64)])
    a.fabric.unexport(a.so, a.disk)
    a.so.delete()
    clear_unit_attention(b.sg)
    refused(b, "wut", wut_list(tok, [(DEST, 64)]), TOKEN_UNKNOWN)


# --- the destination and the command ---------------------------------------------


def test_read_only_destination_is_write_protected(src, token, make_lun):
    ro = make_lun(size=16 * MiB, readonly=True, fill=b"\x5a" * 2 * MiB, beside=src)
    refused(ro, "wut", wut_list(token, [(DEST, 64)]), WRITE_PROTECTED, key=DATA_PROTECT)


def test_each_refused_write_counts_as_a_failed_clone(src, token, make_lun):
    ro = make_lun(size=16 * MiB, readonly=True, fill=b"\x5a" * 2 * MiB, beside=src)
    refused(ro, "wut", wut_list(token, [(DEST, 64)]), WRITE_PROTECTED, key=DATA_PROTECT)
    refused(src, "wut", wut_list(token, [(DEST, 1)], offset=64), INVALID_FIELD_IN_PARAMETER_LIST)
    refused(src, "pt", populate_token_list([(src.last_lba, 2)]), LBA_OUT_OF_RANGE)
    assert (stat(ro, "clone_failed"), stat(src, "clone_failed")) == (1, 1)


def test_3pc_off_refuses_all_three(src, token):
    src.so.set_attribute("emulate_3pc", 0)
    try:
        refused(src, "pt", populate_token_list([(0, 64)]), INVALID_COMMAND_OPERATION_CODE)
        refused(src, "wut", wut_list(token, [(DEST, 64)]), INVALID_COMMAND_OPERATION_CODE)
        expect_sense(rrti(src.sg, 1), ILLEGAL_REQUEST, *INVALID_COMMAND_OPERATION_CODE)
    finally:
        src.so.set_attribute("emulate_3pc", 1)


def test_parameter_list_sent_the_wrong_way(src, token):
    """As data-in, and not at all: see test_data_direction.py."""
    for cmd in CMDS:
        params = plist(cmd, token, [(DEST, 64)])
        for data_in_len in (len(params), 0):
            refused(
                src,
                cmd,
                params,
                PARAMETER_LIST_LENGTH_ERROR,
                data_out=None,
                data_in_len=data_in_len,
            )


@pytest.mark.over_fabrics("iscsi")
def test_data_out_shorter_than_the_parameter_list_length(src, token):
    for cmd in CMDS:
        params = plist(cmd, token, [(DEST, 64)])
        refused(src, cmd, params, PARAMETER_LIST_LENGTH_ERROR, cdb_len=len(params) + RANGE_LEN)
