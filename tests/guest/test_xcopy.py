"""EXTENDED COPY (LID1): copies within a LUN and across LUNs, read back and
compared; every malformed parameter list refused with its exact sense and
nothing written; LUNs outside the issuing nexus unreachable."""

import os

import pytest
from conftest import INITIATOR, MiB, export_beside, fill, read, sh
from rtslib_fb import LUN, TPG, FabricModule, MappedLUN, NetworkPortal, NodeACL, Target
from scsi import (
    DATA_PROTECT,
    ILLEGAL_REQUEST,
    RESERVATION_CONFLICT,
    cdb_xcopy,
    clear_unit_attention,
    cscd_e4,
    expect_good,
    expect_sense,
    field_pointer,
    naa_of,
    seg_b2b,
    sg_io,
    xcopy,
    xcopy_list,
)
from sense_codes import (
    COPY_TARGET_NOT_REACHABLE,
    INLINE_DATA_LENGTH_EXCEEDED,
    INVALID_COMMAND_OPERATION_CODE,
    INVALID_FIELD_IN_CDB,
    INVALID_FIELD_IN_PARAMETER_LIST,
    PARAMETER_LIST_LENGTH_ERROR,
    SPACE_ALLOCATION_FAILED,
    TOO_MANY_SEGMENT_DESCRIPTORS,
    TOO_MANY_TARGET_DESCRIPTORS,
    UNEXPECTED_INEXACT_SEGMENT,
    UNREACHABLE_COPY_TARGET,
    UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE,
    UNSUPPORTED_TARGET_DESCRIPTOR_TYPE,
)
from thin import stat
from vaai import VaaiStorageObject
from vaai.export import find_disk, sg_of

COPY_ABORTED = 0xA
ACL_IQN = "iqn.2026-11.org.vaai:xcopy-acl"
HDR = 16  # parameter list header
CSCD = 32  # one identification descriptor


def cscd(lun):
    return cscd_e4(naa_of(lun.sg), lun.block_size)


# --- copies that work ------------------------------------------------------


@pytest.mark.over_fabrics
@pytest.mark.parametrize("block_size", [512, 4096])
def test_sg_xcopy_within_a_lun(make_lun, block_size):
    lun = make_lun(size=32 * MiB, block_size=block_size)
    n = 4 * MiB // block_size
    data = fill(lun, 0, n)
    sh(
        "sg_xcopy",
        "if=" + lun.sg,
        "of=" + lun.sg,
        f"bs={block_size}",
        f"count={n}",
        f"seek={2 * n}",
    )
    assert read(lun, 2 * n, n) == data
    assert read(lun, 0, n) == data


@pytest.mark.over_fabrics
@pytest.mark.parametrize("block_size", [512, 4096])
def test_copy_across_luns_of_one_nexus(make_lun, block_size):
    a = make_lun(size=16 * MiB, block_size=block_size)
    b = make_lun(size=16 * MiB, block_size=block_size, beside=a)
    n = 2 * MiB // block_size
    data = fill(a, 10, n)
    before = {k: stat(x, k) for x in (a, b) for k in ("clone_read", "clone_write")}
    expect_good(xcopy(a.sg, xcopy_list([cscd(a), cscd(b)], [seg_b2b(0, 1, n, 10, 100)])))
    assert read(b, 100, n) == data
    assert stat(a, "clone_read") == before["clone_read"] + 1
    assert stat(b, "clone_write") == before["clone_write"] + 1
    assert stat(a, "clone_write") == 0 and stat(b, "clone_read") == 0
    assert stat(a, "clone_read_bytes") == stat(b, "clone_write_bytes") == 2 * MiB


def test_ddpt_xcopy_across_luns(make_lun):
    a = make_lun(size=16 * MiB)
    b = make_lun(size=16 * MiB, beside=a)
    data = fill(a, 0, 8192)
    sh("ddpt", "if=" + a.sg, "of=" + b.sg, "bs=512", "count=8192", "oflag=xcopy")
    assert read(b, 0, 8192) == data


def test_512_to_4096_byte_blocks_counted_either_way(make_lun):
    a = make_lun(size=16 * MiB, block_size=512)
    b = make_lun(size=16 * MiB, block_size=4096, beside=a)
    data = fill(a, 64, 256)
    # DC = 0: 256 source blocks; DC = 1: 32 destination blocks, same bytes
    expect_good(
        xcopy(
            a.sg,
            xcopy_list(
                [cscd(a), cscd(b)], [seg_b2b(0, 1, 256, 64, 8), seg_b2b(0, 1, 32, 64, 100, dc=True)]
            ),
        )
    )
    assert read(b, 8, 32) == data
    assert read(b, 100, 32) == data


