"""I/O that keeps what it had acknowledged, for the rig's tests that
switch or kill a node under a host (tests/ha/failover.py): a writer
stamping blocks, ATS heartbeats sent as ESXi sends them, and full
copies; each checks afterwards that what was acknowledged is there."""

import collections
import mmap
import os
import threading
import time

from scsi import (
    ABORTED_COMMAND,
    CHECK_CONDITION,
    COPY_ABORTED,
    COPY_DONE,
    GOOD,
    ILLEGAL_REQUEST,
    MISCOMPARE,
    NOT_READY,
    SA_POPULATE_TOKEN,
    UNIT_ATTENTION,
    compare_and_write,
    cscd_e4,
    naa_of,
    parse_rrti,
    populate_token,
    read_blocks,
    rrti,
    seg_b2b,
    write_using_token,
    xcopy,
    xcopy_list,
)
from sense_codes import INVALID_FIELD_IN_CDB, TOKEN_UNKNOWN

BLOCK = 4096
BLOCKS = 2048  # the writer's 8 MiB, written round and round


class Writer(threading.Thread):
    """Writes block i with (round, i) stamps through dev, O_DIRECT, block
    after block round and round, until stopped; what each block last held
    when acknowledged, errors, the longest a write took and when it
    began.  after: a writer stopped before, this one carrying on where it
    stopped, with what it had acknowledged.

    A VM's writes, not a flood: one every PACE s at most.  Unpaced, the
    writes after a failover to DRBD's survivor, which writes its own disk
    alone, went round all BLOCKS within seconds, before the test could
    see node 2's last ones (2026-11-30)."""

    PACE = 0.02

    def __init__(self, dev, after=None):
        super().__init__(daemon=True)
        self.dev, self.stop, self.errors = dev, False, []
        self.longest, self.longest_at, self.count = 0.0, 0.0, 0
        if after:
            self.rounds, self.next, self.acked = after.rounds, after.next, dict(after.acked)
        else:
            self.rounds, self.next, self.acked = 0, 0, {}

    def run(self):
        try:
            self.write()
        except BaseException as e:  # the test sees it in errors
            self.errors.append(("writer", e))

    def write(self):
        fd = os.open(self.dev, os.O_RDWR | os.O_DIRECT)
        buf = mmap.mmap(-1, BLOCK)
        try:
            while not self.stop:
                i = self.next
                if i == 0:
                    self.rounds += 1
                stamp = f"round {self.rounds} block {i}".encode().ljust(BLOCK, b".")
                buf[:] = stamp
                t = time.monotonic()
                try:
                    os.pwrite(fd, buf, i * BLOCK)
                except OSError as e:
                    self.errors.append((i, e))
                    return
                took = time.monotonic() - t
                if took > self.longest:
                    self.longest, self.longest_at = took, t
                self.acked[i] = stamp
                self.count += 1
                self.next = (i + 1) % BLOCKS
                time.sleep(max(0.0, self.PACE - took))
        finally:
            os.close(fd)

    def check(self, dev):
        """Every block reads back through dev as last acknowledged."""
        fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
        buf = mmap.mmap(-1, BLOCK)
        try:
            for i, stamp in self.acked.items():
                os.preadv(fd, [buf], i * BLOCK)
                assert buf[:] == stamp, (
                    f"block {i}: {bytes(buf[:32])!r}, acknowledged {stamp[:32]!r}"
                )
        finally:
            os.close(fd)


# What a path change answers, the command not run: ESXi sends it again
# (sense keys; and BUSY, TASK SET FULL statuses).
RETRIED_SENSE = (UNIT_ATTENTION, NOT_READY, ABORTED_COMMAND)
RETRIED_STATUS = (0x08, 0x28)


def refusal(r, sense):
    """A short name for an answer other than GOOD."""
    if r is None:
        return "no answer"
    if sense is None:
        return f"status 0x{r.status:02x}"
    return f"{sense.key:x}/{sense.asc:02x}/{sense.ascq:02x}"


