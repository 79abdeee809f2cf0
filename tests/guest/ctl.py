"""Running vaaictl from this tree in the guest tests."""

import contextlib
import io
import os
import subprocess
import sys
import traceback

from rtslib_fb import RTSRoot
from rtslib_fb.tcm import bs_cache
from vaai import cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def vaaictl(*args, check=True, env=None, own_process=False, stdin=None):
    """Run vaaictl from this tree: (exit status, stdout, stderr).

    In this process (main() with its output captured): a new Python with
    rtslib imported costs seconds of start-up in the emulated guest, for
    each of a hundred calls.  As `python3 -m vaai` in a process of its own
    with env (so the variables take effect) or own_process (targetcli,
    which takes over its process), stdin its standard input when given."""
    argv = [str(a) for a in args]
    # rtslib caches where backstores are: start as a new process would, and
    # forget afterwards what the command may have changed.
    bs_cache.clear()
    if env is None and not own_process:
        rc, out, err = _in_process(argv)
    else:
        e = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
        e.update(env or {})
        p = subprocess.run(
            [sys.executable, "-m", "vaai", *argv],
            capture_output=True,
            text=True,
            env=e,
            input=stdin,
            check=False,
        )
        rc, out, err = p.returncode, p.stdout, p.stderr
    bs_cache.clear()
    if check and rc:
        raise AssertionError(f"vaaictl {' '.join(argv)} failed ({rc}): {out}{err}")
    return rc, out, err


def _in_process(argv):
    """main(argv) as the interpreter would exit with it: SystemExit's code
    (None is 0, a message goes to stderr and is 1), an uncaught exception's
    traceback on stderr and 1."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(argv)
        except SystemExit as e:
            # argparse: 0 after --help, 2 on a usage error
            if e.code is None or isinstance(e.code, int):
                rc = e.code or 0
            else:
                print(e.code, file=sys.stderr)
                rc = 1
        except Exception:
            traceback.print_exc()
            rc = 1
    return rc, out.getvalue(), err.getvalue()


def vaai_names():
    return sorted(so.name for so in RTSRoot().storage_objects if so.plugin == "vaai")


def refused(args, words, env=None):
    """vaaictl args fails with one line holding words, and makes nothing."""
    before = vaai_names()
    rc, out, err = vaaictl(*args, check=False, env=env)
    assert rc == 1 and out == "", (rc, out, err)
    assert len(err.splitlines()) == 1 and err.startswith("vaaictl: error: "), err
    assert words in err, err
    assert vaai_names() == before


def samples(text):
    """{(metric, ((label, value), ...)): value} of a Prometheus text
    exposition, the labels sorted."""
    from prometheus_client.parser import text_string_to_metric_families

    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def sample(got, metric, **labels):
    """The value of the one sample of metric carrying labels (a subset of
    its labels) in samples() output."""
    (value,) = [
        v
        for (name, have), v in got.items()
        if name == metric and labels.items() <= dict(have).items()
    ]
    return value