def test_sixteen_cscds_and_sixty_four_segments(make_lun):
    a = make_lun(size=16 * MiB)
    b = make_lun(size=16 * MiB, beside=a)
    data = fill(a, 0, 64 * 16)
    cscds = [cscd(a) if i % 2 == 0 else cscd(b) for i in range(16)]
    # segment k copies a's blocks [16k, 16k + 16) to b at 1000 + 16 * (63 - k)
    segs = [
        seg_b2b(2 * (k % 8), 2 * (k % 8) + 1, 16, 16 * k, 1000 + 16 * (63 - k)) for k in range(64)
    ]
    expect_good(xcopy(a.sg, xcopy_list(cscds, segs)))
    back = read(b, 1000, 64 * 16)
    for k in range(64):
        assert (
            back[(63 - k) * 16 * 512 : (64 - k) * 16 * 512]
            == data[k * 16 * 512 : (k + 1) * 16 * 512]
        ), f"segment {k}"


@pytest.mark.parametrize("shift", [+37, -37])
def test_overlapping_source_and_destination_copy_as_if_read_first(make_lun, shift):
    lun = make_lun(size=16 * MiB)
    n = 3 * MiB // 512  # several chunks, overlapping by most of them
    data = fill(lun, 1000, n)
    expect_good(xcopy(lun.sg, xcopy_list([cscd(lun)], [seg_b2b(0, 0, n, 1000, 1000 + shift)])))
    assert read(lun, 1000 + shift, n) == data


def test_segments_run_in_order(make_lun):
    """A later segment sees what an earlier one wrote."""
    lun = make_lun(size=16 * MiB)
    data = fill(lun, 0, 64)
    expect_good(
        xcopy(
            lun.sg,
            xcopy_list([cscd(lun)], [seg_b2b(0, 0, 64, 0, 1000), seg_b2b(0, 0, 64, 1000, 2000)]),
        )
    )
    assert read(lun, 2000, 64) == data


def test_zero_parameter_list_length_is_not_an_error(lun):
    expect_good(sg_io(lun.sg, cdb_xcopy(0)))


def test_zero_block_segment_copies_nothing(lun):
    before = read(lun, 0, 8)
    expect_good(xcopy(lun.sg, xcopy_list([cscd(lun)], [seg_b2b(0, 0, 0, 100, 0)])))
    assert read(lun, 0, 8) == before


# --- malformed parameter lists -----------------------------------------------


def refused(lun, params, key, asc_ascq, dest=(2000, 64)):
    """The list is refused with this sense and the destination untouched."""
    before = read(lun, *dest)
    failed = stat(lun, "clone_failed")
    res = xcopy(lun.sg, params)
    s = expect_sense(res, key, *asc_ascq)
    assert read(lun, *dest) == before
    assert stat(lun, "clone_failed") == failed + 1
    return s


@pytest.fixture
def src_lun(make_lun):
    lun = make_lun(size=16 * MiB)
    fill(lun, 0, 64)
    return lun


def good_seg():
    return seg_b2b(0, 0, 64, 0, 2000)


def test_list_shorter_than_its_header(src_lun):
    refused(src_lun, bytes(8), ILLEGAL_REQUEST, PARAMETER_LIST_LENGTH_ERROR)


def test_lengths_beyond_the_list(src_lun):
    p = xcopy_list([cscd(src_lun)], [good_seg()], seg_len=56)
    refused(src_lun, p, ILLEGAL_REQUEST, PARAMETER_LIST_LENGTH_ERROR)


@pytest.mark.over_fabrics
def test_descriptor_cut_short(src_lun):
    p = xcopy_list([cscd(src_lun)[:20]], [])
    refused(src_lun, p, ILLEGAL_REQUEST, PARAMETER_LIST_LENGTH_ERROR)


def test_inline_data(src_lun):
    p = xcopy_list([cscd(src_lun)], [good_seg()], inline=bytes(4))
    s = refused(src_lun, p, ILLEGAL_REQUEST, INLINE_DATA_LENGTH_EXCEEDED)
    assert field_pointer(s) == (12, None)


