"""POPULATE TOKEN (83h/10h): the token a LUN makes for some of its blocks,
what its 512 bytes carry, which lists it takes, and how many tokens may
live at once (docs/odx.md)."""

import struct

import pytest
from conftest import MiB, fill, read
from scsi import (
    ILLEGAL_REQUEST,
    ROD_TOKEN_BODY,
    ROD_TYPE_AUR,
    ROD_TYPE_PIT_VULNERABLE,
    cdb_populate_token,
    cscd_e4,
    expect_good,
    expect_sense,
    make_token,
    naa_of,
    populate_token,
    sg_io,
    token_info,
    write_using_token,
)
from sense_codes import NO_ROOM_FOR_ROD_TOKEN

GiB = 1 << 30
MAX_TOKENS = 1024  # on the host
MAX_TOKENS_EACH = 256  # made by one initiator
LONGEST_TIMEOUT = 3600  # seconds of inactivity a token may have

# decided before any store is touched: the file store stands for both
pytestmark = pytest.mark.stores("file")


@pytest.mark.parametrize("block_size", [512, 4096])
def test_token_names_its_lun_block_size_and_bytes(make_lun, block_size):
    lun = make_lun(size=16 * MiB, block_size=block_size)
    tok = make_token(lun.sg, [(0, 8), (100, 24)])
    naa = naa_of(lun.sg)
    assert struct.unpack(">IxxH", tok[0:8]) == (ROD_TYPE_PIT_VULNERABLE, ROD_TOKEN_BODY)
    assert tok[16:48] == cscd_e4(naa, block_size)
    assert int.from_bytes(tok[48:64], "big") == 32 * block_size
    assert struct.unpack(">I", tok[96:100])[0] == block_size
    assert tok[128:148] == bytes([0x01, 0x03, 0x00, 0x10]) + naa


def test_each_token_is_new_and_each_works(lun):
    data = fill(lun, 0, 16)
    first, second = make_token(lun.sg, [(0, 16)]), make_token(lun.sg, [(0, 16)])
    assert first[8:16] != second[8:16]
    expect_good(write_using_token(lun.sg, first, [(1000, 16)], 2))
    expect_good(write_using_token(lun.sg, second, [(2000, 16)], 2))
    assert read(lun, 1000, 16) == read(lun, 2000, 16) == data


def test_last_lba_is_accepted(lun):
    last = fill(lun, lun.last_lba, 1)
    expect_good(write_using_token(lun.sg, make_token(lun.sg, [(lun.last_lba, 1)]), [(0, 1)], 2))
    assert read(lun, 0, 1) == last


def test_zero_block_range_is_not_an_error(lun):
    data = fill(lun, 0, 8) + fill(lun, 200, 8)
    tok = make_token(lun.sg, [(0, 8), (100, 0), (200, 8)])
    assert int.from_bytes(tok[48:64], "big") == 16 * 512
    expect_good(write_using_token(lun.sg, tok, [(1000, 16)], 2))
    assert read(lun, 1000, 16) == data


def test_sixty_four_ranges_on_each_side_stand_in_list_order(lun):
    data = fill(lun, 0, 640)
    src = [(10 * k, 1) for k in reversed(range(64))]
    dst = [(2000 + 2 * k, 1) for k in range(64)]
    expect_good(write_using_token(lun.sg, make_token(lun.sg, src), dst, 2))
    for (src_lba, _), (dst_lba, _) in zip(src, dst):
        assert read(lun, dst_lba, 1) == data[src_lba * 512 : (src_lba + 1) * 512], src_lba


def test_one_gib_in_all_is_accepted(make_lun):
    lun = make_lun(size=GiB + 4 * MiB)  # sparse: nothing of it is read
    n = GiB // 512
    expect_good(populate_token(lun.sg, [(0, n - 8), (n, 8)], 1))
    info = token_info(lun.sg, 1)
    assert info.transfer_count == n
    assert int.from_bytes(info.token[48:64], "big") == GiB


def test_immed_is_accepted(lun):
    expect_good(populate_token(lun.sg, [(0, 8)], 1, immed=True))
    assert token_info(lun.sg, 1).token is not None


