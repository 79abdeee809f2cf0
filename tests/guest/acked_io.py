"""I/O that keeps what it had acknowledged, for the tests that switch or
kill a node under a host (tests/guest/test_pair_multipath.py,
tests/ha/): a writer stamping blocks, and ATS heartbeats sent as ESXi
sends them; each checks afterwards that what was acknowledged is there."""

import mmap
import os
import threading
import time

from scsi import (
    ABORTED_COMMAND,
    CHECK_CONDITION,
    GOOD,
    MISCOMPARE,
    NOT_READY,
    UNIT_ATTENTION,
    compare_and_write,
    read_blocks,
)

BLOCK = 4096
BLOCKS = 2048  # the writer's 8 MiB, written round and round


class Writer(threading.Thread):
    """Writes block i with (round, i) stamps through dev, O_DIRECT, until
    stopped; what each block last held when acknowledged, errors, the
    longest a write took and when it began."""

    def __init__(self, dev):
        super().__init__(daemon=True)
        self.dev, self.stop, self.acked, self.errors, self.rounds = dev, False, {}, [], 0
        self.longest, self.longest_at, self.count = 0.0, 0.0, 0

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
                self.rounds += 1
                for i in range(BLOCKS):
                    if self.stop:
                        break
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


class Heartbeat(threading.Thread):
    """A VMFS heartbeat (or on-disk lock): COMPARE AND WRITE of block lba
    through dev every interval, each the next generation of its slot,
    sent again until answered, as ESXi does; a generation unanswered for
    GIVE_UP s is an error.  A command whose answer was lost (a transport
    error: a node gone) may have been done; when its retry miscompares,
    the block holding that command's data means it was.  Stopping waits
    for the generation under way.  last: what the block held when last
    acknowledged; longest: the most a generation took from first try to
    acknowledgement."""

    SIZE = 512
    GIVE_UP = 120

    def __init__(self, dev, lba, label, interval=0.2):
        super().__init__(daemon=True)
        self.dev, self.lba, self.label, self.interval = dev, lba, label, interval
        self.stop, self.errors, self.gen, self.retries, self.longest = False, [], 0, 0, 0.0
        self.last = self.data(0)

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
