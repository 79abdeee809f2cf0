"""Host-side tests of the VM runner's console handling."""

import importlib.util
import os
import shlex
import signal
import subprocess
import threading
import time

import pytest

_spec = importlib.util.spec_from_file_location(
    "vm_run", os.path.join(os.path.dirname(__file__), "..", "vm", "run.py")
)
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)


@pytest.mark.parametrize(
    "line",
    [
        "[   21.812959] BUG: kernel NULL pointer dereference, address: 0000000000000028\n",
        "[   21.814012] Oops: 0000 [#1] PREEMPT SMP NOPTI\n",
        "[    3.1] WARNING: CPU: 1 PID: 7 at drivers/target/x.c:10 f+0x1/0x2\n",
        "[  130.0] INFO: task python3:272 blocked for more than 120 seconds.\n",
        (
            "[   99.0] ==================================================================\n"
            "BUG: KASAN: slab-out-of-bounds in vaai_x+0x1\n"
        ),
        "[    7.2] UBSAN: shift-out-of-bounds in target_core/vaai_cdb.c:120:9\n",
        "[   40.0] WARNING: possible circular locking dependency detected\n",
        "[   40.0] WARNING: possible recursive locking detected\n",
        "[   40.0] WARNING: inconsistent lock state\n",
        "[   40.0] WARNING: HARDIRQ-safe -> HARDIRQ-unsafe lock order detected\n",
        "[   40.0] WARNING: kworker/0:1/55 still has locks held!\n",
        "[   40.0] WARNING: suspicious RCU usage\n",
        "[   40.0] BUG: sleeping function called from invalid context at mm/slab.h:1\n",
        "[  300.0] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)\n",
        "unreferenced object 0xffff888101c8e000 (size 64):\n",
    ],
)
def test_kernel_trouble_is_recognised(line):
    assert run.KERNEL_TROUBLE.search(line)


@pytest.mark.parametrize(
    "line",
    [
        "[   20.4] target_core_vaai: control: unknown key 'foo'\n",
        "tests/guest/test_x.py ....\n",
        "[    1.0] loop0: detected capacity change from 0 to 16384\n",
        "[    0.0] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar\n",
        "[    0.3] kmemleak: Kernel memory leak detector initialized (mem pool available: 14000)\n",
        "[    0.0] KernelAddressSanitizer initialized (generic)\n",
        "guest-init: kmemleak: 0 suspected leaks\n",
    ],
)
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
    lines = (
        ["[ 1.0] vaai-test: tests/guest/test_a.py::test_one[file]\n"]
        + [f"[ 1.{i}] sd 2:0:1:0: [sda] line {i}\n" for i in range(10)]
        + [
            "[ 2.0] workqueue: WQ_MEM_RECLAIM a:f is flushing !WQ_MEM_RECLAIM b:g\n",
            "[ 2.0] WARNING: CPU: 0 PID: 165 at kernel/workqueue.c:2635 x+0xb4/0x100\n",
        ]
        + [f"[ 2.1] frame {i}\n" for i in range(100)]
        + [
            "[ 3.0] vaai-test: tests/guest/test_b.py::test_two\n",
            "[ 3.1] WARNING: CPU: 1 PID: 7 at y.c:1 y+0x1/0x2\n",
        ]
    )
    for line in lines:
        watch.feed(line)
    report = watch.report()
    # the summary last: a log's tail keeps it
    assert report[-3:] == [
        ("  [ 2.0] WARNING: CPU: 0 PID: 165 at kernel/workqueue.c:2635 x+0xb4/0x100"),
        "  [ 3.1] WARNING: CPU: 1 PID: 7 at y.c:1 y+0x1/0x2",
        "run.py: the first came during tests/guest/test_a.py::test_one[file]",
    ]
    context = [line[4:] for line in report if line.startswith("  | ")]
    assert len(context) == run.CONTEXT_BEFORE + run.CONTEXT_AFTER
    assert "[ 2.0] workqueue: WQ_MEM_RECLAIM a:f is flushing !WQ_MEM_RECLAIM b:g" in context
    assert context[-1] == f"[ 2.1] frame {run.CONTEXT_AFTER - 2}"


