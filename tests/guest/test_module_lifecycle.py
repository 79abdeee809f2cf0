"""rmmod is refused while a vaai device exists; unload and reload are clean."""

import os
import subprocess

from conftest import MODULE, sh
from conftest import module_loaded as loaded


def test_rmmod_is_refused_while_a_device_exists(make_lun):
    make_lun(size=1 << 20)
    p = subprocess.run(["rmmod", "target_core_vaai"], capture_output=True, text=True, check=False)
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


def test_rmmod_during_io_is_refused_and_the_io_unharmed(make_lun):
    """Unloading is tried again and again while fio writes and verifies:
    every try is refused, and every block fio wrote reads back right."""
    lun = make_lun(size=32 << 20)
    fio = subprocess.Popen(
        [
            "fio",
            "--name=verify",
            "--filename=" + lun.disk,
            "--direct=1",
            "--ioengine=libaio",
            "--iodepth=16",
            "--rw=randwrite",
            "--bs=4k",
            "--size=16M",
            "--verify=crc32c",
            "--do_verify=1",
            "--verify_fatal=1",
            "--verify_state_save=0",
            "--output-format=terse",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    tries = 0
    while fio.poll() is None:
        p = subprocess.run(
            ["rmmod", "target_core_vaai"], capture_output=True, text=True, check=False
        )
        assert p.returncode != 0 and "in use" in p.stderr, p.stderr
        tries += 1
    _out, err = fio.communicate()
    assert fio.returncode == 0, err
    assert tries > 0 and loaded()
