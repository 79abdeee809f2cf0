"""Where one EXTENDED COPY's time goes, inside the VM: the fabric's round
trip, the command's own handling, the clone, and the log force that makes
it durable.  On a file of data on XFS (reflink) on a RAM disk, over
tcm_loop, every command sent by bench/sgloop.c, one at a time:

  tur        TEST UNIT READY: the round trip through sd, tcm_loop and LIO
  noop       EXTENDED COPY of a segment onto itself: parsed, its CSCD
             descriptors resolved, queued to the copy engine, completed,
             nothing moved
  clone-wc1  4 MiB cloned, write cache on (nothing forced to the log)
  clone-wc0  4 MiB cloned, write cache off (durable before GOOD)

    guest_xcopy_cost.py OUT.json [--size 1G] [--cmd 4M]
"""

import argparse
import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from guest_clone import FS_MNT, Pattern, exported, punch, sgloop, xcopy_cmds  # noqa: E402
from guestlib import drop_caches, fs_on_brd  # noqa: E402
from vaai import VaaiStorageObject  # noqa: E402
from vaai.params import parse_size  # noqa: E402

TUR = bytes(6)


def send(sg, cmds):
    """Seconds per command."""
    return sgloop(sg, cmds) / len(cmds)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="the JSON results file to write")
    p.add_argument("--size", default="1G", help="bytes copied (default %(default)s)")
    p.add_argument("--cmd", default="4M", help="bytes per EXTENDED COPY (default %(default)s)")
    args = p.parse_args()
    size, cmd = parse_size(args.size), parse_size(args.cmd)
    res = {}
    with fs_on_brd(FS_MNT, 3 * size // 1024 + 262144, "xfs"):
        src, dst = os.path.join(FS_MNT, "src.img"), os.path.join(FS_MNT, "dst.img")
        Pattern().write(src, size)
        with open(dst, "wb") as f:
            f.truncate(size)
        with exported("ours", [src, dst]) as luns:
            n = size // cmd
            res["tur"] = send(luns[0].sg, [(TUR, b"")] * n)
            res["noop"] = send(luns[0].sg, xcopy_cmds(luns[0], luns[0], cmd, size))
            clones = xcopy_cmds(luns[0], luns[1], cmd, size)
            so = VaaiStorageObject("clone_ours_1")  # the destination's
            for wc in ("1", "0"):
                so.set_attribute("emulate_write_cache", wc)
                punch(dst, 0, size)
                drop_caches()
                res["clone-wc" + wc] = send(luns[0].sg, clones)
    us = {k: v * 1e6 for k, v in res.items()}
    for k in ("tur", "noop", "clone-wc1", "clone-wc0"):
        print(f"{k:<10} {us[k]:8.0f} us per command", flush=True)
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "kernel": platform.release(),
        "size": size,
        "cmd_bytes": cmd,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "us_per_command": us}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