def drbd_warning(frame="w_after_conn_state_ch+0x1fd/0x280 [drbd]"):
    """The warning Linux's DRBD 8.4 gave in the rig (its trace shortened)."""
    return [
        "[ 541.5] drbd ha: fence-peer helper returned 7 (peer was stonithed)\n",
        (
            "[ 541.5] WARNING: CPU: 0 PID: 223 at kernel/rcu/tree_plugin.h:320 "
            "rcu_note_context_switch+0x4ee/0x650\n"
        ),
        "[ 541.5] Call Trace:\n",
        "[ 541.5]  drbd_md_sync+0x63/0x90 [drbd]\n",
        f"[ 541.5]  {frame}\n",
        "[ 541.5]  kthread+0xda/0x100\n",
        "[ 541.5] ---[ end trace 0000000000000000 ]---\n",
    ]


def test_a_known_warning_of_other_code_is_reported_not_trouble():
    watch = run.ConsoleWatch()
    for line in [*drbd_warning(), "[ 541.6] drbd ha: susp( 1 -> 0 )\n"]:
        watch.feed(line)
    assert watch.trouble == [] and watch.context is None
    assert [what for what, _ in watch.known] == [run.KNOWN_WARNINGS[0][0]]


def test_the_same_warning_elsewhere_is_trouble():
    watch = run.ConsoleWatch()
    for line in drbd_warning(frame="vaai_xcopy_worker+0x10/0x80 [target_core_vaai]"):
        watch.feed(line)
    assert watch.known == []
    assert watch.trouble == [drbd_warning()[1].rstrip()]
    context = [line[4:] for line in watch.report() if line.startswith("  | ")]
    assert context[0].endswith("(peer was stonithed)")
    assert context[-1].endswith("---[ end trace 0000000000000000 ]---")


def test_a_warning_cut_short_by_the_end_of_the_console_is_trouble():
    watch = run.ConsoleWatch()
    panic = "[ 541.6] Kernel panic - not syncing: softlockup: hung tasks"
    for line in ["[ 540.0] vaai-test: tests/ha/test_x.py::test_y\n", *drbd_warning()[:3], panic]:
        watch.feed(line)
    assert watch.trouble == [drbd_warning()[1].rstrip(), panic]
    report = watch.report()
    assert any("Call Trace" in line for line in report)
    assert report[-1] == "run.py: the first came during tests/ha/test_x.py::test_y"


def test_trouble_inside_a_known_warnings_trace_is_still_trouble():
    watch = run.ConsoleWatch()
    lines = drbd_warning()
    oops = "[ 541.5] BUG: scheduling while atomic: drbd_w_ha/223/0x00000002"
    for line in [*lines[:3], oops + "\n", *lines[3:]]:
        watch.feed(line)
    assert watch.trouble == [oops] and len(watch.known) == 1


def test_trouble_after_a_known_warning_is_still_trouble():
    watch = run.ConsoleWatch()
    oops = "[ 600.0] BUG: kernel NULL pointer dereference, address: 0000000000000008"
    for line in [*drbd_warning(), oops + "\n"]:
        watch.feed(line)
    assert watch.trouble == [oops] and len(watch.known) == 1
    assert watch.context[-1] == oops


def test_a_clean_console_has_nothing_to_report():
    watch = run.ConsoleWatch()
    for line in ("[ 1.0] vaai-test: t\n", "ok\n"):
        watch.feed(line)
    assert watch.trouble == [] and watch.context is None


