"""CHAP credentials from a file or standard input, so a secret stays out of
the command line, where `ps` and the shell's history would show it."""

import os
import stat
import sys

from .errors import VaaiError
from .params import chap_pair


def read_chap(path, stdin=None):
    """(user, secret) from the first line of path, USER:SECRET, or of
    standard input for '-'.  A file other users may read or write is
    refused, as ssh refuses such a key: the secret would not be one."""
    if not path:
        raise VaaiError("no file named for the CHAP credentials (an empty name)")
    if path == "-":
        line = (stdin or sys.stdin).readline()
        where = "CHAP credentials on standard input"
    else:
        try:
            with open(path) as f:
                mode = stat.S_IMODE(os.fstat(f.fileno()).st_mode)
                line = f.readline()
        except OSError as e:
            raise VaaiError(f"cannot read CHAP credentials from {path}: {e.strerror}") from None
        if mode & 0o077:
            raise VaaiError(
                f"{path} is open to other users (mode {mode:04o}); "
                f"'chmod 600 {path}' to keep its CHAP secret one"
            )
        where = f"CHAP credentials in {path}"
    return chap_pair(line.rstrip("\r\n"), where)
