"""vaai.targetcli_ui: `vaaictl targetcli`'s changes to targetcli-fb's
shell leave what it logs as it was."""

import os
import sys

from configshell_fb import log  # Debian's python3-configshell-fb, as targetcli's

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from vaai import targetcli_ui


class Recorder:
    """Stands for a Log: keeps what debug() hands to _log."""

    def __init__(self):
        self.lines = []

    def _log(self, level, msg):
        self.lines.append((level, msg))


def a_caller(debug, rec):
    debug(rec, "changing to /backstores")


def test_cheap_debug_lines_log_the_line_configshell_logs(monkeypatch):
    monkeypatch.setattr(log.Log, "debug", log.Log.debug)  # undone afterwards
    stock, cheap = Recorder(), Recorder()
    a_caller(log.Log.debug, stock)
    targetcli_ui.cheap_debug_lines()
    a_caller(log.Log.debug, cheap)
    assert cheap.lines == stock.lines
    level, msg = cheap.lines[0]
    assert level == "debug"
    assert msg.endswith(" a_caller() changing to /backstores")
    assert msg.startswith(os.path.abspath(__file__) + ":")