@pytest.mark.parametrize(
    "asked, made", [(0, ROD_TYPE_PIT_VULNERABLE), (ROD_TYPE_AUR, ROD_TYPE_AUR)]
)
def test_rtv_with_the_type_we_make(lun, asked, made):
    """On this store (tmpfs: no shared extents) ours to choose is change
    vulnerable; test_odx_point_in_time.py has every store and type."""
    tok = make_token(lun.sg, [(0, 8)], rtv=True, rod_type=asked)
    assert struct.unpack(">I", tok[0:4])[0] == made


def test_longest_inactivity_timeout_is_accepted(lun):
    make_token(lun.sg, [(0, 8)], timeout=LONGEST_TIMEOUT)


def test_zero_parameter_list_length_is_not_an_error(lun):
    """SBC-4 5.9.1: no data is transferred, no token made."""
    expect_good(sg_io(lun.sg, cdb_populate_token(1, 0)))


def test_read_only_lun_makes_tokens(make_lun):
    ro = make_lun(size=16 * MiB, readonly=True, fill=b"\x5a" * MiB)
    rw = make_lun(size=16 * MiB, beside=ro)
    expect_good(write_using_token(rw.sg, make_token(ro.sg, [(0, 64)]), [(100, 64)], 2))
    assert read(rw, 100, 64) == b"\x5a" * 64 * 512


def make_tokens(lun, n):
    """n tokens that outlive the test: none expires while a slow guest
    makes the rest."""
    for i in range(n):
        expect_good(populate_token(lun.sg, [(8 * (i % 64), 8)], 2, timeout=LONGEST_TIMEOUT))


def test_an_initiator_holds_at_most_256_tokens_and_others_still_make_theirs(make_lun):
    """Over tcm_loop, a LUN made on its own is seen by a nexus of its own,
    with an initiator name of its own; one made beside it, by the same."""
    lun = make_lun()
    same = make_lun(beside=lun)
    other = make_lun(own_nexus=True)
    first = make_token(lun.sg, [(0, 8)], timeout=LONGEST_TIMEOUT)
    make_tokens(lun, MAX_TOKENS_EACH - 1)
    expect_sense(populate_token(lun.sg, [(0, 8)], 2), ILLEGAL_REQUEST, *NO_ROOM_FOR_ROD_TOKEN)
    expect_sense(populate_token(same.sg, [(0, 8)], 2), ILLEGAL_REQUEST, *NO_ROOM_FOR_ROD_TOKEN)
    expect_good(populate_token(other.sg, [(0, 8)], 2))
    # deleting one makes room for one more, and no more
    expect_good(write_using_token(lun.sg, first, [(1000, 8)], 3, del_tkn=True))
    expect_good(populate_token(same.sg, [(0, 8)], 2))
    expect_sense(populate_token(lun.sg, [(0, 8)], 2), ILLEGAL_REQUEST, *NO_ROOM_FOR_ROD_TOKEN)


def test_tokens_beyond_1024_on_the_host_are_insufficient_resources(make_lun):
    """Every token of this host is this test's: the LUNs of earlier tests,
    and their tokens, are gone.  Four initiators hold 256 each; a fifth gets
    none until one is deleted."""
    luns = [make_lun(own_nexus=True) for _ in range(MAX_TOKENS // MAX_TOKENS_EACH)]
    fifth = make_lun(own_nexus=True)
    first = make_token(luns[0].sg, [(0, 8)], timeout=LONGEST_TIMEOUT)
    make_tokens(luns[0], MAX_TOKENS_EACH - 1)
    for lun in luns[1:]:
        make_tokens(lun, MAX_TOKENS_EACH)
    expect_sense(populate_token(fifth.sg, [(0, 8)], 2), ILLEGAL_REQUEST, *NO_ROOM_FOR_ROD_TOKEN)
    expect_good(write_using_token(luns[0].sg, first, [(1000, 8)], 3, del_tkn=True))
    expect_good(populate_token(fifth.sg, [(0, 8)], 2))
