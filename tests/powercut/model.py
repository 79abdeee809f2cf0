"""What a LUN may hold after a power cut: the power-cut harness's oracle.

Every block the workload writes gets content that names itself: a header
(magic, LUN, the LBA it was written for, the command's serial) and a body
derived from the header.  A block read back after the cut is therefore
either all zeros or exactly one version some command wrote, and the
version says which: a torn block, a block holding another block's data or
bytes nobody wrote match no version at all.

Per block the model keeps the versions issued since the last verification
in order, and a floor: the newest version that must have survived.  A
command's versions reach the floor when it is durable: at its GOOD when
the write cache is off or it was a FUA write, else at the GOOD of a later
SYNCHRONIZE CACHE.  What may be read back is the floor's version or any
issued after it (a command the cut interrupted, a write not yet synced).
"""

import hashlib
import struct

BLOCK = 512
MAGIC = b"VAAI-PWR"
HEADER = struct.Struct(">8sIQQ")  # magic, LUN id, LBA written for, serial
ZEROS = bytes(BLOCK)


def zeroed(serial):
    """The version command serial leaves in a block it zeroes or unmaps."""
    return (None, serial)


def render(lun_id, version):
    """A block's bytes for version (lba, serial); None (the LUN's first
    contents) and zeroed() are zeros."""
    if version is None or version[0] is None:
        return ZEROS
    head = HEADER.pack(MAGIC, lun_id, *version)
    body = hashlib.sha256(head).digest() * (BLOCK // 32)
    return head + body[: BLOCK - len(head)]


def describe(lun_id, data):
    """What a block read back holds, for a report."""
    if data == ZEROS:
        return "zeros"
    magic, lun, lba, serial = HEADER.unpack_from(data)
    if magic != MAGIC:
        return "bytes no command wrote"
    if render(lun, (lba, serial)) != data:
        return f"a torn or damaged copy of LUN {lun} LBA {lba} serial {serial}"
    return f"LUN {lun} LBA {lba} serial {serial}"


class Command:
    """One command's versions: (block, index in that block's history)."""

    def __init__(self, what, serial, entries):
        self.what, self.serial, self.entries = what, serial, entries


class LunModel:
    def __init__(self, lun_id, nblocks, write_cache):
        self.lun_id = lun_id
        self.write_cache = write_cache
        self.history = [[None] for _ in range(nblocks)]
        self.floor = [0] * nblocks
        self.unsynced = []
        self.groups = []  # block ranges only COMPARE AND WRITE writes, whole
        self.serial = 0
        self.kinds = {}  # serial: the command that wrote it

    def current(self, block):
        """The newest version issued to block."""
        return self.history[block][-1]

    def new_serial(self):
        """The serial of the next command, which the versions it writes carry."""
        self.serial += 1
        return self.serial

    def issue(self, what, serial, versions):
        """Command serial is about to be sent; it makes block b hold version
        v for each (b, v) of versions."""
        self.kinds[serial] = what
        entries = []
        for block, version in versions:
            entries.append((block, len(self.history[block])))
            self.history[block].append(version)
        return Command(what, serial, entries)

    def acked(self, cmd, fua=False):
        """cmd returned GOOD."""
        if fua or not self.write_cache:
            self._durable(cmd)
        else:
            self.unsynced.append(cmd)

    def synced(self):
        """A SYNCHRONIZE CACHE of the whole LUN returned GOOD."""
        for cmd in self.unsynced:
            self._durable(cmd)
        self.unsynced = []

    def _durable(self, cmd):
        for block, index in cmd.entries:
            self.floor[block] = max(self.floor[block], index)

    def allowed(self, block):
        return self.history[block][self.floor[block] :]

    def check(self, data):
        """The whole LUN read back: a list of what is wrong with it."""
        wrong = []
        found = {}
        for block in range(len(self.history)):
            got = data[block * BLOCK : (block + 1) * BLOCK]
            allowed = self.allowed(block)
            match = [v for v in allowed if render(self.lun_id, v) == got]
            if match:
                found[block] = match[0]
                continue
            wrong.append(
                f"LUN {self.lun_id} block {block} holds {describe(self.lun_id, got)}; "
                f"allowed: {', '.join(map(self._named, allowed))} (the floor, then newer)"
            )
        for start, n in self.groups:
            seen = {found.get(b) for b in range(start, start + n)}
            if len({v and v[1] for v in seen}) > 1:
                wrong.append(
                    f"LUN {self.lun_id} blocks {start}-{start + n - 1} (one COMPARE AND "
                    f"WRITE range) hold versions of different commands: {sorted(map(str, seen))}"
                )
        self._found = found
        return wrong

    def check_live(self, data):
        """The whole LUN read back with the target still up and nothing
        outstanding: every block must hold its newest version."""
        return [
            f"LUN {self.lun_id} block {block} holds {describe(self.lun_id, got)}, "
            f"not {self._named(self.current(block))}"
            for block in range(len(self.history))
            if (got := data[block * BLOCK : (block + 1) * BLOCK])
            != render(self.lun_id, self.current(block))
        ]

    def _named(self, version):
        """A version with the command that wrote it."""
        if version is None:
            return "zeros (unwritten)"
        what = f"{self.kinds.get(version[1], '?')} {version[1]}"
        return f"zeros by {what}" if version[0] is None else f"{what} of LBA {version[0]}"

    def rebase(self):
        """After a verification: what was read back is where the next
        round starts, and all of it is durable (it came off the disk)."""
        for block, version in self._found.items():
            self.history[block] = [version]
            self.floor[block] = 0
        self.unsynced = []
