#!/usr/bin/env python3
"""Write the fuzzers' seed corpus, tests/fuzz/corpus/<target>/<name>.

Each seed is the input layout its fuzz_<target>.c describes, around what
real initiators send: sg_unmap's and ESXi's (VMFS-6, 1 MiB units) UNMAP
lists, sg_xcopy's and ESXi's EXTENDED COPY lists, Windows' token copy (ODX)
lists, the CDBs of ATS, zeroing and GET LBA STATUS, and MISCOMPARE sense.
Run it again after changing a layout: it rewrites the directory.
"""

import os
import shutil
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
GIB_512 = (1 << 30) // 512  # blocks of a 1 GiB LUN


def be16(v):
    return struct.pack(">H", v)


def be32(v):
    return struct.pack(">I", v)


def be64(v):
    return struct.pack(">Q", v)


def unmap_list(ranges, trailing=b""):
    descs = b"".join(be64(lba) + be32(n) + b"\0" * 4 for lba, n in ranges)
    descs += trailing
    return be16(6 + len(descs)) + be16(len(descs)) + b"\0" * 4 + descs


def unmap_seeds():
    limits = be64(GIB_512) + be16(4095) + be32((8 << 30) // 512)
    return {
        "sg_unmap_one": limits + unmap_list([(0x1000, 0x800)]),
        "esxi_vmfs6_1mib": limits + unmap_list([(2048 * i, 2048) for i in range(16)]),
        "header_only": limits + unmap_list([]),
        "zero_blocks_and_trailing": limits
        + unmap_list([(7, 0), (GIB_512 - 1, 1)], trailing=b"\xff" * 7),
        "small_limits": be64(1000)
        + be16(2)
        + be32(600)
        + unmap_list([(0, 300), (300, 300), (999, 1)]),
        # the largest capacity there is: LBA + NUMBER OF BLOCKS near 2^64
        "near_u64_max": be64(2**64 - 1)
        + be16(4095)
        + be32(2**32 - 1)
        + unmap_list([(2**64 - 2**20, 0x100)]),
    }


def cscd(k, block_size):
    """Identification CSCD (E4h) naming fake LUN k by an NAA designator."""
    naa = bytes([0x60, 0x01, 0x40, 0x50]) + b"\x12" * 11 + bytes([k])
    return (
        bytes([0xE4, 0, 0, 0, 0x01, 0x03, 0, 16])
        + naa
        + b"\0" * 5
        + struct.pack(">I", block_size)[1:]
    )


def b2b(src, dst, nblocks, slba, dlba, dc=False):
    return (
        bytes([0x02, 0x02 if dc else 0])
        + be16(0x18)
        + be16(src)
        + be16(dst)
        + b"\0\0"
        + be16(nblocks)
        + be64(slba)
        + be64(dlba)
    )


def xcopy_list(list_id, usage, cscds, segs):
    c, s = b"".join(cscds), b"".join(segs)
    return bytes([list_id, usage << 3]) + be16(len(c)) + b"\0" * 4 + be32(len(s)) + be32(0) + c + s


def xcopy_seeds():
    # fake LUNs: 512 B and 1 GiB (capacity index 5), twice; 4 KiB; read-only
    fakes = bytes([5 << 3, 5 << 3, (5 << 3) | 1, (5 << 3) | 2])
    return {
        "sg_xcopy_same_lun": fakes
        + xcopy_list(0, 3, [cscd(0, 512), cscd(0, 512)], [b2b(0, 1, 2048, 0, 8192)]),
        "esxi_clone_4mib": fakes
        + xcopy_list(
            0x2A,
            2,
            [cscd(0, 512), cscd(1, 512)],
            [b2b(0, 1, 8192, 8192 * i, 65536 + 8192 * i) for i in range(8)],
        ),
        "hold_4k_dc": fakes
        + xcopy_list(7, 0, [cscd(0, 512), cscd(2, 4096)], [b2b(0, 1, 4, 0, 10, dc=True)]),
        "readonly_destination": fakes
        + xcopy_list(0, 3, [cscd(0, 512), cscd(3, 512)], [b2b(0, 1, 8, 0, 0)]),
    }


def odx_ranges(ranges):
    return b"".join(be64(lba) + be32(n) + b"\0" * 4 for lba, n in ranges)


def populate_token(ranges, flags=0, timeout=0, rod_type=0):
    descs = odx_ranges(ranges)
    return (
        be16(14 + len(descs))
        + bytes([flags, 0])
        + be32(timeout)
        + be32(rod_type)
        + b"\0\0"
        + be16(len(descs))
        + descs
    )


def rod_token(rod_type, body=b""):
    """A 512-byte ROD token: its type, ROD TOKEN LENGTH 01F8h, then body."""
    return (be32(rod_type) + b"\0\0" + be16(0x1F8) + body).ljust(512, b"\0")


def write_using_token(token, ranges, offset=0, flags=0):
    descs = odx_ranges(ranges)
    return (
        be16(534 + len(descs))
        + bytes([flags])
        + b"\0" * 5
        + be64(offset)
        + token
        + b"\0" * 6
        + be16(len(descs))
        + descs
    )


def odx_seeds():
    # capacity, block size byte (bit 0: 4 KiB; bit 1: map onto the other
    # size), list byte (bit 0: WRITE USING TOKEN; bits 7:1: a skip)
    def lun(nr_blocks, bs_sel, which):
        return be64(nr_blocks) + bytes([bs_sel, which])

    aur = rod_token(0x00010000, bytes(range(8, 256)) + b"\x5a" * 32)
    return {
        # Windows' copy of an 8 MiB file: one range, the default timeout
        "windows_pt_8mib": lun(GIB_512, 0, 0) + populate_token([(0x800, 16384)]),
        "wut_zero_token_4k": lun(GIB_512 // 8, 1, 1)
        + write_using_token(rod_token(0xFFFF0001), [(0, 256), (1024, 256)]),
        "wut_aur_offset": lun(GIB_512, 2, 1)
        + write_using_token(aur, [(4096, 8), (0, 8)], offset=8, flags=0x02),
        "pt_64_ranges": lun(GIB_512, 2, 3 << 1)
        + populate_token(
            [(4096 * i, 2048) for i in range(64)], flags=0x02, timeout=3600, rod_type=0x00010000
        ),
        "header_only": lun(GIB_512, 0, 0) + populate_token([]),
    }


CMDS = ["caw", "ws10", "ws16", "verify10", "verify12", "verify16", "lbas", "unmap", "xcopy", "rsoc"]


def cdb_seed(cmd, flags, cdb, nr_blocks=GIB_512):
    lun = be64(nr_blocks) + be32((2 << 30) // 512) + be32(16384)
    return bytes([CMDS.index(cmd), flags]) + lun + cdb.ljust(16, b"\0")


def cdb_seeds():
    return {
        "esxi_ats": cdb_seed("caw", 0, b"\x89\x00" + be64(0x1000) + b"\0\0\0\x01\0\0"),
        "esxi_zero_unmap": cdb_seed("ws16", 2, b"\x93\x08" + be64(2048) + be32(2048)),
        "sg_write_same10": cdb_seed("ws10", 0, b"\x41\x00" + be32(0) + b"\0" + be16(8) + b"\0"),
        "verify16_bytchk": cdb_seed("verify16", 0, b"\x8f\x02" + be64(16) + be32(8)),
        "verify12": cdb_seed("verify12", 0, b"\xaf\x06" + be32(1) + be32(4)),
        "get_lba_status": cdb_seed("lbas", 0, b"\x9e\x12" + be64(0) + be32(4096)),
        "unmap": cdb_seed("unmap", 0, b"\x42\0\0\0\0\0\0" + be16(24)),
        "xcopy": cdb_seed("xcopy", 0, b"\x83" + b"\0" * 9 + be32(108)),
        # sg_opcodes, and sg_opcodes --op=89 --rctd; features all on
        "sg_opcodes": cdb_seed("rsoc", 0xFC, b"\xa3\x0c\x00\0\0\0" + be32(8192)),
        "sg_opcodes_caw_rctd": cdb_seed("rsoc", 0xFC, b"\xa3\x0c\x81\x89\0\0" + be32(64)),
        "last_lba_4k": cdb_seed(
            "caw", 1, b"\x89\x00" + be64(GIB_512 // 8 - 1) + b"\0\0\0\x01\0\0", GIB_512 // 8
        ),
    }


def sense_seed(key, asc, ascq, desc, in_cdb, byte, bit, size, info, data):
    flags = desc | in_cdb << 1 | (byte is not None) << 2 | (bit is not None) << 3
    out = bytes([key, asc, ascq, flags])
    if byte is not None:
        out += be16(byte)
    if bit is not None:
        out += bytes([bit])
    return out + bytes([size]) + be64(info) + data


def sense_seeds():
    verify = bytes(range(64))
    medium = verify[:17] + b"\xee" + verify[18:]
    return {
        "param_field_fixed": sense_seed(5, 0x26, 0, 0, 0, 16, None, 96, 0, b""),
        "cdb_bit_desc": sense_seed(5, 0x24, 0, 1, 1, 3, 7, 96, 0, b""),
        "miscompare_fixed": sense_seed(0xE, 0x1D, 0, 0, 0, None, None, 96, 17, verify + medium),
        "miscompare_desc": sense_seed(0xE, 0x1D, 0, 1, 0, None, None, 96, 1 << 33, verify + medium),
        "too_small": sense_seed(5, 0x26, 0, 1, 0, 8, None, 15, 0, b""),
    }


def range_seeds():
    def add(slot, start, blocks, excl=False):
        return bytes([slot | (0x40 if excl else 0), start, blocks - 1])

    def drop(slot):
        return bytes([0x80 | slot])

    return {
        "caw_behind_writes": add(0, 0, 8)
        + add(1, 4, 8)
        + add(2, 2, 1, True)
        + add(3, 2, 1)
        + drop(0)
        + drop(1)
        + drop(2)
        + drop(3),
        "disjoint_caws": add(0, 0, 1, True) + add(1, 1, 1, True) + add(2, 0, 2) + drop(1) + drop(0),
        "reads_only": add(0, 0, 255) + add(1, 0, 255) + drop(0) + add(0, 9, 9),
    }


def main():
    seeds = {
        "unmap_list": unmap_seeds(),
        "xcopy_list": xcopy_seeds(),
        "cdb": cdb_seeds(),
        "sense": sense_seeds(),
        "range": range_seeds(),
        "odx_list": odx_seeds(),
    }
    for target, files in seeds.items():
        d = os.path.join(ROOT, target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, data in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
