"""The additional sense codes, as (ASC, ASCQ) tuples, under the names the
module gives them: read from target_core/parse/vaai_sense_codes.h, the one
list of them, so a test checks the code the module means by that name.
`from sense_codes import LBA_OUT_OF_RANGE` is (0x21, 0x00)."""

import os
import re

HEADER = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "..",
    "..",
    "target_core",
    "parse",
    "vaai_sense_codes.h",
)
_ENTRY = re.compile(r"^\s*X\((\w+),\s*(0x[0-9a-fA-F]{2}),\s*(0x[0-9a-fA-F]{2})\)", re.MULTILINE)


def read(path=HEADER):
    """{name: (asc, ascq)} of every X(name, ASC, ASCQ) line in path."""
    with open(path) as f:
        text = f.read()
    codes = {name: (int(asc, 16), int(ascq, 16)) for name, asc, ascq in _ENTRY.findall(text)}
    if len(codes) != text.count("\tX("):
        raise ValueError(f"{path}: an X(...) line this reader does not parse")
    return codes


CODES = read()
globals().update(CODES)
