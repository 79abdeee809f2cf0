#!/usr/bin/python3
"""A target node of the rig (tests/ha/rig.py): runs the shell commands the
initiator's tests hand it until told to end.

In build/rig/NODE/ (the rig's directory, which every guest mounts): the
node writes "ready" once up; the tests write cmd.N (N = 1, 2, ...), a shell
script, and the node answers res.N, its exit status on the first line and
its output after it; "exit" ends the node.  Files are written under
another name and renamed, so a reader never sees half of one.

Usage: node.py NODE"""

import os
import subprocess
import sys
import time

from rigfiles import put

# the longest a command may take
TIMEOUT = 600


def main(name):
    here = os.path.join(os.environ["VAAI_RIG"], name)
    put(os.path.join(here, "ready"), f"{os.uname().nodename}\n")
    n = 1
    while not os.path.exists(os.path.join(here, "exit")):
        cmd = os.path.join(here, f"cmd.{n}")
        if not os.path.exists(cmd):
            time.sleep(0.1)
            continue
        # a daemon a command starts must not hold its output open
        try:
            p = subprocess.run(
                ["sh", "-e", cmd],
                check=False,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=TIMEOUT,
            )
            rc, out = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            # captured output is bytes here, whatever text says
            out = (e.output or b"").decode(errors="replace")
            rc, out = 124, f"{out}node.py: no end after {TIMEOUT} s\n"
        put(os.path.join(here, f"res.{n}"), f"{rc}\n{out}")
        n += 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
