"""SCSI commands sent straight through SG_IO, and their sense decoded.

sg3_utils print sense as text; the tests need the bytes, so this module
sends CDBs itself and returns status, sense and data.
"""

import os
import struct
from dataclasses import dataclass

from vaai import sgio

GOOD, CHECK_CONDITION, RESERVATION_CONFLICT = 0x00, 0x02, 0x18
# SPC-4 table 28: sense keys
NO_SENSE, NOT_READY, MEDIUM_ERROR, HARDWARE_ERROR = 0x0, 0x2, 0x3, 0x4
ILLEGAL_REQUEST, UNIT_ATTENTION, DATA_PROTECT = 0x5, 0x6, 0x7
COPY_ABORTED, ABORTED_COMMAND, MISCOMPARE = 0xA, 0xB, 0xE


@dataclass
class Sense:
    key: int
    asc: int
    ascq: int
    info: int = None  # INFORMATION, when VALID (fixed) or present (descriptor)
    sks: bytes = b""  # sense-key specific bytes, when SKSV is set
    csi: int = None  # COMMAND-SPECIFIC INFORMATION (fixed: always there)

    def __str__(self):
        return f"key=0x{self.key:x} asc=0x{self.asc:02x} ascq=0x{self.ascq:02x} info={self.info}"


@dataclass
class Result:
    status: int
    sense: bytes
    data: bytes
    host_status: int = 0
    driver_status: int = 0

    def decoded(self):
        return decode_sense(self.sense)

    def __str__(self):
        s = f"status=0x{self.status:02x}"
        if self.sense:
            s += f" sense({self.decoded()}) raw={self.sense.hex()}"
        return s


def decode_sense(b):
    """Fixed (0x70/0x71) or descriptor (0x72/0x73) format sense data."""
    if not b:
        return None
    code = b[0] & 0x7F
    if code in (0x70, 0x71):
        info = struct.unpack(">I", b[3:7])[0] if b[0] & 0x80 else None
        sks = bytes(b[15:18]) if len(b) >= 18 and b[15] & 0x80 else b""
        csi = struct.unpack(">I", b[8:12])[0] if len(b) >= 12 else None
        return Sense(
            b[2] & 0xF, b[12] if len(b) > 12 else 0, b[13] if len(b) > 13 else 0, info, sks, csi
        )
    if code in (0x72, 0x73):
        s = Sense(b[1] & 0xF, b[2], b[3])
        pos, end = 8, 8 + b[7]
        while pos + 2 <= min(end, len(b)):
            dtype, dlen = b[pos], b[pos + 1]
            if dtype == 0x00 and dlen >= 0x0A:
                s.info = struct.unpack(">Q", b[pos + 4 : pos + 12])[0]
            elif dtype == 0x01 and dlen >= 0x0A:
                s.csi = struct.unpack(">Q", b[pos + 4 : pos + 12])[0]
            elif dtype == 0x02 and dlen >= 6 and b[pos + 4] & 0x80:
                s.sks = bytes(b[pos + 4 : pos + 7])
            pos += 2 + dlen
        return s
    raise AssertionError(f"unknown sense response code 0x{code:02x}: {b.hex()}")


def sg_io(dev, cdb, data_out=None, data_in_len=0, timeout_ms=60000, page_offset=None):
    """dev: a /dev/sgN or /dev/sdX path, or an object that sends the command
    itself (the power-cut harness's iSCSI session on the host)."""
    send = getattr(dev, "sg_io", None)
    if send is None:
        return Result(*sgio.sg_io(dev, cdb, data_out, data_in_len, timeout_ms, page_offset))
    return Result(*send(cdb, data_out, data_in_len, timeout_ms, page_offset))


def expect_good(res):
    assert res.host_status == 0, f"transport error: {res}"
    assert res.status == GOOD, f"expected GOOD, got {res}"
    return res


def expect_sense(res, key, asc, ascq):
    """CHECK CONDITION with exactly this sense key and ASC/ASCQ."""
    assert res.status == CHECK_CONDITION, f"expected CHECK CONDITION, got {res}"
    s = res.decoded()
    assert (s.key, s.asc, s.ascq) == (key, asc, ascq), (
        f"expected key=0x{key:x} asc=0x{asc:02x} ascq=0x{ascq:02x}, got {res}"
    )
    return s


# --- CDB builders (SBC-4) -------------------------------------------------


def cdb_read16(lba, nblocks, fua=False):
    return struct.pack(">BBQIBB", 0x88, 0x08 if fua else 0, lba, nblocks, 0, 0)


