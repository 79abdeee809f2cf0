"""WRITE USING TOKEN between files on one XFS with reflink: the copy clones
what the file system can share (docs/xcopy.md, "How a copy runs") and
copies the rest, and the destination reads back the token's bytes either
way.  Only the xfs store has files that can share extents."""

import pytest
from conftest import MiB, fill, read, sh
from scsi import expect_good, make_token, write_using_token

pytestmark = pytest.mark.stores("xfs")


@pytest.fixture
def luns(make_lun):
    a = make_lun(size=16 * MiB)
    return a, make_lun(size=16 * MiB, beside=a)


def test_aligned_ranges_are_cloned(luns):
    a, b = luns
    data = fill(a, 0, 2048)
    expect_good(write_using_token(b.sg, make_token(a.sg, [(0, 2048)]), [(4096, 2048)], 2))
    assert read(b, 4096, 2048) == data
    assert "shared" in sh("filefrag", "-v", b.backing.image)


def test_ranges_off_the_file_system_blocks_are_copied(luns):
    a, b = luns
    src, dst = [(3, 1001), (2051, 5)], [(7, 6), (1101, 1000)]
    data = b"".join(fill(a, lba, n) for lba, n in src)
    expect_good(write_using_token(b.sg, make_token(a.sg, src), dst, 2))
    assert b"".join(read(b, lba, n) for lba, n in dst) == data
