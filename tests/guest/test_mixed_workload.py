"""The power-cut harness's workload (tests/powercut/workload.py) run live:
after a random mix of WRITE, WRITE SAME, UNMAP, COMPARE AND WRITE, EXTENDED
COPY and POPULATE TOKEN + WRITE USING TOKEN on one LUN, one command at a
time, every block reads back as the newest version written to it (the
harness's oracle, tests/powercut/model.py).  Each store, write cache off
(direct I/O where the store has it) and on."""

import os
import random
import sys

import pytest
from conftest import MiB, read
from scsi import naa_of

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "powercut"))

from model import BLOCK, LunModel
from workload import Workload

pytestmark = pytest.mark.stores("file", "bdev", "xfs")
COMMANDS = 400
SIZE = 16 * MiB


@pytest.mark.parametrize("write_cache", [0, 1], ids=["wce_off", "wce_on"])
def test_mixed_workload_reads_back_newest(make_lun, write_cache):
    lun = make_lun(size=SIZE)
    lun.so.set_attribute("emulate_write_cache", write_cache)
    model = LunModel(0, SIZE // BLOCK, bool(write_cache))
    w = Workload(lun.sg, model, random.Random(write_cache), naa_of(lun.sg))
    w.run(COMMANDS)
    wrong = model.check_live(read(lun, 0, SIZE // BLOCK))
    assert not wrong, f"{len(wrong)} blocks wrong after {dict(w.acked)}:\n" + "\n".join(wrong[:20])
