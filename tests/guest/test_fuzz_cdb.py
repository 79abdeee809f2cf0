"""Random and mutated CDBs and parameter lists against a vaai LUN for a
bounded time (VAAI_FUZZ_SECONDS per store, 40 by default; VAAI_FUZZ_SEED
repeats a run).  Every answer is GOOD, CONDITION MET (PRE-FETCH) or CHECK
CONDITION with well-formed sense of an expected key (cdbfuzz.check_answer),
the kernel log stays free of warnings, and what no command may reach is unchanged: a LUN beside the
fuzzed one in its I_T nexus, a LUN in another target whose NAA the fuzzer
does use in EXTENDED COPY, and the size of the fuzzed LUN's backing file.
The LUN still reads back what is written to it afterwards.

A summary per run (commands by kind, answers by sense) goes to
build/fuzz/guest-<store>.json for docs/testing.md."""

import collections
import hashlib
import json
import os
import random
import re
import time

import cdbfuzz
import pytest
from conftest import MiB
from scsi import clear_unit_attention, expect_good, naa_of, read_blocks, sg_io, write_blocks

SECONDS = float(os.environ.get("VAAI_FUZZ_SECONDS", "40"))
BLOCK_SIZE = {"file": 512, "bdev": 4096}
TROUBLE = re.compile(
    r"BUG:|Oops|WARNING:|general protection|UBSAN|KASAN|"
    r"circular locking|blocked for more|kmemleak"
)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class KernelLog:
    """The kernel log records written since this was made."""

    def __init__(self):
        self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(self.fd, 0, os.SEEK_END)

    def new(self):
        out = []
        while True:
            try:
                out.append(os.read(self.fd, 8192).decode(errors="replace"))
            except BlockingIOError:
                return out
            except BrokenPipeError:  # records overwritten: go on
                continue

    def close(self):
        os.close(self.fd)


def attr(lun, name):
    with open(os.path.join(lun.so.path, "attrib", name)) as f:
        return int(f.read())


def send(lun, cmd):
    try:
        return sg_io(
            lun.sg, cmd.cdb, data_out=cmd.data_out, data_in_len=cmd.data_in_len, timeout_ms=60000
        )
    except OSError:
        return None  # the initiator's SG_IO refused it (e.g. a 7-byte CDB)


def fuzz(lun, gen, deadline, summary):
    """Send commands until the deadline; the first answer that breaks the
    rules fails the test with the command that got it."""
    while time.monotonic() < deadline:
        cmd = gen.next()
        res = send(lun, cmd)
        summary["kinds"][cmd.kind] += 1
        if res is None:
            summary["refused by SG_IO"] += 1
            continue
        why = cdbfuzz.check_answer(cmd, res)
        assert why is None, f"{why}: {cmd}\n  answer: {res}"
        if res.status:
            s = res.decoded()  # CONDITION MET, BUSY and the like: none
            summary["answers"][
                f"{s.key:x}/{s.asc:02x}/{s.ascq:02x}" if s else f"status 0x{res.status:02x}"
            ] += 1
            if s and s.key == 0x06:
                clear_unit_attention(lun.sg)
        else:
            summary["answers"]["GOOD"] += 1


@pytest.mark.parametrize(
    "seed", [int(os.environ.get("VAAI_FUZZ_SEED", "0")) or random.SystemRandom().randrange(1 << 32)]
)
def test_fuzzed_commands_get_well_formed_answers(make_lun, store, seed):
    bs = BLOCK_SIZE[store]
    lun = make_lun(size=8 * MiB, block_size=bs)
    beside = make_lun(size=MiB, block_size=bs, beside=lun, fill=os.urandom(MiB))
    outside = make_lun(size=MiB, block_size=bs, own_nexus=True, fill=os.urandom(MiB))
    untouched = {line.backing.image: digest(line.backing.image) for line in (beside, outside)}
    image_size = os.path.getsize(lun.backing.image)

    gen = cdbfuzz.Generator(
        cdbfuzz.Lun(
            lun.nr_blocks,
            bs,
            [naa_of(lun.sg), naa_of(outside.sg), bytes(16)],
            attr(lun, "max_write_same_len"),
            attr(lun, "max_unmap_lba_count"),
        ),
        seed,
    )
    summary = {
        "seed": seed,
        "store": store,
        "seconds": SECONDS,
        "kinds": collections.Counter(),
        "answers": collections.Counter(),
        "refused by SG_IO": 0,
    }
    klog = KernelLog()
    try:
        fuzz(lun, gen, time.monotonic() + SECONDS, summary)
        trouble = [r for r in klog.new() if TROUBLE.search(r)]
    finally:
        klog.close()
        save(summary)
    assert not trouble, f"kernel log (seed {seed}): {(trouble[:5])}"

    for image, was in untouched.items():
        assert digest(image) == was, f"{image} changed (seed {seed})"
    assert os.path.getsize(lun.backing.image) == image_size
    data = os.urandom(64 * bs)
    clear_unit_attention(lun.sg)
    expect_good(write_blocks(lun.sg, lun.last_lba - 63, data, bs))
    assert expect_good(read_blocks(lun.sg, lun.last_lba - 63, 64, bs)).data == data
    expect_good(sg_io(lun.sg, bytes(6)))


def save(summary):
    os.makedirs("build/fuzz", exist_ok=True)
    summary["commands"] = sum(summary["kinds"].values())
    with open("build/fuzz/guest-{}.json".format(summary["store"]), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
