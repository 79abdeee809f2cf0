"""UNMAP: many descriptors, zeros read back, space given back, and a bad
list refused whole."""

import os
import random
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import MiB, fill, read, sh
from scsi import (
    DATA_PROTECT,
    ILLEGAL_REQUEST,
    cdb_unmap,
    expect_good,
    expect_sense,
    sg_io,
    unmap,
    unmap_list,
)
from sense_codes import (
    INVALID_COMMAND_OPERATION_CODE,
    INVALID_FIELD_IN_CDB,
    INVALID_FIELD_IN_PARAMETER_LIST,
    LBA_OUT_OF_RANGE,
    PARAMETER_LIST_LENGTH_ERROR,
    WRITE_PROTECTED,
)
from thin import allocated, stat


@pytest.mark.over_fabrics
def test_sg_unmap_single_range_reads_zeros_and_frees_space(lun):
    data = fill(lun, 0, 8 * MiB // 512)
    full = allocated(lun.backing.image)
    sh("sg_unmap", "--force", "--lba=2048", "--num=4096", lun.sg)
    back = read(lun, 0, 8 * MiB // 512)
    assert back[:MiB] == data[:MiB]
    assert back[MiB : 3 * MiB] == bytes(2 * MiB)
    assert back[3 * MiB :] == data[3 * MiB :]
    assert allocated(lun.backing.image) <= full - 2 * MiB


@pytest.mark.over_fabrics
def test_256_descriptors_in_one_command(lun):
    data = fill(lun, 0, 16 * MiB // 512)
    extents = [(i * 64, 32) for i in range(256)]  # every other 16 KiB
    before = stat(lun, "unmap")
    expect_good(unmap(lun.sg, extents))
    back = read(lun, 0, 16 * MiB // 512)
    for i in range(256):
        a, b = i * 64 * 512, (i * 64 + 32) * 512
        assert back[a:b] == bytes(b - a)
        assert back[b : b + 32 * 512] == data[b : b + 32 * 512]
    assert stat(lun, "unmap") == before + 1
    assert stat(lun, "unmap_blocks") >= 256 * 32


def test_overlapping_and_unordered_descriptors_are_allowed(lun):
    data = fill(lun, 0, 2 * MiB // 512)
    expect_good(unmap(lun.sg, [(300, 100), (0, 200), (150, 200), (100, 0)]))
    back = read(lun, 0, 2 * MiB // 512)
    assert back[: 400 * 512] == bytes(400 * 512)
    assert back[400 * 512 :] == data[400 * 512 :]


@pytest.mark.over_fabrics
@pytest.mark.parametrize("case", ["beyond-capacity", "wraps", "too-many-blocks"])
def test_one_bad_descriptor_refuses_the_whole_list(lun, case):
    data = fill(lun, 0, 4 * MiB // 512)
    lun.so.set_attribute("max_unmap_lba_count", "4096")
    good = [(0, 1024), (2048, 1024)]
    bad, sense, field = {
        "beyond-capacity": ((lun.last_lba, 2), LBA_OUT_OF_RANGE, 8 + 2 * 16),
        "wraps": ((2**64 - 8, 16), LBA_OUT_OF_RANGE, 8 + 2 * 16),
        "too-many-blocks": ((4096, 2049), INVALID_FIELD_IN_PARAMETER_LIST, 8 + 2 * 16 + 8),
    }[case]
    failed = stat(lun, "unmap_failed")
    s = expect_sense(unmap(lun.sg, [*good, bad]), ILLEGAL_REQUEST, *sense)
    assert s.sks and s.sks[0] & 0xC0 == 0x80, "field pointer into the parameter list"
    assert int.from_bytes(s.sks[1:3], "big") == field
    assert read(lun, 0, 4 * MiB // 512) == data, "something was unmapped"
    assert stat(lun, "unmap_failed") == failed + 1


def test_many_concurrent_refused_unmaps(lun):
    """Review finding 1 of issue 27: a refused UNMAP was completed while its
    parameter list was still mapped, and unmapped afterwards, on a command
    the fabric may have reused.  Eight senders at once over tcm_loop, lists
    of two pages (mapped with vmap), each refused by its last descriptor:
    every answer is the refusal and nothing is unmapped.  The unmap after
    completion is what conftest's nothing_touched_after_completion sees
    (tests/kmod/vaai_cmd_watch.c); KASAN does not over tcm_loop, where
    the command is not freed."""
    data = fill(lun, 0, MiB // 512)
    good = [(i * 8, 8) for i in range(255)]
    lists = [[*good, (lun.last_lba, 2)], [*good, (2**64 - 8, 16)]]
    failed = stat(lun, "unmap_failed")

    def sender(n):
        for i in range(50):
            expect_sense(unmap(lun.sg, lists[(n + i) % 2]), ILLEGAL_REQUEST, *LBA_OUT_OF_RANGE)

    with ThreadPoolExecutor(8) as pool:
        for f in [pool.submit(sender, n) for n in range(8)]:
            f.result()
    assert stat(lun, "unmap_failed") == failed + 8 * 50
    assert read(lun, 0, MiB // 512) == data, "something was unmapped"


def test_more_descriptors_than_the_maximum_is_refused(lun):
    data = fill(lun, 0, MiB // 512)
    lun.so.set_attribute("max_unmap_block_desc_count", "4")
    expect_sense(
        unmap(lun.sg, [(i, 1) for i in range(5)]), ILLEGAL_REQUEST, *INVALID_FIELD_IN_PARAMETER_LIST
    )
    assert read(lun, 0, MiB // 512) == data


@pytest.mark.parametrize(
    "kw",
    [
        {"bd_len": 48},  # descriptors claimed beyond the list
        {"data_len": 200},  # UNMAP DATA LENGTH beyond the list
        {"data_len": 10},  # shorter than the descriptors it holds
    ],
    ids=["bd-len-too-long", "data-len-too-long", "data-len-too-short"],
)
@pytest.mark.over_fabrics
def test_lengths_that_disagree_are_refused(lun, kw):
    data = fill(lun, 0, MiB // 512)
    expect_sense(
        unmap(lun.sg, [(0, 8), (64, 8)], **kw), ILLEGAL_REQUEST, *INVALID_FIELD_IN_PARAMETER_LIST
    )
    assert read(lun, 0, MiB // 512) == data


def test_incomplete_last_descriptor_is_ignored(lun):
    data = fill(lun, 0, MiB // 512)
    plist = unmap_list([(0, 8), (64, 8)])
    plist = plist[:2] + (24).to_bytes(2, "big") + plist[4:]  # 1.5 descriptors
    expect_good(sg_io(lun.sg, cdb_unmap(len(plist)), data_out=plist))
    back = read(lun, 0, MiB // 512)
    assert back[: 8 * 512] == bytes(8 * 512)
    assert back[64 * 512 : 72 * 512] == data[64 * 512 : 72 * 512]


def test_parameter_list_shorter_than_its_header(lun):
    expect_sense(
        sg_io(lun.sg, cdb_unmap(6), data_out=bytes(6)),
        ILLEGAL_REQUEST,
        *PARAMETER_LIST_LENGTH_ERROR,
    )


def test_empty_parameter_list_is_no_error(lun):
    expect_good(sg_io(lun.sg, cdb_unmap(0)))


def test_anchor_is_refused(lun):
    plist = unmap_list([(0, 8)])
    expect_sense(
        sg_io(lun.sg, cdb_unmap(len(plist), anchor=True), data_out=plist),
        ILLEGAL_REQUEST,
        *INVALID_FIELD_IN_CDB,
    )


def test_unmap_is_not_supported_when_tpu_is_off(lun):
    lun.so.set_attribute("emulate_tpu", "0")
    expect_sense(unmap(lun.sg, [(0, 8)]), ILLEGAL_REQUEST, *INVALID_COMMAND_OPERATION_CODE)


def test_readonly_lun_refuses_unmap(make_lun):
    data = os.urandom(MiB)
    lun = make_lun(size=16 * MiB, readonly=True, fill=data)
    expect_sense(unmap(lun.sg, [(0, 8)]), DATA_PROTECT, *WRITE_PROTECTED)
    assert read(lun, 0, MiB // 512) == data


def test_random_unmaps_match_a_model(lun):
    data = bytearray(fill(lun, 0, 4 * MiB // 512))
    rnd = random.Random(3)
    for _ in range(20):
        extents = [
            (rnd.randrange(0, 8000), rnd.randrange(0, 190)) for _ in range(rnd.randrange(1, 9))
        ]
        expect_good(unmap(lun.sg, extents))
        for lba, n in extents:
            data[lba * 512 : (lba + n) * 512] = bytes(n * 512)
    assert read(lun, 0, 4 * MiB // 512) == bytes(data)
