"""rmmod is refused while a vaai device exists; unload and reload are clean."""
import os
import subprocess

from conftest import sh

MODULE = os.environ.get("VAAI_MODULE", "target_core/target_core_vaai.ko")


def loaded():
    return os.path.isdir("/sys/module/target_core_vaai")


def test_rmmod_is_refused_while_a_device_exists(make_lun):
    make_lun(size=1 << 20)
    p = subprocess.run(["rmmod", "target_core_vaai"], capture_output=True, text=True)
    assert p.returncode != 0 and "in use" in p.stderr
    assert loaded()


def test_unload_and_reload_cycles_cleanly():
    try:
        for _ in range(3):
            sh("rmmod", "target_core_vaai")
            assert not loaded()
            sh("insmod", MODULE)
            assert loaded()
            assert os.path.isdir("/sys/kernel/config/target/core")
    finally:
        if not loaded():
            sh("insmod", MODULE)
