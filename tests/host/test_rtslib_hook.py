"""vaai-rtslib.pth: a fresh interpreter with the hook in its site directory
learns the vaai type when rtslib-fb loads, and only then."""

import os
import shutil
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = "/usr/bin/python3"  # Debian's, with python3-rtslib-fb and targetcli-fb


@pytest.fixture
def hooked(tmp_path):
    """Run Python code in a new interpreter whose user site holds the hook,
    as the package puts it in dist-packages; vaai importable or not."""
    base = tmp_path / "userbase"
    site = subprocess.run(
        [PYTHON, "-c", "import site; print(site.getusersitepackages())"],
        env=dict(os.environ, PYTHONUSERBASE=str(base)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    os.makedirs(site)
    shutil.copy(os.path.join(REPO, "dist", "vaai-rtslib.pth"), site)
    shutil.copy(os.path.join(REPO, "python", "vaai_rtslib_hook.py"), site)

    def run(code, vaai=True):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env["PYTHONUSERBASE"] = str(base)
        if vaai:
            env["PYTHONPATH"] = os.path.join(REPO, "python")
        p = subprocess.run(
            [PYTHON, "-c", code], capture_output=True, text=True, env=env, check=False
        )
        return p.returncode, p.stdout.strip(), p.stderr.strip()

    return run


def test_rtslib_knows_vaai_without_importing_it(hooked):
    rc, out, err = hooked(
        "from rtslib_fb import tcm; print(tcm.so_mapping['vaai'].__name__,"
        " tcm.bs_params[tcm.so_mapping['vaai']]['name'])"
    )
    assert (rc, out, err) == (0, "VaaiStorageObject vaai", "")


def test_a_submodule_import_registers_too(hooked):
    rc, out, _ = hooked(
        "import rtslib_fb.root, sys; print('vaai' in sys.modules['rtslib_fb.tcm'].so_mapping)"
    )
    assert (rc, out) == (0, "True")


def test_importing_vaai_first_registers_once(hooked):
    rc, out, err = hooked(
        "import vaai; from rtslib_fb import tcm;"
        " print(tcm.so_mapping['vaai'] is vaai.VaaiStorageObject)"
    )
    assert (rc, out, err) == (0, "True", "")


def test_start_up_imports_neither_rtslib_nor_vaai(hooked):
    rc, out, _ = hooked(
        "import sys; print(sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('rtslib_fb', 'vaai', 'targetcli')))"
    )
    assert (rc, out) == (0, "[]")


def test_start_up_loads_no_module_but_the_hook(hooked):
    """Every interpreter on the system runs the hook: it costs no import
    (importlib.abc alone, with importlib.resources and pathlib behind it,
    once doubled Python's start-up, 1.4 s of 2.3 in the test guest)."""
    code = "import sys; print(' '.join(sorted(sys.modules)))"
    rc, out, _ = hooked(code)
    plain = subprocess.run(
        [PYTHON, "-s", "-c", code],
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", "")},
        check=True,
    )
    assert rc == 0
    assert set(out.split()) - set(plain.stdout.split()) == {"vaai_rtslib_hook"}


def test_targetcli_gets_the_vaai_backstore_node(hooked):
    rc, out, err = hooked(
        "from targetcli import ui_backstore as ub; print(ub.UIBackstores._vaai_installed)"
    )
    assert (rc, out, err) == (0, "True", "")


def test_without_vaai_the_guard_names_the_cause(hooked):
    rc, out, err = hooked(
        "import rtslib_fb.tcm as t, vaai_rtslib_hook as h\n"
        "print('vaai' in t.so_mapping)\n"
        "try:\n"
        "    t.StorageObject.so_from_path('/sys/kernel/config/target/core/vaai_3/ds1')\n"
        "except t.RTSLibError as e:\n"
        "    print(e)\n",
        vaai=False,
    )
    assert rc == 0, err
    assert out.splitlines() == [
        "False",
        (
            "cannot read storage object vaai/ds1: the vaai Python package cannot be loaded "
            "(No module named 'vaai'); nothing was changed"
        ),
    ]


def test_known_types_are_built_as_before(hooked):
    rc, out, err = hooked(
        "import rtslib_fb.tcm as t\n"
        "t.FileIOStorageObject.__init__ = lambda self, name, index=None: print(name, index)\n"
        "t.StorageObject.so_from_path('/sys/kernel/config/target/core/fileio_2/f1')\n"
    )
    assert (rc, out, err) == (0, "f1 2", "")


def test_an_uncaught_guard_error_is_one_line(hooked):
    rc, _out, err = hooked(
        "import sys, rtslib_fb.tcm as t; sys.argv[0] = '/usr/bin/targetctl'\n"
        "t.StorageObject.so_from_path('/sys/kernel/config/target/core/other_1/x')\n"
    )
    assert rc == 1
    assert err == (
        "targetctl: cannot read storage object other/x: this rtslib-fb does not "
        "know the type; nothing was changed"
    )
