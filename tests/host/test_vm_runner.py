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
