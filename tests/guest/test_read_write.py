"""READ/WRITE on both stores and block sizes: data read back and compared,
the edges of the LUN, and what must be refused."""

import hashlib
import os
import random

import pytest
from conftest import sh
from scsi import (
    ILLEGAL_REQUEST,
    cdb_read10,
    cdb_write10,
    cdb_write16,
    expect_good,
    expect_sense,
    read_blocks,
    sg_io,
    write_blocks,
)
from sense_codes import INVALID_FIELD_IN_COMMAND_IU, LBA_OUT_OF_RANGE

# also on a file on XFS: the direct I/O path
pytestmark = pytest.mark.stores("file", "bdev", "xfs")


@pytest.fixture(params=[512, 4096])
def bs_lun(request, make_lun):
    return make_lun(block_size=request.param)


def test_random_writes_read_back_identical(bs_lun):
    lun, bs = bs_lun, bs_lun.block_size
    rnd = random.Random(7)
    extents = [(0, 8), (lun.last_lba, 1)]
    extents += [(rnd.randrange(0, lun.nr_blocks - 64), rnd.randrange(1, 64)) for _ in range(24)]
    model = {}
    for lba, n in extents:
        data = os.urandom(n * bs)
        expect_good(write_blocks(lun.sg, lba, data, bs))
        for i in range(n):
            model[lba + i] = data[i * bs : (i + 1) * bs]
    for lba, block in sorted(model.items()):
        res = expect_good(read_blocks(lun.sg, lba, 1, bs))
        assert hashlib.sha256(res.data).digest() == hashlib.sha256(block).digest(), (
            f"block {lba} differs"
        )


def test_ten_byte_cdbs_round_trip(lun):
    data = os.urandom(16 * 512)
    expect_good(sg_io(lun.sg, cdb_write10(1000, 16), data_out=data))
    assert expect_good(sg_io(lun.sg, cdb_read10(1000, 16), data_in_len=len(data))).data == data


def test_block_layer_direct_io_round_trip(lun, tmp_path):
    src = tmp_path / "src"
    src.write_bytes(os.urandom(4 << 20))
    sh("dd", f"if={src}", f"of={lun.disk}", "bs=1M", "seek=5", "oflag=direct")
    back = tmp_path / "back"
    sh("dd", f"if={lun.disk}", f"of={back}", "bs=1M", "skip=5", "count=4", "iflag=direct")
    assert hashlib.sha256(back.read_bytes()).digest() == hashlib.sha256(src.read_bytes()).digest()


def test_write_past_the_end_is_refused_and_changes_nothing(bs_lun):
    lun, bs = bs_lun, bs_lun.block_size
    before = expect_good(read_blocks(lun.sg, lun.last_lba, 1, bs)).data
    res = write_blocks(lun.sg, lun.last_lba, os.urandom(2 * bs), bs)
    expect_sense(res, ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)
    assert expect_good(read_blocks(lun.sg, lun.last_lba, 1, bs)).data == before


def test_read_past_the_end_is_refused(lun):
    expect_sense(read_blocks(lun.sg, lun.nr_blocks, 1, 512), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)
    expect_sense(read_blocks(lun.sg, 2**63, 1, 512), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)


def test_zero_length_write_is_good_and_transfers_nothing(lun):
    before = expect_good(read_blocks(lun.sg, 0, 1, 512)).data
    expect_good(sg_io(lun.sg, cdb_write10(0, 0)))
    assert expect_good(read_blocks(lun.sg, 0, 1, 512)).data == before


def test_write_with_less_data_than_the_cdb_says_is_refused(lun):
    before = expect_good(read_blocks(lun.sg, 10, 2, 512)).data
    res = sg_io(lun.sg, cdb_write16(10, 2), data_out=os.urandom(512))
    # SAM-5/SPC-4: the data-out buffer disagrees with the CDB; LIO core
    # rejects such a WRITE before it reaches the backend.
    expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_COMMAND_IU)
    assert expect_good(read_blocks(lun.sg, 10, 2, 512)).data == before
