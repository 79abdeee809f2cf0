"""Queue depth: a LUN keeps at least 128 commands of one session in flight
to its store at once, on both stores and in both file I/O modes; nothing in
the backend serializes independent commands.

The store sits on a device-mapper delay target that holds every read for
DELAY_MS; fio keeps 128 reads outstanding over tcm_loop.  attrib/
stats_in_flight, the backend's count of requests at the store (esxtop's
ACTV), is sampled while they wait: its peak is how many the backend passed
on together.  A backend that serialized them would show 1; 90 % of 128
leaves room for the reads between completion and fio's next submission.
(fio's mean latency says the same for the direct and block paths, but not
for buffered reads, which also wait for pages other reads are filling.)
No command may time out at the initiator meanwhile."""

import contextlib
import os
import subprocess
import time

import pytest
from conftest import SCRATCH, MiB, drop_caches, module_loaded, sh, udev_probed
from vaai import VaaiStorageObject
from vaai.export import export_loopback, find_disk, unexport

DEPTH = 128
DELAY_MS = 1000


class DelayDev:
    """A device-mapper delay target over `under`; reads wait only while
    slow(), writes never."""

    def __init__(self, name, under, nbytes):
        self.name = "vaai_qd_" + name
        self.table = f"0 {nbytes // 512} delay {under} 0 %d {under} 0 0"
        sh("dmsetup", "create", self.name, "--table", self.table % 0)
        self.path = "/dev/mapper/" + self.name

    @contextlib.contextmanager
    def slow(self):
        """The resume's change event has udev probe the device: with the
        delay on, a read a second, half a minute.  The probe reads the
        device-mapper device, not through the LUN, so it is not waited for
        (it ends quickly once the delay is off; remove() settles udev)."""
        sh("dmsetup", "reload", self.name, "--table", self.table % DELAY_MS)
        sh("dmsetup", "resume", "--noudevsync", self.name)
        try:
            yield
        finally:
            sh("dmsetup", "reload", self.name, "--table", self.table % 0)
            sh("dmsetup", "resume", "--noudevsync", self.name)

    def remove(self):
        sh("udevadm", "settle")
        sh("dmsetup", "remove", "--retry", self.name)


def timed_out(disk):
    """Commands to disk the SCSI layer gave up waiting for (30 s each)."""
    with open(f"/sys/block/{os.path.basename(disk)}/device/iotmo_cnt") as f:
        return int(f.read(), 0)


def in_flight_at_store(so, disk, dev, seconds=4):
    """fio randread at DEPTH on disk, the delay on: the most requests the
    backend had at the store at once.  None may time out at the initiator:
    requests the store holds together must also be served together."""
    gauge = os.path.join(so.path, "attrib", "stats_in_flight")
    timeouts = timed_out(disk)
    with dev.slow():
        fio = subprocess.Popen(
            [
                "fio",
                "--name=qd",
                "--filename=" + disk,
                "--direct=1",
                "--ioengine=libaio",
                f"--iodepth={DEPTH}",
                "--rw=randread",
                "--bs=4k",
                "--size=32M",
                "--time_based",
                f"--runtime={seconds}",
                "--norandommap",
                "--randrepeat=0",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        peak = 0
        try:
            while fio.poll() is None:
                with open(gauge) as f:
                    peak = max(peak, int(f.read()))
                time.sleep(0.05)
        finally:
            if fio.poll() is None:
                fio.kill()
            err = fio.communicate()[1]
    # before fio's own verdict: a timeout ends in a reset, and fio in EIO
    late = timed_out(disk) - timeouts
    assert late == 0, f"{late} commands timed out at the initiator"
    assert fio.returncode == 0, err
    with open(gauge) as f:
        assert int(f.read()) == 0, "requests still counted once all completed"
    return peak


def assert_parallel(held):
    assert held >= 0.9 * DEPTH, f"the store held only {held:.0f} of {DEPTH} commands at once"


@pytest.fixture
def loop_image():
    """A 512 MiB loop device over a tmpfs file."""
    image = os.path.join(SCRATCH, "qd.img")
    with open(image, "wb") as f:
        f.truncate(512 * MiB)
    loop = sh("losetup", "--find", "--show", image).strip()
    yield loop
    sh("losetup", "-d", loop)
    os.unlink(image)


@contextlib.contextmanager
def exported_disk(name, path, **attributes):
    """A vaai LUN on path over tcm_loop: its /dev/sdX, removed afterwards."""
    so = VaaiStorageObject(name, path=path)
    try:
        for attr, value in attributes.items():
            so.set_attribute(attr, value)
        export_loopback(so)
        disk = find_disk(so, "tcm_loopback")
        # the initiator's own limit must not be what is measured
        qd = f"/sys/block/{os.path.basename(disk)}/device/queue_depth"
        with open(qd) as f:
            assert int(f.read()) >= DEPTH, f"tcm_loop's queue depth is below {DEPTH}"
        # udev's probe of the new disk must be done before reads are slow
        udev_probed(disk)
        yield so, disk
    finally:
        unexport(so)
        so.delete()


def test_block_store_keeps_128_in_flight(loop_image):
    dev = DelayDev("bdev", loop_image, 512 * MiB)
    try:
        with exported_disk("qdb", dev.path) as (so, disk):
            held = in_flight_at_store(so, disk, dev)
        assert_parallel(held)
    finally:
        dev.remove()


@pytest.mark.parametrize("mode,wce", [("direct", 0), ("buffered", 1)])
def test_file_store_keeps_128_in_flight(loop_image, tmp_path, mode, wce):
    dev = DelayDev("file", loop_image, 512 * MiB)
    mnt = str(tmp_path / "mnt")
    os.mkdir(mnt)
    try:
        sh("mkfs.xfs", "-q", "-f", dev.path)
        sh("mount", dev.path, mnt)
        path = os.path.join(mnt, "lun.img")
        # written out, so reads reach the device rather than holes
        sh("dd", "if=/dev/zero", "of=" + path, "bs=1M", "count=64", "conv=fsync", "status=none")
        with exported_disk("qdf", path, emulate_write_cache=wce, io_mode=mode) as (so, disk):
            drop_caches()
            held = in_flight_at_store(so, disk, dev)
        assert_parallel(held)
    finally:
        subprocess.run(["umount", mnt], capture_output=True, check=False)
        dev.remove()


def test_store_work_queues_have_no_rescuer():
    """A workqueue's rescuer runs the work it rescues one after another.
    The store's work blocks for a whole I/O: when new workers were slow to
    come, 89 buffered reads from a 1 s disk ran on the I/O queue's rescuer
    in series, commands timed out and the LUN was reset (vaai_main.c).  A
    rescuer is a kernel thread named after its queue."""
    assert module_loaded()
    rescuers = set(sh("ps", "-e", "-o", "comm=").split()) & {"vaai_io", "vaai_copy", "vaai_clone"}
    assert not rescuers, "rescuers: {}".format(", ".join(sorted(rescuers)))
