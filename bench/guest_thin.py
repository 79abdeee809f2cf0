"""Thin-provisioning benchmarks inside the VM, ours against upstream LIO
fileio on the same XFS, in the same boot.

For each side, on a fresh 1 GiB sparse file exported over tcm_loop:
  zero    1 GiB with 1 MiB WRITE SAME(16) commands carrying one zero block
          (what ESXi sends to eager-zero a VMDK)
  unmap   1 GiB with 1 MiB UNMAP ranges, one per command (VMFS-6's unit),
          after the file was written out in full
  host    1 GiB of zeros written with 1 MiB WRITE(16) commands (what ESXi
          does without the offload)
Reports seconds and the backing file's allocated bytes after each, for LIO,
for ours as configured by default (write cache off: each command durable
before GOOD) and for ours with the write cache on.

    guest_thin.py OUT.json
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "guest"))

from guestlib import xfs_on_brd  # noqa: E402
from rtslib_fb import FileIOStorageObject  # noqa: E402
from scsi import cdb_write16, cdb_write_same16, expect_good, sg_io, unmap  # noqa: E402
from vaai import VaaiStorageObject  # noqa: E402
from vaai.export import export_loopback, find_disk, sg_of, unexport  # noqa: E402

MiB = 1 << 20
LUN_BYTES = 1 << 30
FS_MNT = "/run/vaai-thin"
BLOCKS_PER_MIB = MiB // 512


def allocated(path):
    return os.stat(path).st_blocks * 512


def each_mib(sg, send):
    t0 = time.monotonic()
    for i in range(LUN_BYTES // MiB):
        expect_good(send(sg, i * BLOCKS_PER_MIB))
    return time.monotonic() - t0


def zero(sg, lba):
    return sg_io(sg, cdb_write_same16(lba, BLOCKS_PER_MIB), data_out=bytes(512))


def unmap_mib(sg, lba):
    return unmap(sg, [(lba, BLOCKS_PER_MIB)])


ZEROS = bytes(MiB)


def write_zeros(sg, lba):
    return sg_io(sg, cdb_write16(lba, BLOCKS_PER_MIB), data_out=ZEROS)


def make(who, path):
    if os.path.exists(path):
        os.unlink(path)
    if who.startswith("ours"):
        so = VaaiStorageObject("thin_" + who, path=path, size=LUN_BYTES)
        # ours_wb: write cache on, so nothing is forced to stable storage
        # per command; the default (off) makes every command durable
        so.set_attribute("emulate_write_cache", "1" if who == "ours_wb" else "0")
        return so
    with open(path, "wb") as f:
        f.truncate(LUN_BYTES)
    so = FileIOStorageObject("thin_lio", dev=path, size=LUN_BYTES)
    # upstream ships UNMAP off; turned on so there is something to compare
    so.set_attribute("emulate_tpu", "1")
    return so


def measure(who):
    path = os.path.join(FS_MNT, f"{who}.img")
    out = {}
    for step, send in (("zero", zero), ("unmap", unmap_mib), ("host", write_zeros)):
        so = make(who, path)
        try:
            export_loopback(so)
            sg = sg_of(find_disk(so, "tcm_loopback"))
            if step == "unmap":
                each_mib(sg, write_zeros)  # something to give back
            seconds = each_mib(sg, send)
            out[step] = {"seconds": seconds, "allocated": allocated(path)}
            print(
                f"{who} {step}: {seconds:.2f} s, {allocated(path)} bytes allocated",
                flush=True,
            )
        finally:
            unexport(so)
            so.delete()
            os.unlink(path)
    return out


def main(argv):
    with xfs_on_brd(FS_MNT, 3 * 1024 * 1024):
        results = {who: measure(who) for who in ("ours", "ours_wb", "lio")}
    meta = {
        "lun_bytes": LUN_BYTES,
        "fs": "xfs on brd",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    with open(argv[1], "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
