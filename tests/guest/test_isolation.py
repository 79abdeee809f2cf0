"""Two initiators with different ACLs on one iSCSI target (two ESXi hosts
with their own datastores): neither reaches the other's LUN through any
command, EXTENDED COPY by NAA included, and a read-only mapping cannot be
written through WRITE, WRITE SAME (with or without data), UNMAP, COMPARE
AND WRITE or a copy."""

import os
import subprocess

import pytest
from conftest import MiB
from scsi import (
    DATA_PROTECT,
    cdb_write_same16,
    clear_unit_attention,
    compare_and_write,
    cscd_e4,
    expect_good,
    expect_sense,
    naa_of,
    read_blocks,
    seg_b2b,
    sg_io,
    unmap,
    write_blocks,
    xcopy,
    xcopy_list,
)
from sense_codes import COPY_TARGET_NOT_REACHABLE, WRITE_PROTECTED
from vaai.export import sg_of

import fabrics

COPY_ABORTED = 0xA


@pytest.fixture
def hosts(make_lun):
    """Host A maps LUN a; host B maps LUN b and, read-only, a.  Each view is
    (sg of the LUN as that host sees it); a and b are the Lun objects."""
    a = make_lun(size=16 * MiB, own_nexus=True)
    b = make_lun(size=16 * MiB, own_nexus=True)
    fabrics.close_all()  # the shared iSCSI session stays out of the way
    two = fabrics.TwoHosts()
    try:
        views = {
            "A/a": two.map(a.so, "A"),
            "B/b": two.map(b.so, "B"),
            "B/a": two.map(a.so, "B", readonly=True),
        }
        views = {k: sg_of(disk) for k, disk in views.items()}
        for sg in views.values():
            clear_unit_attention(sg)
        yield a, b, views
    finally:
        two.close()


def reported_luns(sg):
    out = subprocess.run(
        ["sg_luns", "--decode", sg], capture_output=True, text=True, check=True
    ).stdout
    return sorted(
        int(line.split("lun=")[1])
        for line in out.splitlines()
        if line.strip().startswith("Peripheral device addressing: lun=")
    )


def snapshot(lun):
    return expect_good(read_blocks(lun.sg, 0, 2048, lun.block_size)).data


def test_each_host_sees_only_its_own_luns(hosts):
    _a, _b, v = hosts
    assert reported_luns(v["A/a"]) == [0]
    assert reported_luns(v["B/b"]) == [0, 1]
    data = os.urandom(64 * 512)
    expect_good(write_blocks(v["A/a"], 0, data, 512))
    assert expect_good(read_blocks(v["B/a"], 0, 64, 512)).data == data  # B reads a
    assert expect_good(read_blocks(v["B/b"], 0, 64, 512)).data != data


def test_extended_copy_cannot_reach_a_lun_of_the_other_host(hosts):
    a, b, v = hosts
    b_before = snapshot(b)
    a_naa, b_naa = cscd_e4(naa_of(a.sg), 512), cscd_e4(naa_of(b.sg), 512)
    # From A: b by its NAA, as source and as destination.
    for seg in (seg_b2b(1, 0, 64, 0, 100), seg_b2b(0, 1, 64, 0, 100)):
        res = xcopy(v["A/a"], xcopy_list([a_naa, b_naa], [seg]))
        expect_sense(res, COPY_ABORTED, *COPY_TARGET_NOT_REACHABLE)
    assert snapshot(b) == b_before


def test_read_only_mapping_is_a_source_never_a_destination(hosts):
    a, b, v = hosts
    a_before = snapshot(a)
    a_naa, b_naa = cscd_e4(naa_of(a.sg), 512), cscd_e4(naa_of(b.sg), 512)
    # B copies a (read-only to it) into b: allowed.
    expect_good(xcopy(v["B/b"], xcopy_list([a_naa, b_naa], [seg_b2b(0, 1, 64, 0, 500)])))
    assert expect_good(read_blocks(v["B/b"], 500, 64, 512)).data == a_before[: 64 * 512]
    # B copies b into a: refused, a untouched.
    res = xcopy(v["B/b"], xcopy_list([b_naa, a_naa], [seg_b2b(0, 1, 64, 0, 0)]))
    expect_sense(res, COPY_ABORTED, *COPY_TARGET_NOT_REACHABLE)
    assert snapshot(a) == a_before


def test_read_only_mapping_refuses_every_write(hosts):
    a, _b, v = hosts
    a_before = snapshot(a)
    ro = v["B/a"]
    block = os.urandom(512)
    expect_sense(write_blocks(ro, 0, block, 512), DATA_PROTECT, *WRITE_PROTECTED)
    expect_sense(sg_io(ro, cdb_write_same16(0, 8), data_out=block), DATA_PROTECT, *WRITE_PROTECTED)
    expect_sense(
        sg_io(ro, cdb_write_same16(0, 8, ndob=True)),  # no data-out
        DATA_PROTECT,
        *WRITE_PROTECTED,
    )
    expect_sense(
        sg_io(ro, cdb_write_same16(0, 8, unmap=True, ndob=True)), DATA_PROTECT, *WRITE_PROTECTED
    )
    expect_sense(unmap(ro, [(0, 64)]), DATA_PROTECT, *WRITE_PROTECTED)
    expect_sense(
        compare_and_write(ro, 0, a_before[:512], block, 512), DATA_PROTECT, *WRITE_PROTECTED
    )
    assert snapshot(a) == a_before
