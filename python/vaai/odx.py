"""ODX token copy from the initiator's side, as Windows sends it: POPULATE
TOKEN on the source, RECEIVE ROD TOKEN INFORMATION for the token, WRITE
USING TOKEN on the destination (docs/odx.md).  Debian 12's ddpt cannot
drive ODX correctly, so the demo copies with this.

    token = odx.populate_token("/dev/sg1", [(0, 8192)])
    odx.write_using_token("/dev/sg2", token, [(16384, 8192)])
"""

import struct

from . import sgio
from .errors import VaaiError

POPULATE_TOKEN, WRITE_USING_TOKEN, RECEIVE_ROD_TOKEN_INFO = 0x10, 0x11, 0x07
TOKEN_LEN = 512
RRTI_ALLOC = 1024
GOOD = 0x00


class OdxError(VaaiError):
    """An ODX command did not end in GOOD."""

    def __init__(self, what, reply):
        self.reply = reply
        super().__init__(
            "{}: status 0x{:02x}, sense {}".format(what, reply.status, reply.sense.hex() or "none")
        )


def _ranges(ranges):
    return b"".join(struct.pack(">QI4x", lba, nblocks) for lba, nblocks in ranges)


def _out(dev, sa, list_id, params, what):
    cdb = struct.pack(">BB4xIIBB", 0x83, sa, list_id, len(params), 0, 0)
    reply = sgio.sg_io(dev, cdb, data_out=params, timeout_ms=120000)
    if reply.host_status or reply.status != GOOD:
        raise OdxError(what, reply)


def rod_token_info(dev, list_id):
    """RECEIVE ROD TOKEN INFORMATION: (COPY OPERATION STATUS, TRANSFER
    COUNT, the token or None)."""
    cdb = struct.pack(">BBI4xIBB", 0x84, RECEIVE_ROD_TOKEN_INFO, list_id, RRTI_ALLOC, 0, 0)
    reply = sgio.sg_io(dev, cdb, data_in_len=RRTI_ALLOC)
    if reply.host_status or reply.status != GOOD:
        raise OdxError("RECEIVE ROD TOKEN INFORMATION", reply)
    d = reply.data
    count = struct.unpack(">Q", d[16:24])[0]
    off = 32 + d[13]  # past the sense data
    token = None
    if struct.unpack(">I", d[off : off + 4])[0] >= 2 + TOKEN_LEN:
        token = d[off + 6 : off + 6 + TOKEN_LEN]
    return d[5], count, token


def populate_token(dev, ranges, list_id=1, timeout=0):
    """A token for [(lba, blocks), ...] of dev, fetched as Windows does."""
    rdl = _ranges(ranges)
    params = struct.pack(">HBBIIHH", 14 + len(rdl), 0, 0, timeout, 0, 0, len(rdl)) + rdl
    _out(dev, POPULATE_TOKEN, list_id, params, "POPULATE TOKEN")
    _, _, token = rod_token_info(dev, list_id)
    if token is None:
        raise VaaiError("RECEIVE ROD TOKEN INFORMATION returned no token")
    return token


def write_using_token(dev, token, ranges, list_id=2, offset=0):
    """Write what token stands for, from offset (blocks) on, into ranges
    of dev."""
    rdl = _ranges(ranges)
    params = (
        struct.pack(">HB5xQ", 534 + len(rdl), 0, offset)
        + bytes(token)
        + bytes(6)
        + struct.pack(">H", len(rdl))
        + rdl
    )
    _out(dev, WRITE_USING_TOKEN, list_id, params, "WRITE USING TOKEN")
