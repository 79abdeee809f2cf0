"""The NAA designator hosts know a LUN by (vaai/params.py), and create's
refusal of a serial that would give a second device the same one."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from vaai import backstore
from vaai.errors import VaaiError
from vaai.params import naa_designator


@pytest.mark.parametrize(
    "serial, company_id, want",
    [
        # a UUID, as rtslib makes them: its first 25 hex digits
        ("6c3a9f1e-77b4-4d2b-9a0e-1f2d3c4b5a69", 0x001405, "60014056c3a9f1e77b44d2b9a0e1f2d3"),
        # letters past f and punctuation skipped, capitals read as digits
        ("DS-prod:0x1F", 0x001405, "6001405dd01f00000000000000000000"),
        ("", 0x001405, "60014050000000000000000000000000"),
        ("abc", 0xA1B2C3, "6a1b2c3abc0000000000000000000000"),
    ],
)
def test_designator_from_serial(serial, company_id, want):
    assert naa_designator(serial, company_id).hex() == want


class FakeSO:
    def __init__(self, name, serial, plugin="vaai", path="/nonexistent/core/x"):
        self.name, self.plugin, self.path, self._serial = name, plugin, path, serial

    @property
    def wwn(self):
        if self._serial is None:
            raise backstore.RTSLibError("Cannot read a T10 WWN Unit Serial")
        return self._serial


@pytest.fixture
def existing(monkeypatch):
    sos = [
        FakeSO("unconfigured", None, plugin="fileio"),
        FakeSO("disk", "0123456789abcdef012345678-sda", plugin="pscsi"),
        FakeSO("ds1", "0123456789abcdef012345678-vol1"),
    ]
    monkeypatch.setattr(backstore.StorageObject, "all", classmethod(lambda cls: iter(sos)))
    return sos


def test_a_serial_differing_only_past_25_digits_is_refused(existing):
    serial = "0123456789abcdef012345678-vol2"
    assert naa_designator(serial) == naa_designator(existing[-1].wwn)  # ds1's
    with pytest.raises(VaaiError) as e:
        backstore._check_naa(serial)
    assert str(e.value) == (
        f"unit serial {serial!r} gives the NAA designator {naa_designator(serial).hex()}, "
        "which vaai/ds1 (serial '0123456789abcdef012345678-vol1') has: the hosts "
        "would take them for one device; pick a serial that differs in its first "
        "25 hexadecimal digits"
    )


def test_a_pass_through_device_keeps_the_designator_of_its_disk(existing):
    existing[:] = [so for so in existing if so.plugin != "vaai"]  # the pscsi one is alike
    backstore._check_naa("0123456789abcdef012345678-vol2")


def test_a_serial_with_its_own_designator_passes(existing):
    backstore._check_naa("ds2-0002")


def test_another_company_id_makes_another_designator(existing, monkeypatch):
    monkeypatch.setattr(backstore, "_company_id", lambda so: 0x00A0B8)
    backstore._check_naa("0123456789abcdef012345678-vol2")
