"""SCSI commands sent straight through Linux's SG_IO ioctl.

What sg3_utils does not send (the ODX commands, malformed CDBs in tests)
goes through here: a CDB, data out or a length of data in, and back the
SAM status, the sense bytes, the data and the transport's own status.
"""

import ctypes
import fcntl
import mmap
import os
from collections import namedtuple

SG_IO = 0x2285
SG_DXFER_NONE, SG_DXFER_TO_DEV, SG_DXFER_FROM_DEV = -1, -2, -3
SENSE_MAX = 96

Reply = namedtuple("Reply", "status sense data host_status driver_status")


class _SgIoHdr(ctypes.Structure):
    _fields_ = [
        ("interface_id", ctypes.c_int),
        ("dxfer_direction", ctypes.c_int),
        ("cmd_len", ctypes.c_ubyte),
        ("mx_sb_len", ctypes.c_ubyte),
        ("iovec_count", ctypes.c_ushort),
        ("dxfer_len", ctypes.c_uint),
        ("dxferp", ctypes.c_void_p),
        ("cmdp", ctypes.c_void_p),
        ("sbp", ctypes.c_void_p),
        ("timeout", ctypes.c_uint),
        ("flags", ctypes.c_uint),
        ("pack_id", ctypes.c_int),
        ("usr_ptr", ctypes.c_void_p),
        ("status", ctypes.c_ubyte),
        ("masked_status", ctypes.c_ubyte),
        ("msg_status", ctypes.c_ubyte),
        ("sb_len_wr", ctypes.c_ubyte),
        ("host_status", ctypes.c_ushort),
        ("driver_status", ctypes.c_ushort),
        ("resid", ctypes.c_int),
        ("duration", ctypes.c_uint),
        ("info", ctypes.c_uint),
    ]


def sg_io(dev, cdb, data_out=None, data_in_len=0, timeout_ms=60000, page_offset=None):
    """Send cdb to dev (/dev/sgN or /dev/sdX) and wait: a Reply.
    page_offset: data-out starts that far into a page of its own (a
    host's buffer that the block layer maps as it is, not copied)."""
    cdb = bytes(cdb)
    sense = ctypes.create_string_buffer(SENSE_MAX)
    cdb_buf = ctypes.create_string_buffer(cdb, len(cdb))
    hdr = _SgIoHdr(
        interface_id=ord("S"),
        cmd_len=len(cdb),
        mx_sb_len=SENSE_MAX,
        cmdp=ctypes.addressof(cdb_buf),
        sbp=ctypes.addressof(sense),
        timeout=timeout_ms,
    )
    if data_out is not None and page_offset is not None:
        area = mmap.mmap(-1, page_offset + len(data_out))  # page-aligned
        area[page_offset:] = bytes(data_out)
        buf = (ctypes.c_char * len(area)).from_buffer(area)
        hdr.dxfer_direction, hdr.dxfer_len = SG_DXFER_TO_DEV, len(data_out)
        hdr.dxferp = ctypes.addressof(buf) + page_offset
    elif data_out is not None:
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
    data = buf.raw[: data_in_len - hdr.resid] if data_in_len else b""
    return Reply(hdr.status, sense.raw[: hdr.sb_len_wr], data, hdr.host_status, hdr.driver_status)
