"""The log dm-log-writes keeps (the kernel's drivers/md/dm-log-writes.c,
Documentation/admin-guide/device-mapper/log-writes.rst), read back.

The log device's first sector is the super block (magic, version, number
of entries, the sector size the log counts in).  The entries follow from
the next sector on, in the order the writes completed: each is one sector
of header (sector, number of sectors, flags, data length; a mark's text
after it), then, for a write, its data.  All sizes and positions are in
the log's sector size, which is the data device's logical block size.
"""

import struct
from collections import namedtuple

MAGIC = 0x6A736677736872
VERSION = 1
SUPER = struct.Struct("<QQQI")
ENTRY = struct.Struct("<QQQQ")

FLUSH, FUA, DISCARD, MARK, METADATA = 1, 2, 4, 8, 16

# offset and length in bytes on the data device
Entry = namedtuple("Entry", "index offset length flags data mark")


class LogError(Exception):
    """The log is not one dm-log-writes wrote, or ends early."""


def entries(f):
    """Each entry of the log in file f, in order."""
    f.seek(0)
    magic, version, count, sectorsize = SUPER.unpack(f.read(SUPER.size))
    if magic != MAGIC or version != VERSION:
        raise LogError(f"not a dm-log-writes log (magic {magic:#x}, version {version})")
    pos = sectorsize
    for index in range(count):
        f.seek(pos)
        head = f.read(sectorsize)
        if len(head) < sectorsize:
            raise LogError(f"the log ends inside entry {index} of {count}")
        sector, nr_sectors, flags, data_len = ENTRY.unpack_from(head)
        pos += sectorsize
        mark, data = None, b""
        if flags & MARK:
            mark = head[ENTRY.size : ENTRY.size + data_len].decode(errors="replace")
        elif not flags & DISCARD and nr_sectors:
            data = f.read(nr_sectors * sectorsize)
            if len(data) < nr_sectors * sectorsize:
                raise LogError(f"the log ends inside the data of entry {index}")
            pos += nr_sectors * sectorsize
        yield Entry(index, sector * sectorsize, nr_sectors * sectorsize, flags, data, mark)
