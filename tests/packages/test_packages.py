"""apt install, a guest serving a LUN with what was installed, a kernel
upgrade, apt remove: in this order, on one root (conftest.py)."""

import glob
import os
import subprocess

from conftest import REPO, WORK, version

MODULE = "target_core_vaai.ko"


def dkms_module(root, kver):
    """Where DKMS installed the module for kver (compressed as the kernel's
    own modules are: 6.12's with xz), or None."""
    found = glob.glob(root.file(f"/lib/modules/{kver}/updates/dkms/{MODULE}*"))
    return found[0][len(root.path) :] if found else None


def modinfo(root, kver, field):
    return root.run("modinfo", "-F", field, dkms_module(root, kver)).stdout.strip()


def test_install_builds_the_module_for_the_installed_kernel(installed, kernels):
    root, out = installed
    old = kernels[0]
    assert dkms_module(root, old), out
    assert modinfo(root, old, "version") == version()
    assert modinfo(root, old, "vermagic").split()[0] == old
    # Signed as Debian's DKMS signs, with the key it made (Secure Boot).
    assert modinfo(root, old, "signer") == "DKMS module signing key"
    assert root.exists("/var/lib/dkms/mok.pub")
    status = root.run("dkms", "status").stdout
    assert f"vaai/{version()}, {old}, x86_64: installed" in status, status


def test_install_brings_the_tools_on_debians_python(installed):
    root, _ = installed
    out = root.run("vaaictl", "--help").stdout
    assert "create" in out and "restore" in out
    head = open(root.file("/usr/bin/vaaictl")).readline()
    assert head.strip() == "#!/usr/bin/python3", head
    mod = root.run("python3", "-c", "import vaai, rtslib_fb; print(vaai.__file__)")
    assert mod.stdout.startswith("/usr/lib/python3/dist-packages/vaai/")
    for path in (
        "/usr/bin/targetcli-vaai",
        "/usr/share/man/man8/vaaictl.8.gz",
        "/usr/share/man/man8/targetcli-vaai.8.gz",
        "/usr/share/bash-completion/completions/vaaictl",
        "/lib/systemd/system/vaai-exporter.service",
        "/usr/lib/ocf/resource.d/vaai/pair",
    ):
        assert root.exists(path), path


def test_the_module_package_loads_it_and_hooks_rtslib(installed):
    root, _ = installed
    owners = root.run(
        "dpkg",
        "-S",
        "/usr/lib/modules-load.d/vaai.conf",
        "/usr/lib/python3/dist-packages/vaai-rtslib.pth",
        "/usr/lib/python3/dist-packages/vaai_rtslib_hook.py",
    ).stdout
    assert [line.split(":")[0] for line in owners.splitlines()] == ["vaai-dkms"] * 3
    conf = open(root.file("/usr/lib/modules-load.d/vaai.conf")).read().split("\n")
    assert "target_core_vaai" in conf
    got = root.run(
        "python3", "-c", "from rtslib_fb import tcm; print(tcm.so_mapping['vaai'].__module__)"
    ).stdout
    assert got == "vaai.storage\n"
    # One boot path: Debian's own restore service, nothing of ours beside
    # it (our one unit, the exporter's, comes disabled).  It keeps the
    # default dependencies, so it starts after sysinit.target, which
    # systemd-modules-load.service (vaai.conf) is before.
    files = root.run("dpkg", "-L", "vaai-dkms", "vaai-tools").stdout.splitlines()
    assert [f for f in files if f.endswith(".service")] == [
        "/lib/systemd/system/vaai-exporter.service"
    ]
    wants = "/etc/systemd/system/multi-user.target.wants/vaai-exporter.service"
    assert not os.path.lexists(root.file(wants))
    stock = open(root.file("/lib/systemd/system/rtslib-fb-targetctl.service")).read()
    assert "ExecStart=/usr/bin/targetctl restore" in stock
    assert "DefaultDependencies" not in stock
    # LIO's dbroot keeps PR and ALUA state there; without pr/, PERSISTENT
    # RESERVE OUT answers NOT READY.
    for sub in ("pr", "alua"):
        assert os.path.isdir(root.file("/etc/rtslib-fb-target/" + sub)), sub


