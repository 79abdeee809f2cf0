"""bench/report.py run over a page of the tests' own, from runs given as
JSON: what the report tests share."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))

import report


def run_report(tmp_path, flag, runs, page):
    """Each run written out and given to report.py as flag, over a page
    that held page; the page's path afterwards."""
    args = []
    for i, run in enumerate(runs):
        path = tmp_path / (f"run{i}.json")
        path.write_text(json.dumps(run))
        args += [flag, str(path)]
    out = tmp_path / "benchmarks.md"
    out.write_text(page)
    assert report.main(["report.py", *args, str(out)]) == 0
    return out
