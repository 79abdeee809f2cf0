"""Slow LUNs that cost no memory, for tests that stop long commands.

A ZeroLun is a device-mapper zero target behind a delay target: 64 GiB that
read as zeros, swallow writes, and take DELAY_MS for every I/O, so a copy or
a WRITE SAME over them runs for seconds or minutes."""

import contextlib
import struct
import threading
import time

import pytest
from conftest import ISCSI_IQN, KEPT, sh
from scsi import (
    clear_unit_attention,
    cscd_e4,
    expect_good,
    naa_of,
    receive_copy_results,
    seg_b2b,
    sg_io,
    xcopy_list,
)
from vaai import VaaiStorageObject
from vaai.export import drop_lun, export_loopback, find_disk, sg_of, unexport

from fabrics import iscsi_login

GiB = 1 << 30
SIZE = 64 * GiB
BS = 4096
DELAY_MS = 5
SEG_BLOCKS = 65535


class ZeroLun:
    def __init__(self, name, beside=None):
        self.dms = ["vaai_zero_" + name, "vaai_slow_" + name]
        sh("dmsetup", "create", self.dms[0], "--table", f"0 {SIZE // 512} zero")
        sh(
            "dmsetup",
            "create",
            self.dms[1],
            "--table",
            f"0 {SIZE // 512} delay /dev/mapper/{self.dms[0]} 0 {DELAY_MS}",
        )
        self.so = VaaiStorageObject(name, path="/dev/mapper/" + self.dms[1])
        self.so.set_attribute("block_size", BS)
        if beside is None:
            export_loopback(self.so)
        else:
            tpg = next(beside.so.attached_luns).parent_tpg
            export_loopback(self.so, lun=1, wwn=tpg.parent_target.wwn)
            clear_unit_attention(beside.sg)
        self.sg = sg_of(find_disk(self.so, "tcm_loopback"))

    def remove(self):
        unexport(self.so)
        self.so.delete()
        for dm in reversed(self.dms):
            sh("dmsetup", "remove", "--retry", dm)


@contextlib.contextmanager
def zero_luns(*names):
    """ZeroLuns of these names, all in the first one's tcm_loop nexus."""
    made = []
    try:
        for name in names:
            made.append(ZeroLun(name, beside=made[0] if made else None))
        yield made
    finally:
        for z in reversed(made):
            z.remove()


class KeptZeroLuns:
    """ZeroLuns of these names that a test module keeps across its tests:
    making and removing them takes seconds each time (udev's probes
    through the delay target), a test's own work about as much.  each()
    lends them to a test; afterwards it takes away what the test exported
    beyond tcm_loop and resets each LUN, so that nothing a failed test
    left running, reserved or pending reaches the next, and checks that it
    answers.  close() removes them."""

    def __init__(self, *names):
        self._names = names
        self._stack = contextlib.ExitStack()
        self._luns = None

    @contextlib.contextmanager
    def each(self):
        if self._luns is None:
            KEPT.update(self._names)
            self._luns = self._stack.enter_context(zero_luns(*self._names))
        try:
            yield self._luns
        finally:
            for z in self._luns:
                for lun in list(z.so.attached_luns):
                    if lun.parent_tpg.parent_target.fabric_module.name != "loopback":
                        drop_lun(lun)
                sh("sg_reset", "--no-esc", "--device", z.sg)
                usable(z)

    def close(self):
        try:
            self._stack.close()
        finally:
            self._luns = None
            KEPT.difference_update(self._names)


def kept_zero_luns(*names):
    """A test module's fixture: KeptZeroLuns of these names, closed once
    the module is done (if its last test has not closed them already)."""

    @pytest.fixture(scope="module")
    def kept():
        luns = KeptZeroLuns(*names)
        yield luns
        luns.close()

    return kept


def usable(z):
    """The LUN answers again (its unit attention, if any, cleared)."""
    clear_unit_attention(z.sg)
    expect_good(sg_io(z.sg, bytes(6)))


class IscsiSide:
    """The same LUN, seen through the iSCSI session."""

    def __init__(self, sg):
        self.sg = sg


@contextlib.contextmanager
def iscsi_session(*luns):
    """The LUNs as LUNs 0, 1, ... of one iSCSI target, logged in: the
    IscsiSide of each, and each one's rtslib LUN object."""
    with iscsi_login([z.so for z in luns], ISCSI_IQN) as made:
        yield [IscsiSide(sg_of(find_disk(z.so, "iscsi_tcp", target=ISCSI_IQN))) for z in luns], made


def in_background(send, settle=2):
    """Run send() -> Result in a thread; out["res"], out["end"] once done.
    Returns after settle seconds, with the command running."""
    out = {}

    def run():
        out["res"] = send()
        out["end"] = time.monotonic()

    th = threading.Thread(target=run)
    th.start()
    time.sleep(settle)
    return th, out


def ended_soon_after(th, out, t, what):
    th.join(30)
    assert not th.is_alive(), f"the command outlived {what} by 30 s"
    assert out["end"] - t < 5, "command ended {:.1f} s after {}".format(out["end"] - t, what)


def whole_lun_copy(a, b, list_id=0, usage=3):
    """One EXTENDED COPY of all 64 GiB of a onto b, 256 MiB per segment."""
    segs, lba = [], 0
    while lba < SIZE // BS and len(segs) < 256:
        n = min(SEG_BLOCKS, SIZE // BS - lba)
        segs.append(seg_b2b(0, 1, n, lba, lba))
        lba += n
    return xcopy_list(
        [cscd_e4(naa_of(a.sg), BS), cscd_e4(naa_of(b.sg), BS)], segs, list_id=list_id, usage=usage
    )


def copy_status(lun, list_id):
    """(state, bytes done) from COPY STATUS."""
    d = expect_good(receive_copy_results(lun.sg, 0x00, list_id)).data
    return d[4] & 0x7F, struct.unpack(">I", d[8:12])[0] << (10 * d[7])


def stopped_early(lun, list_id):
    """The copy ended as failed, having moved part of the LUN.  (tcm_loop
    answers an aborted command GOOD to the initiator, so its status says
    nothing.)"""
    state, done = copy_status(lun, list_id)
    assert state == 0x02, f"copy state 0x{state:02x} after the abort"
    assert 0 < done < SIZE


def reset_stops_copy(a, b, th, out, list_id):
    """A LUN reset of a ends the copy th runs (list_id, a to b) soon after,
    as failed, having moved part of the LUN; both LUNs answer again."""
    t_reset = time.monotonic()
    sh("sg_reset", "--no-esc", "--device", a.sg)
    ended_soon_after(th, out, t_reset, "the LUN reset")
    usable(a)
    usable(b)
    stopped_early(a, list_id)
