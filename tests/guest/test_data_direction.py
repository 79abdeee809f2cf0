"""The initiator announces the direction and length of a transfer; they
may contradict the CDB.

A command that carries data-out (COMPARE AND WRITE, WRITE SAME, UNMAP,
EXTENDED COPY) sent with its data going the other way, or with none: the
initiator announces the direction, and an announcement that contradicts
the CDB is refused with the sense LIO core gives a transfer of the wrong
length (a data CDB: INVALID FIELD IN COMMAND INFORMATION UNIT; a
parameter list: PARAMETER LIST LENGTH ERROR), and nothing changes.  A
WRITE SAME whose block never came must not be taken for zeros.

A command that returns data-in, sent with no buffer for it, gets GOOD with
nothing transferred, including those LIO core answers for us (REQUEST
SENSE, PERSISTENT RESERVE IN, REPORT TARGET PORT GROUPS answered LOGICAL
UNIT COMMUNICATION FAILURE before: found by the in-guest fuzzer)."""

import os
import struct

import pytest
from scsi import (
    ILLEGAL_REQUEST,
    cdb_compare_and_write,
    cdb_unmap,
    cdb_write_same16,
    cdb_xcopy,
    cscd_e4,
    expect_good,
    expect_sense,
    naa_of,
    read_blocks,
    seg_b2b,
    sg_io,
    unmap_list,
    write_blocks,
    xcopy_list,
)
from sense_codes import INVALID_FIELD_IN_COMMAND_IU, PARAMETER_LIST_LENGTH_ERROR


def commands(lun):
    """name -> (CDB, the data-out it should carry, the sense if it does not)."""
    bs = lun.block_size
    plist = xcopy_list([cscd_e4(naa_of(lun.sg), bs)], [seg_b2b(0, 0, 8, 0, 64)])
    return {
        "compare_and_write": (
            cdb_compare_and_write(0, 1),
            bytes(2 * bs),
            INVALID_FIELD_IN_COMMAND_IU,
        ),
        "write_same": (cdb_write_same16(0, 64), b"\x5a" * bs, INVALID_FIELD_IN_COMMAND_IU),
        "unmap": (cdb_unmap(24), unmap_list([(0, 64)]), PARAMETER_LIST_LENGTH_ERROR),
        "xcopy": (cdb_xcopy(len(plist)), plist, PARAMETER_LIST_LENGTH_ERROR),
    }


@pytest.mark.parametrize("name", ["compare_and_write", "write_same", "unmap", "xcopy"])
@pytest.mark.parametrize("way", ["data_in", "none"])
def test_data_out_sent_the_wrong_way_is_refused(lun, name, way):
    bs = lun.block_size
    data = os.urandom(128 * bs)
    expect_good(write_blocks(lun.sg, 0, data, bs))
    cdb, data_out, sense = commands(lun)[name]
    res = sg_io(lun.sg, cdb, data_in_len=len(data_out) if way == "data_in" else 0)
    expect_sense(res, ILLEGAL_REQUEST, *sense)
    assert expect_good(read_blocks(lun.sg, 0, 128, bs)).data == data


DATA_IN = {
    "request_sense": bytes([0x03, 0, 0, 0, 0x77, 0]),
    "persistent_reserve_in": struct.pack(">BB5xHB", 0x5E, 0x00, 1024, 0),
    "report_target_port_groups": struct.pack(">BB4xI2x", 0xA3, 0x0A, 1024),
    "inquiry": bytes([0x12, 0, 0, 0, 0xFF, 0]),
    "vpd_block_limits": bytes([0x12, 1, 0xB0, 0, 0xFF, 0]),
    "mode_sense": bytes([0x1A, 0, 0x3F, 0, 0xFF, 0]),
    "read_capacity16": struct.pack(">BBQIBB", 0x9E, 0x10, 0, 32, 0, 0),
    "get_lba_status": struct.pack(">BBQIBB", 0x9E, 0x12, 0, 64, 0, 0),
    "report_luns": struct.pack(">B5xI2x", 0xA0, 1024),
    "report_supported_opcodes": struct.pack(">BBxxxxIxx", 0xA3, 0x0C, 1024),
}


@pytest.mark.parametrize("name", sorted(DATA_IN))
def test_data_in_without_a_buffer_is_good(lun, name):
    expect_good(sg_io(lun.sg, DATA_IN[name]))
    expect_good(sg_io(lun.sg, bytes(6)))


@pytest.mark.parametrize("where", ["first", "last"])
def test_read_into_a_larger_buffer_moves_only_the_transfer(lun, where):
    """The initiator's buffer is a block and a half larger than READ asks
    for: the blocks asked for come back, nothing past them is read (at the
    last LBA that would run off the LUN), and the residual says so."""
    bs = lun.block_size
    lba = 0 if where == "first" else lun.last_lba - 1
    data = os.urandom(4 * bs)
    expect_good(write_blocks(lun.sg, max(0, lba - 2), data, bs))
    want = data[: 2 * bs] if where == "first" else data[2 * bs :]
    res = expect_good(
        sg_io(
            lun.sg, struct.pack(">BBQIBB", 0x88, 0, lba, 2, 0, 0), data_in_len=2 * bs + bs + bs // 2
        )
    )
    assert res.data == want
