"""Teach every rtslib-fb program on the system the `vaai` backstore.

rtslib-fb builds each storage object it finds in configfs from a fixed
table and raises KeyError on any other type, after targetctl has already
deleted every target.  This module is loaded at interpreter start-up by
vaai-rtslib.pth (site-packages runs .pth lines that begin with "import")
into every interpreter on the system, so it imports nothing itself (not
even importlib.abc, whose imports cost Python 3.11 more than the rest of
its start-up together): it puts a finder at the head of sys.meta_path
that waits for `rtslib_fb` and `targetcli.ui_backstore` to finish loading,
and then

- registers the `vaai` type with rtslib-fb (importing vaai.storage), so
  targetctl, targetcli and every other rtslib-fb program read, save,
  restore and clear vaai backstores like the built-in ones;
- adds /backstores/vaai to targetcli;
- whether or not that worked, makes rtslib-fb name any storage object
  type it cannot build, and refuse to clear a configuration holding one
  before it deletes anything (targetctl prints one line, exit status 1).

It must never break an interpreter: whatever fails here leaves Python as
it was, with a one-line note on stderr.  Remove it once rtslib-fb has a
registry for out-of-tree backends (docs/upstream/).
"""

import os
import sys

# Set when the vaai package could not be imported: why, for the guard.
_unavailable = None


class _Loader:
    """A module's own loader, then `then(module)` once it has run (the
    import system asks a loader for create_module and exec_module only)."""

    def __init__(self, loader, then):
        self._loader = loader
        self._then = then

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            self._then(module)
        except Exception as e:
            _note(f"{module.__name__}: {e}")


class _Finder:
    """Finds nothing itself: wraps the loader the other finders give for
    the modules we wait for (a meta path finder needs only find_spec)."""

    def __init__(self, watch):
        self._watch = watch

    def find_spec(self, name, path, target=None):
        then = self._watch.get(name)
        if then is None:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None:
            spec.loader = _Loader(spec.loader, then)
        return spec


def _note(what):
    sys.stderr.write(f"vaai-rtslib hook: {what}\n")


def _rtslib_loaded(rtslib):
    global _unavailable  # noqa: PLW0603 - what every later check reports
    _guard(sys.modules["rtslib_fb.tcm"], rtslib.RTSRoot, rtslib.RTSLibError)
    try:
        import vaai.storage  # noqa: F401 - registers at import
    except Exception as e:
        _unavailable = f"the vaai Python package cannot be loaded ({e})"


def _targetcli_loaded(ui_backstore):
    if _unavailable is None:
        from vaai import targetcli_ui

        targetcli_ui.install(ui_backstore)


def _guard(tcm, root_cls, error_cls):
    """Unknown storage object types: a clear RTSLibError instead of a
    KeyError, and clear_existing() refuses before it deletes anything."""

    class UnknownBackstore(error_cls):
        pass

    so_from_path = tcm.StorageObject.so_from_path.__func__

    def guarded_so_from_path(cls, path):
        plugin = os.path.basename(os.path.dirname(path)).rsplit("_", 1)[0]
        if plugin not in tcm.so_mapping:
            why = (
                _unavailable
                if plugin == "vaai" and _unavailable
                else "this rtslib-fb does not know the type"
            )
            raise UnknownBackstore(
                f"cannot read storage object {plugin}/{os.path.basename(path)}: {why}; "
                "nothing was changed"
            )
        return so_from_path(cls, path)

    clear_existing = root_cls.clear_existing

    def guarded_clear_existing(self, *args, **kwargs):
        # Build every storage object first: one that cannot be built stops
        # the clear before its targets are gone.
        list(tcm.StorageObject.all())
        return clear_existing(self, *args, **kwargs)

    tcm.StorageObject.so_from_path = classmethod(guarded_so_from_path)
    root_cls.clear_existing = guarded_clear_existing
    _one_line_on_exit(UnknownBackstore)


def _one_line_on_exit(error_cls):
    """A program that lets the guard's error out (targetctl) prints its
    message as one line instead of a traceback."""
    excepthook = sys.excepthook

    def hook(kind, value, tb):
        if isinstance(value, error_cls):
            sys.stderr.write("{}: {}\n".format(os.path.basename(sys.argv[0] or "python3"), value))
            return
        excepthook(kind, value, tb)

    sys.excepthook = hook


def install():
    """Called by vaai-rtslib.pth at start-up; idempotent."""
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    try:
        sys.meta_path.insert(
            0, _Finder({"rtslib_fb": _rtslib_loaded, "targetcli.ui_backstore": _targetcli_loaded})
        )
    except Exception as e:
        _note(str(e))
