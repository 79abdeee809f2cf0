"""A long copy does not hold the others back.  The copy engine hands its
chunk slots out oldest copy first, and a copy that has moved its quantum
(16 MiB) waits behind those that came after it: a 64 GiB EXTENDED COPY
between slow zero LUNs runs for minutes, and copies sent meanwhile, one
at a time and several at once, end GOOD while it still runs; it goes on
moving afterwards.  A short copy kept waiting would run into its SG_IO
timeout and come back aborted (a transport error, whatever its status).
The long copy's four workers can hold four slots (one per CPU): with the
harness's two CPUs they hold all of them, with more the short copies
would find a free one and the test say less."""

import threading
import time

from scsi import cscd_e4, expect_good, naa_of, seg_b2b, xcopy, xcopy_list
from slowdev import (
    BS,
    SIZE,
    copy_status,
    in_background,
    kept_zero_luns,
    reset_stops_copy,
    whole_lun_copy,
)

kept = kept_zero_luns("tsrc", "tdst")
SHORT = (1 << 20) // BS  # a short copy: 1 MiB, four chunks
RUNNING = 0x00  # COPY STATUS: operation in progress
SHORT_TIMEOUT_S = 60


def short_copy(a, b, lba):
    params = xcopy_list(
        [cscd_e4(naa_of(a.sg), BS), cscd_e4(naa_of(b.sg), BS)],
        [seg_b2b(0, 1, SHORT, lba, lba)],
    )
    return xcopy(a.sg, params, timeout_ms=SHORT_TIMEOUT_S * 1000)


def test_short_copies_pass_a_long_one(kept):
    with kept.each() as (a, b):
        th, out = in_background(
            lambda: xcopy(a.sg, whole_lun_copy(a, b, list_id=12, usage=0), timeout_ms=300000)
        )
        state, before = copy_status(a, 12)
        assert state == RUNNING and before > 0
        # one at a time, then four at once, each from its own thread
        expect_good(short_copy(a, b, 0))
        results = [None] * 4

        def send(i):
            results[i] = short_copy(a, b, (i + 1) * SHORT)

        threads = [threading.Thread(target=send, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            # SG_IO ends each by its timeout: none is left running
            t.join(SHORT_TIMEOUT_S + 30)
        for r in results:
            assert r is not None, "a short copy's SG_IO never returned"
            expect_good(r)
        # the long one still runs, and still moves
        assert th.is_alive()
        state, mid = copy_status(a, 12)
        assert state == RUNNING and mid < SIZE
        time.sleep(1)
        state, after = copy_status(a, 12)
        assert state == RUNNING and after > mid
        reset_stops_copy(a, b, th, out, 12)
        expect_good(short_copy(a, b, 0))
