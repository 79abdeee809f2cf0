"""WRITE USING TOKEN (83h/11h): copies within a LUN and across LUNs of
either block size, from OFFSET INTO ROD on, into several ranges, with the
token longer or shorter than the destination; read back and compared
(docs/odx.md)."""

import pytest
from conftest import MiB, export_beside, fill, read, sh
from scsi import (
    COPY_ABORTED,
    COPY_DONE,
    COPY_DONE_PARTIAL,
    ILLEGAL_REQUEST,
    SA_WRITE_USING_TOKEN,
    cdb_write_using_token,
    expect_good,
    expect_sense,
    field_pointer,
    make_token,
    read_blocks,
    sg_io,
    token_info,
    write_using_token,
)
from sense_codes import COPY_TARGET_DATA_UNDERRUN, INVALID_FIELD_IN_PARAMETER_LIST
from thin import stat
from vaai import VaaiStorageObject
from vaai.export import sg_of, unexport

# over_fabrics("iscsi"): the copy itself never crosses the fabric, and FC
# carries parameter lists and sense for EXTENDED COPY's suites already

CLONE_COUNTERS = ("clone_read", "clone_write", "clone_read_bytes", "clone_write_bytes")


def pair(make_lun, src_bs=512, dst_bs=512):
    """Two LUNs one nexus sees: the source, the destination."""
    a = make_lun(size=16 * MiB, block_size=src_bs)
    return a, make_lun(size=16 * MiB, block_size=dst_bs, beside=a)


def copy(dst, token, ranges, list_id=2, **kw):
    expect_good(write_using_token(dst.sg, token, ranges, list_id, **kw))


def underrun(dst, token, ranges, written):
    """COPY ABORTED / DATA UNDERRUN, INFORMATION the blocks written."""
    res = write_using_token(dst.sg, token, ranges, 2)
    assert expect_sense(res, COPY_ABORTED, *COPY_TARGET_DATA_UNDERRUN).info == written


@pytest.mark.over_fabrics("iscsi")
@pytest.mark.parametrize("block_size", [512, 4096])
def test_copy_within_a_lun(make_lun, block_size):
    lun = make_lun(size=16 * MiB, block_size=block_size)
    n = MiB // block_size
    data = fill(lun, 0, n)
    copy(lun, make_token(lun.sg, [(0, n)]), [(2 * n, n)])
    assert read(lun, 2 * n, n) == data
    assert read(lun, 0, n) == data


@pytest.mark.over_fabrics("iscsi")
@pytest.mark.parametrize("block_size", [512, 4096])
def test_copy_across_luns_counts_a_clone_on_each(make_lun, block_size):
    a, b = pair(make_lun, block_size, block_size)
    n = MiB // block_size
    data = fill(a, 10, n)
    tok = make_token(a.sg, [(10, n)])

    def counters():
        return {(name, k): stat(x, k) for name, x in (("a", a), ("b", b)) for k in CLONE_COUNTERS}

    before = counters()
    copy(b, tok, [(100, n)])
    assert read(b, 100, n) == data
    moved = {k: v - before[k] for k, v in counters().items() if v != before[k]}
    assert moved == {
        ("a", "clone_read"): 1,
        ("a", "clone_read_bytes"): MiB,
        ("b", "clone_write"): 1,
        ("b", "clone_write_bytes"): MiB,
    }