def test_a_guest_on_the_root_serves_a_lun_with_the_dkms_module(installed, kernels):
    root, _ = installed
    log = os.path.join(WORK, "guest-console.log")
    env = dict(os.environ, VAAI_MODULE="installed")
    p = subprocess.run(
        [
            os.path.join(REPO, "tests", "vm", "run.py"),
            "--kver",
            kernels[0],
            "--root",
            root.path,
            "--timeout",
            "900",
            "--log",
            log,
            "--",
            "tests/packages/guest-serve.sh",
            version(),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr
    assert (
        f"guest-serve: module {version()} from /lib/modules/{kernels[0]}/updates/dkms/" in p.stdout
    )
    assert "4 MiB read back, also after targetctl save, clear and restore" in p.stdout


def test_a_kernel_upgrade_builds_the_module_for_the_new_kernel(installed, kernels):
    """As `apt upgrade` bringing Debian 12's 6.12 image and headers."""
    root, _ = installed
    new = kernels[1]
    assert not dkms_module(root, new)
    out = root.apt(
        "install",
        "--no-download",
        "--no-install-recommends",
        "linux-image-" + new,
        "linux-headers-" + new,
    )
    assert dkms_module(root, new), out
    assert modinfo(root, new, "vermagic").split()[0] == new
    assert modinfo(root, new, "version") == version()
    assert dkms_module(root, kernels[0])


def leftovers(root):
    return root.run(
        "sh",
        "-c",
        f"find / -xdev \\( -name '*vaai*' -o -name {MODULE} \\) "
        f"-not -path '{REPO}*' -not -path '/tmp/*'",
    ).stdout.split()


# What dpkg keeps of a removed package until it is purged: its maintainer
# scripts.
UNTIL_PURGE = (
    "/var/lib/dpkg/info/vaai-",
    # deb-systemd-helper's record of the exporter unit's (no) links
    "/var/lib/systemd/deb-systemd-helper-enabled/vaai-exporter.service",
)


def test_without_the_tools_the_hook_guards_what_rtslib_cannot_read(installed, debs, request):
    """vaai-dkms alone (vaai-tools removed, then put back): rtslib-fb names
    the vaai objects it cannot build instead of raising KeyError after
    deleting."""
    root, _ = installed
    root.apt("remove", "vaai-tools")
    tools = [os.path.basename(d) for d in debs if "vaai-tools_" in d]
    request.addfinalizer(lambda: root.apt("install", "/tmp/" + tools[0]))
    p = root.run(
        "python3",
        "-c",
        "from rtslib_fb import tcm\n"
        "try:\n"
        "    tcm.StorageObject.so_from_path('/sys/kernel/config/target/core/vaai_1/ds1')\n"
        "except tcm.RTSLibError as e:\n"
        "    print(e)\n",
    )
    assert p.stdout == (
        "cannot read storage object vaai/ds1: the vaai Python package "
        "cannot be loaded (No module named 'vaai'); nothing was changed\n"
    )


def test_remove_leaves_only_the_admins_config_and_purge_nothing(installed, kernels):
    root, _ = installed
    os.makedirs(root.file("/etc/rtslib-fb-target"), exist_ok=True)
    config = root.file("/etc/rtslib-fb-target/saveconfig.json")
    with open(config, "w") as f:
        f.write('{"storage_objects": [], "targets": [], "fabric_modules": []}\n')
    root.apt("remove", "vaai-tools", "vaai-dkms")
    left = [p for p in leftovers(root) if not p.startswith(UNTIL_PURGE)]
    assert left == [], left
    # dpkg forgets a package with nothing left to purge: apt would not find it.
    root.run("dpkg", "--purge", "vaai-tools", "vaai-dkms")
    assert leftovers(root) == []
    assert os.path.exists(config)
