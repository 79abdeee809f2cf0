"""The NAA designator a host knows a LUN by: what vaaictl computes from a
unit serial is what the LUN reports in VPD page 0x83, and a serial that
would give a second device the same designator is refused."""

import os

import pytest
from conftest import SCRATCH
from ctl import refused, vaaictl
from scsi import naa_of
from vaai import VaaiStorageObject
from vaai.export import find_disk, sg_of
from vaai.params import naa_designator

SERIAL = "0123456789abcdef012345678-vol1"


@pytest.fixture
def first():
    path = os.path.join(SCRATCH, "naa1.img")
    vaaictl("create", "naa1", path, "--size", "1M", "--wwn", SERIAL)
    try:
        vaaictl("export", "naa1", "loopback")
        yield "naa1"
    finally:
        vaaictl("delete", "naa1")
        os.unlink(path)


def test_the_lun_reports_the_designator_its_serial_gives(first):
    sg = sg_of(find_disk(VaaiStorageObject(first), "tcm_loopback"))
    assert naa_of(sg) == naa_designator(SERIAL)


def test_a_serial_with_that_designator_is_refused(first):
    path = os.path.join(SCRATCH, "naa2.img")
    serial = SERIAL.replace("vol1", "vol2")
    refused(
        ["create", "naa2", path, "--size", "1M", "--wwn", serial],
        f"gives the NAA designator {naa_designator(SERIAL).hex()}, which vaai/naa1",
    )
    assert not os.path.exists(path)
    vaaictl("create", "naa2", path, "--size", "1M", "--wwn", "f" + serial)
    vaaictl("delete", "naa2")
    os.unlink(path)
