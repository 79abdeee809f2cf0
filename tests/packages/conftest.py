"""The Debian packages, installed as an admin would: `make deb`'s vaai-dkms
and vaai-tools go into a throwaway copy of a Debian 12 root
(bookworm-root.sh) with apt, whose DKMS builds the module there at the
host's speed; a guest then boots Debian 12's 6.1 on that root and serves a
LUN with what was installed.  Needs root (chroot, mounts)."""

import os
import re
import shutil
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORK = os.path.join(REPO, "build", "packages")


def sh(*argv, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, **kw, check=False)
    if p.returncode:
        raise AssertionError(f"{' '.join(argv)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


def version():
    """VAAI_VERSION of target_core/vaai.h: what modinfo must show."""
    with open(os.path.join(REPO, "target_core", "vaai.h")) as f:
        return re.search(r'#define VAAI_VERSION\s+"([^"]+)"', f.read()).group(1)


class Root:
    """A Debian 12 root: commands run chrooted in a private mount namespace
    with /proc, /sys and /dev, as apt and DKMS expect."""

    def __init__(self, path):
        self.path = path

    def run(self, *argv, check=True):
        script = (
            'for d in proc sys dev; do mount --rbind /$d "$1/$d"; done; '
            'root=$1; shift; exec chroot "$root" "$@"'
        )
        env = {
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
            "LC_ALL": "C",
            "DEBIAN_FRONTEND": "noninteractive",
        }
        p = subprocess.run(
            [
                "unshare",
                "-m",
                "--propagation",
                "private",
                "sh",
                "-c",
                script,
                "root",
                self.path,
                *list(argv),
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if check and p.returncode:
            raise AssertionError(
                f"in the root: {' '.join(argv)} failed ({p.returncode}):\n{p.stdout}{p.stderr}"
            )
        return p

    def apt(self, *args):
        return self.run("apt-get", "-y", "-q", "-o", "Dpkg::Use-Pty=0", *args).stdout

    def file(self, path):
        return os.path.join(self.path, path.lstrip("/"))

    def exists(self, path):
        return os.path.lexists(self.file(path))


@pytest.fixture(scope="session")
def kernels():
    """Debian 12's 6.1 and 6.12 releases (tests/vm/kernels.sh)."""
    out = sh(os.path.join(REPO, "tests", "vm", "kernels.sh")).split()
    return out[0], out[1]


@pytest.fixture(scope="session")
def debs():
    """vaai-dkms and vaai-tools, built by `make deb` (lintian included)."""
    out = sh(os.path.join(REPO, "scripts", "deb.sh"))
    paths = sorted(out.split())
    assert [os.path.basename(p).split("_")[0] for p in paths] == ["vaai-dkms", "vaai-tools"], paths
    return paths


@pytest.fixture(scope="session")
def root(kernels, debs):
    """A fresh copy of the cached Debian 12 root, the packages copied in."""
    cached = sh(os.path.join(REPO, "tests", "packages", "bookworm-root.sh"), *kernels).strip()
    path = os.path.join(WORK, "root")
    if os.path.exists(path):
        shutil.rmtree(path)
    os.makedirs(WORK, exist_ok=True)
    sh("cp", "-a", cached, path)
    os.makedirs(path + REPO, exist_ok=True)  # where the guest mounts the tree
    for deb in debs:
        shutil.copy(deb, os.path.join(path, "tmp"))
    root = Root(path)
    # No initramfs for the kernel the upgrade test installs: the guest
    # boots its kernel without one, and making it took a minute of the run.
    root.run("dpkg-divert", "--local", "--rename", "--add", "/usr/sbin/update-initramfs")
    os.symlink("/bin/true", root.file("/usr/sbin/update-initramfs"))
    return root


@pytest.fixture(scope="session")
def installed(root, debs):
    """`apt install ./vaai-dkms_*.deb ./vaai-tools_*.deb`, as in the README."""
    out = root.apt("install", *["/tmp/" + os.path.basename(d) for d in debs])
    return root, out
