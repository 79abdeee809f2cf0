"""Helpers for the thin-provisioning suites."""

import os


def allocated(path):
    """Bytes the file system has allocated to the backing image."""
    return os.stat(path).st_blocks * 512


def stat(lun, name):
    """One of the backend's counters (attrib/stats_<name>)."""
    with open(os.path.join(lun.so.path, "attrib", "stats_" + name)) as f:
        return int(f.read())
