"""The demo: one sparse-file vaai LUN, served over tcm_loop and over iSCSI
on 127.0.0.1, checked with sg3_utils and a write/read round trip across the
two fabrics, then every primitive: EXTENDED COPY, ODX token copy, WRITE
SAME, UNMAP, GET LBA STATUS and COMPARE AND WRITE.  Runs where
target_core_vaai is loaded (the VM: `make demo`).

    python3 -m vaai.demo [--dir /run/vaai]
"""

import argparse
import hashlib
import mmap
import os
import subprocess
import sys

from . import backstore, odx, stats
from .export import export_iscsi, export_loopback, find_disk, unexport

HERE = os.path.dirname(os.path.abspath(__file__))
INITIATOR = os.path.join(HERE, "..", "..", "fabrics", "iscsi", "initiator.sh")
TARGET_IQN = "iqn.2026-11.org.vaai:demo"
MiB = 1 << 20


def step(title):
    print(f"\n== {title}", flush=True)


def run(*argv, show=True):
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    if show:
        print("$ {}\n{}".format(" ".join(argv), out.rstrip()), flush=True)
    return out


def allocated(path):
    return os.stat(path).st_blocks * 512


def _aligned(data):
    """O_DIRECT wants page-aligned buffers: an anonymous mapping is one."""
    m = mmap.mmap(-1, len(data))
    m.write(data)
    return m


def read_direct(disk, offset, size):
    buf = mmap.mmap(-1, size)
    fd = os.open(disk, os.O_RDONLY | os.O_DIRECT)
    try:
        n = os.preadv(fd, [buf], offset)
    finally:
        os.close(fd)
    if n != size:
        raise OSError(f"short read from {disk}")
    return bytes(buf)


def write_direct(disk, offset, data):
    fd = os.open(disk, os.O_WRONLY | os.O_DIRECT)
    try:
        n = os.pwritev(fd, [_aligned(data)], offset)
        os.fsync(fd)
    finally:
        os.close(fd)
    if n != len(data):
        raise OSError(f"short write to {disk}")


def show_counters(so, names):
    for name in names:
        with open(os.path.join(so.path, "attrib", "stats_" + name)) as f:
            print(f"attrib/stats_{name} = {f.read().strip()}")


