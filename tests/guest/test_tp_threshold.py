"""The thin-provisioning soft threshold: one unit attention per crossing."""

import errno
import os
import time

import pytest
from conftest import MiB, fill, sh
from scsi import GOOD, UNIT_ATTENTION, expect_good, expect_sense, sg_io, unmap
from sense_codes import SOFT_THRESHOLD_REACHED

TUR = bytes(6)
INQUIRY = bytes([0x12, 0, 0, 0, 96, 0])


def set_threshold(lun, pct):
    with open(os.path.join(lun.so.path, "attrib", "tp_soft_threshold"), "w") as f:
        f.write(str(pct))


WARNING = "reached a thin provisioning soft threshold"


def told():
    """How many commands the kernel's SCSI layer saw the unit attention on:
    it logs every one, whoever sent it (our SG_IO or the sd driver itself,
    which shares the I_T nexus and may be the first to be told)."""
    return sh("dmesg").count(WARNING)


def crossing_is_told_once(lun, start):
    """Our next command gets the unit attention, unless the sd driver's got
    it first (or, after a direct write on XFS, the work item that looks at
    the allocation has yet to raise it); the one after it is GOOD."""
    deadline = time.monotonic() + 5
    while True:
        res = sg_io(lun.sg, TUR)
        if res.status != GOOD:
            expect_sense(res, UNIT_ATTENTION, *SOFT_THRESHOLD_REACHED)
            break
        if told() > start or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    expect_good(sg_io(lun.sg, TUR))


@pytest.mark.stores("file", "bdev", "xfs")
def test_crossing_raises_one_unit_attention_and_reunmapping_rearms(make_lun, store):
    """On tmpfs the inode's block count is the allocation; XFS keeps its
    own, which the module asks for as stat(2) does."""
    lun = make_lun(size=16 * MiB)
    if store == "bdev":
        with pytest.raises(OSError) as e:
            set_threshold(lun, 25)
        assert e.value.errno == errno.EOPNOTSUPP
        return
    set_threshold(lun, 25)  # 4 MiB of 16
    start = told()
    fill(lun, 0, (3 * MiB + MiB // 2) // 512)  # under
    expect_good(sg_io(lun.sg, TUR))
    assert told() == start
    fill(lun, 8192, MiB // 512)  # crosses; the write completes
    # INQUIRY never reports a unit attention (SAM-5 5.14)
    assert sg_io(lun.sg, INQUIRY, data_in_len=96).status == GOOD
    crossing_is_told_once(lun, start)
    assert told() == start + 1

    expect_good(unmap(lun.sg, [(0, 10 * MiB // 512)]))  # back to 0 %: re-armed
    fill(lun, 0, (3 * MiB + MiB // 2) // 512)
    assert told() == start + 1
    fill(lun, 8192, MiB // 512)
    crossing_is_told_once(lun, start + 1)
    assert told() == start + 2


def test_threshold_is_a_percentage(lun):
    if lun.so.store != "file":
        return
    with pytest.raises(OSError) as e:
        set_threshold(lun, 101)
    assert e.value.errno == errno.EINVAL
    set_threshold(lun, 0)
