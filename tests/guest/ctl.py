"""Running vaaictl from this tree in the guest tests."""
import os
import subprocess
import sys

from rtslib_fb import RTSRoot
from rtslib_fb.tcm import bs_cache

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def vaaictl(*args, check=True, env=None):
    """Run `python3 -m vaai` from this tree: (exit status, stdout, stderr)."""
    e = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    e.update(env or {})
    p = subprocess.run([sys.executable, "-m", "vaai"] + [str(a) for a in args],
                       capture_output=True, text=True, env=e)
    # rtslib caches where backstores are; the command may have changed that.
    bs_cache.clear()
    if check and p.returncode:
        raise AssertionError("vaaictl %s failed (%d): %s%s"
                             % (" ".join(map(str, args)), p.returncode, p.stdout, p.stderr))
    return p.returncode, p.stdout, p.stderr


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
