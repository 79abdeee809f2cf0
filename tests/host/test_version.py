"""One release number: the module's (VAAI_VERSION, which modinfo shows),
the Debian package's and the Python package's."""

import os
import re

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def read(*path):
    with open(os.path.join(REPO, *path)) as f:
        return f.read()


def module_version():
    return re.search(r'#define VAAI_VERSION\s+"([^"]+)"', read("target_core", "vaai.h")).group(1)


def test_the_module_the_packages_and_the_python_package_agree():
    module = module_version()
    debian = re.match(r"vaai \(([^)]+)\)", read("debian", "changelog")).group(1)
    python = re.search(
        r'^version = "([^"]+)"', read("python", "pyproject.toml"), re.MULTILINE
    ).group(1)
    assert (debian, python) == (module, module)


def test_the_man_pages_name_the_release():
    module = module_version()
    for page in ("vaaictl.8", "targetcli-vaai.8"):
        th = read("dist", "man", page).splitlines()[0]
        assert f'"vaai {module}"' in th, (page, th)
