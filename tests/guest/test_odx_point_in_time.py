"""Point-in-time tokens (docs/odx.md): what POPULATE TOKEN makes on each
store, and that nothing written after it reaches a WRITE USING TOKEN's
destination.  On XFS with reflink and on btrfs the token's ranges were
shared into a token file, and the copy gets the data as it was; on the
block store and a file system that cannot share (ext4, and tmpfs under
the file store) a change to the ranges cancels the token, and the copy is
refused with nothing written.  Token files' extents are freed when the
token goes, and what tokens may hold is bounded by the file system's
room."""

import json
import os
import struct
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import MiB, fill, read, sh, unload_and_reload
from scsi import (
    ILLEGAL_REQUEST,
    MISCOMPARE,
    ROD_TYPE_AUR,
    ROD_TYPE_PIT_ANY,
    ROD_TYPE_PIT_DEFAULT,
    ROD_TYPE_PIT_PERSISTENT,
    ROD_TYPE_PIT_VULNERABLE,
    cdb_write_same16,
    compare_and_write,
    cscd_e4,
    expect_good,
    expect_sense,
    field_pointer,
    make_token,
    naa_of,
    populate_token,
    seg_b2b,
    sg_io,
    unmap,
    write_using_token,
    xcopy,
    xcopy_list,
)
from sense_codes import (
    INVALID_FIELD_IN_PARAMETER_LIST,
    MISCOMPARE_DURING_VERIFY,
    NO_ROOM_FOR_ROD,
    TOKEN_CANCELLED,
    TOKEN_EXPIRED,
)
from thin import stat

pytestmark = pytest.mark.stores("xfs", "btrfs", "ext4", "file", "bdev")

# the stores that share extents: persistent tokens
SHARING = ("xfs", "btrfs")

GIB = 1 << 30
N = 256  # blocks a token stands for in most tests: 128 KiB
DEST = 8192  # where its copy goes


def made_by(store):
    """The type of token POPULATE TOKEN makes on store unless asked."""
    return ROD_TYPE_PIT_PERSISTENT if store in SHARING else ROD_TYPE_PIT_VULNERABLE


def rod_type(token):
    return struct.unpack(">I", token[0:4])[0]


# Changes to blocks [lba, +n) of a LUN, one per command that writes.
def by_write(lun, lba, n):
    fill(lun, lba, n)


def by_write_same(lun, lba, n):
    cdb = cdb_write_same16(lba, n)
    expect_good(sg_io(lun.sg, cdb, data_out=os.urandom(lun.block_size)))


def by_unmap(lun, lba, n):
    expect_good(unmap(lun.sg, [(lba, n)]))


def by_compare_and_write(lun, lba, n):
    bs = lun.block_size
    old = read(lun, lba, 1)
    expect_good(compare_and_write(lun.sg, lba, old, os.urandom(bs), bs))


def by_extended_copy(lun, lba, n):
    fill(lun, 4096, n)
    naa = naa_of(lun.sg)
    params = xcopy_list([cscd_e4(naa, lun.block_size)], [seg_b2b(0, 0, n, 4096, lba)])
    expect_good(xcopy(lun.sg, params))


def by_write_using_token(lun, lba, n):
    fill(lun, 4096, n)
    expect_good(
        write_using_token(lun.sg, make_token(lun.sg, [(4096, n)], list_id=9), [(lba, n)], 9)
    )


CHANGES = [
    by_write,
    by_write_same,
    by_unmap,
    by_compare_and_write,
    by_extended_copy,
    by_write_using_token,
]


def copy_after_change(lun, store, token, expected, ranges=((DEST, N),), **kw):
    """WRITE USING TOKEN after a change to the token's blocks: the data as
    it was where the token holds it, else refused and nothing written."""
    before = b"".join(read(lun, lba, n) for lba, n in ranges)
    res = write_using_token(lun.sg, token, list(ranges), 2, **kw)
    if rod_type(token) == ROD_TYPE_PIT_PERSISTENT:
        expect_good(res)
        assert b"".join(read(lun, lba, n) for lba, n in ranges) == expected
    else:
        expect_sense(res, ILLEGAL_REQUEST, *TOKEN_CANCELLED)
        assert b"".join(read(lun, lba, n) for lba, n in ranges) == before


def test_populate_token_makes_a_point_in_time_token(make_lun, store):
    lun = make_lun(size=16 * MiB)
    data = fill(lun, 0, N)
    token = make_token(lun.sg, [(0, N)])
    assert rod_type(token) == made_by(store)
    expect_good(write_using_token(lun.sg, token, [(DEST, N)], 2))
    assert read(lun, DEST, N) == data


