"""Who can use a token (docs/odx.md): any I_T nexus that has the source LUN
mapped, as well as the destination; a nexus that cannot see the source gets
INVALID TOKEN OPERATION and nothing is written.  Two initiators with ACLs
of their own on one iSCSI target (fabrics.TwoHosts) stand for two Hyper-V
cluster nodes."""

import pytest
from conftest import MiB, fill, read
from scsi import (
    DATA_PROTECT,
    ILLEGAL_REQUEST,
    RESERVATION_CONFLICT,
    clear_unit_attention,
    expect_good,
    expect_sense,
    make_token,
    sg_io,
    write_using_token,
)
from sense_codes import INVALID_TOKEN_OPERATION, WRITE_PROTECTED
from vaai.export import sg_of

import fabrics

# Who may use a token is settled before any store is touched: the file
# store stands for both.
pytestmark = pytest.mark.stores("file")

RESERVE6, RELEASE6 = bytes([0x16, 0, 0, 0, 0, 0]), bytes([0x17, 0, 0, 0, 0, 0])


@pytest.fixture
def nodes(make_lun):
    """a (the source) and b (the destination), each with 64 blocks of data
    and in a target of its own; mapped(mapping) -> (views, token) maps them
    to host A and host B of one iSCSI target ({"A": "a", "B": "a-ro b"}:
    "-ro" maps read-only).  views["B/b"] is host B's SCSI generic node of
    b; token, one of a's 64 blocks that host A made."""
    a = make_lun(size=16 * MiB, own_nexus=True)
    b = make_lun(size=16 * MiB, own_nexus=True)
    data = {"a": fill(a, 0, 64), "b": fill(b, 0, 64)}
    fabrics.close_all()  # the shared iSCSI session stays out of the way
    two = fabrics.TwoHosts()

    def mapped(mapping):
        views = {}
        for host, names in mapping.items():
            for name in names.split():
                so = {"a": a, "b": b}[name[0]].so
                views[host + "/" + name] = sg_of(two.map(so, host, readonly=name.endswith("-ro")))
        for sg in views.values():
            clear_unit_attention(sg)
        return views, make_token(views["A/a"], [(0, 64)])

    try:
        yield b, data, mapped
    finally:
        two.close()


def test_nexus_that_cannot_see_the_source_cannot_use_its_token(nodes):
    b, data, mapped = nodes
    v, tok = mapped({"A": "a b", "B": "b"})
    expect_sense(
        write_using_token(v["B/b"], tok, [(0, 64)], 2), ILLEGAL_REQUEST, *INVALID_TOKEN_OPERATION
    )
    assert read(b, 0, 64) == data["b"]
    # the token itself is good: the nexus that sees both can use it
    expect_good(write_using_token(v["A/b"], tok, [(0, 64)], 2))
    assert read(b, 0, 64) == data["a"]


def test_another_initiator_that_maps_both_can_use_the_token(nodes):
    """Mapped read-only to B, the source still serves B's copy."""
    b, data, mapped = nodes
    v, tok = mapped({"A": "a", "B": "a-ro b"})
    expect_good(write_using_token(v["B/b"], tok, [(100, 64)], 2))
    assert read(b, 100, 64) == data["a"]


def test_destination_mapped_read_only_is_write_protected(nodes):
    b, data, mapped = nodes
    v, tok = mapped({"A": "a", "B": "a b-ro"})
    expect_sense(write_using_token(v["B/b-ro"], tok, [(0, 64)], 2), DATA_PROTECT, *WRITE_PROTECTED)
    assert read(b, 0, 64) == data["b"]


def test_reservation_on_the_source_by_another_initiator_is_a_conflict(nodes):
    b, data, mapped = nodes
    v, tok = mapped({"A": "a", "B": "a b"})
    expect_good(sg_io(v["A/a"], RESERVE6))
    try:
        res = write_using_token(v["B/b"], tok, [(0, 64)], 2)
        assert res.status == RESERVATION_CONFLICT, res
    finally:
        expect_good(sg_io(v["A/a"], RELEASE6))
    assert read(b, 0, 64) == data["b"]
    expect_good(write_using_token(v["B/b"], tok, [(0, 64)], 2))
    assert read(b, 0, 64) == data["a"]


def test_lun_of_another_target_cannot_use_the_token(make_lun):
    """b is in a target of its own: the nexus that sees it does not see a."""
    a = make_lun(size=16 * MiB)
    b = make_lun(size=16 * MiB, own_nexus=True)
    fill(a, 0, 64)
    before = fill(b, 0, 64)
    expect_sense(
        write_using_token(b.sg, make_token(a.sg, [(0, 64)]), [(0, 64)], 2),
        ILLEGAL_REQUEST,
        *INVALID_TOKEN_OPERATION,
    )
    assert read(b, 0, 64) == before
