"""WRITE USING TOKEN with the block device zero ROD token (FFFF0001h):
no POPULATE TOKEN, the ranges zeroed as WRITE SAME zeroes them, counted as
zeroing (docs/odx.md)."""

import os

import pytest
from conftest import MiB, fill, read
from scsi import (
    COPY_DONE,
    DATA_PROTECT,
    SA_WRITE_USING_TOKEN,
    expect_good,
    expect_sense,
    token_info,
    write_using_token,
    zero_token,
)
from sense_codes import WRITE_PROTECTED
from thin import allocated, stat

# over_fabrics("iscsi"): the copy itself never crosses the fabric, and FC
# carries parameter lists and sense for EXTENDED COPY's suites already


def zero(lun, ranges, token=None, list_id=3):
    expect_good(write_using_token(lun.sg, token or zero_token(), ranges, list_id))


@pytest.mark.over_fabrics("iscsi")
@pytest.mark.parametrize("block_size", [512, 4096])
def test_zero_token_zeroes_the_ranges_and_counts_as_zeroing(make_lun, block_size):
    lun = make_lun(size=16 * MiB, block_size=block_size)
    data = fill(lun, 0, 300)
    zeros, blocks = stat(lun, "zero"), stat(lun, "zero_blocks")
    zero(lun, [(200, 50), (10, 20)])
    back = read(lun, 0, 300)
    bs = block_size
    assert back[10 * bs : 30 * bs] == bytes(20 * bs)
    assert back[200 * bs : 250 * bs] == bytes(50 * bs)
    assert (
        back[: 10 * bs] + back[30 * bs : 200 * bs] + back[250 * bs :]
        == data[: 10 * bs] + data[30 * bs : 200 * bs] + data[250 * bs :]
    )
    assert (stat(lun, "zero"), stat(lun, "zero_blocks")) == (zeros + 1, blocks + 70)


def test_zeroed_blocks_are_deallocated_on_a_thin_lun(lun):
    fill(lun, 0, 4096)
    full = allocated(lun.backing.image)
    zero(lun, [(2048, 2048)])
    assert read(lun, 2048, 2048) == bytes(MiB)
    assert allocated(lun.backing.image) <= full - MiB + 2 * 4096


def test_rest_of_the_zero_token_is_ignored(lun):
    fill(lun, 0, 64)
    zero(lun, [(0, 64)], token=zero_token()[:8] + os.urandom(504))
    assert read(lun, 0, 64) == bytes(64 * 512)


def test_report_after_zeroing(lun):
    zero(lun, [(0, 64), (100, 36)])
    info = token_info(lun.sg, 3)
    assert (info.sa, info.status, info.transfer_count, info.token) == (
        SA_WRITE_USING_TOKEN,
        COPY_DONE,
        100,
        None,
    )


def test_read_only_lun_is_write_protected(make_lun):
    ro = make_lun(size=16 * MiB, readonly=True, fill=b"\x5a" * MiB)
    expect_sense(
        write_using_token(ro.sg, zero_token(), [(0, 64)], 3), DATA_PROTECT, *WRITE_PROTECTED
    )
    assert read(ro, 0, 64) == b"\x5a" * 64 * 512
    assert stat(ro, "zero") == 0
