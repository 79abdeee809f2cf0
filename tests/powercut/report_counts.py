#!/usr/bin/python3
"""Write a power-cut run's counts (powercut.py's summary.json and
replay.py's replay-*.json, in one directory) into a page's
<!-- section:powercut --> block (docs/testing.md); the prose around it
stays as written.

    report_counts.py RUN_DIR PAGE.md
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))

from report import block, marked

# What guest-replay.sh leaves beside the cuts' summary.
REPLAYS = ("replay-no-write-cache.json", "replay-write-cache.json")

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


def render_replay(runs):
    lines = [
        "",
        "dm-log-writes replays of the workload on the XFS file store:",
        "",
        "| write cache | commands | flush/FUA points | checked | result |",
        "|---|---:|---:|---:|---|",
    ]
    lines += [
        f"| {'on' if r['write_cache'] else 'off'} | {sum(r['commands'].values())} "
        f"| {r['points']} | {r['checked']} | {'as promised' if r['passed'] else 'FAILED'} |"
        for r in runs
    ]
    return "\n".join(lines) + "\n"


def main():
    run_dir, page_path = sys.argv[1:3]
    with open(os.path.join(run_dir, "summary.json")) as f:
        text = render(json.load(f))
    runs = []
    for name in REPLAYS:
        with open(os.path.join(run_dir, name)) as f:
            runs.append(json.load(f))
    text += render_replay(runs)
    with open(page_path) as f:
        page = f.read()
    page, n = block("powercut").subn(lambda _: marked("powercut", text), page, count=1)
    if not n:
        sys.exit(f"report_counts.py: {page_path} has no <!-- section:powercut --> block")
    with open(page_path, "w") as f:
        f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