def test_one_kernel_is_named():
    assert run.parse_args(["--kver", "6.1.0-1-amd64", "--log", "l", "--", "true"]).kver
    with pytest.raises(SystemExit):
        run.parse_args(["--log", "l", "--", "true"])
    with pytest.raises(SystemExit):
        run.parse_args(["--kver", "v", "--kernel-dir", "d", "--log", "l", "--", "true"])


def make_tree(root, config):
    os.makedirs(os.path.join(root, "arch/x86/boot"))
    for name in ("arch/x86/boot/bzImage", "modules.order"):
        open(os.path.join(root, name), "w").close()
    with open(os.path.join(root, ".config"), "w") as f:
        f.write(config)


def test_a_kernel_tree_with_kmemleak_asks_the_guest_for_a_scan(tmp_path):
    make_tree(tmp_path, "CONFIG_KASAN=y\nCONFIG_DEBUG_KMEMLEAK=y\n")
    args = run.parse_args(["--kernel-dir", str(tmp_path), "--log", "l", "--", "true"])
    assert run.guest_kernel(args) == (str(tmp_path), {"VAAI_KMEMLEAK": "1"})
    argv = run.vng_argv(args, "rc")
    assert argv[argv.index("--run") + 1] == str(tmp_path)
    assert argv[argv.index("--rodir") + 1] == str(tmp_path)
    assert "VAAI_KMEMLEAK=1" in argv[-1].split()


def test_a_kernel_tree_without_kmemleak_asks_for_nothing(tmp_path):
    make_tree(tmp_path, "# CONFIG_DEBUG_KMEMLEAK is not set\n")
    args = run.parse_args(["--kernel-dir", str(tmp_path), "--log", "l", "--", "true"])
    assert run.guest_kernel(args) == (str(tmp_path), {})


def test_an_unbuilt_tree_is_refused(tmp_path):
    make_tree(tmp_path, "CONFIG_DEBUG_KMEMLEAK=y\n")
    os.unlink(os.path.join(tmp_path, "arch/x86/boot/bzImage"))
    args = run.parse_args(["--kernel-dir", str(tmp_path), "--log", "l", "--", "true"])
    with pytest.raises(SystemExit, match="no arch/x86/boot/bzImage"):
        run.guest_kernel(args)


def test_vng_finds_virtme_run_beside_it():
    path = run.vng_env()["PATH"].split(os.pathsep)
    assert path[0] == os.path.dirname(run.VNG)


def test_the_guest_command_reaches_the_guest_shell_word_for_word(tmp_path):
    make_tree(tmp_path, "")
    cmd = ["sh", "-c", "uname -r; echo 'a b'", "-k", "x and y"]
    args = run.parse_args(["--kernel-dir", str(tmp_path), "--log", "l", "--", *cmd])
    guest = run.vng_argv(args, "/r/rc")[-1]
    words = shlex.split(guest)
    assert words[words.index("tests/vm/guest-init.sh") :] == [
        "tests/vm/guest-init.sh",
        run.REPO,
        "/r/rc",
        *cmd,
    ]


def test_the_stock_kernel_boots_as_before(monkeypatch):
    monkeypatch.setattr(run.os.path, "exists", lambda path: True)
    args = run.parse_args(["--kver", "6.1.0-9-amd64", "--log", "l", "--", "true"])
    argv = run.vng_argv(args, "rc")
    assert argv[argv.index("--run") + 1] == "/boot/vmlinuz-6.1.0-9-amd64"
    assert "--rodir" not in argv and "VAAI_KMEMLEAK=1" not in argv[-1].split()


def test_an_unpacked_kernel_boots_from_its_module_tree(monkeypatch):
    """unstable's kernel is unpacked into /lib/modules/KVER, not installed."""
    monkeypatch.setattr(
        run.os.path, "exists", lambda path: path == "/lib/modules/7.2.13+deb14-amd64/vmlinuz"
    )
    args = run.parse_args(["--kver", "7.2.13+deb14-amd64", "--log", "l", "--", "true"])
    argv = run.vng_argv(args, "rc")
    assert argv[argv.index("--run") + 1] == "/lib/modules/7.2.13+deb14-amd64/vmlinuz"


