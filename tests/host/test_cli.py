"""Host-side tests of vaaictl's command line: parsing, refusals (one line,
non-zero exit) and the commands' output, with the configfs work faked."""

import os

import pytest
from cli_run import run
from vaai import backstore, cli, config, iostats, stats
from vaai.errors import VaaiError
from vaai.exporter import parse_listen
from vaai.params import chap_pair, initiator_name


@pytest.mark.parametrize(
    "argv, words",
    [
        (("create", "ds1", "/srv/x.img", "--size", "10GG"), "not a number of bytes"),
        (("create", "ds1", "/srv/x.img", "--profile", "vmware"), "invalid choice: 'vmware'"),
        (("create", "ds1", "/srv/x.img", "--block-size", "1024"), "invalid choice: 1024"),
        (("export", "ds1", "iscsi", "--initiator", "esx01"), "is not an iSCSI name"),
        (("export", "ds1", "iscsi", "--chap", "esx"), "give them as USER:SECRET"),
        (("export", "ds1", "iscsi", "--chap", "esx:short"), "use at least 12"),
        (("export", "ds1", "fc", "--wwpn", "20:00:00:25"), "is not a Fibre Channel WWPN"),
        (("export", "ds1", "nvme"), "invalid choice: 'nvme'"),
        (("stats", "--json", "--prometheus"), "not allowed with argument"),
        (("stats", "--interval", "-1"), "'-1' is not a number of seconds above 0"),
        (("stats", "--interval", "soon"), "'soon' is not a number of seconds above 0"),
        (("frobnicate",), "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_command_lines_exit_2_with_one_clear_line(capsys, argv, words):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("vaaictl"), err
    assert words in err and "--help')" in err


def test_refusal_from_the_layer_below_is_one_line_and_exit_1(capsys, monkeypatch):
    def refuse(*a, **k):
        raise VaaiError("no vaai backstore 'ds9' (there are: ds1); see 'vaaictl list'")

    monkeypatch.setattr(backstore, "delete", refuse)
    rc, out, err = run(capsys, "delete", "ds9")
    assert rc == 1 and out == ""
    assert err == "vaaictl: error: no vaai backstore 'ds9' (there are: ds1); see 'vaaictl list'\n"


def test_create_passes_the_parsed_options(capsys, monkeypatch):
    got = {}

    class FakeSO:
        name, path_name, size, store = "ds1", "/srv/ds1.img", 1 << 30, "file"

    def create(name, path, **kw):
        got.update(kw, name=name, path=path)
        return FakeSO()

    monkeypatch.setattr(backstore, "create", create)
    rc, out, err = run(
        capsys,
        "create",
        "ds1",
        "/srv/ds1.img",
        "--size",
        "1G",
        "--block-size",
        "4096",
        "--profile",
        "plain",
        "--io-mode",
        "direct",
    )
    assert rc == 0 and err == ""
    assert got == {
        "name": "ds1",
        "path": "/srv/ds1.img",
        "size": 1 << 30,
        "readonly": False,
        "wwn": None,
        "profile": "plain",
        "block_size": 4096,
        "io_mode": "direct",
    }
    assert out == "created vaai/ds1 on /srv/ds1.img (1073741824 bytes, file store, profile plain)\n"


def test_list_table(capsys, monkeypatch):
    monkeypatch.setattr(
        backstore,
        "list_all",
        lambda: [
            {
                "name": "ds1",
                "store": "file",
                "size": 2 << 40,
                "block_size": 512,
                "readonly": False,
                "thin": True,
                "write_cache": False,
                "path": "/srv/ds1.img",
                "exports": ["iscsi/iqn.2026-11.org.vaai:t1/tpg1/lun0"],
            }
        ],
    )
    _rc, out, _ = run(capsys, "list")
    head, row = out.splitlines()
    assert head.split() == ["NAME", "STORE", "SIZE", "BS", "MODE", "PATH", "EXPORTS"]
    assert row.split() == [
        "ds1",
        "file",
        "2T",
        "512",
        "rw,thin",
        "/srv/ds1.img",
        "iscsi/iqn.2026-11.org.vaai:t1/tpg1/lun0",
    ]


def test_stats_interval_adds_rates(capsys, monkeypatch):
    readings = iter(
        [
            {"ds1": dict(zero=0, clone_read_bytes=0, **base())},
            {"ds1": dict(zero=4, clone_read_bytes=0, **base())},
        ]
    )
    monkeypatch.setattr(stats, "read", lambda names=None: next(readings))
    # 10 reads of 1 ms, then 10 more, one of them 1.5 ms, in 2 s
    quiet = iostats.Op(0, 0, 0, 0, (0,) * iostats.BUCKETS)
    reads = [
        iostats.Op(10, 0, 10 << 12, 10000, hist(_10=10)),
        iostats.Op(20, 0, 20 << 12, 21500, hist(_10=19, _11=1)),
    ]
    io = iter([{"ds1": dict.fromkeys(iostats.KINDS, quiet) | {"read": r}} for r in reads])
    monkeypatch.setattr(iostats, "read", lambda names=None: next(io))
    clock = iter([100.0, 102.0])
    monkeypatch.setattr(cli.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(cli.time, "sleep", lambda s: None)
    rc, out, _ = run(capsys, "stats", "--interval", "2")
    head, row = out.splitlines()
    assert rc == 0 and "MBC_RD/s" in head.split()
    got = dict(zip(head.split(), row.split()))
    assert got["ZERO"] == "4"
    assert (got["CMDS/s"], got["READS/s"], got["WRITES/s"]) == ("5.0", "5.0", "0.0")
    assert got["MBREAD/s"] == "0.0" and got["AVG_ms"] == "1.15"
    assert float(got["P99_ms"]) > 1.024 and got["ATS_P99_ms"] == "-"


def hist(**at):
    h = [0] * iostats.BUCKETS
    for key, n in at.items():
        h[int(key[1:])] = n
    return tuple(h)


def base():
    c = {key: 0 for key, _ in stats.COUNTERS}
    c.update(zero_bytes=0, unmap_bytes=0)
    del c["zero"], c["clone_read_bytes"]
    return c


def test_stats_for_an_unknown_backstore(capsys, monkeypatch):
    monkeypatch.setattr(stats, "read", lambda names=None: {})
    monkeypatch.setattr(iostats, "read", lambda names=None: {})
    rc, _out, err = run(capsys, "stats", "ds9")
    assert rc == 1 and "no vaai backstore ds9" in err


def test_restore_says_when_there_is_nothing_to_do(capsys, monkeypatch):
    monkeypatch.setattr(backstore, "load_module", lambda: None)
    monkeypatch.setattr(config, "restore", lambda path, progress: 0)
    rc, out, _ = run(capsys, "restore", "/tmp/x.json")
    assert rc == 0 and out == "/tmp/x.json is restored already; nothing to do\n"


@pytest.mark.parametrize(
    "text, want",
    [
        ("iqn.1998-01.com.vmware:ESX01-4c2f", "iqn.1998-01.com.vmware:esx01-4c2f"),
        (" eui.0123456789abcdef ", "eui.0123456789abcdef"),
    ],
)
def test_initiator_names_are_normalised(text, want):
    assert initiator_name(text) == want


def test_fc_initiator_names_go_through_the_wwpn_parser():
    assert initiator_name("21:00:00:24:ff:31:4c:9a", "fc") == "naa.21000024ff314c9a"


def test_chap_secret_may_contain_colons():
    assert chap_pair("esx01:abc:def:ghi:jkl") == ("esx01", "abc:def:ghi:jkl")


@pytest.mark.parametrize(
    "text, want", [("127.0.0.1:9737", ("127.0.0.1", 9737)), (":9100", ("0.0.0.0", 9100))]
)
def test_listen_addresses(text, want):
    assert parse_listen(text) == want


@pytest.mark.parametrize("text", ["9737", "host:", "host:http", "h:70000"])
def test_bad_listen_addresses(text):
    with pytest.raises(VaaiError, match="give ADDR:PORT"):
        parse_listen(text)


def test_console_scripts_name_functions_that_exist():
    import importlib
    import re

    here = os.path.dirname(__file__)
    with open(os.path.join(here, "..", "..", "python", "pyproject.toml")) as f:
        scripts = re.findall(r'^(\S+) = "([\w.]+):(\w+)"$', f.read(), re.MULTILINE)
    assert {name for name, _, _ in scripts} == {"vaaictl", "targetcli-vaai"}
    for _, module, fn in scripts:
        assert callable(getattr(importlib.import_module(module), fn))


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"name": "bad/name"}, "backstore name 'bad/name'"),
        ({"wwn": "has space"}, "unit serial 'has space'"),
        ({"wwn": "x" * 254}, "use up to 253 printable characters"),
        (
            {"path": "/nonexistent-dir/x.img", "size": "1M"},
            "directory /nonexistent-dir does not exist",
        ),
        ({"path": "/nonexistent.img", "size": None}, "does not exist; give --size"),
        ({"size": "12 parsecs"}, "not a number of bytes"),
        ({"profile": "vmware"}, "unknown profile 'vmware'"),
    ],
)
def test_create_refuses_before_touching_the_kernel(monkeypatch, kw, words):
    monkeypatch.setattr(
        backstore, "load_module", lambda: pytest.fail("got as far as loading the module")
    )
    args = {"name": "ds1", "path": "/srv/x.img", "size": "1M"}
    args.update(kw)
    with pytest.raises(VaaiError, match=words.replace("(", r"\(")):
        backstore.create(args.pop("name"), args.pop("path"), **args)


