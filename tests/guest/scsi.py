"""SCSI commands sent straight through SG_IO, and their sense decoded.

sg3_utils print sense as text; the tests need the bytes, so this module
sends CDBs itself and returns status, sense and data.
"""
import ctypes
import fcntl
import os
import struct
from dataclasses import dataclass

SG_IO = 0x2285
SG_DXFER_NONE, SG_DXFER_TO_DEV, SG_DXFER_FROM_DEV = -1, -2, -3

GOOD, CHECK_CONDITION, RESERVATION_CONFLICT = 0x00, 0x02, 0x18
# SPC-4 table 28: sense keys
NO_SENSE, NOT_READY, MEDIUM_ERROR, HARDWARE_ERROR = 0x0, 0x2, 0x3, 0x4
ILLEGAL_REQUEST, UNIT_ATTENTION, DATA_PROTECT = 0x5, 0x6, 0x7
COPY_ABORTED, ABORTED_COMMAND, MISCOMPARE = 0xA, 0xB, 0xE


class _SgIoHdr(ctypes.Structure):
    _fields_ = [
        ("interface_id", ctypes.c_int), ("dxfer_direction", ctypes.c_int),
        ("cmd_len", ctypes.c_ubyte), ("mx_sb_len", ctypes.c_ubyte),
        ("iovec_count", ctypes.c_ushort), ("dxfer_len", ctypes.c_uint),
        ("dxferp", ctypes.c_void_p), ("cmdp", ctypes.c_void_p),
        ("sbp", ctypes.c_void_p), ("timeout", ctypes.c_uint),
        ("flags", ctypes.c_uint), ("pack_id", ctypes.c_int),
        ("usr_ptr", ctypes.c_void_p), ("status", ctypes.c_ubyte),
        ("masked_status", ctypes.c_ubyte), ("msg_status", ctypes.c_ubyte),
        ("sb_len_wr", ctypes.c_ubyte), ("host_status", ctypes.c_ushort),
        ("driver_status", ctypes.c_ushort), ("resid", ctypes.c_int),
        ("duration", ctypes.c_uint), ("info", ctypes.c_uint)]


@dataclass
class Sense:
    key: int
    asc: int
    ascq: int
    info: int = None        # INFORMATION, when VALID (fixed) or present (descriptor)
    sks: bytes = b""        # sense-key specific bytes, when SKSV is set

    def __str__(self):
        return "key=0x%x asc=0x%02x ascq=0x%02x info=%s" % (
            self.key, self.asc, self.ascq, self.info)


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
        s = "status=0x%02x" % self.status
        if self.sense:
            s += " sense(%s) raw=%s" % (self.decoded(), self.sense.hex())
        return s


def decode_sense(b):
    """Fixed (0x70/0x71) or descriptor (0x72/0x73) format sense data."""
    if not b:
        return None
    code = b[0] & 0x7F
    if code in (0x70, 0x71):
        info = struct.unpack(">I", b[3:7])[0] if b[0] & 0x80 else None
        sks = bytes(b[15:18]) if len(b) >= 18 and b[15] & 0x80 else b""
        return Sense(b[2] & 0xF, b[12] if len(b) > 12 else 0,
                     b[13] if len(b) > 13 else 0, info, sks)
    if code in (0x72, 0x73):
        s = Sense(b[1] & 0xF, b[2], b[3])
        pos, end = 8, 8 + b[7]
        while pos + 2 <= min(end, len(b)):
            dtype, dlen = b[pos], b[pos + 1]
            if dtype == 0x00 and dlen >= 0x0A:
                s.info = struct.unpack(">Q", b[pos + 4:pos + 12])[0]
            elif dtype == 0x02 and dlen >= 6 and b[pos + 4] & 0x80:
                s.sks = bytes(b[pos + 4:pos + 7])
            pos += 2 + dlen
        return s
    raise AssertionError("unknown sense response code 0x%02x: %s" % (code, b.hex()))


def sg_io(dev, cdb, data_out=None, data_in_len=0, timeout_ms=60000):
    cdb = bytes(cdb)
    sense = ctypes.create_string_buffer(96)
    cdb_buf = ctypes.create_string_buffer(cdb, len(cdb))
    hdr = _SgIoHdr(interface_id=ord("S"), cmd_len=len(cdb), mx_sb_len=96,
                   cmdp=ctypes.addressof(cdb_buf), sbp=ctypes.addressof(sense),
                   timeout=timeout_ms)
    if data_out is not None:
        buf = ctypes.create_string_buffer(bytes(data_out), len(data_out))
        hdr.dxfer_direction, hdr.dxfer_len = SG_DXFER_TO_DEV, len(data_out)
        hdr.dxferp = ctypes.addressof(buf)
    elif data_in_len:
        buf = ctypes.create_string_buffer(data_in_len)
        hdr.dxfer_direction, hdr.dxfer_len = SG_DXFER_FROM_DEV, data_in_len
        hdr.dxferp = ctypes.addressof(buf)
    else:
        buf = None
        hdr.dxfer_direction = SG_DXFER_NONE
    fd = os.open(dev, os.O_RDWR)
    try:
        fcntl.ioctl(fd, SG_IO, hdr)
    finally:
        os.close(fd)
    data = b""
    if data_in_len:
        data = buf.raw[:data_in_len - hdr.resid]
    return Result(hdr.status, sense.raw[:hdr.sb_len_wr], data,
                  hdr.host_status, hdr.driver_status)


