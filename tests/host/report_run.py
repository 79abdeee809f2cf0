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


def table_rows(text, title, header=None, stop=None):
    """The cells of each row of the table under ### title in rendered
    text, up to the next ### (or stop); without the row that starts
    with header's cell (the column names) when header is given."""
    part = text.split(f"### {title}\n")[1].split("###")[0]
    if stop:
        part = part.split(stop)[0]
    return [
        [c.strip() for c in line.strip("|").split("|")]
        for line in part.splitlines()
        if line.startswith("| ") and not (header and line.startswith(f"| {header} "))
    ]