@pytest.mark.parametrize("dry_run", [True, False])
def test_adopt_prints_the_plan_and_moves_only_without_dry_run(capsys, monkeypatch, dry_run):
    from vaai import adopt

    ran = []

    class FakePlan:
        def __init__(self, name, offline=False):
            assert (name, offline) == ("fileio/ds1", True)

        def steps(self):
            return ["adopt fileio/ds1 as vaai/ds1 on /srv/ds1.img", "  flush /srv/ds1.img"]

        def run(self, say):
            say("pausing iscsi iqn.x TPG 1")
            ran.append(True)

            class SO:
                name, path_name = "ds1", "/srv/ds1.img"

            return SO()

    monkeypatch.setattr(backstore, "load_module", lambda: None)
    monkeypatch.setattr(adopt, "Plan", FakePlan)
    argv = ["adopt", "fileio/ds1", "--offline"] + (["--dry-run"] if dry_run else [])
    rc, out, err = run(capsys, *argv)
    assert (rc, err) == (0, "")
    plan = "adopt fileio/ds1 as vaai/ds1 on /srv/ds1.img\n  flush /srv/ds1.img\n"
    if dry_run:
        assert out == plan and not ran
    else:
        assert out == plan + (
            "pausing iscsi iqn.x TPG 1\n"
            "adopted: vaai/ds1 serves /srv/ds1.img; run 'vaaictl save' to keep it across reboots\n"
        )