def test_reserved_list_id_usage(src_lun):
    s = refused(
        src_lun,
        xcopy_list([cscd(src_lun)], [good_seg()], usage=1),
        ILLEGAL_REQUEST,
        INVALID_FIELD_IN_PARAMETER_LIST,
    )
    assert field_pointer(s) == (1, 4)


def test_list_id_with_no_list_id_usage(src_lun):
    s = refused(
        src_lun,
        xcopy_list([cscd(src_lun)], [good_seg()], list_id=5),
        ILLEGAL_REQUEST,
        INVALID_FIELD_IN_PARAMETER_LIST,
    )
    assert field_pointer(s) == (0, None)


def test_unsupported_cscd_type(src_lun):
    s = refused(
        src_lun,
        xcopy_list([cscd(src_lun), cscd_e4(bytes(16), 512, code=0xE0)], [good_seg()]),
        ILLEGAL_REQUEST,
        UNSUPPORTED_TARGET_DESCRIPTOR_TYPE,
    )
    assert field_pointer(s) == (HDR + CSCD, None)


def test_too_many_cscds(src_lun):
    refused(
        src_lun,
        xcopy_list([cscd(src_lun)] * 33, [good_seg()]),
        ILLEGAL_REQUEST,
        TOO_MANY_TARGET_DESCRIPTORS,
    )


def test_unsupported_segment_type(src_lun):
    s = refused(
        src_lun,
        xcopy_list([cscd(src_lun)], [good_seg(), seg_b2b(0, 0, 1, 0, 0, code=0x01)]),
        ILLEGAL_REQUEST,
        UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE,
    )
    assert field_pointer(s) == (HDR + CSCD + 28, None)


def test_too_many_segments(src_lun):
    refused(
        src_lun,
        xcopy_list([cscd(src_lun)], [good_seg()] * 257),
        ILLEGAL_REQUEST,
        TOO_MANY_SEGMENT_DESCRIPTORS,
    )


def test_wrong_segment_descriptor_length(src_lun):
    s = refused(
        src_lun,
        xcopy_list([cscd(src_lun)], [seg_b2b(0, 0, 64, 0, 2000, length=0x14)]),
        ILLEGAL_REQUEST,
        INVALID_FIELD_IN_PARAMETER_LIST,
    )
    assert field_pointer(s) == (HDR + CSCD + 2, None)


@pytest.mark.parametrize("src,dst", [(1, 0), (0, 7)])
def test_cscd_index_out_of_range(src_lun, src, dst):
    """An index past the list names no copy target (libiscsi, LIO, CTL)."""
    refused(
        src_lun,
        xcopy_list([cscd(src_lun)], [seg_b2b(src, dst, 64, 0, 2000)]),
        COPY_ABORTED,
        UNREACHABLE_COPY_TARGET,
    )


def test_unknown_naa(src_lun):
    naa = bytearray(naa_of(src_lun.sg))
    naa[-1] ^= 0xFF
    refused(
        src_lun,
        xcopy_list([cscd(src_lun), cscd_e4(bytes(naa), 512)], [seg_b2b(1, 0, 64, 0, 2000)]),
        COPY_ABORTED,
        COPY_TARGET_NOT_REACHABLE,
    )


@pytest.mark.parametrize("lu_id_type", [0x40, 0x80, 0xC0])
def test_lu_id_type_is_ignored(src_lun, lu_id_type):
    """The designator names the LUN; LU ID TYPE (how to read the unused LU
    IDENTIFIER) does not matter to an identification descriptor."""
    data = fill(src_lun, 0, 64)
    d = bytearray(cscd(src_lun))
    d[1] |= lu_id_type
    expect_good(xcopy(src_lun.sg, xcopy_list([bytes(d)], [seg_b2b(0, 0, 64, 0, 2000)])))
    assert read(src_lun, 2000, 64) == data


def test_not_a_block_device(src_lun):
    s = refused(
        src_lun,
        xcopy_list([cscd_e4(naa_of(src_lun.sg), 512, pdt=0x01)], [good_seg()]),
        ILLEGAL_REQUEST,
        INVALID_FIELD_IN_PARAMETER_LIST,
    )
    assert field_pointer(s) == (HDR + 1, 4)


def test_wrong_disk_block_length(src_lun):
    s = refused(
        src_lun,
        xcopy_list([cscd_e4(naa_of(src_lun.sg), 4096)], [good_seg()]),
        ILLEGAL_REQUEST,
        INVALID_FIELD_IN_PARAMETER_LIST,
    )
    assert field_pointer(s) == (HDR + 29, None)


