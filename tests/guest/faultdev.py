"""A backing store whose device can be made to fail, and be mended.

FaultDev is a device-mapper linear target over a loop device: fail() swaps
its table for the error target (every I/O, flushes included, ends in EIO),
mend() swaps the linear table back.  The data below is untouched either
way, so what was on the device before the fault reads back after it."""

import os

from conftest import SCRATCH, sh


class FaultDev:
    def __init__(self, name, size):
        self.name = "vaai_fault_" + name
        self.image = os.path.join(SCRATCH, self.name + ".img")
        with open(self.image, "wb") as f:
            f.truncate(size)
        self.loop = sh("losetup", "--find", "--show", self.image).strip()
        self.sectors = size // 512
        sh("dmsetup", "create", self.name, "--table", self.linear())
        self.path = "/dev/mapper/" + self.name

    def linear(self):
        return f"0 {self.sectors} linear {self.loop} 0"

    def swap(self, table):
        sh("dmsetup", "load", self.name, "--table", table)
        sh("dmsetup", "suspend", "--noflush", self.name)
        sh("dmsetup", "resume", self.name)

    def fail(self):
        self.swap(f"0 {self.sectors} error")

    def mend(self):
        self.swap(self.linear())

    def remove(self):
        sh("dmsetup", "remove", "--retry", self.name, check=False)
        sh("losetup", "-d", self.loop, check=False)
        os.unlink(self.image)
