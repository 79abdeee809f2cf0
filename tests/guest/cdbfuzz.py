"""Random and mutated SCSI commands for a vaai LUN, and the rules every
answer must follow (tests/guest/test_fuzz_cdb.py drives them).

A generator builds one command at a time: a CDB, a data-out buffer or a
data-in length.  Most are commands the backend parses itself (ODX's among them), with fields
drawn from the values where bounds checks live (0, 1, the last LBA, one past
it, 2^32 - 1, 2^64 - 1, the limits the LUN reports) and parameter lists built
right and then mutated; the rest are random CDBs of any opcode, and random
mutations of earlier CDBs.  The data-out length often disagrees with what
the CDB asks for."""

import random
import struct

from scsi import (
    CHECK_CONDITION,
    GOOD,
    ROD_TOKEN_BODY,
    ROD_TYPE_AUR,
    cscd_e4,
    seg_b2b,
    unmap_list,
    xcopy_list,
    zero_token,
)

# Commands that would change the nexus or the LUN for every later command
# (reservations, mode and log pages, ALUA state, firmware): not parsed by
# the backend, and they would leave the rest of the run testing a LUN in
# another state.
UNSAFE = {0x04, 0x15, 0x16, 0x17, 0x1D, 0x3B, 0x4C, 0x55, 0x56, 0x57, 0x5F, 0xA4, 0xB5}
# Sense keys a healthy LUN may answer a bad command with.  MEDIUM ERROR,
# HARDWARE ERROR or NOT READY (LIO's catch-all LOGICAL UNIT COMMUNICATION
# FAILURE) would mean a command reached the store it should not have, or
# got a generic answer.
ALLOWED_KEYS = {
    0x05: "ILLEGAL REQUEST",
    0x06: "UNIT ATTENTION",
    0x0A: "COPY ABORTED",
    0x0E: "MISCOMPARE",
}
# Largest data transfer one SG_IO may carry through tcm_loop.
MAX_XFER = 1 << 20
# CDB length by group code (SPC-4 4.2.5.1); 0 for the reserved groups.
GROUP_LEN = (6, 10, 10, 0, 16, 12, 0, 0)
DRIVER_SENSE = 0x08
# PRE-FETCH (10) and (16) answer CONDITION MET when the blocks are cached.
CONDITION_MET = 0x04
PREFETCH = {0x34, 0x90}


class Lun:
    """What the generator knows of the LUN under test."""

    def __init__(self, nr_blocks, block_size, naas, max_ws, max_unmap):
        self.nr_blocks = nr_blocks
        self.block_size = block_size
        self.naas = naas  # NAAs to name in CSCD descriptors
        self.max_ws = max_ws
        self.max_unmap = max_unmap


class Command:
    def __init__(self, cdb, data_out=None, data_in_len=0, kind="random"):
        self.cdb = bytes(cdb)
        self.data_out = data_out
        self.data_in_len = data_in_len
        self.kind = kind

    @property
    def param_len(self):
        return len(self.data_out) if self.data_out is not None else 0

    def __str__(self):
        out = f"{self.kind} cdb={self.cdb.hex()}"
        if self.data_out is not None:
            out += f" data_out={len(self.data_out)} bytes {(self.data_out[:64].hex())}"
        if self.data_in_len:
            out += f" data_in={self.data_in_len}"
        return out


