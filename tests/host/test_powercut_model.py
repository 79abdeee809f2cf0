"""The power-cut harness's oracle (tests/powercut/model.py): what it must
refuse after a cut, and what it must let through."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "powercut"))

from model import BLOCK, ZEROS, LunModel, describe, render, zeroed

NBLOCKS = 8


def lun(write_cache=False):
    return LunModel(3, NBLOCKS, write_cache)


def write(model, lba, n, ack=True, fua=False):
    serial = model.new_serial()
    cmd = model.issue("write", serial, [(lba + i, (lba + i, serial)) for i in range(n)])
    if ack:
        model.acked(cmd, fua=fua)
    return serial


def image(model, blocks):
    """The LUN as read back: {block: version} over zeros."""
    return b"".join(render(model.lun_id, blocks.get(b)) for b in range(NBLOCKS))


def test_zeros_pass_on_a_fresh_lun():
    assert lun().check(bytes(NBLOCKS * BLOCK)) == []


def test_an_acknowledged_write_must_survive_with_the_cache_off():
    m = lun()
    s = write(m, 2, 2)
    assert m.check(image(m, {2: (2, s), 3: (3, s)})) == []
    wrong = m.check(image(m, {2: (2, s)}))
    assert len(wrong) == 1 and "block 3 holds zeros" in wrong[0]


def test_an_unsynced_write_may_be_lost_with_the_cache_on_until_synced():
    m = lun(write_cache=True)
    s = write(m, 0, 1)
    assert m.check(image(m, {})) == []
    assert m.check(image(m, {0: (0, s)})) == []
    m.synced()
    assert len(m.check(image(m, {}))) == 1


def test_a_fua_write_is_durable_at_its_good():
    m = lun(write_cache=True)
    s = write(m, 5, 1, fua=True)
    assert len(m.check(image(m, {}))) == 1
    assert m.check(image(m, {5: (5, s)})) == []


def test_a_command_the_cut_interrupted_may_be_old_or_new_per_block():
    m = lun()
    old = write(m, 0, 2)
    new = write(m, 0, 2, ack=False)
    assert m.check(image(m, {0: (0, new), 1: (1, old)})) == []
    assert len(m.check(image(m, {0: (0, old)}))) == 1  # block 1 went back to zeros


def test_a_torn_block_and_another_blocks_data_are_refused():
    m = lun()
    s = write(m, 0, 2)
    torn = bytearray(image(m, {0: (0, s), 1: (1, s)}))
    torn[BLOCK // 2 : BLOCK] = bytes(BLOCK // 2)
    wrong = m.check(bytes(torn))
    assert len(wrong) == 1 and "torn or damaged copy" in wrong[0]
    swapped = render(3, (1, s)) + render(3, (0, s)) + ZEROS * (NBLOCKS - 2)
    assert len(m.check(swapped)) == 2


def test_bytes_nobody_wrote_are_refused():
    m = lun()
    assert describe(3, b"\xff" * BLOCK) == "bytes no command wrote"
    assert len(m.check(b"\xff" * BLOCK + ZEROS * (NBLOCKS - 1))) == 1


def test_a_compare_and_write_range_is_all_old_or_all_new():
    m = lun()
    m.groups = [(4, 2)]
    s = m.new_serial()
    m.issue("caw", s, [(4, (4, s)), (5, (5, s))])  # cut before its GOOD
    assert m.check(image(m, {4: (4, s), 5: (5, s)})) == []
    assert m.check(image(m, {})) == []
    wrong = m.check(image(m, {4: (4, s)}))
    assert len(wrong) == 1 and "one COMPARE AND WRITE range" in wrong[0]


def test_zeroed_blocks_may_not_come_back_once_durable():
    m = lun()
    s = write(m, 1, 1)
    u = m.new_serial()
    cmd = m.issue("unmap", u, [(1, zeroed(u))])
    assert m.check(image(m, {1: (1, s)})) == []  # not acknowledged yet
    m.acked(cmd)
    assert len(m.check(image(m, {1: (1, s)}))) == 1


def test_rebase_starts_the_next_round_from_what_was_read():
    m = lun()
    s = write(m, 0, 1, ack=False)
    assert m.check(image(m, {})) == []
    m.rebase()
    assert m.allowed(0) == [None]
    assert len(m.check(image(m, {0: (0, s)}))) == 1
