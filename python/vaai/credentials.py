"""CHAP credentials from a file or standard input, so a secret stays out of
the command line, where `ps` and the shell's history would show it."""

import getpass
import os
import stat
import sys

from .errors import VaaiError
from .params import chap_pair


def _from_stdin(stdin):
    """The first line of standard input; typed at a terminal, unechoed."""
    if stdin.isatty():
        return getpass.getpass("CHAP credentials (USER:SECRET): ", stream=sys.stderr)
    return stdin.readline()


def _from_file(path):
    """The first line of path, which only its owner (root or the user
    running this) may open: a secret others can read or rewrite is none,
    and ssh refuses such a key for the same reason."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            line = f.readline()
    except OSError as e:
        raise VaaiError(f"cannot read CHAP credentials from {path}: {e.strerror}") from None
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        raise VaaiError(
            f"{path} is open to other users (mode {mode:04o}); "
            f"'chmod 600 {path}' to keep its CHAP secret one"
        )
    if st.st_uid not in (0, os.getuid()):
        raise VaaiError(
            f"{path} belongs to user {st.st_uid}, who could change its CHAP secret; "
            f"'chown root {path}'"
        )
    try:
        return line.decode()
    except UnicodeDecodeError:
        raise VaaiError(f"{path} is not text; write USER:SECRET on its first line") from None


def read_chap(path, stdin=None):
    """(user, secret) from the first line of path, USER:SECRET, or of
    standard input for '-'."""
    if not path:
        raise VaaiError("no file named for the CHAP credentials (an empty name)")
    if path == "-":
        line = _from_stdin(stdin or sys.stdin)
        where = "CHAP credentials on standard input"
    else:
        line = _from_file(path)
        where = f"CHAP credentials in {path}"
    return chap_pair(line.rstrip("\r\n"), where)
