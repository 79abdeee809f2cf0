"""Host-side tests of the VM runner's console handling."""
import importlib.util
import os

import pytest

_spec = importlib.util.spec_from_file_location(
    "vm_run", os.path.join(os.path.dirname(__file__), "..", "vm", "run.py"))
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)


@pytest.mark.parametrize("line", [
    "[   21.812959] BUG: kernel NULL pointer dereference, address: 0000000000000028\n",
    "[   21.814012] Oops: 0000 [#1] PREEMPT SMP NOPTI\n",
    "[    3.1] WARNING: CPU: 1 PID: 7 at drivers/target/x.c:10 f+0x1/0x2\n",
    "[  130.0] INFO: task python3:272 blocked for more than 120 seconds.\n",
    "[   99.0] ==================================================================\n"
    "BUG: KASAN: slab-out-of-bounds in vaai_x+0x1\n",
])
def test_kernel_trouble_is_recognised(line):
    assert run.KERNEL_TROUBLE.search(line)


@pytest.mark.parametrize("line", [
    "[   20.4] target_core_vaai: control: unknown key 'foo'\n",
    "tests/guest/test_x.py ....\n",
    "[    1.0] loop0: detected capacity change from 0 to 16384\n",
])
def test_ordinary_lines_are_not_trouble(line):
    assert not run.KERNEL_TROUBLE.search(line)


def test_kernel_messages_are_kept_out_of_the_echo():
    assert run.echo_part("[   20.4] target_core_vaai: hello\n") == ""
    assert run.echo_part("..[   20.4] target_core_vaai: hello\n") == ".."
    assert run.echo_part("70 passed in 40.05s\n") == "70 passed in 40.05s\n"
    oops = "[   21.8] Oops: 0000 [#1] PREEMPT SMP NOPTI\n"
    assert run.echo_part(oops) == oops


def test_watch_reports_the_test_and_the_lines_around_the_first_trouble():
    watch = run.ConsoleWatch()
    lines = ["[ 1.0] vaai-test: tests/guest/test_a.py::test_one[file]\n"] + \
        ["[ 1.%d] sd 2:0:1:0: [sda] line %d\n" % (i, i) for i in range(10)] + \
        ["[ 2.0] workqueue: WQ_MEM_RECLAIM a:f is flushing !WQ_MEM_RECLAIM b:g\n",
         "[ 2.0] WARNING: CPU: 0 PID: 165 at kernel/workqueue.c:2635 x+0xb4/0x100\n"] + \
        ["[ 2.1] frame %d\n" % i for i in range(100)] + \
        ["[ 3.0] vaai-test: tests/guest/test_b.py::test_two\n",
         "[ 3.1] WARNING: CPU: 1 PID: 7 at y.c:1 y+0x1/0x2\n"]
    for line in lines:
        watch.feed(line)
    report = watch.report()
    assert report[:2] == ["  [ 2.0] WARNING: CPU: 0 PID: 165 at kernel/workqueue.c:2635 "
                          "x+0xb4/0x100", "  [ 3.1] WARNING: CPU: 1 PID: 7 at y.c:1 y+0x1/0x2"]
    assert "run.py: the first came during tests/guest/test_a.py::test_one[file]" in report
    context = [line[4:] for line in report if line.startswith("  | ")]
    assert len(context) == run.CONTEXT_BEFORE + run.CONTEXT_AFTER
    assert "[ 2.0] workqueue: WQ_MEM_RECLAIM a:f is flushing !WQ_MEM_RECLAIM b:g" in context
    assert context[-1] == "[ 2.1] frame %d" % (run.CONTEXT_AFTER - 2)


def test_a_clean_console_has_nothing_to_report():
    watch = run.ConsoleWatch()
    for line in ("[ 1.0] vaai-test: t\n", "ok\n"):
        watch.feed(line)
    assert watch.trouble == [] and watch.context is None
