"""READ CAPACITY (16) on both stores and both logical block sizes."""

import re

import pytest
from conftest import MiB, sh


@pytest.mark.parametrize("block_size", [512, 4096])
def test_read_capacity_16_reports_size_and_block_length(make_lun, block_size):
    lun = make_lun(size=96 * MiB, block_size=block_size)
    out = sh("sg_readcap", "-l", lun.disk)
    assert f"Logical block length={block_size} bytes" in out
    nblocks = 96 * MiB // block_size
    assert f"Last LBA={nblocks - 1} " in out
    assert f"Number of logical blocks={nblocks}" in out


def test_capacity_of_a_partial_last_block_is_rounded_down(make_lun):
    lun = make_lun(size=8 * MiB + 700)
    out = sh("sg_readcap", "-l", lun.disk)
    assert re.search(rf"Number of logical blocks={8 * MiB // 512 + 1}\b", out)