@pytest.mark.parametrize("change", CHANGES, ids=lambda f: f.__name__[3:])
def test_a_change_after_populate_token_never_reaches_the_destination(make_lun, store, change):
    lun = make_lun(size=16 * MiB)
    fill(lun, DEST, N)
    old = fill(lun, 0, N)
    token = make_token(lun.sg, [(0, N)])
    change(lun, 64, 8)
    copy_after_change(lun, store, token, old)


@pytest.mark.over_fabrics("iscsi")
def test_a_token_across_luns_after_a_change(make_lun, store):
    src = make_lun(size=16 * MiB)
    dst = make_lun(size=16 * MiB, beside=src)
    old = fill(src, 0, N)
    prior = fill(dst, 0, N)
    token = make_token(src.sg, [(0, N)])
    fill(src, N - 1, 1)  # the token's last block
    res = write_using_token(dst.sg, token, [(0, N)], 2)
    if store in SHARING:
        expect_good(res)
        assert read(dst, 0, N) == old
    else:
        expect_sense(res, ILLEGAL_REQUEST, *TOKEN_CANCELLED)
        assert read(dst, 0, N) == prior


def test_changes_beside_the_ranges_leave_the_token_as_it_was(make_lun, store):
    """Writes next to the ranges, and a COMPARE AND WRITE that miscompares
    inside them, change nothing the token stands for."""
    lun = make_lun(size=16 * MiB)
    old = fill(lun, 8, N)
    token = make_token(lun.sg, [(8, N)])
    fill(lun, 0, 8)
    fill(lun, 8 + N, 8)
    bs = lun.block_size
    res = compare_and_write(lun.sg, 8, os.urandom(bs), os.urandom(bs), bs)
    expect_sense(res, MISCOMPARE, *MISCOMPARE_DURING_VERIFY)
    expect_good(write_using_token(lun.sg, token, [(DEST, N)], 2))
    assert read(lun, DEST, N) == old


def test_a_token_stands_for_its_point_in_time_at_every_use(make_lun, store):
    """Used again after a copy into its own ranges, the token still names
    the data it was made of: the copy's own writes do not cancel it."""
    lun = make_lun(size=16 * MiB)
    old = fill(lun, 0, N)
    token = make_token(lun.sg, [(0, N)])
    fill(lun, DEST, N)
    expect_good(write_using_token(lun.sg, token, [(0, N)], 2))  # onto itself
    expect_good(write_using_token(lun.sg, token, [(DEST, N)], 2))
    assert read(lun, DEST, N) == read(lun, 0, N) == old