PAIR_SETUP = ("pair", "ds1", "setup", "--node", "1", "--iqn", "iqn.2026-11.org.x:ds1")


def test_pair_setup_creating_the_backstore_needs_its_serial(capsys, monkeypatch):
    """Both nodes must give the LUN one serial: a new backstore without
    one would get a UUID of its own on each node."""
    monkeypatch.setattr(backstore, "list_all", list)
    monkeypatch.setattr(backstore, "create", lambda *a, **k: pytest.fail("created"))
    rc, out, err = run(capsys, *PAIR_SETUP, "--ip", "10.0.0.1", "--path", "/dev/sdz")
    assert (rc, out) == (1, "")
    assert err == "vaaictl: error: --path needs --wwn: both nodes must give the LUN one serial\n"


def test_pair_teardown_of_nothing_does_nothing(capsys, monkeypatch):
    monkeypatch.setattr(backstore, "list_all", list)
    monkeypatch.setattr(backstore, "delete", lambda name: pytest.fail("deleted"))
    assert run(capsys, "pair", "ds1", "teardown") == (
        0,
        "no vaai/ds1 here; nothing to remove\n",
        "",
    )


@pytest.mark.parametrize("existed", [False, True])
def test_a_failed_pair_setup_leaves_the_backstore_as_it_was(capsys, monkeypatch, existed):
    """--closed on a backstore that was open closes it before the
    groups are made; when they cannot be, it is open again (and one
    setup made is gone), not left closed under an export serving it."""
    from vaai import pair

    done = []

    class SO:
        name, path_name, wwn, online = "ds1", "/dev/sdz", "6001405abc", True

        def set_online(self, on):
            done.append(("online", on))
            SO.online = on

    def refuse(*a, **k):
        raise VaaiError("vaai/ds1 is exported here as another node's half")

    listed = [{"name": "ds1"}] if existed else []
    monkeypatch.setattr(backstore, "list_all", lambda: listed)
    monkeypatch.setattr(backstore, "find", lambda name: SO())
    monkeypatch.setattr(backstore, "create", lambda *a, **k: done.append(("create", k)))
    monkeypatch.setattr(backstore, "delete", lambda name: done.append(("delete", name)))
    monkeypatch.setattr(pair, "setup", refuse)
    argv = (*PAIR_SETUP, "--ip", "10.0.0.1", "--path", "/dev/sdz", "--wwn", "6001405abc")
    rc, out, err = run(capsys, *argv, "--closed")
    assert (rc, out) == (1, "")
    assert err == "vaaictl: error: vaai/ds1 is exported here as another node's half\n"
    if existed:
        assert done == [("online", False), ("online", True)] and SO.online
    else:
        assert done == [("create", {"wwn": "6001405abc", "online": False}), ("delete", "ds1")]
