"""What the in-guest benchmarks share: running commands, and the XFS file
system on a RAM disk that their backing files live on."""
import contextlib
import os
import subprocess


def sh(*argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


@contextlib.contextmanager
def xfs_on_brd(mnt, rd_kib, rd_nr=1):
    """/dev/ram0 .. ram<rd_nr - 1> of rd_kib KiB each, XFS on ram0 mounted
    at mnt; all of it gone again afterwards."""
    sh("modprobe", "brd", "rd_nr=%d" % rd_nr, "rd_size=%d" % rd_kib)
    try:
        sh("mkfs.xfs", "-q", "-f", "/dev/ram0")
        os.makedirs(mnt, exist_ok=True)
        sh("mount", "/dev/ram0", mnt)
        try:
            yield mnt
        finally:
            sh("umount", mnt)
    finally:
        sh("rmmod", "brd")
