"""vaaictl: manage vaai backstores, their exports, counters and saved config.

Every refusal is one line on stderr naming what is wrong and how to fix it,
with exit status 1 (2 for a command line that does not parse); a command
that fails leaves nothing half-made.
"""

import argparse
import json
import os
import sys
import time

from rtslib_fb.utils import RTSLibError

from . import backstore, config, iostats, stats
from .credentials import read_chap
from .errors import VaaiError
from .params import chap_pair, fc_wwn, initiator_name, parse_size
from .profiles import PROFILES

KiB = 1024


def _size(text):
    try:
        return parse_size(text)
    except VaaiError as e:
        raise argparse.ArgumentTypeError(str(e))


def _seconds(text):
    try:
        value = float(text)
    except ValueError:
        value = 0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def _typed(fn):
    def check(text):
        try:
            return fn(text)
        except VaaiError as e:
            raise argparse.ArgumentTypeError(str(e))

    check.__name__ = fn.__name__
    return check


class _Parser(argparse.ArgumentParser):
    """argparse, with a refusal on one line instead of usage and error."""

    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        sys.exit(2)


def _iscsi_lun_args(p):
    """--port, --lun and --initiator, as every iSCSI export takes them."""
    p.add_argument("--port", type=int, default=3260, help="portal port (default: 3260)")
    p.add_argument("--lun", type=int, default=0, help="LUN number (default: 0)")
    p.add_argument(
        "--initiator",
        action="append",
        default=[],
        type=_typed(initiator_name),
        help="initiator IQN to map (repeat)",
    )


