#!/usr/bin/python3
"""The side-by-side libiscsi table for docs/testing.md, from one boot's
build/libiscsi/KVER-SIDE.json (tests/guest/report_libiscsi.py): each side's
pass count, then every test that fails on some side, with where it fails.

Usage: scripts/libiscsi-table.py KVER"""

import glob
import json
import os
import sys

SIDES = ("vaai-xfs", "fileio-xfs", "vaai-bdev", "iblock-bdev")


def main(kver):
    runs = {}
    for side in SIDES:
        path = f"build/libiscsi/{kver}-{side}.json"
        if os.path.exists(path):
            with open(path) as f:
                runs[side] = json.load(f)
    if not runs:
        sys.exit(
            "no results for {} in build/libiscsi: {}".format(
                kver, glob.glob("build/libiscsi/*.json")
            )
        )
    sides = [s for s in SIDES if s in runs]
    print("| side | passed | of |")
    print("|---|---|---|")
    for side in sides:
        res = runs[side]
        print(f"| {side} | {sum(v == 'passed' for v in res.values())} | {len(res)} |")
    failing = sorted({t for res in runs.values() for t, v in res.items() if v != "passed"})
    print()
    print("| test | " + " | ".join(sides) + " |")
    print("|---|" + "---|" * len(sides))
    for t in failing:
        cells = [
            "pass" if runs[s].get(t) == "passed" else "-" if t not in runs[s] else "**fail**"
            for s in sides
        ]
        print("| {} | {} |".format(t, " | ".join(cells)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__))
