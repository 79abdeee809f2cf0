"""Loop devices by their ioctls (linux/loop.h), for the fixtures that make
one per test: losetup does the same in about 0.2 s a call in the
software-emulated guest, mostly starting itself."""

import errno
import fcntl
import os

LOOP_SET_FD = 0x4C00
LOOP_CLR_FD = 0x4C01
LOOP_CTL_GET_FREE = 0x4C82
TRIES = 64  # a free device taken by another before us, again and again


def attach(path):
    """/dev/loopN over the file at path, read-write, 512-byte sectors."""
    backing = os.open(path, os.O_RDWR)
    try:
        ctl = os.open("/dev/loop-control", os.O_RDWR)
        try:
            for _ in range(TRIES):
                n = fcntl.ioctl(ctl, LOOP_CTL_GET_FREE)
                dev = f"/dev/loop{n}"
                fd = os.open(dev, os.O_RDWR)
                try:
                    fcntl.ioctl(fd, LOOP_SET_FD, backing)
                    return dev
                except OSError as e:
                    if e.errno != errno.EBUSY:  # taken since GET_FREE
                        raise
                finally:
                    os.close(fd)
            raise OSError(errno.EBUSY, f"no free loop device for {path} in {TRIES} tries")
        finally:
            os.close(ctl)
    finally:
        os.close(backing)


def detach(dev):
    """dev let go of its file (once its last user has closed it)."""
    fd = os.open(dev, os.O_RDWR)
    try:
        fcntl.ioctl(fd, LOOP_CLR_FD)
    finally:
        os.close(fd)


def claimed(dev):
    """Something holds the block device dev open exclusively (the module,
    while its store is open): an O_EXCL open of it fails with EBUSY."""
    try:
        os.close(os.open(dev, os.O_RDWR | os.O_EXCL))
    except OSError as e:
        if e.errno == errno.EBUSY:
            return True
        raise
    return False
