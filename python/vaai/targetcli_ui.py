"""targetcli's /backstores/vaai node.

targetcli-fb builds /backstores from a fixed list of backstore classes and
has no plugin hook.  install() adds a UI class for vaai backstores under
/backstores.  The rtslib hook (vaai_rtslib_hook, loaded by
vaai-rtslib.pth) calls it when targetcli loads, so plain `targetcli` has
the node wherever the hook is installed; targetcli-vaai (`vaaictl
targetcli`) also loads the module first and works without the hook.

    targetcli
    /> /backstores/vaai create ds1 /srv/ds1.img size=2T
    /> /iscsi/iqn.../tpg1/luns create /backstores/vaai/ds1
"""

import os
import runpy
import stat
import sys

from . import backstore
from .errors import VaaiError
from .storage import PLUGIN

TARGETCLI = "/usr/bin/targetcli"


def install(ub=None):
    """Give targetcli's /backstores a `vaai` child (once per process);
    ub is targetcli.ui_backstore, imported here when not given."""
    from configshell_fb import ExecutionError

    if ub is None:
        from targetcli import ui_backstore as ub

    if getattr(ub.UIBackstores, "_vaai_installed", False):
        return

    class UIVaaiStorageObject(ub.UIStorageObject):
        def summary(self):
            so = self.rtsnode
            return (
                "{} ({}) {}{} {}".format(
                    so.path_name,
                    ub.bytes_to_human(so.size),
                    "ro " if so.readonly else "",
                    so.store,
                    so.status,
                ),
                True,
            )

    class UIVaaiBackstore(ub.UIBackstore):
        def __init__(self, parent):
            self.so_cls = UIVaaiStorageObject
            ub.UIBackstore.__init__(self, PLUGIN, parent)

        def ui_command_create(
            self,
            name,
            file_or_dev,
            size=None,
            readonly=None,
            wwn=None,
            profile=None,
            block_size=None,
        ):
            """
            Creates a vaai storage object (target_core_vaai: COMPARE AND
            WRITE, WRITE SAME, UNMAP and EXTENDED COPY in the kernel).
            "file_or_dev" is a block device, or a file; a file that does not
            exist is created sparse with "size" (64M, 10G, 2T).  "profile"
            is esxi (default: 512-byte blocks, thin provisioning, ATS and
            third-party copy on) or plain (LIO's defaults).
            """
            self.assert_root()
            try:
                so = backstore.create(
                    name,
                    os.path.expanduser(file_or_dev),
                    size=size,
                    readonly=self.ui_eval_param(readonly, "bool", False),
                    wwn=self.ui_eval_param(wwn, "string", None),
                    profile=self.ui_eval_param(profile, "string", "esxi"),
                    block_size=self.ui_eval_param(block_size, "number", None),
                )
            except VaaiError as e:
                raise ExecutionError(str(e))
            ui_so = UIVaaiStorageObject(so, self)
            size = ub.bytes_to_human(so.size)
            self.shell.log.info(
                f"Created vaai {name} on {so.path_name} ({size}, {so.store} store)."
            )
            return self.new_node(ui_so)

        # configshell's completion interface: parameters is not needed here
        def ui_complete_create(self, parameters, text, current_param):  # noqa: ARG002
            if current_param != "file_or_dev":
                return []
            found = ub.complete_path(text, lambda m: stat.S_ISREG(m) or stat.S_ISBLK(m))
            if len(found) == 1 and not found[0].endswith("/"):
                found = [found[0] + " "]
            return found

    # targetcli asks the system D-Bus for tcmu-runner's handlers and dies
    # where there is no bus (containers, minimal installs); with no bus
    # there are no user backstores to list.
    user_backstores = ub.UIBackstores._user_backstores

    def _user_backstores(self):
        from gi.repository import GLib

        try:
            found = list(user_backstores(self))
        except GLib.Error:
            found = []
        yield from found

    ub.UIBackstores._user_backstores = _user_backstores
    original = ub.UIBackstores.refresh

    def refresh(self):
        original(self)
        UIVaaiBackstore(self)

    ub.UIBackstores.refresh = refresh
    ub.UIBackstores._vaai_installed = True


def cheap_debug_lines():
    """configshell-fb's Log.debug() names its caller from inspect.stack(),
    which reads the source of every frame on the stack, for each of the
    dozens of debug lines a command logs (to targetcli's log file, at its
    default levels): in the emulated test guest 20 s of a 30 s targetcli
    run.  The same line, from the caller's frame alone."""
    from configshell_fb import log

    def debug(self, msg):
        caller = sys._getframe(1)
        code = caller.f_code
        self._log("debug", f"{code.co_filename}:{caller.f_lineno} {code.co_name}() {msg}")

    log.Log.debug = debug


def run(args):
    """Run targetcli (with args, as its command line) with the vaai node."""
    if not os.path.exists(TARGETCLI):
        raise VaaiError(f"{TARGETCLI} not found: install targetcli-fb")
    backstore.load_module()
    install()
    cheap_debug_lines()
    sys.argv = [TARGETCLI, *list(args)]
    try:
        runpy.run_path(TARGETCLI, run_name="__main__")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (1 if e.code else 0)
    return 0


def main():
    sys.exit(run(sys.argv[1:]))
