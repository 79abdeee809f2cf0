"""Unit serial (VPD 0x80) and NAA designator (VPD 0x83) of vaai LUNs."""

import re

from conftest import sh


def naa_designators(disk):
    out = sh("sg_vpd", "-p", "di", "--hex", disk)
    raw = bytes.fromhex(
        "".join(
            re.sub(r"^\s*[0-9a-f]+\s+", "", line)[:48].replace(" ", "")
            for line in out.splitlines()
            if re.match(r"^\s*[0-9a-f]{2,}\s", line)
        )
    )
    found, pos = [], 4
    while pos + 4 <= len(raw):
        kind, length = raw[pos + 1] & 0x0F, raw[pos + 3]
        assoc = (raw[pos + 1] >> 4) & 0x3
        if kind == 3 and assoc == 0:  # NAA, addressed logical unit
            found.append(raw[pos + 4 : pos + 4 + length])
        pos += 4 + length
    return found


def test_unit_serial_is_the_storage_objects_wwn(lun):
    out = sh("sg_vpd", "-p", "sn", lun.disk)
    assert re.search(rf"Unit serial number: {re.escape(lun.so.wwn)}\s*$", out, re.MULTILINE)


def test_naa_designator_is_ieee_registered_extended_and_unique(make_lun):
    a, b = make_lun(), make_lun()
    naa_a, naa_b = naa_designators(a.disk), naa_designators(b.disk)
    assert len(naa_a) == 1 and len(naa_b) == 1
    assert naa_a[0][0] >> 4 == 6 and len(naa_a[0]) == 16  # NAA 6: 16 bytes
    assert naa_a != naa_b
