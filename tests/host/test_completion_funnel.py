"""The module answers commands only through vaai_cmd_done() and its kind
(target_core/vaai_online.c): a command that holds its LUN's store gives it
back there, and a completion anywhere else would keep the store held and
make online=0 wait for ever."""

import os
import re

TARGET_CORE = os.path.join(os.path.dirname(__file__), "..", "..", "target_core")
CALL = re.compile(r"\btarget_complete_cmd\w*\s*\(")


def test_only_the_funnel_calls_target_complete_cmd():
    callers = set()
    for name in sorted(os.listdir(TARGET_CORE)):
        if not name.endswith(".c"):
            continue
        with open(os.path.join(TARGET_CORE, name)) as f:
            if CALL.search(f.read()):
                callers.add(name)
    assert callers == {"vaai_online.c"}