def cdb_write16(lba, nblocks, fua=False):
    return struct.pack(">BBQIBB", 0x8A, 0x08 if fua else 0, lba, nblocks, 0, 0)


def cdb_read10(lba, nblocks):
    return struct.pack(">BBIBHB", 0x28, 0, lba, 0, nblocks, 0)


def cdb_write10(lba, nblocks, fua=False):
    return struct.pack(">BBIBHB", 0x2A, 0x08 if fua else 0, lba, 0, nblocks, 0)


def cdb_sync_cache10(lba=0, nblocks=0):
    return struct.pack(">BBIBHB", 0x35, 0, lba, 0, nblocks, 0)


def cdb_read_capacity16(alloc_len=32):
    return struct.pack(">BBQIBB", 0x9E, 0x10, 0, alloc_len, 0, 0)


def read_capacity16(dev):
    """READ CAPACITY (16); the reply's RETURNED LOGICAL BLOCK ADDRESS is
    the last LBA (SBC-4 5.20.2)."""
    return sg_io(dev, cdb_read_capacity16(), data_in_len=32)


def last_lba(res):
    return struct.unpack(">Q", expect_good(res).data[:8])[0]


# tcm_loop takes 256 scatter-gather entries: one SG_IO moves at most 1 MiB of
# page-sized user memory.  Larger reads and writes are split.
SG_IO_MAX = 1 << 20


def sg_io_max(dev):
    """The most one SG_IO moves on dev: SG_IO_MAX, or less where the
    block device's queue takes fewer pages or bytes (an FCoE host takes
    128 pages, a multipath device what its paths take; a buffer that
    does not start a page spans one more)."""
    queue = f"/sys/block/{os.path.basename(os.path.realpath(dev))}/queue"
    try:
        with open(f"{queue}/max_segments") as f:
            pages = int(f.read())
        with open(f"{queue}/max_hw_sectors_kb") as f:
            kib = int(f.read())
    except FileNotFoundError:  # a /dev/sgN
        return SG_IO_MAX
    return min(SG_IO_MAX, (pages - 1) * 4096, kib << 10)


