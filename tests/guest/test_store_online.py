"""control online=0|1: a block device LUN whose store is closed and opened
again while the LUN stays exported (a pair's Standby node on
single-primary DRBD: only DRBD's primary may open the device).

Closed, the LUN answers INQUIRY and READ CAPACITY as before, every command
that needs its data NOT READY, ASYMMETRIC ACCESS STATE TRANSITION, and
the device is let go (another opener may claim it).  Opened again, the
data is what it was.  Closing waits for the commands in flight, also a
copy issued to another LUN; a closing that is killed leaves it open."""

import errno
import os
import signal
import struct
import subprocess
import threading
import time

import pytest
from conftest import MiB, fill, read
from loopdev import claimed
from scsi import (
    COPY_ABORTED,
    NOT_READY,
    cdb_compare_and_write,
    cdb_get_lba_status,
    cdb_read10,
    cdb_read16,
    cdb_read_capacity16,
    cdb_sync_cache10,
    cdb_unmap,
    cdb_write10,
    cdb_write_same16,
    cscd_e4,
    expect_good,
    expect_sense,
    last_lba,
    naa_of,
    populate_token,
    read_capacity16,
    seg_b2b,
    sg_io,
    unmap_list,
    xcopy,
    xcopy_list,
)
from sense_codes import COPY_TARGET_NOT_REACHABLE
from slowdev import BS, in_background, kept_zero_luns
from vaai import VaaiError, VaaiStorageObject
from vaai.export import export_loopback, find_disk, sg_of, unexport

# LIO core's sense for an ALUA state transition (SPC-4 5.15.2.6)
ASYMMETRIC_ACCESS_STATE_TRANSITION = (0x04, 0x0A)
GOOD, CONDITION_MET = 0x00, 0x04


def control(so, line, timeout=60):
    """Write line to so's control file from a process of its own; its exit
    status (0, or the errno of the write)."""
    path = os.path.join(so.path, "control")
    script = (
        "import os, sys\nfd = os.open(sys.argv[1], os.O_WRONLY)\n"
        "try:\n os.write(fd, sys.argv[2].encode())\n"
        "except OSError as e:\n sys.exit(e.errno)\n"
    )
    run = subprocess.run(["python3", "-c", script, path, line], check=False, timeout=timeout)
    return run.returncode


def cdb_verify16(lba, nblocks):
    return struct.pack(">BBQIBB", 0x8F, 0, lba, nblocks, 0, 0)


def cdb_prefetch10(lba, nblocks):
    return struct.pack(">BBIBHB", 0x34, 0, lba, 0, nblocks, 0)


def needs_data(lun):
    """(what, send) of a command of every kind that reads or writes the
    store, each a command the LUN answers GOOD while its store is open."""
    bs = lun.block_size
    block = bytes([0x5A]) * bs
    cscd = cscd_e4(naa_of(lun.sg), bs)
    return [
        ("READ (10)", lambda: sg_io(lun.sg, cdb_read10(0, 1), data_in_len=bs)),
        ("READ (16)", lambda: sg_io(lun.sg, cdb_read16(1, 1), data_in_len=bs)),
        ("WRITE (10)", lambda: sg_io(lun.sg, cdb_write10(2, 1), data_out=block)),
        ("SYNCHRONIZE CACHE", lambda: sg_io(lun.sg, cdb_sync_cache10())),
        ("VERIFY (16)", lambda: sg_io(lun.sg, cdb_verify16(0, 8))),
        ("PRE-FETCH (10)", lambda: sg_io(lun.sg, cdb_prefetch10(0, 8))),
        ("WRITE SAME (16)", lambda: sg_io(lun.sg, cdb_write_same16(16, 8), data_out=block)),
        (
            "UNMAP",
            lambda: sg_io(lun.sg, cdb_unmap(24), data_out=unmap_list([(2048, 2048)])),
        ),
        ("GET LBA STATUS", lambda: sg_io(lun.sg, cdb_get_lba_status(0, 64), data_in_len=64)),
        (
            "COMPARE AND WRITE",
            lambda: sg_io(lun.sg, cdb_compare_and_write(2, 1), data_out=block + block),
        ),
        (
            "EXTENDED COPY",
            lambda: xcopy(lun.sg, xcopy_list([cscd], [seg_b2b(0, 0, 8, 0, 4096)])),
        ),
        ("POPULATE TOKEN", lambda: populate_token(lun.sg, [(0, 8)], list_id=7)),
    ]


