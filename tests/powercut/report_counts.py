#!/usr/bin/python3
"""Write the counts of power-cut runs (powercut.py's summaries, one per
run, e.g. one per kernel) and dm-log-writes replays (replay.py's
replay-*.json) into a page's <!-- section:powercut --> block
(docs/testing.md); the prose around it stays as written.

    report_counts.py PAGE.md --cuts SUMMARY.json... --replays REPLAY.json...
"""

import argparse
import collections
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


def total(runs, key):
    return sum((collections.Counter(r[key]) for r in runs), collections.Counter())


def render(runs):
    acked, outstanding = total(runs, "acked"), total(runs, "outstanding_at_cut")
    lines = [
        (
            f"{sum(r['cuts'] for r in runs)} power cuts, each cutting all "
            f"{len(runs[0]['luns'])} LUNs at once; every block read back after a cut "
            "as promised and every file system check clean:"
        ),
        "",
        "| kernel | seed | cuts | blocks read back and checked | file system checks |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['kernel']} | {r['seed']} | {r['cuts']} | {r['blocks_checked']} | {r['fs_checks']} |"
        for r in runs
    ]
    lines += [
        "",
        "| command | GOOD before a cut | outstanding at a cut |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {acked[kind]} | {outstanding[kind]} |" for kind, name in KINDS]
    return "\n".join(lines) + "\n"


def render_replay(runs):
    lines = [
        "",
        "dm-log-writes replays of the workload on the XFS file store:",
        "",
        "| kernel | write cache | commands | flush/FUA points | checked | result |",
        "|---|---|---:|---:|---:|---|",
    ]
    lines += [
        f"| {r['kernel']} | {'on' if r['write_cache'] else 'off'} "
        f"| {sum(r['commands'].values())} "
        f"| {r['points']} | {r['checked']} | {'as promised' if r['passed'] else 'FAILED'} |"
        for r in runs
    ]
    return "\n".join(lines) + "\n"


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("page", help="the page whose powercut section is rewritten")
    p.add_argument("--cuts", nargs="+", required=True, help="powercut.py summaries")
    p.add_argument("--replays", nargs="+", required=True, help="replay.py results")
    args = p.parse_args()
    text = render([load(path) for path in args.cuts])
    text += render_replay([load(path) for path in args.replays])
    page_path = args.page
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
