"""The one list of additional sense codes (target_core/parse/
vaai_sense_codes.h) as the guest tests read it (tests/guest/sense_codes.py)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "guest"))

import sense_codes


def test_every_entry_is_read_with_its_values():
    assert sense_codes.LBA_OUT_OF_RANGE == (0x21, 0x00)
    assert sense_codes.INVALID_FIELD_IN_CDB == (0x24, 0x00)
    assert sense_codes.TOO_MANY_SEGMENT_DESCRIPTORS == (0x26, 0x08)
    assert sense_codes.NO_ROOM_FOR_ROD_TOKEN == (0x55, 0x0D)
    assert len(sense_codes.CODES) == 34


def test_each_name_and_each_code_once():
    with open(sense_codes.HEADER) as f:
        names = [
            line.split("X(", 1)[1].split(",")[0] for line in f if line.lstrip().startswith("X(")
        ]
    assert len(names) == len(set(names)) == len(sense_codes.CODES)
    values = list(sense_codes.CODES.values())
    assert len(values) == len(set(values))


def test_a_line_the_reader_cannot_parse_is_refused(tmp_path):
    bad = tmp_path / "codes.h"
    bad.write_text("#define L(X) \\\n\tX(GOOD,\t0x21, 0x00) \\\n\tX(BAD, 0x2, 0x00)\n")
    with pytest.raises(ValueError):
        sense_codes.read(str(bad))
