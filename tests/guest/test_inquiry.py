"""Standard INQUIRY of a vaai LUN: LIO core answers, with our product name."""

import re

from conftest import sh


def inq_bit(out, name):
    return int(re.search(rf"\b{name}=(\d)", out).group(1))


def test_inquiry_names_vendor_and_product(lun):
    out = sh("sg_inq", lun.disk)
    assert re.search(r"Vendor identification: LIO-ORG\s*$", out, re.MULTILINE)
    assert re.search(r"Product identification: VAAI\s*$", out, re.MULTILINE)
    assert "Peripheral device type: disk" in out


def test_inquiry_3pc_follows_emulate_3pc(lun):
    lun.so.set_attribute("emulate_3pc", "1")
    assert inq_bit(sh("sg_inq", lun.disk), "3PC") == 1
    lun.so.set_attribute("emulate_3pc", "0")
    assert inq_bit(sh("sg_inq", lun.disk), "3PC") == 0


def test_inquiry_tpgs_reports_implicit_and_explicit_alua(lun):
    # LIO core keeps doing ALUA for our backend: both access modes.
    assert inq_bit(sh("sg_inq", lun.disk), "TPGS") == 3
