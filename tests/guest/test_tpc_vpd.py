"""How a host finds out the LUN offloads copies: the 3PC bit in standard
INQUIRY, the Third-party Copy VPD page (8Fh) and the Supported VPD Pages
list, all following emulate_3pc."""

import struct

import pytest
from conftest import MiB, sh
from scsi import ILLEGAL_REQUEST, cscd_e4, expect_good, expect_sense, naa_of, sg_io
from sense_codes import INVALID_COMMAND_OPERATION_CODE, INVALID_FIELD_IN_CDB


def inquiry(sg, page=None, alloc=255):
    cdb = struct.pack(">BBBHB", 0x12, 0 if page is None else 1, page or 0, alloc, 0)
    return sg_io(sg, cdb, data_in_len=alloc)


def tpc_descriptors(data):
    """{type: body} of a Third-party Copy VPD page."""
    assert data[1] == 0x8F
    end = 4 + struct.unpack(">H", data[2:4])[0]
    # (over FC the initiator reports no residual: the rest reads as zeros)
    assert end <= len(data) and not any(data[end:])
    out, pos = {}, 4
    while pos < end:
        dtype, dlen = struct.unpack(">HH", data[pos : pos + 4])
        assert (4 + dlen) % 4 == 0, f"descriptor 0x{dtype:04x} not padded"
        out[dtype] = data[pos + 4 : pos + 4 + dlen]
        pos += 4 + dlen
    assert pos == end
    return out


@pytest.mark.over_fabrics
@pytest.mark.parametrize("block_size", [512, 4096])
def test_third_party_copy_page(make_lun, block_size):
    lun = make_lun(block_size=block_size)
    d = tpc_descriptors(expect_good(inquiry(lun.sg, 0x8F, alloc=1024)).data)
    # Windows reads only the Block Device ROD Token Limits, and only first
    assert list(d) == [0x0000, 0x0001, 0x0004, 0x0008, 0x000C, 0x0106, 0x0108, 0x8001]
    cmds = d[0x0001]
    assert cmds[1 : 1 + cmds[0]] == bytes(
        [0x83, 3, 0x00, 0x10, 0x11, 0x84, 4, 0x00, 0x03, 0x04, 0x07]
    )
    assert struct.unpack(">HHII", d[0x0004][4:16]) == (32, 256, 32 * 32 + 256 * 28, 0)
    assert list(d[0x0008][1 : 1 + d[0x0008][0]]) == [0x02, 0xE4]
    assert struct.unpack(">H", d[0x000C][0:2])[0] == 0
    total, identified, max_seg = struct.unpack(">III", d[0x8001][0:12])
    assert (total, identified, max_seg) == (32, 32, 256 * MiB)
    assert 1 << d[0x8001][12] == block_size
    out = sh("sg_vpd", "-p", "tpc", lun.sg)
    assert "Extended copy" in out and "Maximum segment descriptor count: 256" in out
    for name in ("Populate token", "Write using token", "Receive ROD token information"):
        assert name in out, name


@pytest.mark.parametrize("block_size", [512, 4096])
def test_block_device_rod_token_limits(make_lun, block_size):
    lun = make_lun(block_size=block_size)
    d = tpc_descriptors(expect_good(inquiry(lun.sg, 0x8F, alloc=1024)).data)[0x0000]
    assert len(d) == 0x20
    max_ranges, max_timeout, default_timeout, max_blocks, optimal_blocks = struct.unpack(
        ">HIIQQ", d[6:32]
    )
    assert (max_ranges, max_timeout, default_timeout) == (64, 3600, 60)
    assert (max_blocks, optimal_blocks) == ((1 << 30) // block_size, 64 * MiB // block_size)
    out = sh("sg_vpd", "-p", "tpc", lun.sg).lower()
    for line in (
        "block device rod token limits",
        "maximum range descriptors: 64",
        "maximum inactivity timeout: 3600 seconds",
        "default inactivity timeout: 60 seconds",
    ):
        assert line in out, line


@pytest.mark.stores("file", "bdev", "xfs")
def test_rod_token_features_and_types(lun, store):
    """Every LUN takes each type we make; a persistent point-in-time token
    is made only where the store shares extents (docs/odx.md)."""
    d = tpc_descriptors(expect_good(inquiry(lun.sg, 0x8F, alloc=1024)).data)
    features = d[0x0106]
    assert features[0] & 0x0F == 0  # REMOTE TOKENS
    assert struct.unpack(">III", features[12:24]) == (1, 3600, 3600)
    assert struct.unpack(">H", features[42:44])[0] == 48
    block = features[44:92]
    assert block[0] == 0 and struct.unpack(">H", block[2:4])[0] == 0x2C
    assert struct.unpack(">HQQQQ", block[6:40]) == (1, 1 << 30, 64 * MiB, 64 * MiB, 64 * MiB)
    types = d[0x0108]
    assert struct.unpack(">H", types[2:4])[0] == 4 * 64
    got = [(struct.unpack(">I", types[i : i + 4])[0], types[i + 4]) for i in range(4, 260, 64)]
    assert got == [
        (0x00010000, 0x03),  # TOKEN_IN, TOKEN_OUT
        (0x00800001, 0x03),
        (0x00800002, 0x03 if store == "xfs" else 0x02),
        (0xFFFF0001, 0x02),
    ]
    out = sh("sg_vpd", "-p", "tpc", lun.sg).lower()
    for line in (
        "rod token features",
        "remote tokens: 0",
        "rod type: access upon reference",
        "change vulnerable",
        "persistent",
        "rod type: block device zero",
    ):
        assert line in out, line


def test_supported_pages_list_the_tpc_page_in_order(lun):
    d = expect_good(inquiry(lun.sg, 0x00)).data
    pages = list(d[4 : 4 + d[3]])
    assert pages == sorted(pages)
    assert {0x00, 0x80, 0x83, 0x8F, 0xB0, 0xB2} <= set(pages)
    for page in pages:
        expect_good(inquiry(lun.sg, page))


def test_3pc_bit_in_standard_inquiry(lun):
    assert expect_good(inquiry(lun.sg)).data[5] & 0x08


@pytest.mark.over_fabrics
def test_naa_in_device_identification_names_this_lun(make_lun):
    a, b = make_lun(), make_lun()
    assert naa_of(a.sg) != naa_of(b.sg)
    assert naa_of(a.sg)[0] >> 4 == 6 and len(naa_of(a.sg)) == 16
    assert cscd_e4(naa_of(a.sg), 512)[8:24] == naa_of(a.sg)


def test_3pc_off_hides_all_of_it(lun):
    lun.so.set_attribute("emulate_3pc", 0)
    try:
        assert not expect_good(inquiry(lun.sg)).data[5] & 0x08
        d = expect_good(inquiry(lun.sg, 0x00)).data
        assert 0x8F not in d[4 : 4 + d[3]]
        expect_sense(inquiry(lun.sg, 0x8F), ILLEGAL_REQUEST, *INVALID_FIELD_IN_CDB)
        expect_sense(
            sg_io(lun.sg, struct.pack(">BBB7xIBB", 0x84, 3, 0, 64, 0, 0), data_in_len=64),
            ILLEGAL_REQUEST,
            *INVALID_COMMAND_OPERATION_CODE,
        )
    finally:
        lun.so.set_attribute("emulate_3pc", 1)
    assert expect_good(inquiry(lun.sg)).data[5] & 0x08