def read_blocks(dev, lba, nblocks, block_size):
    step = max(sg_io_max(dev) // block_size, 1)
    parts = []
    for first in range(lba, lba + max(nblocks, 1), step):
        n = min(step, lba + nblocks - first)
        res = sg_io(dev, cdb_read16(first, n), data_in_len=n * block_size)
        if res.status != GOOD or res.host_status:
            return res
        parts.append(res.data)
    res.data = b"".join(parts)
    return res


def write_blocks(dev, lba, data, block_size, fua=False):
    assert len(data) % block_size == 0
    step = max(sg_io_max(dev) // block_size, 1) * block_size
    for off in range(0, max(len(data), 1), step):
        chunk = data[off : off + step]
        res = sg_io(
            dev, cdb_write16(lba + off // block_size, len(chunk) // block_size, fua), data_out=chunk
        )
        if res.status != GOOD or res.host_status:
            return res
    return res


def clear_unit_attention(dev, tries=5):
    """TEST UNIT READY until no unit attention is pending (SAM-5 5.14)."""
    for _ in range(tries):
        res = sg_io(dev, bytes(6))
        if res.status == GOOD:
            return
        assert res.decoded().key == UNIT_ATTENTION, f"TEST UNIT READY: {res}"
    raise AssertionError(f"unit attention did not clear after {tries} tries")


def cdb_write_same16(lba, nblocks, unmap=False, ndob=False, anchor=False, flags=0):
    b1 = flags | (0x08 if unmap else 0) | (0x01 if ndob else 0) | (0x10 if anchor else 0)
    return struct.pack(">BBQIBB", 0x93, b1, lba, nblocks, 0, 0)


def cdb_write_same10(lba, nblocks, unmap=False, flags=0):
    return struct.pack(">BBIBHB", 0x41, flags | (0x08 if unmap else 0), lba, 0, nblocks, 0)


def unmap_list(extents, data_len=None, bd_len=None):
    """UNMAP parameter list (SBC-4 5.32.2) for [(lba, nblocks), ...]."""
    descs = b"".join(struct.pack(">QI4x", lba, n) for lba, n in extents)
    bd_len = len(descs) if bd_len is None else bd_len
    data_len = 6 + len(descs) if data_len is None else data_len
    return struct.pack(">HH4x", data_len, bd_len) + descs


def cdb_unmap(param_len, anchor=False):
    return struct.pack(">BBxxxxxHB", 0x42, 0x01 if anchor else 0, param_len, 0)


def unmap(dev, extents, **kw):
    data = unmap_list(extents, **kw)
    return sg_io(dev, cdb_unmap(len(data)), data_out=data)


def cdb_get_lba_status(lba, alloc_len):
    return struct.pack(">BBQIBB", 0x9E, 0x12, lba, alloc_len, 0, 0)


def get_lba_status(dev, lba, alloc_len=4096):
    """[(lba, nblocks, provisioning_status), ...] and the raw result."""
    res = sg_io(dev, cdb_get_lba_status(lba, alloc_len), data_in_len=alloc_len)
    if res.status != GOOD:
        return None, res
    d = res.data
    n = (struct.unpack(">I", d[0:4])[0] - 4) // 16
    out = [struct.unpack(">QIB", d[8 + 16 * i : 8 + 16 * i + 13]) for i in range(n)]
    return [(lba_, nb, st & 0x0F) for lba_, nb, st in out], res


def cdb_compare_and_write(lba, nblocks, flags=0):
    return struct.pack(">BBQ3xBBB", 0x89, flags, lba, nblocks, 0, 0)


def compare_and_write(dev, lba, verify, write, block_size, flags=0):
    assert len(verify) == len(write) and len(verify) % block_size == 0
    return sg_io(
        dev, cdb_compare_and_write(lba, len(verify) // block_size, flags), data_out=verify + write
    )


# --- Third-party copy (SPC-4 6.4, 6.18) -----------------------------------

XCOPY_NO_LIST_ID = 3  # LIST ID USAGE 11b: no list identifier, nothing held


def designators(dev):
    """Every designator of the Device Identification VPD page (SPC-4
    7.8.6) as {(association, designator type): bytes}."""
    res = expect_good(sg_io(dev, struct.pack(">BBBHB", 0x12, 1, 0x83, 1024, 0), data_in_len=1024))
    d = res.data
    out = {}
    pos, end = 4, 4 + struct.unpack(">H", d[2:4])[0]
    while pos + 4 <= end:
        assoc_type, length = d[pos + 1], d[pos + 3]
        out.setdefault(
            ((assoc_type >> 4) & 3, assoc_type & 0xF), bytes(d[pos + 4 : pos + 4 + length])
        )
        pos += 4 + length
    return out


def naa_of(dev):
    """The LU's NAA designator from the Device Identification VPD page."""
    naa = designators(dev).get((0, 3))  # association LU, designator type NAA
    assert naa is not None, f"no NAA designator in VPD 0x83 of {dev}"
    return naa


def attentions(dev):
    """READ one block until no unit attention is pending: the attentions'
    (ASC, ASCQ) and the result that followed them."""
    seen = []
    for _ in range(8):
        res = sg_io(dev, cdb_read10(0, 1), data_in_len=512)
        s = res.decoded()
        if s is None or s.key != UNIT_ATTENTION:
            return seen, res
        seen.append((s.asc, s.ascq))
    raise AssertionError(f"unit attentions do not end: {seen}")


def report_target_port_groups(dev, alloc_len=1024):
    """REPORT TARGET PORT GROUPS (SPC-4 6.36), the length-only format:
    [{state, pref, supported, id, status, ports: [rtpi...]}], as sent."""
    cdb = struct.pack(">BBIIBB", 0xA3, 0x0A, 0, alloc_len, 0, 0)
    d = expect_good(sg_io(dev, cdb, data_in_len=alloc_len)).data
    end = 4 + struct.unpack(">I", d[:4])[0]
    groups, pos = [], 4
    while pos + 8 <= end:
        count = d[pos + 7]
        groups.append(
            {
                "pref": d[pos] >> 7,
                "state": d[pos] & 0xF,
                "supported": d[pos + 1],
                "id": struct.unpack(">H", d[pos + 2 : pos + 4])[0],
                "status": d[pos + 5],
                "ports": [
                    struct.unpack(">H", d[q + 2 : q + 4])[0]
                    for q in range(pos + 8, pos + 8 + 4 * count, 4)
                ],
            }
        )
        pos += 8 + 4 * count
    assert pos == end, f"RTPG: descriptors do not add up to the length: {d[:end].hex()}"
    return groups


def cscd_e4(naa, block_size, pdt=0, code=0xE4):
    """Identification CSCD descriptor (SPC-4 6.4.5.2), 32 bytes."""
    d = bytearray(32)
    d[0], d[1] = code, pdt
    d[4], d[5], d[7] = 0x01, 0x03, len(naa)  # binary, LU, NAA
    d[8 : 8 + len(naa)] = naa
    d[29:32] = block_size.to_bytes(3, "big")
    return bytes(d)


def seg_b2b(src, dst, nblocks, src_lba, dst_lba, dc=False, cat=False, code=0x02, length=0x18):
    """Block device to block device segment descriptor (SPC-4 6.4.6.5)."""
    return struct.pack(
        ">BBHHHHHQQ",
        code,
        (0x02 if dc else 0) | (0x01 if cat else 0),
        length,
        src,
        dst,
        0,
        nblocks,
        src_lba,
        dst_lba,
    )


def xcopy_list(
    cscds,
    segs,
    list_id=0,
    usage=XCOPY_NO_LIST_ID,
    inline=b"",
    cscd_len=None,
    seg_len=None,
    inline_len=None,
):
    """EXTENDED COPY (LID1) parameter list; the lengths may be overridden."""
    c, s = b"".join(cscds), b"".join(segs)
    return (
        struct.pack(
            ">BBH4xII",
            list_id,
            (usage & 3) << 3,
            len(c) if cscd_len is None else cscd_len,
            len(s) if seg_len is None else seg_len,
            len(inline) if inline_len is None else inline_len,
        )
        + c
        + s
        + inline
    )


def cdb_xcopy(param_len, sa=0x00):
    return struct.pack(">BB8xIBB", 0x83, sa, param_len, 0, 0)


def xcopy(dev, params, timeout_ms=120000):
    return sg_io(dev, cdb_xcopy(len(params)), data_out=params, timeout_ms=timeout_ms)


def cdb_receive_copy_results(sa, list_id, alloc_len):
    return struct.pack(">BBB7xIBB", 0x84, sa, list_id, alloc_len, 0, 0)


def receive_copy_results(dev, sa, list_id=0, alloc_len=1024):
    return sg_io(dev, cdb_receive_copy_results(sa, list_id, alloc_len), data_in_len=alloc_len)


def field_pointer(sense):
    """(byte, bit or None) of a parameter-list field pointer (C/D = 0)."""
    assert sense.sks and sense.sks[0] & 0x80, f"no field pointer: {sense}"
    assert not sense.sks[0] & 0x40, f"field pointer names the CDB: {sense}"
    bit = sense.sks[0] & 0x7 if sense.sks[0] & 0x08 else None
    return struct.unpack(">H", sense.sks[1:3])[0], bit


# --- Token copy, ODX (SBC-4 5.9, 5.51; SPC-4 6.19) ------------------------

SA_POPULATE_TOKEN, SA_WRITE_USING_TOKEN, SA_RRTI = 0x10, 0x11, 0x07
ROD_TYPE_AUR, ROD_TYPE_ZERO = 0x00010000, 0xFFFF0001  # access upon reference; zero
# point in time: default, change vulnerable, persistent, any (SPC-4 table 117)
ROD_TYPE_PIT_DEFAULT, ROD_TYPE_PIT_VULNERABLE = 0x00800000, 0x00800001
ROD_TYPE_PIT_PERSISTENT, ROD_TYPE_PIT_ANY = 0x00800002, 0x0080FFFF
ROD_TOKEN_LEN = 512
ROD_TOKEN_BODY = 0x01F8  # ROD TOKEN LENGTH: the bytes after it
PT_HDR, WUT_HDR = 16, 536  # list headers; range descriptors follow
RANGE_LEN = 16  # one block device range descriptor
# COPY OPERATION STATUS of RECEIVE ROD TOKEN INFORMATION
COPY_DONE, COPY_FAILED, COPY_DONE_PARTIAL = 0x01, 0x02, 0x03


def odx_ranges(ranges):
    """Block device range descriptors (SBC-4 5.9.3) for [(lba, nblocks), ...]."""
    return b"".join(struct.pack(">QI4x", lba, n) for lba, n in ranges)


def _cdb_token_out(sa, list_id, param_len):
    return struct.pack(">BB4xIIBB", 0x83, sa, list_id, param_len, 0, 0)


def cdb_populate_token(list_id, param_len):
    return _cdb_token_out(SA_POPULATE_TOKEN, list_id, param_len)


def cdb_write_using_token(list_id, param_len):
    return _cdb_token_out(SA_WRITE_USING_TOKEN, list_id, param_len)


def _flags(**bits):
    """Byte 2 of either list: IMMED is bit 0; RTV or DEL_TKN bit 1."""
    return (0x01 if bits.pop("immed") else 0) | (0x02 if any(bits.values()) else 0)


def populate_token_list(
    ranges, timeout=0, rtv=False, rod_type=0, immed=False, data_len=None, rdl=None
):
    """POPULATE TOKEN parameter list; the two lengths may be overridden."""
    d = odx_ranges(ranges)
    return (
        struct.pack(
            ">HBxIIxxH",
            PT_HDR - 2 + len(d) if data_len is None else data_len,
            _flags(immed=immed, rtv=rtv),
            timeout,
            rod_type,
            len(d) if rdl is None else rdl,
        )
        + d
    )


def wut_list(token, ranges, offset=0, del_tkn=False, immed=False, data_len=None, rdl=None):
    """WRITE USING TOKEN parameter list; the two lengths may be overridden."""
    assert len(token) == ROD_TOKEN_LEN
    d = odx_ranges(ranges)
    return (
        struct.pack(
            ">HB5xQ",
            WUT_HDR - 2 + len(d) if data_len is None else data_len,
            _flags(immed=immed, del_tkn=del_tkn),
            offset,
        )
        + bytes(token)
        + struct.pack(">6xH", len(d) if rdl is None else rdl)
        + d
    )


def zero_token():
    """The block device zero ROD token (SBC-4 4.28.4)."""
    return struct.pack(">IHH", ROD_TYPE_ZERO, 0, ROD_TOKEN_BODY) + bytes(ROD_TOKEN_LEN - 8)


def populate_token(dev, ranges, list_id, timeout_ms=60000, **kw):
    params = populate_token_list(ranges, **kw)
    return sg_io(
        dev, cdb_populate_token(list_id, len(params)), data_out=params, timeout_ms=timeout_ms
    )


def write_using_token(dev, token, ranges, list_id, timeout_ms=120000, **kw):
    params = wut_list(token, ranges, **kw)
    return sg_io(
        dev, cdb_write_using_token(list_id, len(params)), data_out=params, timeout_ms=timeout_ms
    )


def cdb_rrti(list_id, alloc_len):
    return struct.pack(">BBI4xIxB", 0x84, SA_RRTI, list_id, alloc_len, 0)


def rrti(dev, list_id, alloc_len=1024):
    """RECEIVE ROD TOKEN INFORMATION: the raw result."""
    return sg_io(dev, cdb_rrti(list_id, alloc_len), data_in_len=alloc_len)


@dataclass
class RodTokenInfo:
    sa: int  # RESPONSE TO SERVICE ACTION
    status: int  # COPY OPERATION STATUS
    delay: int  # ESTIMATED STATUS UPDATE DELAY
    scsi_status: int  # of the command reported on
    sense: bytes
    units: int  # TRANSFER COUNT UNITS
    transfer_count: int
    descriptors_len: int  # ROD TOKEN DESCRIPTORS LENGTH
    token: bytes = None  # after a POPULATE TOKEN
    raw: bytes = b""


def parse_rrti(d):
    """A whole RECEIVE ROD TOKEN INFORMATION answer (SPC-4 6.19.2).  Lengths
    come from the answer's own header (over FC the rest reads as zeros)."""
    end = 4 + struct.unpack(">I", d[0:4])[0]
    assert end <= len(d), f"AVAILABLE DATA {end - 4} past the {len(d)} bytes received"
    field_len, sense_len = d[13], d[14]
    assert sense_len <= field_len
    off = 32 + field_len
    rtdl = struct.unpack(">I", d[off : off + 4])[0]
    assert off + 4 + rtdl == end, f"ROD TOKEN DESCRIPTORS LENGTH {rtdl}, AVAILABLE DATA {end - 4}"
    assert d[6:8] == bytes(2) and d[24:26] == bytes(2), d[:32].hex()
    token = bytes(d[off + 6 : off + 6 + ROD_TOKEN_LEN]) if rtdl else None
    return RodTokenInfo(
        sa=d[4] & 0x1F,
        status=d[5] & 0x7F,
        delay=struct.unpack(">I", d[8:12])[0],
        scsi_status=d[12],
        sense=bytes(d[32 : 32 + sense_len]),
        units=d[15],
        transfer_count=struct.unpack(">Q", d[16:24])[0],
        descriptors_len=rtdl,
        token=token,
        raw=bytes(d[:end]),
    )


def token_info(dev, list_id):
    """The report of list_id, taken whole (and so taken away)."""
    return parse_rrti(expect_good(rrti(dev, list_id)).data)


def make_token(dev, ranges, list_id=1, **kw):
    """The token of these ranges, made and fetched as Windows does."""
    expect_good(populate_token(dev, ranges, list_id, **kw))
    info = token_info(dev, list_id)
    assert (info.sa, info.status) == (SA_POPULATE_TOKEN, COPY_DONE), info
    return info.token
