"""The power-cut counts docs/testing.md shows (tests/powercut/report_counts.py):
runs on several kernels summed, each listed, the page around them kept."""

import json
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "powercut", "report_counts.py")
LUNS = [{"name": f"lun{i}"} for i in range(6)]


def cuts(kernel, n, write, outstanding):
    return {
        "kernel": kernel,
        "seed": n * 7,
        "cuts": n,
        "luns": LUNS,
        "acked": {"write": write, "caw": 1},
        "outstanding_at_cut": {"write": outstanding},
        "blocks_checked": n * 1000,
        "fs_checks": n * 2,
    }


def replay(kernel, write_cache):
    return {
        "kernel": kernel,
        "write_cache": write_cache,
        "commands": {"write": 10, "sync": 2},
        "points": 30,
        "checked": 30,
        "passed": True,
    }


def report(tmp_path, runs, replays):
    page = tmp_path / "page.md"
    page.write_text("before\n<!-- section:powercut -->\nold\n<!-- /section:powercut -->\nafter\n")
    paths = []
    for i, doc in enumerate(runs + replays):
        paths.append(tmp_path / f"{i}.json")
        paths[-1].write_text(json.dumps(doc))
    argv = [sys.executable, SCRIPT, str(page), "--cuts", *map(str, paths[: len(runs)])]
    argv += ["--replays", *map(str, paths[len(runs) :])]
    subprocess.run(argv, check=True)
    return page.read_text()


def test_runs_on_several_kernels_are_summed_and_each_listed(tmp_path):
    text = report(
        tmp_path,
        [cuts("6.1", 67, 100, 3), cuts("6.12", 67, 50, 2), cuts("7.2", 66, 25, 1)],
        [replay("6.1", False), replay("6.1", True)],
    )
    assert text.startswith("before\n") and text.endswith("after\n") and "old" not in text
    assert "200 power cuts, each cutting all 6 LUNs at once" in text
    assert "| 6.12 | 469 | 67 | 67000 | 134 |" in text
    assert "| 7.2 | 462 | 66 | 66000 | 132 |" in text
    assert "| WRITE (16), some with FUA | 175 | 6 |" in text
    assert "| COMPARE AND WRITE, 2 blocks | 3 | 0 |" in text
    assert "| 6.1 | on | 12 | 30 | 30 | as promised |" in text
