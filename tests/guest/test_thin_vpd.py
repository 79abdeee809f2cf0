"""What a host reads to decide how to use a thin LUN: READ CAPACITY (16),
the Logical Block Provisioning and Block Limits VPD pages."""

import re

import pytest
from conftest import sh
from vaai import VaaiStorageObject
from vaai.export import export_loopback, find_disk, unexport

MiB = 1 << 20


def field(out, name):
    """A numeric field of sg_vpd's decoded output (decimal or 0x hex)."""
    return int(re.search(rf"{re.escape(name)}[^:]*: *(0x[0-9a-fA-F]+|\d+)", out).group(1), 0)


def test_readcap_reports_lbpme_and_lbprz(lun, store):
    out = sh("sg_readcap", "-l", lun.disk)
    assert "lbpme=1" in out
    # both stores here can give zeros back: files punch holes, loop devices
    # turn write-zeroes into hole punching
    assert "lbprz=1" in out


@pytest.mark.over_fabrics
def test_lbp_vpd_page_advertises_unmap_and_write_same(lun):
    out = sh("sg_vpd", "-p", "lbpv", lun.disk)
    for bit in ("LBPU", "LBPWS", "LBPWS10", "LBPRZ"):
        assert field(out, bit) == 1, bit
    assert re.search(r"(?i)provisioning type: 2|thin provisioning", out)


@pytest.mark.parametrize("block_size", [512, 4096])
def test_block_limits_suit_vmfs6(make_lun, block_size):
    lun = make_lun(block_size=block_size)
    out = sh("sg_vpd", "-p", "bl", lun.disk)
    gran = field(out, "Optimal unmap granularity")
    assert gran >= 1 and MiB % (gran * block_size) == 0 and gran * block_size <= MiB
    assert field(out, "Maximum unmap block descriptor count") >= 256
    # 1 Mi blocks: at least 512 MiB, VMFS-6's 1 MiB units by the hundred
    assert field(out, "Maximum unmap LBA count") == 1 << 20
    assert field(out, "Maximum write same length") * block_size >= 1 << 30


@pytest.mark.parametrize("block_size", [512, 4096])
def test_threshold_exponent_says_the_file_store_has_a_threshold(make_lun, store, block_size):
    """THRESHOLD EXPONENT 0 would say there are no thresholds, yet a file
    store raises the soft threshold's unit attention (SBC-4 6.6.6)."""
    lun = make_lun(block_size=block_size)
    out = sh("sg_vpd", "-p", "lbpv", lun.disk)
    want = (MiB // block_size).bit_length() - 1 if store != "bdev" else 0
    assert field(out, "Threshold exponent") == want
    lun.so.set_attribute("emulate_tpu", "0")
    lun.so.set_attribute("emulate_tpws", "0")
    assert field(sh("sg_vpd", "-p", "lbpv", lun.disk), "Threshold exponent") == 0


def test_optimal_transfer_length_never_above_maximum(tmp_path):
    """LIO core sets optimal_sectors once, in 512-byte blocks; a block size
    raised straight through configfs (rtslib's layer lowers it, a raw write
    does not) must not leave OPTIMAL TRANSFER LENGTH above the maximum."""
    so = VaaiStorageObject("otl", path=str(tmp_path / "otl"), size=16 * MiB)
    try:
        with open(so.path + "/attrib/block_size", "w") as f:
            f.write("4096")
        export_loopback(so)
        out = sh("sg_vpd", "-p", "bl", find_disk(so, "tcm_loopback"))
        mtl = field(out, "Maximum transfer length")
        assert mtl == (8 * MiB) // 4096
        # not field(): "Optimal transfer length granularity" comes first
        otl = int(re.search(r"Optimal transfer length: *(\d+)", out).group(1))
        assert 1 <= otl <= mtl, out
    finally:
        unexport(so)
        so.delete()


def test_tpu_and_tpws_off_turn_provisioning_off(lun):
    lun.so.set_attribute("emulate_tpu", "0")
    lun.so.set_attribute("emulate_tpws", "0")
    assert "lbpme=0" in sh("sg_readcap", "-l", lun.disk)
    out = sh("sg_vpd", "-p", "lbpv", lun.disk)
    assert field(out, "LBPU") == 0 and field(out, "LBPWS") == 0