def parser():
    p = _Parser(prog="vaaictl", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", required=True)

    c = sub.add_parser("create", help="create a vaai backstore")
    c.add_argument("name", help="backstore name (vaai/NAME)")
    c.add_argument("path", help="block device, or file (created sparse with --size)")
    c.add_argument("--size", type=_size, help="size of a new file: 4096, 64M, 2T")
    c.add_argument("--readonly", action="store_true", help="refuse every write to the LUN")
    c.add_argument("--wwn", help="unit serial (default: a new UUID)")
    c.add_argument(
        "--profile", choices=PROFILES, default="esxi", help="attribute defaults (default: esxi)"
    )
    c.add_argument(
        "--block-size",
        type=int,
        choices=(512, 4096),
        help="logical block size the hosts see (default: 512)",
    )
    c.add_argument(
        "--io-mode",
        choices=("auto", "direct", "buffered"),
        help="file store: direct I/O or the page cache (default auto: "
        "direct while the write cache is off)",
    )

    ad = sub.add_parser(
        "adopt",
        help="make a fileio or block backstore a vaai one in place, the hosts' device unchanged",
    )
    ad.add_argument("name", help="the backstore: NAME, or fileio/NAME or block/NAME")
    ad.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    ad.add_argument(
        "--offline",
        action="store_true",
        help="nothing uses the LUN: go ahead on fabrics whose sessions cannot be paused "
        "(tcm_loop, tcm_fc)",
    )

    d = sub.add_parser("delete", help="delete a backstore and its LUNs (not its data)")
    d.add_argument("name", help="backstore name")

    rs = sub.add_parser("resize", help="grow a backstore's LUN to its store's size")
    rs.add_argument("name", help="backstore name")
    rs.add_argument(
        "size", nargs="?", type=_size, help="grow a file store to this size first: 100G, 2T"
    )

    ls = sub.add_parser("list", help="list vaai backstores")
    ls.add_argument("--json", action="store_true", help="as JSON, every attribute")

    e = sub.add_parser("export", help="export a backstore over a fabric")
    e.add_argument("name", help="backstore name")
    fab = e.add_subparsers(dest="fabric", metavar="FABRIC", required=True)
    i = fab.add_parser("iscsi", help="an iSCSI target portal group")
    i.add_argument("--iqn", type=_typed(initiator_name), help="target name (default: a new one)")
    i.add_argument(
        "--ip",
        default="0.0.0.0",  # noqa: S104 - a portal on every address
        help="portal address (default: every address)",
    )
    _iscsi_lun_args(i)
    chap = i.add_mutually_exclusive_group()
    chap.add_argument(
        "--chap-file",
        metavar="FILE",
        help="CHAP the initiators must answer: USER:SECRET on FILE's first line "
        "(mode 0600; - for standard input; a secret of 12 characters or more)",
    )
    chap.add_argument(
        "--chap",
        type=_typed(chap_pair),
        metavar="USER:SECRET",
        help="as --chap-file, on the command line (where ps and the shell's history show it)",
    )
    mutual = i.add_mutually_exclusive_group()
    mutual.add_argument(
        "--mutual-chap-file",
        metavar="FILE",
        help="CHAP the target answers the initiators with (with --chap-file or --chap)",
    )
    mutual.add_argument(
        "--mutual-chap",
        type=_typed(chap_pair),
        metavar="USER:SECRET",
        help="as --mutual-chap-file, on the command line",
    )
    i.add_argument(
        "--profile", choices=PROFILES, default="esxi", help="settings of a new TPG (default: esxi)"
    )
    f = fab.add_parser("fc", help="a Fibre Channel target port")
    f.add_argument(
        "--wwpn", required=True, type=_typed(fc_wwn), help="the target port's WWPN (naa.…)"
    )
    f.add_argument(
        "--initiator",
        action="append",
        default=[],
        type=_typed(fc_wwn),
        help="initiator WWPN to map (repeat)",
    )
    f.add_argument("--lun", type=int, default=0, help="LUN number (default: 0)")
    f.add_argument(
        "--driver",
        choices=("tcm_fc", "qla2xxx"),
        default="tcm_fc",
        help="LIO's FC fabric module: FCoE or a QLogic HBA (default: tcm_fc)",
    )
    lo = fab.add_parser("loopback", help="a local SCSI disk through tcm_loop")
    lo.add_argument("--lun", type=int, default=0, help="LUN number (default: 0)")

    pr = sub.add_parser(
        "pair", help="serve a backstore from two nodes as one device (ALUA; docs/ha.md)"
    )
    pr.add_argument("name", help="backstore name (the same unit serial on both nodes)")
    pra = pr.add_subparsers(dest="action", metavar="ACTION", required=True)
    ps = pra.add_parser("setup", help="make this node's half of the pair (it starts standby)")
    ps.add_argument("--node", type=int, choices=(1, 2), required=True, help="this node: 1 or 2")
    ps.add_argument(
        "--fabric",
        choices=("iscsi", "fc"),
        default="iscsi",
        help="iscsi (--iqn, --ip) or fc (--wwpn): the pair's ports (default: iscsi)",
    )
    ps.add_argument(
        "--iqn", type=_typed(initiator_name), help="iSCSI: the target name (same on both)"
    )
    ps.add_argument("--ip", help="iSCSI: this node's portal address")
    ps.add_argument("--port", type=int, default=3260, help="iSCSI: portal port (default: 3260)")
    ps.add_argument("--wwpn", type=_typed(fc_wwn), help="FC: this node's target port's WWPN")
    ps.add_argument(
        "--driver",
        choices=("tcm_fc", "qla2xxx"),
        default="tcm_fc",
        help="FC: LIO's fabric module, FCoE or a QLogic HBA (default: tcm_fc)",
    )
    ps.add_argument("--lun", type=int, default=0, help="LUN number (default: 0)")
    ps.add_argument(
        "--initiator",
        action="append",
        default=[],
        help="initiator to map, an IQN or over FC a WWPN (repeat)",
    )
    ps.add_argument(
        "--chap-file",
        metavar="FILE",
        help="CHAP the initiators must answer: USER:SECRET on FILE's first line",
    )
    ps.add_argument(
        "--path", help="create the backstore on this device (or file) first if it is missing"
    )
    ps.add_argument("--wwn", help="with --path: the unit serial (the same on both nodes)")
    ps.add_argument(
        "--closed",
        action="store_true",
        help="with --path: leave the device closed until this node is made active "
        "(DRBD single-primary: only the primary may open it)",
    )
    pra.add_parser(
        "teardown", help="remove this node's half: the exports and the backstore (not its data)"
    )
    pra.add_parser(
        "active", help="make this node active (and the peer standby), opening a closed device"
    )
    pst = pra.add_parser("standby", help="make this node standby (and the peer active)")
    pst.add_argument(
        "--close",
        action="store_true",
        help="then close the device, once the commands using it are done (DRBD single-primary)",
    )
    pw = pra.add_parser("show", help="the pair as this node holds it")
    pw.add_argument("--json", action="store_true", help="as JSON")

    u = sub.add_parser("unexport", help="remove every LUN exporting a backstore")
    u.add_argument("name", help="backstore name")

    s = sub.add_parser("stats", help="VAAI counters per backstore (esxtop style)")
    s.add_argument("names", nargs="*", metavar="NAME", help="backstores (default: every one)")
    out = s.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="as JSON")
    out.add_argument(
        "--prometheus", action="store_true", help="in Prometheus' text exposition format"
    )
    s.add_argument(
        "--interval", type=_seconds, help="seconds between two readings (adds MB/s columns)"
    )
    s.add_argument("--watch", action="store_true", help="repeat every interval")
    s.add_argument("--count", type=int, help="with --watch: stop after N views")

    x = sub.add_parser("exporter", help="serve the metrics to Prometheus over HTTP")
    x.add_argument(
        "--listen",
        default="127.0.0.1:9737",
        metavar="ADDR:PORT",
        help="where to serve /metrics (default: 127.0.0.1:9737)",
    )

    sv = sub.add_parser("save", help="save the running configuration")
    sv.add_argument(
        "file", nargs="?", default=config.SAVE_FILE, help=f"where (default: {config.SAVE_FILE})"
    )
    r = sub.add_parser("restore", help="restore a saved configuration (merge)")
    r.add_argument(
        "file",
        nargs="?",
        default=config.SAVE_FILE,
        help=f"what to restore (default: {config.SAVE_FILE})",
    )

    t = sub.add_parser("targetcli", help="targetcli with vaai backstores", add_help=False)
    t.add_argument("args", nargs=argparse.REMAINDER, help="targetcli's own arguments")
    return p


