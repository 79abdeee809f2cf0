"""vaaictl's main() run in this process, as the command-line tests share it."""

import os
import sys
import unittest.mock

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from vaai import cli


def run(capsys, *argv, euid=0):
    """(exit status, stdout, stderr) of vaaictl argv run by user euid (root
    unless told: whoever runs the tests, a packager's build user too);
    argparse's refusals exit, as they would."""
    try:
        with unittest.mock.patch("os.geteuid", return_value=euid):
            rc = cli.main(list(argv))
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err
