"""Host-side tests of the Python layer's pure helpers."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from vaai.errors import VaaiError
from vaai.params import control_string, fc_wwn, parse_info, parse_size


@pytest.mark.parametrize(
    "text, size",
    [
        ("4096", 4096),
        ("64M", 64 << 20),
        ("64MiB", 64 << 20),
        ("1.5G", 3 << 29),
        ("2t", 2 << 40),
        (" 512 ", 512),
        (1 << 30, 1 << 30),
        ("8KB", 8192),
    ],
)
def test_parse_size_accepts_binary_suffixes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "M", "12 parsecs", "10GG", "-1", "0x100", "100"])
def test_parse_size_refuses_typos_and_sub_block_sizes(text):
    with pytest.raises(VaaiError):
        parse_size(text)


def test_control_string_for_new_file():
    assert control_string("/srv/lun0.img", "1G") == "path=/srv/lun0.img,size=1073741824,readonly=0"


def test_control_string_for_existing_readonly_device():
    assert control_string("/dev/sdb", readonly=True) == "path=/dev/sdb,readonly=1"


def test_control_string_for_a_device_another_node_holds():
    line = control_string("/dev/drbd0", "1G", online=False)
    assert line == "path=/dev/drbd0,size=1073741824,readonly=0,online=0"


def test_control_string_says_how_thin_a_closed_store_is():
    line = control_string("/dev/drbd0", 4096, online=False, unmap_unit=4096, lbprz=True)
    assert line == "path=/dev/drbd0,size=4096,readonly=0,online=0,unmap_unit=4096,lbprz=1"


def test_control_string_wants_the_size_of_a_closed_store():
    with pytest.raises(VaaiError, match="needs its size"):
        control_string("/dev/drbd0", online=False)


@pytest.mark.parametrize("path", ["relative.img", "", "/a,b", "/a=b", "/a\nb"])
def test_control_string_refuses_paths_the_kernel_would_misparse(path):
    with pytest.raises(VaaiError):
        control_string(path, "1M")


def test_parse_info_keeps_only_the_backends_lines():
    text = (
        "Status: ACTIVATED  Max Queue Depth: 256  SectorSize: 512  "
        "HwMaxSectors: 16384\n        Path: /srv/my lun.img\nStore: file\n"
        "Bytes: 1048576\nReadonly: 0\n"
    )
    assert parse_info(text) == {
        "Path": "/srv/my lun.img",
        "Store": "file",
        "Bytes": "1048576",
        "Readonly": "0",
    }


@pytest.mark.parametrize(
    "text",
    [
        "20:00:00:25:b5:00:00:0f",
        "0x20000025b500000f",
        "naa.20000025B500000F",
        "2000-0025-b500-000f",
        " 20000025b500000f ",
    ],
)
def test_fc_wwn_accepts_the_usual_forms(text):
    assert fc_wwn(text) == "naa.20000025b500000f"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "20:00:00:25:b5:00:00",
        "20:00:00:25:b5:00:00:0g",
        "iqn.2026-11.org.vaai:x",
        "2:00:00:25:b5:00:00:0f0",
        "30000025b500000f",
        "20:0000:25:b5:00:00:0f",
    ],
)
def test_fc_wwn_refuses_what_is_not_a_port_name(text):
    with pytest.raises(VaaiError):
        fc_wwn(text)