def test_source_beyond_capacity(src_lun):
    last = src_lun.last_lba
    refused(
        src_lun,
        xcopy_list([cscd(src_lun)], [seg_b2b(0, 0, 64, last - 10, 2000)]),
        COPY_ABORTED,
        COPY_TARGET_NOT_REACHABLE,
    )


def test_destination_beyond_capacity(make_lun):
    lun = make_lun(size=16 * MiB)
    last = lun.last_lba
    before = read(lun, last - 63, 64)
    refused(
        lun,
        xcopy_list([cscd(lun)], [good_seg(), seg_b2b(0, 0, 64, 0, last - 10)]),
        COPY_ABORTED,
        COPY_TARGET_NOT_REACHABLE,
    )
    assert read(lun, last - 63, 64) == before  # the first, good segment did not run either


def test_inexact_segment(make_lun):
    a = make_lun(size=16 * MiB)
    b = make_lun(size=16 * MiB, block_size=4096, beside=a)
    s = refused(
        a,
        xcopy_list([cscd(a), cscd(b)], [seg_b2b(0, 1, 7, 0, 0)]),
        ILLEGAL_REQUEST,
        UNEXPECTED_INEXACT_SEGMENT,
        dest=(0, 8),
    )
    assert field_pointer(s) == (HDR + 2 * CSCD + 10, None)


def test_parameter_list_longer_than_reported_maximum(lun):
    expect_sense(
        sg_io(lun.sg, cdb_xcopy(16 + 8192 + 512), data_out=bytes(16 + 8192 + 512)),
        ILLEGAL_REQUEST,
        *PARAMETER_LIST_LENGTH_ERROR,
    )


def test_lid4_service_action_is_not_supported(lun):
    p = xcopy_list([cscd(lun)], [good_seg()])
    expect_sense(
        sg_io(lun.sg, cdb_xcopy(len(p), sa=0x01), data_out=p),
        ILLEGAL_REQUEST,
        *INVALID_FIELD_IN_CDB,
    )


def test_3pc_off_means_no_extended_copy(lun):
    lun.so.set_attribute("emulate_3pc", 0)
    try:
        p = xcopy_list([cscd(lun)], [good_seg()])
        expect_sense(xcopy(lun.sg, p), ILLEGAL_REQUEST, *INVALID_COMMAND_OPERATION_CODE)
    finally:
        lun.so.set_attribute("emulate_3pc", 1)


# --- scope: the issuing nexus, writable destinations ------------------------


@pytest.mark.over_fabrics
def test_lun_of_another_nexus_is_unreachable(make_lun):
    """B is exported in a target of its own: the nexus that sees A must not
    reach it by its NAA, neither to read nor to write (CVE-2020-28374)."""
    a = make_lun(size=16 * MiB)
    b = make_lun(size=16 * MiB, own_nexus=True)
    secret = fill(b, 0, 64)
    fill(a, 0, 64)
    b_naa = cscd(b)
    refused(
        a,
        xcopy_list([cscd(a), b_naa], [seg_b2b(1, 0, 64, 0, 2000)]),
        COPY_ABORTED,
        COPY_TARGET_NOT_REACHABLE,
    )
    refused(
        a,
        xcopy_list([cscd(a), b_naa], [seg_b2b(0, 1, 64, 0, 0)]),
        COPY_ABORTED,
        COPY_TARGET_NOT_REACHABLE,
    )
    assert read(b, 0, 64) == secret
    assert stat(b, "clone_read") == stat(b, "clone_write") == 0


def test_readonly_lun_is_not_a_destination(make_lun):
    a = make_lun(size=16 * MiB)
    fill(a, 0, 64)
    ro = make_lun(size=16 * MiB, readonly=True, fill=b"\x5a" * MiB, beside=a)
    refused(
        a,
        xcopy_list([cscd(a), cscd(ro)], [seg_b2b(0, 1, 64, 0, 0)]),
        COPY_ABORTED,
        COPY_TARGET_NOT_REACHABLE,
    )
    assert read(ro, 0, 64) == b"\x5a" * 64 * 512
    # ... but a source it can be
    expect_good(xcopy(a.sg, xcopy_list([cscd(a), cscd(ro)], [seg_b2b(1, 0, 8, 0, 100)])))
    assert read(a, 100, 8) == b"\x5a" * 8 * 512