def cmd_create(a):
    so = backstore.create(
        a.name,
        a.path,
        size=a.size,
        readonly=a.readonly,
        wwn=a.wwn,
        profile=a.profile,
        block_size=a.block_size,
        io_mode=a.io_mode,
    )
    print(
        f"created vaai/{so.name} on {so.path_name} ({so.size} bytes, {so.store} store, "
        f"profile {a.profile})"
    )


def cmd_resize(a):
    before, after = backstore.resize(a.name, a.size)
    if after == before:
        print(f"vaai/{a.name}: {after} bytes, unchanged")
    else:
        print(
            f"vaai/{a.name}: {before} -> {after} bytes; the hosts are told (CAPACITY DATA HAS "
            "CHANGED)"
        )


def cmd_adopt(a):
    from .adopt import Plan

    backstore.load_module()
    plan = Plan(a.name, offline=a.offline)
    print("\n".join(plan.steps()), flush=True)
    if a.dry_run:
        return
    so = plan.run(say=lambda line: print(line, flush=True))
    print(
        f"adopted: vaai/{so.name} serves {so.path_name}; run 'vaaictl save' to keep it "
        "across reboots"
    )


def cmd_delete(a):
    luns = backstore.delete(a.name)
    print(
        "deleted vaai/{}{}".format(a.name, "; removed {}".format(", ".join(luns)) if luns else "")
    )


def _human(n):
    for unit in ("", "K", "M", "G", "T", "P"):
        if n < KiB or unit == "P":
            return ("%d%s" if n == int(n) else "%.1f%s") % (n, unit)
        n /= KiB


