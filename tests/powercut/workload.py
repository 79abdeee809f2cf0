"""The power-cut harness's workload on one LUN: what VMFS and Windows send,
one command at a time, every version noted in the model before the command
goes out and every GOOD noted when it comes back.

The LUN's last 64 blocks hold 16 two-block lock records that only COMPARE
AND WRITE changes (each a counter, as VMFS heartbeats are); the rest takes
WRITE (some with FUA where the write cache is on; with it off the LUN
clears DPOFUA and refuses FUA), WRITE SAME of zeros (some with UNMAP), UNMAP,
EXTENDED COPY and POPULATE TOKEN + WRITE USING TOKEN within the LUN, and
SYNCHRONIZE CACHE.
"""

import collections

import scsi
from model import BLOCK, render, zeroed
from scsi import expect_good

LOCK_BLOCKS = 2
LOCKS = 16
MAX_WRITE = 32
MAX_ZERO = 256
MAX_COPY = 2048  # 1 MiB: long enough for a cut to land inside
FUA = 0x08  # CDB byte 1 of WRITE(16) and COMPARE AND WRITE

# How often each command is sent, relative to the others.
MIX = {
    "write": 40,
    "write_same": 8,
    "unmap": 8,
    "caw": 20,
    "xcopy": 6,
    "odx": 4,
    "sync": 6,
}


class RefusedError(Exception):
    """The target answered a good command with something but GOOD."""


def thin_flags(dev):
    """(LBPME, LBPRZ) from READ CAPACITY (16)."""
    data = expect_good(scsi.sg_io(dev, scsi.cdb_read_capacity16(), data_in_len=32)).data
    return bool(data[14] & 0x80), bool(data[14] & 0x40)


class Workload:
    def __init__(self, dev, model, rng, naa):
        self.dev, self.model, self.rng, self.naa = dev, model, rng, naa
        nblocks = len(model.history)
        self.lock_base = nblocks - 64
        self.data_blocks = self.lock_base
        model.groups = [(self.lock_base + i * LOCK_BLOCKS, LOCK_BLOCKS) for i in range(LOCKS)]
        self.lbpme, lbprz = thin_flags(dev)
        # Unmapped blocks must read back as zeros for the model to hold.
        assert not self.lbpme or lbprz, "thin LUN without LBPRZ"
        self.sent = collections.Counter()
        self.acked = collections.Counter()
        self.stop = False

    def _good(self, what, res):
        if res.status != scsi.GOOD:
            raise RefusedError(f"{what} on LUN {self.model.lun_id}: {res}")

    def _range(self, most):
        n = self.rng.randint(1, most)
        return self.rng.randrange(0, self.data_blocks - n), n

    def _send(self, what, versions, cdb_fn, fua=False):
        """Note the versions, send, note the GOOD."""
        serial = self.model.new_serial()
        versions = versions(serial) if callable(versions) else versions
        cmd = self.model.issue(what, serial, versions)
        self.sent[what] += 1
        res = cdb_fn(serial, versions)
        self._good(what, res)
        self.model.acked(cmd, fua=fua)
        self.acked[what] += 1

    def write(self):
        lba, n = self._range(MAX_WRITE)
        fua = self.model.write_cache and self.rng.random() < 0.25
        lun = self.model.lun_id

        def send(serial, versions):
            data = b"".join(render(lun, v) for _, v in versions)
            return scsi.sg_io(self.dev, scsi.cdb_write16(lba, n, fua=fua), data_out=data)

        self._send("write", lambda s: [(lba + i, (lba + i, s)) for i in range(n)], send, fua=fua)

    def write_same(self):
        lba, n = self._range(MAX_ZERO)
        unmap = self.lbpme and self.rng.random() < 0.5
        cdb = scsi.cdb_write_same16(lba, n, unmap=unmap)
        self._send(
            "write_same",
            lambda s: [(lba + i, zeroed(s)) for i in range(n)],
            lambda s, v: scsi.sg_io(self.dev, cdb, data_out=bytes(BLOCK)),
        )

    def unmap(self):
        if not self.lbpme:
            return self.write_same()
        extents = [self._range(MAX_ZERO) for _ in range(self.rng.randint(1, 3))]
        self._send(
            "unmap",
            lambda s: [(lba + i, zeroed(s)) for lba, n in extents for i in range(n)],
            lambda s, v: scsi.unmap(self.dev, extents),
        )

    def _copy_ranges(self):
        n = self.rng.choice((self.rng.randint(1, 64), self.rng.randint(64, MAX_COPY)))
        while True:
            src = self.rng.randrange(0, self.data_blocks - n)
            dst = self.rng.randrange(0, self.data_blocks - n)
            if abs(src - dst) >= n:
                return src, dst, n

    def _copy_versions(self, src, dst, n):
        # One command at a time: what the source holds when the copy runs
        # is the newest version issued to it.
        return [(dst + i, self.model.current(src + i)) for i in range(n)]

    def xcopy(self):
        src, dst, n = self._copy_ranges()
        params = scsi.xcopy_list([scsi.cscd_e4(self.naa, BLOCK)], [scsi.seg_b2b(0, 0, n, src, dst)])
        self._send(
            "xcopy", self._copy_versions(src, dst, n), lambda s, v: scsi.xcopy(self.dev, params)
        )

    def odx(self):
        src, dst, n = self._copy_ranges()
        self.sent["populate_token"] += 1
        token = scsi.make_token(self.dev, [(src, n)], list_id=1)
        self.acked["populate_token"] += 1
        self._send(
            "write_using_token",
            self._copy_versions(src, dst, n),
            # DEL_TKN: one initiator may hold 256 live tokens, and six
            # LUNs making them for 12 s reach that
            lambda s, v: scsi.write_using_token(self.dev, token, [(dst, n)], 2, del_tkn=True),
        )

    def caw(self):
        start = self.lock_base + self.rng.randrange(LOCKS) * LOCK_BLOCKS
        fua = self.model.write_cache and self.rng.random() < 0.25
        lun = self.model.lun_id
        old = b"".join(render(lun, self.model.current(start + i)) for i in range(LOCK_BLOCKS))

        def send(serial, versions):
            new = b"".join(render(lun, v) for _, v in versions)
            return scsi.compare_and_write(self.dev, start, old, new, BLOCK, flags=FUA if fua else 0)

        self._send(
            "caw",
            lambda s: [(start + i, (start + i, s)) for i in range(LOCK_BLOCKS)],
            send,
            fua=fua,
        )

    def sync(self):
        self.sent["sync"] += 1
        self._good("sync", scsi.sg_io(self.dev, scsi.cdb_sync_cache10()))
        self.model.synced()
        self.acked["sync"] += 1

    def run(self, count=None):
        """count commands, or until stopped or the session breaks
        (initiator.SessionLostError)."""
        names = list(MIX)
        weights = [MIX[n] for n in names]
        while not self.stop and count != 0:
            getattr(self, self.rng.choices(names, weights)[0])()
            count = count and count - 1
