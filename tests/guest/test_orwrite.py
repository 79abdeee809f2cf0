"""ORWRITE (16): each block becomes the OR of the medium and the data sent,
read back and compared; across the backend's 1 MiB chunks; concurrent
ORWRITEs to the same blocks lose no bit (they run under the range lock
COMPARE AND WRITE takes); every refusal leaves the medium as it was."""

import os
import struct
import threading

import pytest
from conftest import MiB, read
from scsi import DATA_PROTECT, ILLEGAL_REQUEST, expect_good, expect_sense, sg_io, write_blocks
from sense_codes import INVALID_FIELD_IN_CDB, LBA_OUT_OF_RANGE, WRITE_PROTECTED

pytestmark = pytest.mark.stores("file", "bdev", "xfs")

DPO, FUA = 0x10, 0x08


def cdb_orwrite(lba, nblocks, flags=0):
    return struct.pack(">BBQIBB", 0x8B, flags, lba, nblocks, 0, 0)


def orwrite(lun, lba, data, flags=0):
    return sg_io(lun.sg, cdb_orwrite(lba, len(data) // lun.block_size, flags), data_out=data)


def ored(a, b):
    return (int.from_bytes(a, "big") | int.from_bytes(b, "big")).to_bytes(len(a), "big")


@pytest.mark.parametrize("block_size", [512, 4096])
def test_or_of_medium_and_data(make_lun, block_size):
    lun = make_lun(block_size=block_size)
    n = 16
    expect_good(write_blocks(lun.sg, 10, bytes(n * block_size), block_size))
    expect_good(orwrite(lun, 10, b"\xa5" * (n * block_size)))
    assert read(lun, 10, n) == b"\xa5" * (n * block_size)
    expect_good(orwrite(lun, 10, b"\x5a" * (n * block_size)))
    assert read(lun, 10, n) == b"\xff" * (n * block_size)
    # the blocks around are untouched
    assert read(lun, 9, 1) == bytes(block_size)
    assert read(lun, 10 + n, 1) == bytes(block_size)


def test_across_chunks_at_the_last_block(make_lun, over_iscsi):
    """3 MiB and a block in one command, ending at the last LBA: four of the
    backend's 1 MiB chunks.  Over iSCSI: tcm_loop carries at most 1 MiB."""
    lun = make_lun()
    sg = over_iscsi(lun)
    n = 3 * MiB // 512 + 1
    lba = lun.last_lba - n + 1
    old, new = os.urandom(n * 512), os.urandom(n * 512)
    for off in range(0, len(old), MiB):
        chunk = old[off : off + MiB]
        expect_good(write_blocks(lun.sg, lba + off // 512, chunk, 512))
    expect_good(sg_io(sg, cdb_orwrite(lba, n), data_out=new))
    got = b"".join(read(lun, lba + k, min(2048, n - k)) for k in range(0, n, 2048))
    assert got == ored(old, new)


def test_concurrent_orwrites_lose_no_bit(make_lun):
    """Eight threads each OR their own bit into the same 256 blocks, twenty
    times over: every byte ends 0xFF only if no read-OR-write interleaved."""
    lun = make_lun()
    nblocks = 256
    expect_good(write_blocks(lun.sg, 0, bytes(nblocks * 512), 512))
    errors = []

    def worker(bit):
        data = bytes([1 << bit]) * (nblocks * 512)
        for _ in range(20):
            res = orwrite(lun, 0, data)
            if res.status != 0:
                errors.append(str(res))

    threads = [threading.Thread(target=worker, args=(b,)) for b in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert read(lun, 0, nblocks) == b"\xff" * (nblocks * 512)


def test_zero_blocks_writes_nothing(lun):
    data = os.urandom(512)
    expect_good(write_blocks(lun.sg, lun.last_lba, data, 512))
    expect_good(sg_io(lun.sg, cdb_orwrite(lun.last_lba, 0)))
    assert read(lun, lun.last_lba, 1) == data
    expect_sense(sg_io(lun.sg, cdb_orwrite(lun.nr_blocks, 0)), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)


def test_refusals_change_nothing(lun):
    old = os.urandom(4 * 512)
    expect_good(write_blocks(lun.sg, 0, old, 512))
    ones = b"\xff" * (4 * 512)
    lun.so.set_attribute("emulate_write_cache", 0)  # DPOFUA 0
    for flags in (0x20, 0x40, 0xE0, DPO, FUA, DPO | FUA):
        expect_sense(orwrite(lun, 0, ones, flags), ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)
    for lba in (lun.last_lba - 2, 2**64 - 1, 2**63):
        expect_sense(orwrite(lun, lba, ones), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)
    assert read(lun, 0, 4) == old
    assert read(lun, lun.last_lba - 2, 3) == bytes(3 * 512)


def test_dpo_fua_with_the_write_cache_on(lun):
    lun.so.set_attribute("emulate_write_cache", 1)
    expect_good(write_blocks(lun.sg, 0, bytes(512), 512))
    expect_good(orwrite(lun, 0, b"\x0f" * 512, DPO | FUA))
    assert read(lun, 0, 1) == b"\x0f" * 512


def test_read_only_lun(make_lun):
    data = os.urandom(64 * 1024)
    lun = make_lun(readonly=True, fill=data)
    expect_sense(orwrite(lun, 0, b"\xff" * 512), DATA_PROTECT, *WRITE_PROTECTED)
    assert read(lun, 0, 1) == data[:512]
