"""Headless sub-commands, one module each (discovered, so adding a command never edits ``cli.py``).

A command module defines ``NAME`` (the sub-command word), ``register(subparsers)`` (adds its argparse parser; cheap:
no heavy imports at module level), ``run(args) -> int`` (the exit code) and optionally ``ORDER`` (its place in
``relgate --help``: certify, runs, report, tasks first; the others by name). ``cli.py`` finds every module in this
package with :func:`modules`. The commands: certify, runs, report, tasks, audits, compare, import, judge-audit,
judge-intervals, judge-irt, jury, review (and any module added here). A command reads the engine, never the TUI.

Modules: ``certify`` (with ``certify_summary``, its typed summary), ``runs``, ``report``, ``tasks``, ``import_log``
(``relgate import``), ``compare``, ``review``, ``audits``, ``judge_audit``, ``judge_intervals``, ``judge_irt``,
``jury``, ``judge_certificate`` (``relgate judge certify``, with ``judge_apply`` for
``relgate judge apply``). ``batch`` (``relgate batch write/read``: a run's rounds as Batch JSONL files).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

__all__ = ["modules"]


def modules() -> list[ModuleType]:
    """Every command module of this package, by ``ORDER`` (default 100) then name."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "register") and hasattr(mod, "run"):
            found.append(mod)
    return sorted(found, key=lambda m: (getattr(m, "ORDER", 100), m.__name__))
