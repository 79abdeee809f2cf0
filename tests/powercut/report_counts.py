#!/usr/bin/python3
"""Write a power-cut run's counts (powercut.py --summary) into a page's
<!-- section:powercut --> block (docs/testing.md); the prose around it
stays as written.

    report_counts.py SUMMARY.json PAGE.md
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))

from report import block, marked

# The workload's commands, in the table's order.
KINDS = (
    ("write", "WRITE (16), some with FUA"),
    ("write_same", "WRITE SAME (16) of zeros, half with UNMAP"),
    ("unmap", "UNMAP"),
    ("caw", "COMPARE AND WRITE, 2 blocks"),
    ("xcopy", "EXTENDED COPY"),
    ("populate_token", "POPULATE TOKEN"),
    ("write_using_token", "WRITE USING TOKEN"),
    ("sync", "SYNCHRONIZE CACHE"),
)


def render(s):
    lines = [
        (
            f"{s['cuts']} power cuts on {s['kernel']} (seed {s['seed']}), each cutting "
            f"all {len(s['luns'])} LUNs at once; {s['blocks_checked']} blocks read back "
            f"and checked, every one as promised; {s['fs_checks']} file system checks "
            "after a cut, all clean."
        ),
        "",
        "| command | GOOD before a cut | outstanding at a cut |",
        "|---|---:|---:|",
    ]
    for kind, name in KINDS:
        lines.append(
            f"| {name} | {s['acked'].get(kind, 0)} | {s['outstanding_at_cut'].get(kind, 0)} |"
        )
    return "\n".join(lines) + "\n"


def main():
    summary_path, page_path = sys.argv[1:3]
    with open(summary_path) as f:
        summary = json.load(f)
    with open(page_path) as f:
        page = f.read()
    page, n = block("powercut").subn(lambda _: marked("powercut", render(summary)), page, count=1)
    if not n:
        sys.exit(f"report_counts.py: {page_path} has no <!-- section:powercut --> block")
    with open(page_path, "w") as f:
        f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
