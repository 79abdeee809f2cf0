"""A long EXTENDED COPY stops within a second when the host aborts it
(TMR ABORT TASK after a command timeout) or resets the LUN, its progress
shows in COPY STATUS while it runs, and the LUNs are usable afterwards.

The LUNs are device-mapper zero targets behind delay targets: 64 GiB that
cost no memory, and a copy between them that runs for minutes."""

import time

import pytest
from conftest import unload_and_reload
from scsi import (
    ILLEGAL_REQUEST,
    RESERVATION_CONFLICT,
    clear_unit_attention,
    expect_good,
    expect_sense,
    sg_io,
    xcopy,
)
from sense_codes import OPERATION_IN_PROGRESS
from slowdev import (
    copy_status,
    ended_soon_after,
    in_background,
    iscsi_session,
    kept_zero_luns,
    reset_stops_copy,
    stopped_early,
    usable,
    whole_lun_copy,
)

kept = kept_zero_luns("zsrc", "zdst")


@pytest.fixture
def zero_pair(kept):
    with kept.each() as made:
        yield made


def test_abort_task_stops_the_copy_promptly(zero_pair):
    a, b = zero_pair
    failed = stat_failed(a)
    t0 = time.monotonic()
    xcopy(a.sg, whole_lun_copy(a, b, list_id=3, usage=0), timeout_ms=3000)
    took = time.monotonic() - t0
    # The timeout made the SCSI midlayer abort the command (TMR ABORT TASK);
    # the abort completes only once the copy engine has let go of it.
    assert took < 3 + 5, "abort took %.1f s after the timeout" % (took - 3)
    usable(a)
    usable(b)
    stopped_early(a, 3)
    assert stat_failed(a) == failed + 1


def copy_in_background(a, b, list_id, timeout_ms=300000):
    """Start a whole-LUN copy; see slowdev.in_background."""
    return in_background(
        lambda: xcopy(a.sg, whole_lun_copy(a, b, list_id=list_id, usage=0), timeout_ms=timeout_ms)
    )


def test_lun_reset_stops_the_copy_promptly(zero_pair):
    a, b = zero_pair
    th, out = copy_in_background(a, b, 5)
    # running: listed, in progress, moving
    state, done1 = copy_status(a, 5)
    assert state == 0x00
    time.sleep(1)
    state, done2 = copy_status(a, 5)
    assert state == 0x00 and done2 > done1
    # the same list identifier while it runs: OPERATION IN PROGRESS
    expect_sense(
        xcopy(a.sg, whole_lun_copy(a, b, list_id=5, usage=0)),
        ILLEGAL_REQUEST,
        *OPERATION_IN_PROGRESS,
    )
    reset_stops_copy(a, b, th, out, 5)


def test_reservation_taken_mid_copy_stops_it(zero_pair, over_iscsi):
    """Another initiator reserves the destination while the copy runs: the
    copy stops at once with RESERVATION CONFLICT (LIO core checked only the
    LUN the command came to, and only when it started)."""
    a, b = zero_pair
    b_iscsi = over_iscsi(b)
    clear_unit_attention(b_iscsi)
    th, out = copy_in_background(a, b, 6)
    t = time.monotonic()
    try:
        expect_good(sg_io(b_iscsi, bytes([0x16, 0, 0, 0, 0, 0])))  # RESERVE(6)
        ended_soon_after(th, out, t, "the reservation")
    finally:
        expect_good(sg_io(b_iscsi, bytes([0x17, 0, 0, 0, 0, 0])))  # RELEASE(6)
    assert out["res"].status == RESERVATION_CONFLICT, out["res"]
    stopped_early(a, 6)


def test_removing_a_lun_mid_copy_stops_it(zero_pair):
    """Taking the destination's LUN away does not wait for a 64 GiB copy.
    Over iSCSI: tcm_loop removes its initiator-side disk before LIO lets go
    of the LUN, which is another story (see docs/xcopy.md)."""
    a, b = zero_pair
    with iscsi_session(a, b) as ((ai, bi), (_, b_lun)):
        th, out = copy_in_background(ai, bi, 8)
        t = time.monotonic()
        b_lun.delete()
        took = time.monotonic() - t
        ended_soon_after(th, out, t, "the LUN removal")
        assert took < 5, f"removing the LUN took {took:.1f} s"
        clear_unit_attention(ai.sg)
        stopped_early(ai, 8)


def test_session_drop_mid_copy_stops_it(zero_pair):
    """The target drops the initiator's session while its copy runs (the
    TPG is disabled, as when a link or the initiator goes away): LIO waits
    for the session's commands before the session is gone, and the copy
    lets go at once.  (An initiator-side logout would not do: open-iscsi
    removes its disks first, which waits for the copy's own command.)"""
    a, b = zero_pair
    failed = stat_failed(a)
    with iscsi_session(a, b) as ((ai, bi), (_, b_lun)):
        th, _out = copy_in_background(ai, bi, 9, timeout_ms=20000)
        tpg = b_lun.parent_tpg
        t = time.monotonic()
        tpg.enable = False
        took = time.monotonic() - t
        assert took < 5, f"dropping the session took {took:.1f} s"
        assert stat_failed(a) == failed + 1
        tpg.enable = True  # let the initiator recover and fail the command
        th.join(60)
        assert not th.is_alive()


def stat_failed(z):
    with open(z.so.path + "/attrib/stats_clone_failed") as f:
        return int(f.read())


def test_module_unloads_after_aborted_copies(kept):
    """Nothing an aborted, reset or dropped copy held is left behind."""
    kept.close()
    unload_and_reload()