class Heartbeat(threading.Thread):
    """A VMFS heartbeat (or on-disk lock): COMPARE AND WRITE of block lba
    through dev every interval, each the next generation of its slot,
    sent again until answered, as ESXi does; a generation unanswered for
    GIVE_UP s is an error.  A command whose answer was lost (a transport
    error: a node gone) may have been done; when its retry miscompares,
    the block holding that command's data means it was.  Stopping waits
    for the generation under way.  last: what the block held when last
    acknowledged; longest: the most a generation took from first try to
    acknowledgement.  after: a heartbeat of this slot stopped before, this
    one carrying on from its last generation."""

    SIZE = 512
    GIVE_UP = 120

    def __init__(self, dev, lba, label, interval=0.2, after=None):
        super().__init__(daemon=True)
        self.dev, self.lba, self.label, self.interval = dev, lba, label, interval
        self.stop, self.errors, self.retries, self.longest = False, [], 0, 0.0
        self.gen = after.gen if after else 0
        self.last = self.data(self.gen)

    def data(self, gen):
        return f"{self.label} generation {gen}".encode().ljust(self.SIZE, b".")

    def send(self, cdb_fn):
        """(result or None when the ioctl itself failed)."""
        try:
            return cdb_fn()
        except OSError:
            return None

    def held(self, timeout=120):
        """The block now, read until a path answers."""
        deadline = time.monotonic() + timeout
        while True:
            r = self.send(lambda: read_blocks(self.dev, self.lba, 1, self.SIZE))
            if r is not None and r.host_status == 0 and r.status == GOOD:
                return r.data
            assert time.monotonic() < deadline, f"{self.label}: no path reads block {self.lba}"
            time.sleep(0.05)

    def run(self):
        try:
            while not self.stop:
                self.next_generation()
                time.sleep(self.interval)
        except BaseException as e:  # the test sees it in errors
            self.errors.append(f"generation {self.gen + 1}: {e!r}")

    def next_generation(self):
        new, began, unanswered = self.data(self.gen + 1), time.monotonic(), False
        while True:
            r = self.send(lambda: compare_and_write(self.dev, self.lba, self.last, new, self.SIZE))
            if r is not None and r.host_status == 0 and r.status == GOOD:
                break
            sense = r.decoded() if r is not None and r.status == CHECK_CONDITION else None
            if r is None or r.host_status:
                unanswered = True
            elif r.status in RETRIED_STATUS:
                pass
            elif sense is None:
                raise AssertionError(f"answered {r}")
            elif sense.key == MISCOMPARE and unanswered and self.held() == new:
                break
            elif sense.key not in RETRIED_SENSE:
                raise AssertionError(f"answered {r}")
            self.retries += 1
            if time.monotonic() - began > self.GIVE_UP:
                raise AssertionError(f"unanswered for {self.GIVE_UP} s (last: {r})")
            time.sleep(0.05)
        self.longest = max(self.longest, time.monotonic() - began)
        self.gen, self.last = self.gen + 1, new

    def check(self):
        """The block holds the last acknowledged generation."""
        held = self.held()
        assert held == self.last, (
            f"{self.label}: block {self.lba} holds {held[:40]!r}, "
            f"last acknowledged {self.last[:40]!r}"
        )


