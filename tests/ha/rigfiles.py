"""The files the rig's guests and the host talk through (tests/ha/rig.py,
node.py, conftest.py): each written whole, under another name and then
renamed, so a reader on another guest never sees half of one."""

import os


def put(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)