def test_another_root_reaches_vng(monkeypatch):
    monkeypatch.setattr(run.os.path, "exists", lambda path: True)
    args = run.parse_args(
        ["--kver", "6.1.0-9-amd64", "--root", "/r/root", "--log", "l", "--", "true"]
    )
    argv = run.vng_argv(args, "rc")
    assert argv[argv.index("--root") + 1] == "/r/root"
    assert argv[argv.index("--cwd") + 1] == "/r/root" + run.REPO
    assert argv[argv.index("--rwdir") + 1] == f"{run.REPO}={run.REPO}"
    args = run.parse_args(["--kver", "6.1.0-9-amd64", "--log", "l", "--", "true"])
    assert "--root" not in run.vng_argv(args, "rc")


def test_disks_and_the_served_port_share_one_qemu_option(monkeypatch):
    monkeypatch.setattr(run.os.path, "exists", lambda path: True)
    disks = ["--disk", "/i/a.img", "--disk", "/i/b.img"]
    args = run.parse_args(
        ["--kver", "6.1.0-9-amd64", "--serve", *disks, "--log", "l", "--", "true"]
    )
    opts = [a for a in run.vng_argv(args, "rc") if a.startswith("--qemu-opts=")]
    assert len(opts) == 1
    assert "hostfwd=tcp:127.0.0.1:3260-:3260" in opts[0]
    drives = [w for w in opts[0].split() if w.startswith("file=")]
    assert [d.split(",")[0] for d in drives] == ["file=/i/a.img", "file=/i/b.img"]
    assert all("cache=none" in d for d in drives)
    args = run.parse_args(["--kver", "6.1.0-9-amd64", "--log", "l", "--", "true"])
    assert not [a for a in run.vng_argv(args, "rc") if a.startswith("--qemu-opts=")]


def test_rig_guests_get_shared_disks_links_and_names(monkeypatch):
    monkeypatch.setattr(run.os.path, "exists", lambda path: True)
    args = run.parse_args(
        [
            *("--kver", "6.1.0-9-amd64", "--name", "node1", "--shared-disk", "/i/s.img"),
            *("--link", "52:54:00:77:01:01,47100,47101", "--log", "l", "--", "true"),
        ]
    )
    argv = run.vng_argv(args, "rc")
    assert argv[argv.index("--name") + 1] == "node1"
    (opts,) = [a for a in argv if a.startswith("--qemu-opts=")]
    # the image opened by another QEMU too, no host cache between them
    assert "file=/i/s.img,if=none,id=shared0,format=raw,cache=none" in opts
    assert "virtio-blk-pci,drive=shared0,share-rw=on" in opts
    assert "socket,id=link0,udp=127.0.0.1:47101,localaddr=127.0.0.1:47100" in opts
    assert "virtio-net-pci,netdev=link0,mac=52:54:00:77:01:01" in opts