class Copier(threading.Thread):
    """Full copies through dev, as ESXi's data mover (kind "xcopy": an
    EXTENDED COPY) or Windows (kind "odx": POPULATE TOKEN, RECEIVE ROD
    TOKEN INFORMATION, WRITE USING TOKEN) send them, one after another
    until stopped: copy n goes to destination slot n % SLOTS of the area
    under way (nblocks of BS each, from dst on: area 0, then area 1), from
    the source the slot's last acknowledged copy was not from (the
    sources do not change), so a copy that stopped halfway, or one
    acknowledged and lost, leaves its slot as neither or as before.  A
    test moves to area 1 at a power cut: what was copied before it is
    still there to be checked after.  after: a copier of this kind
    stopped before, this one carrying on (in area 0) with what it had
    acknowledged in every slot.

    Each copy is sent again until done, as hosts do, for GIVE_UP s at
    most: after a unit attention, NOT READY, ABORTED COMMAND, COPY ABORTED,
    BUSY or TASK SET FULL, or no answer; and an ODX copy after a node that
    does not hold its list or token was asked for them (a node gone, or the
    path switched): RECEIVE ROD TOKEN INFORMATION refused INVALID FIELD IN
    CDB, WRITE USING TOKEN refused with an invalid-token code.  An ODX copy
    is sent again whole, from a POPULATE TOKEN.  lost: (command, when
    sent, when given up) of each command whose answer never came (a
    transport error, or no path to send it on); copy_took: the durations
    of the copies done, resends included; refused: how often each answer other
    than GOOD came (an answer's status, or its sense key/ASC/ASCQ)."""

    BS = 512
    SLOTS = 4
    GIVE_UP = 120

    def __init__(self, dev, kind, sources, dst, nblocks, list_id=0x5100, after=None):
        super().__init__(daemon=True)
        self.dev, self.kind, self.sources, self.dst = dev, kind, sources, dst
        self.label = kind  # as a Heartbeat's, in error reports
        self.nblocks, self.list_id = nblocks, list_id
        self.slow = "xcopy" if kind == "xcopy" else "wut"  # the command that copies
        self.stop, self.errors, self.restarts = False, [], 0
        self.lost, self.current = [], None
        self.copy_took, self.refused = [], collections.Counter()
        self.area = 0
        self.naa = naa_of(dev) if kind == "xcopy" else None
        # slot: the source its last acknowledged copy was of; POPULATE
        # TOKENs sent (each its own list identifier); copies done
        self.acked, self.tokens, self.count = {}, 0, 0
        if after:
            self.acked, self.tokens, self.count = dict(after.acked), after.tokens, after.count

    def send(self, name, cdb_fn):
        """The answer to a command; None when none came (the ioctl failed,
        or a transport error)."""
        began = time.monotonic()
        self.current = (name, began)
        try:
            r = cdb_fn()
        except OSError:
            r = None
        self.current = None
        if r is None or r.host_status:
            self.lost.append((name, began, time.monotonic()))
            return None
        return r

    def run(self):
        try:
            while not self.stop:
                self.copy(self.count)
                self.count += 1
        except BaseException as e:  # the test sees it in errors
            self.errors.append(f"{self.kind} copy {self.count + 1}: {e!r}")

    def copy(self, n):
        slot = self.area * self.SLOTS + n % self.SLOTS
        src = self.sources[self.acked.get(slot) == self.sources[0]]
        dst = self.dst + slot * self.nblocks
        began, self.last = time.monotonic(), None
        step = self.xcopy if self.kind == "xcopy" else self.odx
        while not step(src, dst):
            if time.monotonic() - began > self.GIVE_UP:
                raise AssertionError(f"not done in {self.GIVE_UP} s; last answer {self.last}")
            time.sleep(0.05)
        self.acked[slot] = src
        self.copy_took.append(time.monotonic() - began)

    def answered(self, r, restart_on=()):
        """True: GOOD; False: send again (from the start); else raises.
        restart_on: (sense key, ASC) pairs that start an ODX copy over."""
        self.last = r
        if r is not None and r.status == GOOD:
            return True
        sense = r.decoded() if r is not None and r.status == CHECK_CONDITION else None
        self.refused[refusal(r, sense)] += 1
        if r is None or r.status in RETRIED_STATUS:
            return False
        if sense is None:
            raise AssertionError(f"answered {r}")
        if sense.key in (*RETRIED_SENSE, COPY_ABORTED):
            return False
        if (sense.key, sense.asc) in restart_on:
            self.restarts += 1
            return False
        raise AssertionError(f"answered {r}")

    def xcopy(self, src, dst):
        cscd = cscd_e4(self.naa, self.BS)
        params = xcopy_list([cscd, cscd], [seg_b2b(0, 1, self.nblocks, src, dst)])
        return self.answered(self.send("xcopy", lambda: xcopy(self.dev, params)))

    def odx(self, src, dst):
        lid = self.list_id + self.tokens
        self.tokens += 1
        r = self.send("populate", lambda: populate_token(self.dev, [(src, self.nblocks)], lid))
        if not self.answered(r):
            return False
        r = self.send("rrti", lambda: rrti(self.dev, lid))
        if not self.answered(r, restart_on=((ILLEGAL_REQUEST, INVALID_FIELD_IN_CDB[0]),)):
            return False
        info = parse_rrti(r.data)
        assert (info.sa, info.status) == (SA_POPULATE_TOKEN, COPY_DONE) and info.token, info
        r = self.send(
            "wut",
            lambda: write_using_token(
                self.dev, info.token, [(dst, self.nblocks)], lid, del_tkn=True
            ),
        )
        return self.answered(r, restart_on=((ILLEGAL_REQUEST, TOKEN_UNKNOWN[0]),))

    def __str__(self):
        """Where the copier is: for a test that waited for it in vain."""
        now = self.current
        at = f"{now[0]} sent {time.monotonic() - now[1]:.1f} s ago" if now else "between commands"
        return (
            f"{self.kind}: {self.count} copies, {at}, last answer {self.last}, "
            f"refused {dict(self.refused)}, {len(self.lost)} unanswered"
        )

    def read(self, lba):
        """nblocks from lba, read until a path answers."""
        deadline = time.monotonic() + self.GIVE_UP
        while True:
            r = read_blocks(self.dev, lba, self.nblocks, self.BS)
            if r.host_status == 0 and r.status == GOOD:
                return r.data
            assert time.monotonic() < deadline, f"{self.kind}: no path reads LBA {lba}: {r}"
            time.sleep(0.05)

    def check(self):
        """Each slot holds the source of its last acknowledged copy."""
        data = {src: self.read(src) for src in self.sources}
        for slot, src in sorted(self.acked.items()):
            dst = self.dst + slot * self.nblocks
            assert self.read(dst) == data[src], f"{self.kind}: LBA {dst} does not hold LBA {src}"
