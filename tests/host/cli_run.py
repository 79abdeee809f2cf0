"""vaaictl's main() run in this process, as the command-line tests share it."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from vaai import cli


def run(capsys, *argv):
    """(exit status, stdout, stderr) of vaaictl argv; argparse's refusals
    exit, as they would."""
    try:
        rc = cli.main(list(argv))
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err