def cmd_list(a):
    rows = backstore.list_all()
    if a.json:
        print(json.dumps(rows, indent=2))
        return
    table = [("NAME", "STORE", "SIZE", "BS", "MODE", "PATH", "EXPORTS")]
    for r in rows:
        mode = (
            ("ro" if r["readonly"] else "rw")
            + (",thin" if r["thin"] else "")
            + (",wce" if r["write_cache"] else "")
        )
        table.append(
            (
                r["name"],
                r["store"],
                _human(r["size"]),
                str(r["block_size"]),
                mode,
                r["path"],
                " ".join(r["exports"]) or "-",
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


def cmd_export(a):
    from . import export

    if a.fabric == "iscsi":
        if a.chap_file == a.mutual_chap_file == "-":
            raise VaaiError("--chap-file and --mutual-chap-file cannot both read standard input")
        # An empty FILE ("$UNSET") is refused by the read, not taken for no CHAP.
        chap = a.chap if a.chap_file is None else read_chap(a.chap_file)
        mutual_chap = a.mutual_chap if a.mutual_chap_file is None else read_chap(a.mutual_chap_file)
    so = backstore.find(a.name)
    if a.fabric == "iscsi":
        lun = export.export_iscsi(
            so,
            a.iqn,
            ip=a.ip,
            port=a.port,
            initiators=a.initiator,
            lun=a.lun,
            chap=chap,
            mutual_chap=mutual_chap,
            profile=a.profile,
        )
        where = f"{a.ip}:{a.port}"
    elif a.fabric == "fc":
        lun = export.export_fc(so, a.wwpn, initiators=a.initiator, lun=a.lun, fabric=a.driver)
        where = a.driver
    else:
        lun = export.export_loopback(so, lun=a.lun)
        where = export.find_disk(so, driver="tcm_loopback")
    target = lun.parent_tpg.parent_target.wwn
    hint = (
        ""
        if a.fabric == "loopback" or a.initiator
        else "; no initiator mapped yet: add --initiator"
    )
    print(f"exported vaai/{so.name} as {target} LUN {lun.lun} ({where}){hint}")


def cmd_pair(a):
    from . import pair

    if a.action == "teardown":
        if a.name not in {b["name"] for b in backstore.list_all()}:
            print(f"no vaai/{a.name} here; nothing to remove")
            return
        cmd_delete(a)
        return
    if a.action == "setup":
        _pair_setup_args(a)
    if getattr(a, "closed", False) and not a.path:
        raise VaaiError("--closed goes with --path: the backstore it makes is left closed")
    chap = read_chap(a.chap_file) if getattr(a, "chap_file", None) else None
    did = _prepared_for_pair(a) if a.action == "setup" and a.path else None
    so = backstore.find(a.name)
    if a.action == "setup":
        try:
            got = _pair_setup(a, so, chap)
        except BaseException:
            _undo_pair_prepare(a.name, so, did)
            raise
    elif a.action == "show":
        got = pair.show(so)
    else:
        got = pair.set_state(so, a.action, close=getattr(a, "close", False))
    if getattr(a, "json", False):
        print(json.dumps(got, indent=2, sort_keys=True))
        return
    print(
        f"vaai/{so.name} (serial {got['serial']}), node {got.get('node', '?')} of a pair"
        + ("" if got["open"] else ", its device closed")
        + ":"
    )
    for _n, g in sorted(got["groups"].items()):
        ports = ", ".join(
            (
                f"{p['target']} tpg {p['tpg']} lun {p['lun']} port {p['rtpi']:#x}"
                + ("" if p["enabled"] else " (disabled here)")
            )
            if p["target"]
            else f"port {p['rtpi']:#x} (the peer's, declared)"
            for p in g["ports"]
        )
        print(f"  group {g['name']} (id {g['id']}): {g['state']}; {ports or 'no port'}")


def _pair_setup_args(a):
    """pair setup's arguments as its fabric takes them, before anything
    is made."""
    if a.fabric == "fc":
        iscsi = (("--iqn", a.iqn), ("--ip", a.ip), ("--chap-file", a.chap_file))
        given = [o for o, v in iscsi if v]
        if not a.wwpn or given:
            raise VaaiError(
                "an FC pair takes --wwpn (this node's target port)"
                + (f", not {', '.join(given)}" if given else "")
            )
    elif not a.iqn or not a.ip or a.wwpn:
        raise VaaiError("an iSCSI pair takes --iqn and --ip" + (", not --wwpn" if a.wwpn else ""))
    a.initiator = [initiator_name(i, a.fabric) for i in a.initiator]


def _pair_setup(a, so, chap):
    from . import pair

    if a.fabric == "fc":
        return pair.setup_fc(so, a.node, a.wwpn, a.initiator, lun=a.lun, fabric=a.driver)
    return pair.setup(
        so, a.node, a.iqn, a.ip, port=a.port, initiators=a.initiator, lun=a.lun, chap=chap
    )


def _prepared_for_pair(a):
    """The backstore of pair setup --path: made unless it exists; one
    that exists must be on that path with that serial, and --closed
    closes it.  Says what it did ("made", "closed" or None) for
    _undo_pair_prepare."""
    have = {b["name"]: b for b in backstore.list_all()}.get(a.name)
    if have is None:
        if not a.wwn:
            raise VaaiError("--path needs --wwn: both nodes must give the LUN one serial")
        backstore.create(a.name, a.path, wwn=a.wwn, online=not a.closed)
        return "made"
    so = backstore.find(a.name)
    if os.path.realpath(so.path_name) != os.path.realpath(a.path) or (a.wwn and so.wwn != a.wwn):
        raise VaaiError(
            f"vaai/{a.name} exists on {so.path_name} with serial {so.wwn}, not on {a.path}"
            + (f" with {a.wwn}" if a.wwn else "")
        )
    if a.closed and so.online:
        so.set_online(False)  # the half starts standby: its device closed
        return "closed"
    return None


def _undo_pair_prepare(name, so, did):
    """A failed pair setup leaves the backstore as it found it: one it
    made removed, one it closed opened again."""
    try:
        if did == "made":
            backstore.delete(name)
        elif did == "closed":
            so.set_online(True)
    except (VaaiError, RTSLibError) as e:
        what = "remove" if did == "made" else "reopen"
        print(f"vaaictl: cannot {what} vaai/{name} again: {e}", file=sys.stderr)


def cmd_unexport(a):
    from . import export

    so = backstore.find(a.name)
    n = len(list(so.attached_luns))
    export.unexport(so)
    print(f"removed {n} LUN{('' if n == 1 else 's')} of vaai/{so.name}")


def _stats_reading(a):
    return stats.read(names=a.names), iostats.read(names=a.names), time.monotonic()


def _stats_view(a, before):
    """The text of one view and this reading, with rates since before (a
    reading, or None)."""
    now = _stats_reading(a)
    counters, io, t1 = now
    if a.names:
        unknown = sorted(set(a.names) - set(counters))
        if unknown:
            raise VaaiError("no vaai backstore {}; see 'vaaictl list'".format(", ".join(unknown)))
    mbps = io_rates = None
    if before is not None:
        mbps = stats.rates(before[0], counters, t1 - before[2])
        io_rates = iostats.columns(before[1], io, t1 - before[2])
    if a.prometheus:
        from .exporter import exposition

        return exposition(names=a.names), now
    if a.json:
        return stats.as_json(counters, mbps, io, io_rates), now
    return stats.table(counters, mbps, io_rates), now


def cmd_stats(a):
    if a.watch and not a.interval:
        a.interval = 2.0
    before = None
    if a.interval:
        before = _stats_reading(a)
        time.sleep(a.interval)
    shown = 0
    clear = a.watch and sys.stdout.isatty() and not (a.json or a.prometheus)
    while True:
        text, before = _stats_view(a, before)
        sys.stdout.write(("\033[H\033[2J" if clear else "") + text)
        sys.stdout.flush()
        shown += 1
        if not a.watch or (a.count and shown >= a.count):
            return
        if not clear:
            print()
        time.sleep(a.interval)


def cmd_exporter(a):
    from .exporter import serve

    serve(a.listen)


def cmd_save(a):
    print(f"saved to {config.save(a.file)}")


def cmd_restore(a):
    backstore.load_module()
    n = config.restore(a.file, progress=lambda m: print(m, file=sys.stderr, flush=True))
    print(
        f"restored {n} object{('' if n == 1 else 's')} from {a.file}"
        if n
        else f"{a.file} is restored already; nothing to do"
    )


def cmd_targetcli(a):
    from .targetcli_ui import run

    return run(a.args)


COMMANDS = {name[4:]: fn for name, fn in globals().items() if name.startswith("cmd_")}


# What only reads LIO's configfs tree and the module's counters, which
# every user may read; the other commands change LIO or write root's
# files, which needs root.
READ_ONLY = ("list", "stats", "exporter")


def main(argv=None):
    args = parser().parse_args(argv)
    root = os.geteuid() == 0
    if not root and args.cmd not in READ_ONLY:
        print(
            f"vaaictl: error: {args.cmd} needs root (only {', '.join(READ_ONLY)} run "
            "without it); run it with sudo",
            file=sys.stderr,
        )
        return 1
    try:
        return COMMANDS[args.cmd](args) or 0
    except (VaaiError, RTSLibError) as e:
        print(f"vaaictl: error: {e}", file=sys.stderr)
        return 1
    except PermissionError as e:
        hint = "" if root else "; run it with sudo"
        print(f"vaaictl: error: {e.filename or 'configfs'}: {e.strerror}{hint}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