def running(pid):
    """Is pid alive and not a zombie?"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_sigterm_cuts_the_guests_power(tmp_path, capsys):
    """The rig's power cut: SIGTERM kills the VM's processes at once, the
    grandchildren too (QEMU is vng's), and run.py says so with its own
    exit status."""
    args = run.parse_args(["--kver", "v", "--log", str(tmp_path / "c.log"), "--", "true"])
    pid = tmp_path / "pid"
    vm = ["sh", "-c", f"sleep 60 & echo $! > {pid}; echo guest-init: up; wait"]
    threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM)).start()
    rc, watch = run.boot(args, vm, str(tmp_path / "rc"))
    assert rc == run.POWER_CUT and watch.up
    assert "power cut" in capsys.readouterr().out
    assert not running(int(pid.read_text()))
    # SIGTERM is the default again once the guest is gone
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_sigterm_before_the_vm_exists_cuts_it_once_it_does(monkeypatch, tmp_path):
    args = run.parse_args(["--kver", "v", "--log", str(tmp_path / "c.log"), "--", "true"])
    pid = tmp_path / "pid"
    real = subprocess.Popen

    def asked_while_launching(*a, **kw):
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*a, **kw)

    monkeypatch.setattr(run.subprocess, "Popen", asked_while_launching)
    vm = ["sh", "-c", f"echo $$ > {pid}; exec sleep 60"]
    rc, _watch = run.boot(args, vm, str(tmp_path / "rc"))
    assert rc == run.POWER_CUT
    for _ in range(50):  # the shell may not have written it yet when cut
        if pid.exists():
            assert not running(int(pid.read_text().strip() or 0))
            break
        time.sleep(0.01)


def state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def soon(cond):
    """cond()'s first true answer within about 5 s, else its last."""
    for _ in range(500):
        if got := cond():
            return got
        time.sleep(0.01)
    return cond()


def until(pid, want):
    """pid's state once it is one of want (or after 5 s)."""
    soon(lambda: state(pid) in want)
    return state(pid)


def to_main(sig):
    """sig to this process's main thread, which run.py's handlers run in,
    50 ms after the last one, as the rig's come."""
    time.sleep(0.05)
    signal.pthread_kill(threading.main_thread().ident, sig)


@pytest.fixture
def freeze_handlers():
    """A handler of the test's own for SIGUSR1 and SIGUSR2 while it runs (a
    run.py that took none fails the test instead of ending pytest)."""

    def ours(signum, frame):
        pass

    before = {sig: signal.signal(sig, ours) for sig in run.FREEZE}
    yield ours
    for sig, handler in before.items():
        signal.signal(sig, handler)


def to_this_thread(sig):
    """sig to the calling thread, not run.py's: as a signal that came while
    Python went back into the wait for the console from another's handler,
    it interrupts no wait; it must act at once all the same, though the
    guest prints nothing."""
    time.sleep(0.05)
    signal.pthread_kill(threading.get_ident(), sig)


@pytest.mark.parametrize("send", [to_main, to_this_thread])
def test_sigusr1_freezes_the_vm_and_sigusr2_thaws_it(tmp_path, freeze_handlers, send):
    """The rig's freeze: every process of the VM's stopped (QEMU is vng's),
    then running on; a frozen VM's power can be cut."""
    args = run.parse_args(["--kver", "v", "--log", str(tmp_path / "c.log"), "--", "true"])
    pid = tmp_path / "pid"
    vm = ["sh", "-c", f"sleep 60 & echo $! > {pid}; echo guest-init: up; wait"]
    seen = []

    def rig():
        soon(lambda: pid.exists() and pid.read_text().strip())
        for sig, want in ((signal.SIGUSR1, "T"), (signal.SIGUSR2, "SR"), (signal.SIGUSR1, "T")):
            send(sig)
            seen.append(until(int(pid.read_text()), want))
        to_main(signal.SIGTERM)

    threading.Thread(target=rig).start()
    rc, _watch = run.boot(args, vm, str(tmp_path / "rc"))
    assert seen[0] == seen[2] == "T" and seen[1] in "SR", seen
    assert rc == run.POWER_CUT
    assert not running(int(pid.read_text()))
    assert [signal.getsignal(sig) for sig in run.FREEZE] == [freeze_handlers] * 2


def test_a_kernel_that_never_starts_user_space_is_killed(monkeypatch, tmp_path, capsys):
    """A boot stalled in the kernel, the console silent: killed at
    BOOT_TIMEOUT, answered as a guest that never reported back (which
    run() boots once more)."""
    monkeypatch.setattr(run, "BOOT_TIMEOUT", 1)
    args = run.parse_args(["--kver", "v", "--log", str(tmp_path / "c.log"), "--", "true"])
    vm = ["sh", "-c", "echo '[    1.002729] hpet0: 3 comparators'; exec sleep 60"]
    began = time.monotonic()
    rc, watch = run.boot(args, vm, str(tmp_path / "rc"))
    assert (rc, watch.booted, watch.user_space) == (None, True, False)
    assert time.monotonic() - began < 10
    assert "no user space 1 s into the boot" in capsys.readouterr().out


@pytest.mark.parametrize(
    "said", ["virtme initramfs: mounting hostfs...", "virtme-ng-init: Setting hostname"]
)
def test_a_boot_in_user_space_outlives_the_boot_timeout(monkeypatch, tmp_path, said):
    monkeypatch.setattr(run, "BOOT_TIMEOUT", 1)
    args = run.parse_args(["--kver", "v", "--log", str(tmp_path / "c.log"), "--", "true"])
    rc_file = tmp_path / "rc"
    vm = ["sh", "-c", f"echo '[    2.8] {said}'; sleep 3; echo 0 > {rc_file}"]
    rc, watch = run.boot(args, vm, str(rc_file))
    assert (rc, watch.user_space, watch.up) == (0, True, False)


def test_time_frozen_is_not_boot_time(monkeypatch, tmp_path, freeze_handlers):
    """A guest the rig froze before it started user space is not killed
    for the time it spent frozen."""
    monkeypatch.setattr(run, "BOOT_TIMEOUT", 2)
    args = run.parse_args(["--kver", "v", "--log", str(tmp_path / "c.log"), "--", "true"])
    rc_file, pid = tmp_path / "rc", tmp_path / "pid"
    vm = ["sh", "-c", f"echo $$ > {pid}; sleep 1; echo guest-init: up; echo 0 > {rc_file}"]

    def rig():
        soon(lambda: pid.exists() and pid.read_text().strip())
        to_main(signal.SIGUSR1)
        time.sleep(4)
        to_main(signal.SIGUSR2)

    threading.Thread(target=rig).start()
    rc, watch = run.boot(args, vm, str(rc_file))
    assert (rc, watch.up) == (0, True)


def test_console_lines_are_text_whatever_the_reads_cut(tmp_path):
    """Lines as the guest printed them, CR LF as LF, bad bytes replaced,
    a last line without its newline kept, however the pipe's reads fall."""
    r, w = os.pipe()
    woken, never = os.pipe()
    sent = "guest-init: up\r\nkäse\n".encode() + b"\xff\r\nlast"

    def guest():
        for i in range(len(sent)):  # a byte per read, or several
            os.write(w, sent[i : i + 1])
            time.sleep(0.001)
        os.close(w)

    threading.Thread(target=guest).start()
    lines = list(run.console_lines(r, woken))
    assert lines == ["guest-init: up\n", "käse\n", "\ufffd\n", "last"]
    for fd in (r, woken, never):
        os.close(fd)


def test_a_freeze_before_the_vm_exists_freezes_it_once_it_does(
    monkeypatch, tmp_path, freeze_handlers
):
    args = run.parse_args(["--kver", "v", "--log", str(tmp_path / "c.log"), "--", "true"])
    real, made = subprocess.Popen, []

    def asked_while_launching(*a, **kw):
        to_main(signal.SIGUSR1)
        made.append(real(*a, **kw))
        return made[-1]

    monkeypatch.setattr(run.subprocess, "Popen", asked_while_launching)
    seen = []

    def rig():
        soon(lambda: made)
        seen.append(until(made[0].pid, "T"))
        to_main(signal.SIGTERM)

    threading.Thread(target=rig).start()
    rc, _watch = run.boot(args, ["sleep", "60"], str(tmp_path / "rc"))
    assert seen == ["T"]
    assert rc == run.POWER_CUT


def test_a_kernel_nowhere_stops_the_run(monkeypatch):
    monkeypatch.setattr(run.os.path, "exists", lambda path: False)
    args = run.parse_args(["--kver", "6.9.9-amd64", "--log", "l", "--", "true"])
    with pytest.raises(SystemExit, match=r"install linux-image-6\.9\.9-amd64"):
        run.vng_argv(args, "rc")


def kernel_args(argv):
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--append"]


def test_extra_kernel_arguments_follow_the_usual_ones(monkeypatch):
    monkeypatch.setattr(run.os.path, "exists", lambda path: True)
    args = run.parse_args(
        [
            "--kver",
            "6.1.0-9-amd64",
            "--log",
            "l",
            "--append",
            "clocksource=tsc",
            "--append",
            "tsc=reliable",
            "--",
            "true",
        ]
    )
    assert kernel_args(run.vng_argv(args, "rc")) == [
        *run.GUEST_CMDLINE,
        "clocksource=tsc",
        "tsc=reliable",
    ]
    args = run.parse_args(["--kver", "6.1.0-9-amd64", "--log", "l", "--", "true"])
    assert kernel_args(run.vng_argv(args, "rc")) == run.GUEST_CMDLINE


def scripted_boots(monkeypatch, tmp_path, consoles):
    """run.run() with boot() replaced: each boot writes the next console to
    the log and ends as scripted ((rc or None, lines)).  The boots made."""
    monkeypatch.setattr(run, "REPO", str(tmp_path))
    monkeypatch.setattr(run, "VM_LOCK", str(tmp_path / "lock"))
    monkeypatch.setattr(run, "vng_argv", lambda args, rc_file: ["vng"])
    made = []

    def boot(args, argv, rc_file):
        rc, lines = consoles[len(made)]
        made.append(lines)
        watch = run.ConsoleWatch()
        with open(args.log, "w") as log:
            for line in lines:
                log.write(line)
                watch.feed(line)
        return rc, watch

    monkeypatch.setattr(run, "boot", boot)
    return made


EARLY_DEATH = ["[    1.3] pci 0000:00:02.0: [1af4:1000] type 00 class 0x020000\n"]
EARLY_PANIC = [*EARLY_DEATH, "[    1.4] Kernel panic - not syncing: VFS: Unable to mount root\n"]
UP = ["guest-init: up\n"]


def test_a_guest_dead_before_user_space_is_booted_once_more(monkeypatch, tmp_path, capsys):
    made = scripted_boots(monkeypatch, tmp_path, [(None, EARLY_DEATH), (0, [*UP, "ok\n"])])
    log = str(tmp_path / "console.log")
    assert run.run(run.parse_args(["--kver", "v", "--log", log, "--", "true"])) == 0
    assert len(made) == 2
    with open(log + ".first-boot") as f:
        assert f.read() == EARLY_DEATH[0]
    with open(log) as f:
        assert f.read() == "guest-init: up\nok\n"
    assert "booting it once more" in capsys.readouterr().out


def test_a_guest_dead_twice_before_user_space_fails(monkeypatch, tmp_path):
    made = scripted_boots(monkeypatch, tmp_path, [(None, EARLY_DEATH)] * 3)
    log = str(tmp_path / "console.log")
    assert run.run(run.parse_args(["--kver", "v", "--log", log, "--", "true"])) == 1
    assert len(made) == 2


@pytest.mark.parametrize(
    "rc,lines",
    [
        (None, [*UP, "[   40.0] Kernel panic - not syncing: Fatal exception\n"]),
        (
            None,
            [
                "[   40.0] vaai-test: tests/guest/test_a.py::test_b\n",
                "[   40.1] Kernel panic - not syncing: Fatal exception\n",
            ],
        ),
        (3, UP),
        (0, [*UP, "[   40.0] WARNING: CPU: 1 PID: 7 at y.c:1 y+0x1/0x2\n"]),
        (None, EARLY_PANIC),  # trouble before user space is trouble
        (None, ["qemu-system-x86_64: cannot set up guest memory\n"]),  # no kernel at all
    ],
    ids=["panic", "panic-in-a-test", "failed", "warning", "early-panic", "no-kernel"],
)
def test_only_a_quiet_death_before_user_space_is_booted_again(monkeypatch, tmp_path, rc, lines):
    made = scripted_boots(monkeypatch, tmp_path, [(rc, lines), (0, UP)])
    log = str(tmp_path / "console.log")
    assert run.run(run.parse_args(["--kver", "v", "--log", log, "--", "true"])) != 0
    assert len(made) == 1 and not os.path.exists(log + ".first-boot")


def test_a_first_boot_log_of_an_earlier_run_is_removed(monkeypatch, tmp_path):
    log = str(tmp_path / "console.log")
    with open(log + ".first-boot", "w") as f:
        f.write("old\n")
    scripted_boots(monkeypatch, tmp_path, [(0, UP)])
    assert run.run(run.parse_args(["--kver", "v", "--log", log, "--", "true"])) == 0
    assert not os.path.exists(log + ".first-boot")


def test_a_power_cut_guest_fails_on_trouble_it_showed_before(monkeypatch, tmp_path):
    log = str(tmp_path / "console.log")
    args = run.parse_args(["--kver", "v", "--locked", "--log", log, "--", "true"])
    scripted_boots(monkeypatch, tmp_path, [(run.POWER_CUT, [*UP, "ok\n"])])
    assert run.run(args) == run.POWER_CUT
    warning = "[   40.0] WARNING: CPU: 0 PID: 1 at x.c:1 x+0x1/0x2\n"
    scripted_boots(monkeypatch, tmp_path, [(run.POWER_CUT, [*UP, warning])])
    assert run.run(args) == 1


INT3 = [
    "[    2.515757] sched_clock: Marking stable (2552434877, -38839703)\n",
    "[    2.522233] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\n",
    "[    2.523110] RIP: 0010:sched_clock_cpu+0x9/0x190\n",
    "[    2.528298] Kernel panic - not syncing: Fatal exception in interrupt\n",
]
# before 6.9 the oops header has no "Oops: "
INT3_61 = [line.replace("Oops: int3", "int3") for line in INT3]


@pytest.mark.parametrize("console", [INT3, INT3_61])
def test_an_int3_oops_before_user_space_is_booted_once_more(monkeypatch, tmp_path, capsys, console):
    made = scripted_boots(monkeypatch, tmp_path, [(None, console), (0, [*UP, "ok\n"])])
    log = str(tmp_path / "console.log")
    assert run.run(run.parse_args(["--kver", "v", "--log", log, "--", "true"])) == 0
    assert len(made) == 2
    with open(log + ".int3-boot") as f:
        assert "int3: 0000" in f.read()
    out = capsys.readouterr().out
    assert "booting it once more" in out
    # and said last, where a log's tail keeps it
    assert out.rstrip().splitlines()[-1].endswith(log + ".int3-boot")


@pytest.mark.parametrize(
    "console",
    [
        # after user space: ours may be loaded and on no stack it names
        [*UP, *INT3],
        # another oops beside it
        [*INT3, "[    2.7] BUG: kernel NULL pointer dereference, address: 0000000000000000\n"],
        # twice in a row: not retried again
        None,
    ],
)
def test_other_int3_runs_fail(monkeypatch, tmp_path, console):
    boots = [(None, console)] if console else [(None, INT3), (None, INT3)]
    made = scripted_boots(monkeypatch, tmp_path, [*boots, (0, [*UP])])
    log = str(tmp_path / "console.log")
    assert run.run(run.parse_args(["--kver", "v", "--log", log, "--", "true"])) == 1
    assert len(made) == len(boots)


def test_the_old_oops_header_is_trouble():
    watch = run.ConsoleWatch()
    for line in INT3_61[:2]:
        watch.feed(line)
    assert watch.trouble == [INT3_61[1].rstrip()]
