"""``import httpx`` without httpx's command-line client.

httpx's package ``__init__`` runs ``from ._main import main`` inside ``try/except ImportError``: whenever click, rich
and pygments are installed (here they are: rich comes with Textual, click with the docs toolchain), every process
that imports httpx also imports httpx's own CLI — click, ``rich.progress``, ``rich.syntax`` and pygments' lexer
tables, some 150 modules and 60–100 ms of a process's start, for a program relgate never runs (the httpx2 fork made
that import lazy for the same reason).

:func:`install` puts a finder first on ``sys.meta_path`` that refuses exactly one import: ``httpx._main`` while the
``httpx`` package itself is still initialising. httpx then takes its own fallback (a ``main`` that says the CLI's
extras are missing), which is what it does on any install without them. Everything else is untouched: any other
module, and ``httpx._main`` imported explicitly once httpx is loaded, import as usual. :mod:`relgate_tui.engine`'s
``__init__`` installs it, so it is in place before any engine module imports httpx, whichever front end (the command
line, the TUI, a script) comes first.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

_BLOCKED = "httpx._main"


class _SkipHttpxCli:
    """A meta-path finder: ``httpx._main`` is not found while ``httpx`` is initialising; no opinion on anything else
    (it returns ``None``, and the import system asks the next finder). It stays on ``sys.meta_path`` (removing a finder
    from inside ``find_spec`` would make the import system skip the next one) and costs one string comparison."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname == _BLOCKED and _initialising(sys.modules.get("httpx")):
            raise ModuleNotFoundError(f"{_BLOCKED} is not loaded by relgate (httpx's optional CLI)", name=fullname)
        return None


def _initialising(module: ModuleType | None) -> bool:
    spec = getattr(module, "__spec__", None)
    return module is not None and bool(getattr(spec, "_initializing", False))


def install() -> None:
    """Put the finder in place, unless httpx is already imported (then there is nothing to save) or it is there."""
    if "httpx" in sys.modules or any(isinstance(f, _SkipHttpxCli) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _SkipHttpxCli())