class Generator:
    def __init__(self, lun, seed):
        self.lun = lun
        self.rng = random.Random(seed)
        self.history = []

    # --- field values where the bounds checks live -------------------------

    def lba(self):
        n = self.lun.nr_blocks
        return self.rng.choice(
            [
                0,
                1,
                n - 1,
                n,
                n + 1,
                n - 2,
                self.rng.randrange(n),
                self.rng.randrange(n),
                2**31,
                2**32 - 1,
                2**32,
                2**63,
                2**64 - 1,
                2**64 - n,
            ]
        )

    def count(self, bits=32, limit=None):
        top = (1 << bits) - 1
        picks = [
            0,
            1,
            2,
            8,
            self.rng.randrange(1, 64),
            self.rng.randrange(1, 64),
            255,
            256,
            self.lun.nr_blocks,
            self.lun.nr_blocks + 1,
            top,
            top - 1,
        ]
        if limit:
            picks += [limit, limit + 1]
        return min(self.rng.choice(picks), top)

    def data_len(self, right):
        """The data-out length: usually the right one, often not."""
        r = self.rng.random()
        if r < 0.6:
            n = right
        elif r < 0.9:
            n = right + self.rng.choice([-1, 1, -512, 512, -right // 2, right])
        else:
            n = self.rng.randrange(0, 4096)
        return max(0, min(n, MAX_XFER))

    def payload(self, n, fill=None):
        if fill is not None:
            return (fill * (n // max(1, len(fill)) + 1))[:n]
        return bytes(self.rng.getrandbits(8) for _ in range(min(n, 64))) + bytes(max(0, n - 64))

    # --- structured commands ---------------------------------------------

    def compare_and_write(self):
        nb = self.count(8)
        cdb = struct.pack(
            ">BBQ3xBBB", 0x89, self.rng.choice([0, 0, 0x08, 0xE0, 0xFF]), self.lba(), nb, 0, 0
        )
        right = 2 * nb * self.lun.block_size
        return Command(cdb, self.payload(self.data_len(right)), kind="caw")

    def write_same(self):
        flags = self.rng.choice([0, 0, 0x08, 0x01, 0x09, 0x10, 0x02, 0x04, 0xFF])
        nb = self.count(32, self.lun.max_ws)
        if self.rng.random() < 0.5:
            cdb = struct.pack(">BBQIBB", 0x93, flags, self.lba(), nb, 0, 0)
        else:
            cdb = struct.pack(">BBIBHB", 0x41, flags, self.lba() & 0xFFFFFFFF, 0, nb & 0xFFFF, 0)
        bs = self.lun.block_size
        fill = self.rng.choice([bytes(1), b"\xa5", None])
        return Command(cdb, self.payload(self.data_len(bs), fill), kind="write_same")

    def unmap(self):
        descs = [
            (self.lba(), self.count(32, self.lun.max_unmap))
            for _ in range(self.rng.choice([0, 1, 1, 2, 5, 64]))
        ]
        params = self.mutate_bytes(unmap_list(descs), light=True)
        cdb = struct.pack(
            ">BBxxxxBHB", 0x42, self.rng.choice([0, 0, 1]), 0, self.data_len(len(params)), 0
        )
        return Command(cdb, params[: struct.unpack(">H", cdb[7:9])[0]], kind="unmap")

    def xcopy(self):
        bs = self.lun.block_size
        cscds = [
            cscd_e4(self.rng.choice(self.lun.naas), self.rng.choice([bs, bs, 512, 4096, 0]))
            for _ in range(self.rng.choice([0, 1, 2, 2, 3, 33]))
        ]
        segs = [
            seg_b2b(
                self.rng.choice([0, 1, 2, 0xFFFF]),
                self.rng.choice([0, 1, 2]),
                self.rng.choice([0, 1, 8, 64, 0xFFFF]),
                self.lba(),
                self.lba(),
                dc=self.rng.random() < 0.2,
            )
            for _ in range(self.rng.choice([0, 1, 1, 2, 4]))
        ]
        params = xcopy_list(
            cscds, segs, list_id=self.rng.randrange(256), usage=self.rng.choice([0, 2, 3, 3, 1])
        )
        params = self.mutate_bytes(params, light=True)
        n = self.data_len(len(params))
        cdb = struct.pack(">BB8xIBB", 0x83, self.rng.choice([0, 0, 0, 1, 0x1C]), n, 0, 0)
        return Command(cdb, params[:n] + bytes(max(0, n - len(params))), kind="xcopy")

    def odx(self):
        """POPULATE TOKEN or WRITE USING TOKEN with ranges drawn as the
        other lists' are; the token the zero token or a made-up one (a real
        one is refused as unknown once a bit changes, test_odx_refusals)."""
        ranges = b"".join(
            struct.pack(">QI4x", self.lba(), self.count(32))
            for _ in range(self.rng.choice([0, 1, 1, 2, 64, 65]))
        )
        flags = self.rng.choice([0, 0, 1, 2, 3, 0xFF])
        if self.rng.random() < 0.5:
            sa = 0x10
            params = (
                struct.pack(
                    ">HBBIIHH",
                    14 + len(ranges),
                    flags,
                    0,
                    self.rng.choice([0, 1, 60, 3600, 3601, 2**32 - 1]),
                    self.rng.choice([0, ROD_TYPE_AUR, 0xFFFF0001, 0x800000]),
                    0,
                    len(ranges),
                )
                + ranges
            )
        else:
            sa = 0x11
            token = self.rng.choice(
                [
                    zero_token(),
                    struct.pack(">IxxH", ROD_TYPE_AUR, ROD_TOKEN_BODY) + self.payload(504),
                    self.payload(512),
                ]
            )
            params = (
                struct.pack(
                    ">HB5xQ", 534 + len(ranges), flags, self.rng.choice([0, 1, 2**32, 2**64 - 1])
                )
                + token
                + bytes(6)
                + struct.pack(">H", len(ranges))
                + ranges
            )
        params = self.mutate_bytes(params, light=True)
        n = self.data_len(len(params))
        cdb = struct.pack(">BB4xIIBB", 0x83, sa, self.rng.randrange(4), n, 0, 0)
        return Command(cdb, params[:n] + bytes(max(0, n - len(params))), kind="odx")

    def data_in(self):
        """The commands that answer with data: field values and allocation
        lengths from small to past what was asked."""
        alloc = self.rng.choice([0, 1, 4, 8, 24, 32, 255, 512, 4096, 65535])
        cdb = self.rng.choice(
            [
                struct.pack(">BBQIBB", 0x9E, 0x12, self.lba(), alloc, 0, 0),
                struct.pack(
                    ">BBBBHBxBB",
                    0xA3,
                    0x0C,
                    self.rng.choice([0, 1, 2, 3, 0x80, 0x87]),
                    self.rng.choice([0x89, 0x93, 0x83, 0x84, 0x9E, 0x42, 0xFF]),
                    self.rng.choice([0, 0x12, 0x0C, 3, 0xFFFF]),
                    0,
                    0,
                    0,
                )
                + b"",
                struct.pack(
                    ">BBB7xIBB",
                    0x84,
                    self.rng.choice([0, 1, 3, 4, 5, 7, 0x1F]),
                    self.rng.randrange(256),
                    alloc,
                    0,
                    0,
                ),
                struct.pack(
                    ">BBBHB",
                    0x12,
                    self.rng.choice([0, 1, 1, 3]),
                    self.rng.choice([0x00, 0x80, 0x83, 0x86, 0x8F, 0xB0, 0xB1, 0xB2, 0xFF]),
                    min(alloc, 0xFFFF),
                    0,
                ),
                struct.pack(">BBQIBB", 0x9E, 0x10, self.lba(), alloc, 0, 0),
            ]
        )
        if cdb[0] == 0xA3:  # allocation length in bytes 6-9
            cdb = cdb[:6] + struct.pack(">I", alloc) + b"\x00\x00"
        return Command(cdb, data_in_len=min(self.data_len(alloc), MAX_XFER), kind="data_in")

    def rw(self):
        op = self.rng.choice(
            [0x28, 0x2A, 0x88, 0x8A, 0xA8, 0xAA, 0x2F, 0x8F, 0xAF, 0x35, 0x91, 0x08, 0x0A]
        )
        nb = self.count(16 if op in (0x28, 0x2A, 0x2F, 0x35) else 8 if op < 0x20 else 32)
        lba = self.lba()
        flags = self.rng.choice([0, 0, 0x08, 0x02, 0x06, 0xE0])
        if op in (0x08, 0x0A):
            cdb = struct.pack(">BBHBB", op, (lba >> 16) & 0x1F, lba & 0xFFFF, nb & 0xFF, 0)
        elif op in (0x28, 0x2A, 0x2F, 0x35):
            cdb = struct.pack(">BBIBHB", op, flags, lba & 0xFFFFFFFF, 0, nb, 0)
        elif op in (0xA8, 0xAA, 0xAF):
            cdb = struct.pack(">BBIIBB", op, flags, lba & 0xFFFFFFFF, nb, 0, 0)
        else:
            cdb = struct.pack(">BBQIBB", op, flags, lba, nb, 0, 0)
        want = min(nb, 2048) * self.lun.block_size
        if op in (0x2A, 0x8A, 0xAA, 0x0A) or (op in (0x2F, 0x8F, 0xAF) and flags & 0x06):
            return Command(cdb, self.payload(self.data_len(want)), kind="write")
        if op in (0x35, 0x91, 0x2F, 0x8F, 0xAF):
            return Command(cdb, kind="sync")
        return Command(cdb, data_in_len=self.data_len(want), kind="read")

    # --- random and mutated ----------------------------------------------

    def random_cdb(self):
        op = self.rng.randrange(256)
        while op in UNSAFE:
            op = self.rng.randrange(256)
        n = GROUP_LEN[op >> 5] or self.rng.choice([6, 10, 12, 16])
        cdb = bytes([op]) + bytes(self.rng.getrandbits(8) for _ in range(n - 1))
        return self.with_random_data(cdb, "random")

    def with_random_data(self, cdb, kind):
        r = self.rng.random()
        if r < 0.3:
            return Command(cdb, self.payload(self.rng.randrange(0, 8192)), kind=kind)
        if r < 0.6:
            return Command(cdb, data_in_len=self.rng.randrange(1, 8192), kind=kind)
        return Command(cdb, kind=kind)

    def mutate_bytes(self, b, light=False):
        b = bytearray(b)
        for _ in range(self.rng.choice([1, 1, 2, 4]) if not light else self.rng.choice([0, 0, 1])):
            if not b:
                break
            i = self.rng.randrange(len(b))
            how = self.rng.randrange(4)
            if how == 0:
                b[i] ^= 1 << self.rng.randrange(8)
            elif how == 1:
                b[i] = self.rng.choice([0, 0xFF, 0x7F, 0x80, 1])
            elif how == 2:
                b = b[:i]
            else:
                b[i:i] = bytes(self.rng.randrange(1, 40))
        return bytes(b)

    def turned_around(self, cmd):
        """The same CDB with its data going the other way, or none."""
        if self.rng.random() < 0.5:
            return Command(cmd.cdb, data_in_len=len(cmd.data_out), kind=cmd.kind)
        return Command(cmd.cdb, kind=cmd.kind)

    def mutated(self):
        base = self.rng.choice(self.history)
        cdb = bytearray(self.mutate_bytes(base.cdb)[:16].ljust(6, b"\0"))
        if cdb[0] in UNSAFE:
            cdb[0] = base.cdb[0]
        if base.data_out is not None:
            return Command(cdb, self.mutate_bytes(base.data_out)[:MAX_XFER], kind="mutated")
        return Command(cdb, data_in_len=base.data_in_len, kind="mutated")

    def next(self):
        makers = [
            (self.compare_and_write, 3),
            (self.write_same, 3),
            (self.unmap, 3),
            (self.xcopy, 4),
            (self.odx, 3),
            (self.data_in, 3),
            (self.rw, 3),
            (self.random_cdb, 3),
        ]
        if self.history:
            makers.append((self.mutated, 4))
        fn = self.rng.choices([m for m, _ in makers], [w for _, w in makers])[0]
        cmd = fn()
        if cmd.cdb[0] in UNSAFE:
            cmd = self.random_cdb()
        elif cmd.data_out and self.rng.random() < 0.1:
            cmd = self.turned_around(cmd)
        self.history = ([*self.history, cmd])[-64:]
        return cmd


def check_answer(cmd, res):
    """Why the answer to cmd breaks the rules, or None: GOOD, or CHECK
    CONDITION with well-formed sense of an expected key whose field pointer
    lands inside the CDB or the parameter list; never a transport error."""
    if res.host_status or res.driver_status & ~DRIVER_SENSE:
        return (
            f"transport error host_status=0x{res.host_status:x} "
            f"driver_status=0x{res.driver_status:x}"
        )
    if res.status == CONDITION_MET and cmd.cdb[0] in PREFETCH:
        return None
    if res.status == GOOD:
        if cmd.data_in_len and len(res.data) > cmd.data_in_len:
            return "more data than asked for"
        return None
    if res.status != CHECK_CONDITION:
        return f"status 0x{res.status:02x}"
    return check_sense(cmd, res.sense)


def check_sense(cmd, b):
    if len(b) < 8:
        return f"sense of {len(b)} bytes"
    code = b[0] & 0x7F
    if code in (0x70, 0x71):
        if b[7] + 8 > len(b) or b[7] < 10:
            return f"fixed sense with ADDITIONAL SENSE LENGTH {b[7]} in {len(b)} bytes"
        key, asc, sks = b[2] & 0x0F, b[12], b[15:18]
    elif code in (0x72, 0x73):
        key, asc, sks = b[1] & 0x0F, b[2], b""
        pos, end = 8, 8 + b[7]
        if end > len(b):
            return "descriptor sense longer than what came"
        while pos < end:
            if pos + 2 > end or pos + 2 + b[pos + 1] > end:
                return f"descriptor at {pos} runs past the sense"
            if b[pos] == 0x02:
                sks = b[pos + 4 : pos + 7]
            pos += 2 + b[pos + 1]
    else:
        return f"sense response code 0x{code:02x}"
    if key not in ALLOWED_KEYS:
        return f"sense key 0x{key:x} (asc 0x{asc:02x} ascq 0x{b[13] if code < 0x72 else b[3]:02x})"
    if key == 0x05 and not asc:
        return "ILLEGAL REQUEST without an additional sense code"
    if key == 0x05 and len(sks) == 3 and sks[0] & 0x80:
        field = struct.unpack(">H", sks[1:3])[0]
        limit = len(cmd.cdb) if sks[0] & 0x40 else cmd.param_len
        if field >= limit:
            return (
                f"field pointer {field} (C/D={bool(sks[0] & 0x40):d}) past the {limit} bytes sent"
            )
    return None
