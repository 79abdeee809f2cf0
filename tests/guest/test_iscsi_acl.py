"""iSCSI access control through the Python layer: an initiator outside the
ACL cannot log in, CHAP (one-way and mutual) admits the right secret only."""

import os
import subprocess

import pytest
from conftest import INITIATOR, sh
from scsi import clear_unit_attention, expect_good, read_blocks, write_blocks
from vaai.errors import VaaiError
from vaai.export import export_iscsi, find_disk, sg_of, unexport

IQN = "iqn.2026-11.org.vaai:acl"
CHAP = ("esx-host1", "s3cret-for-esx1")
MUTUAL = ("vaai-array", "array-s3cret-42")


def login(**chap):
    """initiator.sh login with CHAP settings in the environment; True if it
    logged in."""
    env = dict(os.environ, **chap)
    ok = (
        subprocess.run(
            [INITIATOR, "login", IQN], env=env, capture_output=True, check=False
        ).returncode
        == 0
    )
    return ok


@pytest.fixture
def exported(lun):
    """export(**kw): lun exported over iSCSI to this initiator; logged out
    and unexported afterwards."""
    sh(INITIATOR, "start")
    me = sh(INITIATOR, "name").strip()

    def export(initiators=(me,), **kw):
        export_iscsi(lun.so, IQN, initiators=list(initiators), **kw)
        return lun

    yield export
    subprocess.run([INITIATOR, "logout", IQN], capture_output=True, check=False)
    unexport(lun.so)
    # the loopback export the fixture made is gone with it: nothing left to undo
    subprocess.run(
        ["iscsiadm", "-m", "node", "-T", IQN, "-o", "delete"], capture_output=True, check=False
    )


def reachable(lun):
    """The LUN over the iSCSI session: data written over tcm_loop reads back."""
    sg = sg_of(find_disk(lun.so, "iscsi_tcp", target=IQN))
    clear_unit_attention(sg)
    data = os.urandom(4096)
    expect_good(write_blocks(lun.sg, 8, data, 512))
    assert expect_good(read_blocks(sg, 8, 8, 512)).data == data


def test_initiator_outside_the_acl_cannot_log_in(exported):
    exported(initiators=["iqn.2026-11.org.vaai:someone-else"])
    assert not login()


def test_one_way_chap(exported):
    lun = exported(chap=CHAP)
    assert not login()  # no CHAP at all
    assert not login(CHAP_USER=CHAP[0], CHAP_PASS="wrong-secret-123")
    assert login(CHAP_USER=CHAP[0], CHAP_PASS=CHAP[1])
    reachable(lun)


def test_mutual_chap(exported):
    lun = exported(chap=CHAP, mutual_chap=MUTUAL)
    # the initiator refuses a target that proves the wrong secret
    assert not login(
        CHAP_USER=CHAP[0],
        CHAP_PASS=CHAP[1],
        CHAP_USER_IN=MUTUAL[0],
        CHAP_PASS_IN="not-the-array-42",
    )
    assert login(
        CHAP_USER=CHAP[0], CHAP_PASS=CHAP[1], CHAP_USER_IN=MUTUAL[0], CHAP_PASS_IN=MUTUAL[1]
    )
    reachable(lun)


def test_mutual_chap_without_chap_is_refused(lun):
    with pytest.raises(VaaiError):
        export_iscsi(lun.so, IQN, initiators=["iqn.x"], mutual_chap=MUTUAL)