def demo(workdir):
    image = os.path.join(workdir, "demo-lun.img")
    if os.path.exists(image):
        os.unlink(image)

    step("create a 1 GiB sparse-file vaai LUN (vaaictl create, ESXi profile)")
    so = backstore.create("demo", image, size=1 << 30)
    print(
        f"backstore vaai/{so.name}: {so.store} store, {so.size} bytes, "
        f"{allocated(image)} bytes allocated"
    )

    iscsi_iqn = None
    try:
        step("export over tcm_loop and over iSCSI on 127.0.0.1:3260")
        export_loopback(so)
        loop_disk = find_disk(so, "tcm_loopback")
        print(f"tcm_loop: {loop_disk}")
        run(INITIATOR, "start", show=False)
        initiator = run(INITIATOR, "name", show=False).strip()
        export_iscsi(so, TARGET_IQN, initiators=[initiator])
        run(INITIATOR, "login", TARGET_IQN, show=False)
        iscsi_iqn = TARGET_IQN
        iscsi_disk = find_disk(so, "iscsi_tcp")
        print(f"iSCSI {TARGET_IQN}, initiator {initiator}: {iscsi_disk}")

        for disk in (loop_disk, iscsi_disk):
            step(f"sg_inq and sg_readcap on {disk}")
            out = run("sg_inq", disk, show=False)
            print(
                "\n".join(
                    line for line in out.splitlines() if "identification" in line or "3PC" in line
                )
            )
            run("sg_readcap", "-l", disk)

        step("write 4 MiB over tcm_loop, read it back over iSCSI")
        data = os.urandom(4 * MiB)
        write_direct(loop_disk, 256 * MiB, data)
        back = read_direct(iscsi_disk, 256 * MiB, len(data))
        same = hashlib.sha256(back).hexdigest() == hashlib.sha256(data).hexdigest()
        print(
            "sha256 written {}\nsha256 read    {}\n{}".format(
                hashlib.sha256(data).hexdigest(),
                hashlib.sha256(back).hexdigest(),
                "round trip verified" if same else "ROUND TRIP MISMATCH",
            )
        )
        if not same:
            return 1
        print(f"backing file: {allocated(image)} bytes allocated of {so.size}")

        step("full copy over iSCSI: EXTENDED COPY of those 4 MiB within the LUN")
        out = run("sg_vpd", "-p", "tpc", iscsi_disk, show=False)
        print(
            "\n".join(
                line
                for line in out.splitlines()
                if "xtended copy" in line or "descriptor count" in line
            )
        )
        run(
            "sg_xcopy",
            "if=" + iscsi_disk,
            "of=" + iscsi_disk,
            "bs=512",
            f"skip={256 * MiB // 512}",
            f"seek={512 * MiB // 512}",
            f"count={4 * MiB // 512}",
        )
        copied = read_direct(loop_disk, 512 * MiB, len(data)) == data
        print("copy read back over tcm_loop: %s" % ("verified" if copied else "MISMATCH"))
        show_counters(so, ("clone_read", "clone_write", "clone_read_bytes"))
        if not copied:
            return 1

        step("token copy (ODX) over iSCSI: POPULATE TOKEN, WRITE USING TOKEN")
        token = odx.populate_token(iscsi_disk, [(256 * MiB // 512, 4 * MiB // 512)])
        rod_type = int.from_bytes(token[0:4], "big")
        print(f"token of 4 MiB: ROD type 0x{rod_type:08x}, {len(token)} bytes")
        odx.write_using_token(iscsi_disk, token, [(768 * MiB // 512, 4 * MiB // 512)])
        odx_copied = read_direct(loop_disk, 768 * MiB, len(data)) == data
        print("copy read back over tcm_loop: %s" % ("verified" if odx_copied else "MISMATCH"))
        show_counters(so, ("odx_tokens", "clone_write", "clone_write_bytes"))
        if not odx_copied:
            return 1

        step("thin provisioning over iSCSI: VPD, WRITE SAME, UNMAP, GET LBA STATUS")
        out = run("sg_vpd", "-p", "lbpv", iscsi_disk, show=False)
        print("\n".join(line for line in out.splitlines() if "LBP" in line))
        lba = 256 * MiB // 512
        run("sg_write_same", "--16", f"--lba={lba}", "--num=2048", iscsi_disk)
        zeroed = read_direct(loop_disk, 256 * MiB, MiB) == bytes(MiB)
        print("1 MiB zeroed with one WRITE SAME(16): %s" % ("verified" if zeroed else "NOT ZERO"))
        run("sg_unmap", "--force", f"--lba={lba + 2048}", "--num=6144", iscsi_disk)
        unmapped = read_direct(loop_disk, 257 * MiB, 3 * MiB) == bytes(3 * MiB)
        print("3 MiB unmapped: reads back zeros: %s" % ("verified" if unmapped else "NO"))
        run("sg_get_lba_status", f"--lba={lba}", iscsi_disk)
        print(f"backing file: {allocated(image)} bytes allocated")
        if not (zeroed and unmapped):
            return 1

        step("ATS: COMPARE AND WRITE over iSCSI")
        block = os.urandom(512)
        write_direct(loop_disk, 0, block * 8)
        new = os.urandom(512)
        match = os.path.join(workdir, "caw-match")
        with open(match, "wb") as f:
            f.write(block + new)
        run(
            "sg_compare_and_write",
            f"--in={match}",
            "--lba=0",
            "--num=1",
            "--xferlen=1024",
            iscsi_disk,
        )
        written = read_direct(loop_disk, 0, 512) == new
        print("matching CAW wrote the new block: %s" % ("verified" if written else "NO"))
        p = subprocess.run(
            [
                "sg_compare_and_write",
                f"--in={match}",
                "--lba=0",
                "--num=1",
                "--xferlen=1024",
                iscsi_disk,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        print(
            "the same CAW again (the block changed): {}".format(
                (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
            )
        )
        unchanged = read_direct(loop_disk, 0, 512) == new
        print("miscompare wrote nothing: %s" % ("verified" if unchanged else "NO"))
        os.unlink(match)

        step("the counters, as `vaaictl stats` shows them")
        print(stats.table(stats.read(names=[so.name])), end="")
        return 0 if written and unchanged and p.returncode else 1
    finally:
        step("tear down")
        if iscsi_iqn:
            run(INITIATOR, "logout", iscsi_iqn, show=False)
        unexport(so)
        so.delete()
        os.unlink(image)
        print("done")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--dir",
        default=os.environ.get("VAAI_SCRATCH", "/run/vaai"),
        help="where the LUN's file goes (default: $VAAI_SCRATCH or /run/vaai)",
    )
    args = p.parse_args(argv)
    return demo(args.dir)


if __name__ == "__main__":
    sys.exit(main())
