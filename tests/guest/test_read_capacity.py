"""READ CAPACITY (16) on both stores and both logical block sizes."""

import re

import pytest

from conftest import MiB, sh


@pytest.mark.parametrize("block_size", [512, 4096])
def test_read_capacity_16_reports_size_and_block_length(make_lun, block_size):
    lun = make_lun(size=96 * MiB, block_size=block_size)
    out = sh("sg_readcap", "-l", lun.disk)
    assert "Logical block length=%d bytes" % block_size in out
    nblocks = 96 * MiB // block_size
    assert "Last LBA=%d " % (nblocks - 1) in out
    assert "Number of logical blocks=%d" % nblocks in out


def test_capacity_of_a_partial_last_block_is_rounded_down(make_lun):
    lun = make_lun(size=8 * MiB + 700)
    out = sh("sg_readcap", "-l", lun.disk)
    assert re.search(r"Number of logical blocks=%d\b" % (8 * MiB // 512 + 1), out)