def answered(res):
    assert res.status in (GOOD, CONDITION_MET), res


def offline_answers(lun):
    """Every command that needs the data is refused; what needs none is not."""
    for what, send in needs_data(lun):
        res = send()
        assert res.decoded() is not None, f"{what}: {res}"
        s = res.decoded()
        assert (s.key, s.asc, s.ascq) == (NOT_READY, *ASYMMETRIC_ACCESS_STATE_TRANSITION), (
            f"{what}: {res}"
        )
    # TEST UNIT READY: LIO core's GOOD (a Linux initiator's probe would
    # spin a not-ready disk up for 100 s; in Standby LIO refuses it)
    expect_good(sg_io(lun.sg, bytes(6)))
    assert last_lba(read_capacity16(lun.sg)) == lun.last_lba
    expect_good(sg_io(lun.sg, bytes([0x12, 1, 0x83, 0, 255, 0]), data_in_len=255))
    expect_good(sg_io(lun.sg, bytes([0x12, 1, 0xB0, 0, 255, 0]), data_in_len=255))


@pytest.mark.stores("bdev")
def test_a_closed_store_refuses_what_needs_data_and_is_let_go(make_lun):
    lun = make_lun(size=16 * MiB)
    data = fill(lun, 8192, 64)
    for _, send in needs_data(lun):
        answered(send())
    assert claimed(lun.backing.loop)

    lun.so.set_online(False)
    assert not lun.so.online and lun.so.store == "none"
    assert not claimed(lun.backing.loop), "the closed store's device is still held"
    offline_answers(lun)
    lun.so.set_online(False)  # again: nothing to do

    lun.so.set_online(True)
    assert lun.so.online and lun.so.store == "bdev"
    assert claimed(lun.backing.loop)
    assert read(lun, 8192, 64) == data
    for _, send in needs_data(lun):
        answered(send())
    # every command above gave the store back: it closes at once
    t0 = time.monotonic()
    lun.so.set_online(False)
    assert time.monotonic() - t0 < 5
    lun.so.set_online(True)


def vpd(sg, page):
    res = sg_io(sg, bytes([0x12, 1, page, 0, 255, 0]), data_in_len=255)
    expect_good(res)
    return res.data


# what a host reads of the LUN: capacity, Block Limits, provisioning
IDENTITY_PAGES = (0xB0, 0xB2)


@pytest.mark.stores("bdev")
def test_created_closed_then_opened(make_lun):
    """As on a pair's Standby node: made closed, the LUN tells hosts what
    it told them open (its size and thinness read from sysfs)."""
    lun = make_lun(size=16 * MiB)
    data = fill(lun, 100, 32)
    told = {page: vpd(lun.sg, page) for page in IDENTITY_PAGES}
    dev = lun.backing.loop
    unexport(lun.so)
    lun.so.delete()

    so = VaaiStorageObject("onl_made", path=dev, online=False)
    try:
        assert not so.online and so.store == "none" and so.size == 16 * MiB
        assert not claimed(dev)
        export_loopback(so)
        lun.so, lun.sg = so, sg_of(find_disk(so, "tcm_loopback"))
        assert {page: vpd(lun.sg, page) for page in IDENTITY_PAGES} == told
        offline_answers(lun)
        so.set_online(True)
        assert claimed(dev)
        assert {page: vpd(lun.sg, page) for page in IDENTITY_PAGES} == told
        assert read(lun, 100, 32) == data
    finally:
        unexport(so)
        so.delete()


@pytest.mark.stores("bdev")
def test_a_store_that_does_not_match_is_not_opened(make_lun):
    lun = make_lun(size=16 * MiB)
    lun.so.set_online(False)
    os.truncate(lun.backing.image, 8 * MiB)
    subprocess.run(["losetup", "--set-capacity", lun.backing.loop], check=True)
    with pytest.raises(VaaiError, match="fewer than the LUN's"):
        lun.so.set_online(True)
    assert not lun.so.online and not claimed(lun.backing.loop)
    offline_answers(lun)

    os.truncate(lun.backing.image, 16 * MiB)
    subprocess.run(["losetup", "--set-capacity", lun.backing.loop], check=True)
    lun.so.set_online(True)
    expect_good(sg_io(lun.sg, cdb_read10(0, 1), data_in_len=512))