@pytest.mark.parametrize("block_size", [512, 4096])
def test_64_fragments_of_1_gib_in_64_mib_pieces(make_lun, store, block_size):
    """Windows' pattern at the limits: a token of 64 ranges, 1 GiB in all,
    written out 64 MiB at a time with OFFSET INTO ROD, while the source's
    first block of every fragment is written after POPULATE TOKEN.  Sparse
    LUNs: the first and last blocks of each fragment hold data."""
    src = make_lun(size=2 * GIB, block_size=block_size)
    dst = make_lun(size=GIB, block_size=block_size, beside=src)
    frag = GIB // 64 // block_size
    ranges = [(i * 2 * frag, frag) for i in range(64)]
    stamps = {}
    for lba, n in ranges:
        stamps[lba] = fill(src, lba, 1)
        stamps[lba + n - 1] = fill(src, lba + n - 1, 1)
    token = make_token(src.sg, ranges)
    for lba, _ in ranges:
        fill(src, lba, 1)
    piece = 64 * MiB // block_size
    for k in range(GIB // (64 * MiB)):
        res = write_using_token(dst.sg, token, [(k * piece, piece)], 2, offset=k * piece)
        if store not in SHARING:
            expect_sense(res, ILLEGAL_REQUEST, *TOKEN_CANCELLED)
            assert read(dst, 0, 8) == bytes(8 * block_size)
            return
        expect_good(res)
    for i, (lba, n) in enumerate(ranges):
        at = i * frag
        assert read(dst, at, 1) == stamps[lba]
        assert read(dst, at + n - 1, 1) == stamps[lba + n - 1]
        assert read(dst, at + 1, 1) == bytes(block_size)


@pytest.mark.parametrize(
    "asked",
    [ROD_TYPE_PIT_DEFAULT, ROD_TYPE_PIT_ANY, ROD_TYPE_PIT_VULNERABLE, ROD_TYPE_AUR],
    ids=["default", "any", "vulnerable", "aur"],
)
def test_rtv_asks_for_a_type(make_lun, store, asked):
    lun = make_lun(size=16 * MiB)
    token = make_token(lun.sg, [(0, N)], rtv=True, rod_type=asked)
    want = made_by(store) if asked in (ROD_TYPE_PIT_DEFAULT, ROD_TYPE_PIT_ANY) else asked
    assert rod_type(token) == want


def test_rtv_persistent_only_where_extents_are_shared(make_lun, store):
    lun = make_lun(size=16 * MiB)
    old = fill(lun, 0, N)
    if store in SHARING:
        token = make_token(lun.sg, [(0, N)], rtv=True, rod_type=ROD_TYPE_PIT_PERSISTENT)
        assert rod_type(token) == ROD_TYPE_PIT_PERSISTENT
        fill(lun, 0, N)
        expect_good(write_using_token(lun.sg, token, [(DEST, N)], 2))
        assert read(lun, DEST, N) == old
        return
    res = populate_token(lun.sg, [(0, N)], 1, rtv=True, rod_type=ROD_TYPE_PIT_PERSISTENT)
    s = expect_sense(res, ILLEGAL_REQUEST, *INVALID_FIELD_IN_PARAMETER_LIST)
    assert field_pointer(s) == (8, None)


def test_access_upon_reference_where_the_admin_asks(make_lun, store):
    """attrib/odx_point_in_time 0: tokens name the blocks, and a copy gets
    what they hold when it runs."""
    lun = make_lun(size=16 * MiB)
    lun.so.set_attribute("odx_point_in_time", 0)
    fill(lun, 0, N)
    token = make_token(lun.sg, [(0, N)])
    assert rod_type(token) == ROD_TYPE_AUR
    now = fill(lun, 0, N)
    expect_good(write_using_token(lun.sg, token, [(DEST, N)], 2))
    assert read(lun, DEST, N) == now


# --- token files (the xfs store) ------------------------------------------


def fs_used(path):
    os.sync()
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def settles(what, want, timeout=30):
    """what() reaches want within timeout seconds (XFS frees an unlinked
    file's blocks in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        got = what()
        if want(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.5)


def held(lun):
    return stat(lun, "odx_held_bytes")


def near(a, b, slack=MiB):
    return abs(a - b) <= slack


@pytest.mark.stores("xfs")
def test_a_token_file_holds_the_old_blocks_until_its_token_expires(make_lun):
    lun = make_lun(size=32 * MiB)
    where = os.path.dirname(lun.backing.image)
    n = 16 * MiB // 512
    fill(lun, 0, n)
    used = fs_used(where)
    token = make_token(lun.sg, [(0, n)], timeout=1)
    assert held(lun) == 16 * MiB
    assert near(fs_used(where), used)  # shared: no new space
    fill(lun, 0, n)  # the LUN's blocks are copied; the token keeps the old
    assert fs_used(where) - used >= 15 * MiB
    assert near(settles(lambda: fs_used(where), lambda u: near(u, used)), used)
    assert held(lun) == 0
    res = write_using_token(lun.sg, token, [(DEST, 8)], 2)
    expect_sense(res, ILLEGAL_REQUEST, *TOKEN_EXPIRED)


@pytest.mark.stores("xfs")
def test_del_tkn_frees_the_token_file(make_lun):
    lun = make_lun(size=48 * MiB)
    where = os.path.dirname(lun.backing.image)
    n = 16 * MiB // 512
    old = fill(lun, 0, n)
    used = fs_used(where)
    token = make_token(lun.sg, [(0, n)], timeout=3600)
    fill(lun, 0, n)
    assert fs_used(where) - used >= 15 * MiB
    # one block of it, and the token deleted: the rest of its blocks go
    expect_good(write_using_token(lun.sg, token, [(2 * n, 8)], 2, del_tkn=True))
    assert read(lun, 2 * n, 8) == old[: 8 * 512]
    assert held(lun) == 0
    assert near(settles(lambda: fs_used(where), lambda u: near(u, used)), used)


@pytest.mark.stores("xfs")
def test_no_token_file_outlives_its_lun_or_the_module(make_lun):
    """Tokens alive when their LUN goes, and the module unloaded and loaded
    again: their files' blocks are free and nothing is left in the
    directory (token files never have a name)."""
    lun = make_lun(size=32 * MiB)
    where = os.path.dirname(lun.backing.image)
    listed = sorted(os.listdir(where))
    n = 16 * MiB // 512
    fill(lun, 0, n)
    used = fs_used(where)
    for list_id in (1, 2, 3):
        make_token(lun.sg, [(0, n)], list_id=list_id, timeout=3600)
    fill(lun, 0, n)
    assert fs_used(where) - used >= 15 * MiB
    lun.fabric.unexport(lun.so, lun.disk)
    lun.so.delete()
    unload_and_reload()
    assert near(settles(lambda: fs_used(where), lambda u: near(u, used)), used)
    assert sorted(os.listdir(where)) == listed


def persistent(lun, ranges, list_id=1):
    return populate_token(lun.sg, ranges, list_id, rtv=True, rod_type=ROD_TYPE_PIT_PERSISTENT)


@pytest.mark.stores("xfs")
def test_a_token_the_file_system_has_no_room_for(make_lun):
    """What a token holds could all come to be copies: with 512 MiB free, a
    persistent token of 1 GiB is refused, one of 256 MiB made; unasked,
    the 1 GiB token is made change vulnerable instead."""
    lun = make_lun(size=2 * GIB)  # sparse
    where = os.path.dirname(lun.backing.image)
    filler = os.path.join(where, "filler")
    st = os.statvfs(where)
    sh("fallocate", "-l", str(st.f_bavail * st.f_frsize - 512 * MiB), filler)
    try:
        expect_sense(persistent(lun, [(0, GIB // 512)]), ILLEGAL_REQUEST, *NO_ROOM_FOR_ROD)
        assert held(lun) == 0
        token = make_token(lun.sg, [(0, GIB // 512)])
        assert rod_type(token) == ROD_TYPE_PIT_VULNERABLE
        assert held(lun) == 0
        expect_good(persistent(lun, [(0, 256 * MiB // 512)], 2))
        assert held(lun) == 256 * MiB
    finally:
        os.unlink(filler)


@pytest.mark.stores("xfs")
def test_tokens_stay_under_the_soft_threshold(make_lun):
    """The LUN's allocation and what its tokens hold together stay below
    attrib/tp_soft_threshold."""
    lun = make_lun(size=64 * MiB)
    lun.so.set_attribute("tp_soft_threshold", 50)
    fill(lun, 0, 16 * MiB // 512)  # 25 %
    res = persistent(lun, [(0, 24 * MiB // 512)])  # to 62.5 %
    expect_sense(res, ILLEGAL_REQUEST, *NO_ROOM_FOR_ROD)
    expect_good(persistent(lun, [(0, 8 * MiB // 512)], 2))  # to 37.5 %
    assert held(lun) == 8 * MiB


def keep_times(store, times):
    """The two-host run's command times, for docs/odx.md."""
    os.makedirs("build/odx", exist_ok=True)
    path = f"build/odx/windows-{os.uname().release}-{store}.json"
    with open(path, "w") as f:
        json.dump({"store": store, "kernel": os.uname().release, "times_s": times}, f, indent=1)


@pytest.mark.stores("xfs", "bdev")
def test_two_hosts_copy_as_windows_does(make_lun, store, over_iscsi):
    """Windows' pattern from two hosts at once, one over tcm_loop and one
    over iSCSI, on one LUN: POPULATE TOKEN over 32 fragments, RECEIVE ROD
    TOKEN INFORMATION, the fragments' first blocks written again, then
    WRITE USING TOKEN in 64 MiB pieces.  Each command's time (Windows
    allows 4 s) is printed and kept in build/odx/windows-KVER-STORE.json for
    docs/odx.md: a benchmark, not a check."""
    lun = make_lun(size=GIB)  # sparse
    hosts = {"loop": lun.sg, "iscsi": over_iscsi(lun)}
    frag, piece = 4 * MiB // 512, 64 * MiB // 512
    per_host = 32 * frag  # 128 MiB
    plans, times = {}, []
    for i, name in enumerate(hosts):
        base = i * 2 * per_host
        ranges = [(base + k * 2 * frag, frag) for k in range(32)]
        stamps = {lba: fill(lun, lba, 1) for lba, _ in ranges}
        plans[name] = (ranges, stamps, (4 + i) * per_host)

    def host(name):
        sg, (ranges, _, dest) = hosts[name], plans[name]
        t0 = time.monotonic()
        token = make_token(sg, ranges, list_id=1)
        times.append((name, "populate+rrti", time.monotonic() - t0))
        for lba, _ in ranges:
            expect_good(sg_io(sg, cdb_write_same16(lba, 1), data_out=bytes(512)))
        results = []
        for k in range(per_host // piece):
            t0 = time.monotonic()
            res = write_using_token(sg, token, [(dest + k * piece, piece)], 2, offset=k * piece)
            times.append((name, f"wut {k}", time.monotonic() - t0))
            results.append(res)
        return token, results

    with ThreadPoolExecutor(len(hosts)) as pool:
        done = dict(zip(hosts, pool.map(host, hosts)))
    print("\n".join(f"{n} {what}: {s:.3f} s" for n, what, s in times))
    keep_times(store, times)
    for name, (token, results) in done.items():
        ranges, stamps, dest = plans[name]
        if store == "bdev":  # the writes cancelled the token
            for res in results:
                expect_sense(res, ILLEGAL_REQUEST, *TOKEN_CANCELLED)
            assert read(lun, dest, 8) == bytes(8 * 512)
            continue
        assert rod_type(token) == ROD_TYPE_PIT_PERSISTENT
        for res in results:
            expect_good(res)
        for k, (lba, _) in enumerate(ranges):
            assert read(lun, dest + k * frag, 1) == stamps[lba]