def expect_good(res):
    assert res.host_status == 0, "transport error: %s" % res
    assert res.status == GOOD, "expected GOOD, got %s" % res
    return res


def expect_sense(res, key, asc, ascq):
    """CHECK CONDITION with exactly this sense key and ASC/ASCQ."""
    assert res.status == CHECK_CONDITION, "expected CHECK CONDITION, got %s" % res
    s = res.decoded()
    assert (s.key, s.asc, s.ascq) == (key, asc, ascq), \
        "expected key=0x%x asc=0x%02x ascq=0x%02x, got %s" % (key, asc, ascq, res)
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


# tcm_loop takes 256 scatter-gather entries: one SG_IO moves at most 1 MiB of
# page-sized user memory.  Larger reads and writes are split.
SG_IO_MAX = 1 << 20


def read_blocks(dev, lba, nblocks, block_size):
    step = SG_IO_MAX // block_size
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
    step = SG_IO_MAX
    for off in range(0, max(len(data), 1), step):
        chunk = data[off:off + step]
        res = sg_io(dev, cdb_write16(lba + off // block_size, len(chunk) // block_size, fua),
                    data_out=chunk)
        if res.status != GOOD or res.host_status:
            return res
    return res


def clear_unit_attention(dev, tries=5):
    """TEST UNIT READY until no unit attention is pending (SAM-5 5.14)."""
    for _ in range(tries):
        res = sg_io(dev, bytes(6))
        if res.status == GOOD:
            return
        assert res.decoded().key == UNIT_ATTENTION, "TEST UNIT READY: %s" % res
    raise AssertionError("unit attention did not clear after %d tries" % tries)


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
    out = [struct.unpack(">QIB", d[8 + 16 * i:8 + 16 * i + 13]) for i in range(n)]
    return [(lba_, nb, st & 0x0F) for lba_, nb, st in out], res


def cdb_compare_and_write(lba, nblocks, flags=0):
    return struct.pack(">BBQ3xBBB", 0x89, flags, lba, nblocks, 0, 0)


def compare_and_write(dev, lba, verify, write, block_size, flags=0):
    assert len(verify) == len(write) and len(verify) % block_size == 0
    return sg_io(dev, cdb_compare_and_write(lba, len(verify) // block_size, flags),
                 data_out=verify + write)


# --- Third-party copy (SPC-4 6.4, 6.18) -----------------------------------

XCOPY_NO_LIST_ID = 3       # LIST ID USAGE 11b: no list identifier, nothing held


def naa_of(dev):
    """The LU's NAA designator from the Device Identification VPD page."""
    res = expect_good(sg_io(dev, struct.pack(">BBBHB", 0x12, 1, 0x83, 1024, 0),
                            data_in_len=1024))
    d = res.data
    pos, end = 4, 4 + struct.unpack(">H", d[2:4])[0]
    while pos + 4 <= end:
        assoc_type, length = d[pos + 1], d[pos + 3]
        if assoc_type & 0x3F == 0x03:       # association LU, designator type NAA
            return bytes(d[pos + 4:pos + 4 + length])
        pos += 4 + length
    raise AssertionError("no NAA designator in VPD 0x83 of %s" % dev)


def cscd_e4(naa, block_size, pdt=0, code=0xE4):
    """Identification CSCD descriptor (SPC-4 6.4.5.2), 32 bytes."""
    d = bytearray(32)
    d[0], d[1] = code, pdt
    d[4], d[5], d[7] = 0x01, 0x03, len(naa)     # binary, LU, NAA
    d[8:8 + len(naa)] = naa
    d[29:32] = block_size.to_bytes(3, "big")
    return bytes(d)


def seg_b2b(src, dst, nblocks, src_lba, dst_lba, dc=False, cat=False, code=0x02,
            length=0x18):
    """Block device to block device segment descriptor (SPC-4 6.4.6.5)."""
    return struct.pack(">BBHHHHHQQ", code, (0x02 if dc else 0) | (0x01 if cat else 0),
                       length, src, dst, 0, nblocks, src_lba, dst_lba)


def xcopy_list(cscds, segs, list_id=0, usage=XCOPY_NO_LIST_ID, inline=b"",
               cscd_len=None, seg_len=None, inline_len=None):
    """EXTENDED COPY (LID1) parameter list; the lengths may be overridden."""
    c, s = b"".join(cscds), b"".join(segs)
    return struct.pack(">BBH4xII", list_id, (usage & 3) << 3,
                       len(c) if cscd_len is None else cscd_len,
                       len(s) if seg_len is None else seg_len,
                       len(inline) if inline_len is None else inline_len) + c + s + inline


def cdb_xcopy(param_len, sa=0x00):
    return struct.pack(">BB8xIBB", 0x83, sa, param_len, 0, 0)


def xcopy(dev, params, timeout_ms=120000):
    return sg_io(dev, cdb_xcopy(len(params)), data_out=params, timeout_ms=timeout_ms)


def cdb_receive_copy_results(sa, list_id, alloc_len):
    return struct.pack(">BBB7xIBB", 0x84, sa, list_id, alloc_len, 0, 0)


def receive_copy_results(dev, sa, list_id=0, alloc_len=1024):
    return sg_io(dev, cdb_receive_copy_results(sa, list_id, alloc_len),
                 data_in_len=alloc_len)