@pytest.mark.over_fabrics
def test_reservation_by_another_initiator_is_honoured(make_lun, over_iscsi):
    """B, reserved by an iSCSI initiator, can be neither read nor written by
    a copy the tcm_loop nexus sends to A; once released, it can."""
    a = make_lun(size=16 * MiB)
    b = make_lun(size=16 * MiB, beside=a)
    data = fill(a, 0, 64)
    b_before = read(b, 0, 64)
    b_iscsi = over_iscsi(b)
    expect_good(sg_io(b_iscsi, bytes([0x16, 0, 0, 0, 0, 0])))  # RESERVE(6)
    try:
        for seg in (seg_b2b(0, 1, 64, 0, 0), seg_b2b(1, 0, 64, 0, 1000)):
            res = xcopy(a.sg, xcopy_list([cscd(a), cscd(b)], [seg]))
            assert res.status == RESERVATION_CONFLICT, res
    finally:
        expect_good(sg_io(b_iscsi, bytes([0x17, 0, 0, 0, 0, 0])))  # RELEASE(6)
    assert read(b, 0, 64) == b_before
    expect_good(xcopy(a.sg, xcopy_list([cscd(a), cscd(b)], [seg_b2b(0, 1, 64, 0, 0)])))
    assert read(b, 0, 64) == data


def test_out_of_space_mid_copy_is_space_allocation_failed(make_lun, small_fs):
    """The destination's file system (8 MiB) fills up part way through."""
    _, mnt = small_fs
    a = make_lun(size=16 * MiB)
    fill(a, 0, 16 * MiB // 512)
    so = VaaiStorageObject("xcopy_enospc", path=os.path.join(mnt, "lun"), size=64 * MiB)
    disk = None
    try:
        disk = export_beside(so, a)
        res = xcopy(
            a.sg,
            xcopy_list(
                [cscd(a), cscd_e4(naa_of(sg_of(disk)), 512)],
                [seg_b2b(0, 1, 64, 0, 0), seg_b2b(0, 1, 32768, 0, 64)],
            ),
        )
        s = expect_sense(res, DATA_PROTECT, *SPACE_ALLOCATION_FAILED)
        assert s.csi == 1  # SPC-4 6.4.1: the segment it stopped in
        assert stat(a, "clone_failed") == 1
    finally:
        a.fabric.unexport(so, disk)
        so.delete()


@pytest.mark.over_fabrics
def test_lun_outside_the_initiators_acl_is_unreachable(make_lun):
    """One iSCSI TPG holds A and B; this initiator's ACL maps only A, another
    initiator's maps B.  Naming B by its NAA from A's session must not reach
    it, in either direction (the scenario of CVE-2020-28374)."""
    a = make_lun(size=16 * MiB, own_nexus=True)
    b = make_lun(size=16 * MiB, own_nexus=True)
    secret = fill(b, 0, 64)
    b_naa = cscd(b)
    sh(INITIATOR, "start")
    me = sh(INITIATOR, "name").strip()
    target = Target(FabricModule("iscsi"), ACL_IQN)
    try:
        tpg = TPG(target, 1)
        NetworkPortal(tpg, "127.0.0.1", 3260)
        lun_a = LUN(tpg, 0, storage_object=a.so)
        lun_b = LUN(tpg, 1, storage_object=b.so)
        MappedLUN(NodeACL(tpg, me), 0, lun_a)
        MappedLUN(NodeACL(tpg, "iqn.2026-11.org.vaai:someone-else"), 0, lun_b)
        tpg.set_attribute("authentication", "0")
        tpg.enable = True
        sh(INITIATOR, "login", ACL_IQN)
        try:
            a_sg = sg_of(find_disk(a.so, "iscsi_tcp", target=ACL_IQN))
            clear_unit_attention(a_sg)
            for seg in (seg_b2b(1, 0, 64, 0, 2000), seg_b2b(0, 1, 64, 0, 0)):
                res = xcopy(a_sg, xcopy_list([cscd_e4(naa_of(a_sg), 512), b_naa], [seg]))
                expect_sense(res, COPY_ABORTED, *COPY_TARGET_NOT_REACHABLE)
        finally:
            sh(INITIATOR, "logout", ACL_IQN)
    finally:
        target.delete()
    assert read(b, 0, 64) == secret
    assert stat(b, "clone_read") == stat(b, "clone_write") == 0