@pytest.mark.parametrize("src_bs, dst_bs", [(512, 4096), (4096, 512)])
def test_copy_between_block_sizes(make_lun, src_bs, dst_bs):
    a, b = pair(make_lun, src_bs, dst_bs)
    size = 128 * 1024
    data = fill(a, 64, size // src_bs)
    copy(b, make_token(a.sg, [(64, size // src_bs)]), [(8, size // dst_bs)])
    assert read(b, 8, size // dst_bs) == data


def test_offset_into_rod_skips_that_many_blocks(lun):
    data = fill(lun, 0, 64)
    copy(lun, make_token(lun.sg, [(0, 64)]), [(1000, 48)], offset=16)
    assert read(lun, 1000, 48) == data[16 * 512 :]
    assert token_info(lun.sg, 2).status == COPY_DONE  # the token used up


def test_offset_into_rod_counts_destination_blocks(make_lun):
    """SBC-4 5.51's example: 512-byte blocks in the token, 4096 written."""
    a, b = pair(make_lun, 512, 4096)
    data = fill(a, 0, 64)
    copy(b, make_token(a.sg, [(0, 64)]), [(10, 6)], offset=2)
    assert read(b, 10, 6) == data[2 * 4096 :]


@pytest.mark.over_fabrics("iscsi")
def test_several_ranges_each_side(make_lun):
    """The token's ranges one after another, laid over the destination's in
    their order, whatever the LBAs."""
    a, b = pair(make_lun)
    src = [(0, 10), (100, 20), (50, 34)]
    data = b"".join(fill(a, lba, n) for lba, n in src)
    dst = [(3000, 30), (1000, 4), (2000, 30)]
    copy(b, make_token(a.sg, src), dst)
    assert b"".join(read(b, lba, n) for lba, n in dst) == data


def test_token_longer_than_the_destination_leaves_the_rest_unused(lun):
    data = fill(lun, 0, 64)
    after = fill(lun, 1040, 8)
    copy(lun, make_token(lun.sg, [(0, 64)]), [(1000, 40)])
    assert read(lun, 1000, 48) == data[: 40 * 512] + after
    info = token_info(lun.sg, 2)
    assert (info.sa, info.status, info.transfer_count) == (
        SA_WRITE_USING_TOKEN,
        COPY_DONE_PARTIAL,
        40,
    )


@pytest.mark.over_fabrics("iscsi")
def test_token_shorter_than_the_destination_is_an_underrun(lun):
    data = fill(lun, 0, 40)
    beyond = fill(lun, 1040, 24)
    underrun(lun, make_token(lun.sg, [(0, 40)]), [(1000, 30), (1030, 34)], 40)
    assert read(lun, 1000, 64) == data + beyond


@pytest.mark.over_fabrics("iscsi")
def test_underrun_writes_whole_destination_blocks_only(make_lun):
    """4608 bytes of token fill one 4096-byte block; the next is left."""
    a, b = pair(make_lun, 512, 4096)
    data = fill(a, 0, 9)
    beyond = fill(b, 11, 1)
    underrun(b, make_token(a.sg, [(0, 9)]), [(10, 2)], 1)
    assert read(b, 10, 2) == data[:4096] + beyond


def test_a_token_is_used_as_often_as_wanted_reading_the_blocks_each_time(lun):
    """Access upon reference, where the admin sets it: the token names the
    blocks, not what they held when it was made."""
    lun.so.set_attribute("odx_point_in_time", 0)
    tok = make_token(lun.sg, [(0, 64)])
    for lba in (1000, 2000):
        now = fill(lun, 0, 64)
        copy(lun, tok, [(lba, 64)])
        assert read(lun, lba, 64) == now


def test_immed_is_accepted(lun):
    """The copy still ends before the status comes."""
    data = fill(lun, 0, 64)
    copy(lun, make_token(lun.sg, [(0, 64)]), [(1000, 64)], immed=True)
    assert read(lun, 1000, 64) == data
    assert token_info(lun.sg, 2).status == COPY_DONE


def test_zero_parameter_list_length_is_not_an_error(lun):
    """SBC-4 5.51.1: no data is transferred."""
    before = read(lun, 0, 64)
    expect_good(sg_io(lun.sg, cdb_write_using_token(2, 0)))
    assert read(lun, 0, 64) == before


@pytest.fixture
def sector_4k(make_lun, tmp_path):
    """A 512-byte LUN and, beside it, one of 4096-byte blocks on a loop
    device of 4096-byte sectors, which takes no I/O smaller than that."""
    a = make_lun(size=16 * MiB)
    image = tmp_path / "4kn.img"
    image.write_bytes(b"\x5a" * 4 * MiB)
    loop = sh("losetup", "--find", "--show", "--sector-size", "4096", str(image)).strip()
    so = VaaiStorageObject("odx4kn", path=loop)
    try:
        so.set_attribute("block_size", 4096)
        yield a, sg_of(export_beside(so, a))
    finally:
        unexport(so)
        so.delete()
        sh("losetup", "-d", loop)


def test_ranges_that_split_a_4096_byte_sector_are_refused(sector_4k):
    a, sg = sector_4k
    data = fill(a, 0, 8)
    before = expect_good(read_blocks(sg, 0, 4, 4096)).data
    # 3 and 5 blocks of 512 bytes: the second would start 1536 bytes into a sector
    res = write_using_token(sg, make_token(a.sg, [(0, 3), (100, 5)]), [(1, 1)], 2)
    assert field_pointer(expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_PARAMETER_LIST)) == (
        534,
        None,
    )
    assert expect_good(read_blocks(sg, 0, 4, 4096)).data == before
    # whole sectors copy
    expect_good(write_using_token(sg, make_token(a.sg, [(0, 8)]), [(1, 1)], 3))
    assert expect_good(read_blocks(sg, 1, 1, 4096)).data == data