@pytest.mark.stores("bdev")
def test_a_copy_to_a_closed_lun_is_not_reachable(make_lun):
    a = make_lun(size=16 * MiB)
    b = make_lun(size=16 * MiB, beside=a)
    before = read(b, 0, 64)
    fill(a, 0, 64)
    b.so.set_online(False)
    params = xcopy_list(
        [cscd_e4(naa_of(a.sg), 512), cscd_e4(naa_of(b.sg), 512)], [seg_b2b(0, 1, 64, 0, 0)]
    )
    expect_sense(xcopy(a.sg, params), COPY_ABORTED, *COPY_TARGET_NOT_REACHABLE)
    b.so.set_online(True)
    assert read(b, 0, 64) == before


@pytest.mark.stores("file")
def test_a_file_store_stays_open(lun):
    assert control(lun.so, "online=0") == errno.EOPNOTSUPP
    assert lun.so.online
    expect_good(sg_io(lun.sg, cdb_read10(0, 1), data_in_len=512))


def test_online_takes_0_or_1(lun):
    assert control(lun.so, "online=2") == errno.EBUSY
    assert lun.so.online


# --- closing while commands run (a slow device-mapper LUN) ----------------

kept = kept_zero_luns("onl_slow", "onl_dst")


@pytest.fixture
def slow(kept):
    with kept.each() as luns:
        yield luns
        for z in luns:
            z.so.set_online(True)


def closes_after(so, th, out):
    """so.set_online(False) while the command in th runs: the store stops
    taking commands at once but stays open (its device held) until the
    command is over; then it is let go."""
    closing = threading.Thread(target=so.set_online, args=(False,))
    closing.start()
    deadline = time.monotonic() + 30
    while so.online and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not so.online
    assert "end" not in out, "the command was over before the store was closing"
    assert claimed(so.path_name), "the store was closed under a running command"
    assert closing.is_alive()
    th.join(120)
    closing.join(30)
    assert not th.is_alive() and not closing.is_alive()
    assert not claimed(so.path_name)


def long_write_same(z):
    """A pattern over 2 GiB of the delay target: seconds."""
    nolb = (2 << 30) // BS
    return sg_io(z.sg, cdb_write_same16(0, nolb), data_out=bytes([0xA5]) * BS, timeout_ms=120000)


def test_closing_waits_for_the_commands_in_flight(slow):
    z = slow[0]
    th, out = in_background(lambda: long_write_same(z), settle=1)
    assert "end" not in out, "the WRITE SAME was over before the store was closed"
    closes_after(z.so, th, out)
    expect_good(out["res"])
    res = sg_io(z.sg, cdb_read10(0, 1), data_in_len=BS)
    expect_sense(res, NOT_READY, *ASYMMETRIC_ACCESS_STATE_TRANSITION)


def test_closing_waits_for_a_copy_issued_elsewhere(slow):
    src, dst = slow
    cscds = [cscd_e4(naa_of(src.sg), BS), cscd_e4(naa_of(dst.sg), BS)]
    params = xcopy_list(cscds, [seg_b2b(0, 1, 65535, 0, 0) for _ in range(4)])
    th, out = in_background(lambda: xcopy(src.sg, params), settle=1)
    assert "end" not in out, "the copy was over before the store was closed"
    closes_after(dst.so, th, out)
    expect_good(out["res"])


def test_a_killed_close_leaves_the_store_open(slow):
    z = slow[0]
    th, out = in_background(lambda: long_write_same(z), settle=1)
    path = os.path.join(z.so.path, "control")
    closing = subprocess.Popen(["sh", "-c", f"echo online=0 > {path}"])
    time.sleep(0.5)
    assert closing.poll() is None, "online=0 did not wait for the WRITE SAME"
    closing.send_signal(signal.SIGKILL)
    closing.wait(10)
    assert z.so.online
    expect_good(sg_io(z.sg, cdb_read_capacity16(), data_in_len=32))
    expect_good(sg_io(z.sg, cdb_read10(0, 1), data_in_len=BS))
    th.join(60)
    expect_good(out["res"])
    z.so.set_online(False)  # the kill left nothing behind to wait for
    z.so.set_online(True)
    expect_good(sg_io(z.sg, cdb_read10(0, 1), data_in_len=BS))
