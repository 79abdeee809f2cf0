"""A long WRITE SAME stops within a second when the host aborts it (TMR
ABORT TASK after a command timeout), resets the LUN, or loses its session,
and the LUN is usable afterwards.

The LUN is a device-mapper zero target behind a delay target
(slowdev.ZeroLun), where the largest WRITE SAME we take, 2 GiB, runs for
several seconds."""

import os
import time

import pytest
from conftest import sh, unload_and_reload
from scsi import cdb_write_same16, sg_io
from slowdev import BS, ended_soon_after, in_background, iscsi_session, kept_zero_luns, usable
from thin import stat

# A pattern: zeros go to the device's write-zeroes offload, which the
# delay target passes on in a few large requests that end quickly.
PATTERN = bytes([0xA5]) * BS


kept = kept_zero_luns("wsslow")


@pytest.fixture
def slow(kept):
    with kept.each() as (z,):
        yield z


def longest_write_same(z, timeout_ms, via=None):
    """WRITE SAME (16) of a pattern over as many blocks as one may cover,
    sent to z or to the same LUN seen another way (via)."""
    with open(os.path.join(z.so.path, "attrib", "max_write_same_len")) as f:
        nolb = int(f.read())
    return sg_io((via or z).sg, cdb_write_same16(0, nolb), data_out=PATTERN, timeout_ms=timeout_ms)


class Counters:
    """The WRITE SAME counters, to tell a stopped command from a finished
    one (tcm_loop answers an aborted command GOOD to its initiator)."""

    def __init__(self, z):
        self.z = z
        self.done, self.failed = stat(z, "zero"), stat(z, "zero_failed")

    def stopped(self):
        assert stat(self.z, "zero") == self.done, "the WRITE SAME ran to its end"
        assert stat(self.z, "zero_failed") == self.failed + 1


def test_abort_task_stops_a_long_write_same(slow):
    counters = Counters(slow)
    t0 = time.monotonic()
    longest_write_same(slow, timeout_ms=3000)
    took = time.monotonic() - t0
    # The timeout made the SCSI midlayer abort the command (TMR ABORT TASK);
    # the abort completes only once the backend has let go of it.
    assert took < 3 + 5, "abort took %.1f s after the timeout" % (took - 3)
    usable(slow)
    counters.stopped()


def test_lun_reset_stops_a_long_write_same(slow):
    counters = Counters(slow)
    th, out = in_background(lambda: longest_write_same(slow, 300000))
    t = time.monotonic()
    sh("sg_reset", "--no-esc", "--device", slow.sg)
    ended_soon_after(th, out, t, "the LUN reset")
    usable(slow)
    counters.stopped()


def test_session_drop_mid_write_same_stops_it(slow):
    """The target drops the initiator's session (its TPG disabled): LIO
    waits for the session's commands, and the WRITE SAME lets go at once."""
    counters = Counters(slow)
    with iscsi_session(slow) as ((side,), (lun,)):
        th, _out = in_background(lambda: longest_write_same(slow, 20000, via=side))
        t = time.monotonic()
        lun.parent_tpg.enable = False
        took = time.monotonic() - t
        assert took < 5, f"dropping the session took {took:.1f} s"
        counters.stopped()
        lun.parent_tpg.enable = True  # the initiator recovers and fails the command
        th.join(60)
        assert not th.is_alive()


def test_module_unloads_after_stopped_write_sames(kept):
    """Nothing a stopped WRITE SAME held is left behind."""
    kept.close()
    unload_and_reload()
