"""Power cuts at every write boundary: the power-cut workload on an XFS
file store over dm-log-writes, its log replayed to each flush and FUA
point, and at each the file system clean and the LUN as the oracle
allows (tests/powercut/replay.py).  Short runs here; make test-powercut
runs the long one."""

import os
import sys

import pytest
from conftest import sh

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "powercut"))

import replay

COMMANDS = 20
# Each point checked costs about 2 s in the emulated guest: every third
# here (about 20 of 60); make replay checks them all.
EVERY = 3


@pytest.fixture(scope="module", autouse=True)
def dm_targets():
    sh("modprobe", "dm-log-writes")
    sh("modprobe", "dm-snapshot")


@pytest.mark.parametrize("write_cache", [False, True], ids=["wce_off", "wce_on"])
def test_every_flush_point_of_a_mixed_workload_holds(write_cache):
    counts, wrong = replay.run(COMMANDS, seed=3, write_cache=write_cache, every=EVERY)
    print(f"replay: {counts}")
    assert counts["lun_checked"] > 0, counts
    assert not wrong, f"{counts}:\n" + "\n".join(wrong[:30])
