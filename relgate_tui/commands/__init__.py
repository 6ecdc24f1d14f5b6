"""Headless sub-commands, one module each (discovered, so adding a command never edits ``cli.py``).

A command module defines ``NAME`` (the sub-command word), ``register(subparsers)`` (adds its argparse parser; cheap:
no heavy imports at module level), ``run(args) -> int`` (the exit code) and optionally ``ORDER`` (its place in
``relgate --help``: certify, runs, report, tasks first; the others by name). ``cli.py`` registers every module of this
package with :func:`register_all`. A command reads the engine, never the TUI; a command that opens the terminal UI
calls ``args.launch_tui`` (the shell's launcher, set as a parser default by ``cli.py``).

**The judge family.** ``relgate judge audit | intervals | irt | jury | certify | apply | list``: the ``judge`` module
(:mod:`~relgate_tui.commands.judge_certificate`: ``certify`` and ``apply``) is the family's parser, and
:data:`JUDGE_FAMILY` adds the other studies of a judge under it, from their own modules' ``register``. The words
they had before (``judge-audit``, ``judge-intervals``, ``judge-irt``, ``jury``, ``audits``) stay as hidden aliases:
not in ``relgate --help``, the same arguments, and one line on stderr saying where the command moved. Every leaf
parser sets ``handler`` (its module's ``run``), which the shell calls.

Modules: ``certify`` (with ``certify_summary``, its typed summary), ``runs``, ``report``, ``tasks``, ``import_log``
(``relgate import``), ``compare``, ``review``, ``audits`` (``relgate judge list``), ``judge_audit``,
``judge_intervals``, ``judge_irt``, ``jury``, ``judge_certificate`` (``relgate judge certify``, with ``judge_apply``
for ``relgate judge apply``). ``batch`` (``relgate batch write/read``: a run's rounds as Batch JSONL files).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["JUDGE_FAMILY", "modules", "register_all", "register_one"]

JUDGE_FAMILY: dict[str, str] = {"judge-audit": "audit", "judge-intervals": "intervals", "judge-irt": "irt",
                                "jury": "jury", "audits": "list"}
"""A judge command's old top-level word → its word under ``relgate judge`` (``certify`` and ``apply`` were always
there)."""


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


def _short(text: str) -> str:
    """A command's line in ``relgate --help``: its help up to the first parenthesis (the rest is in its own help)."""
    head = text.split(" (", 1)[0].strip()
    return head or text


def _moved(old: str, new: str, run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``run`` under its old word: it runs as the new one, then says on stderr where the command moved (an error that
    ends the command says it on its own one line instead: ``args.moved_to``, which the shell appends)."""
    def moved(args: argparse.Namespace) -> int:
        args.moved_to = f"`{old}` is now `relgate {new}`"
        code = run(args)
        print(f"relgate: {args.moved_to} (the old word still works)", file=sys.stderr, flush=True)
        return code

    return moved


class _Leaves:
    """The ``subparsers`` a command module's ``register`` sees: its parser is added under ``name`` (``None``: the
    module's own word), listed in help or ``hidden``, with ``handler`` set to ``run``."""

    def __init__(self, sub: Any, name: str | None, run: Callable[[argparse.Namespace], int], *, hidden: bool = False,
                 short: bool = False) -> None:
        self.sub, self.name, self.run, self.hidden, self.short = sub, name, run, hidden, short

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if self.hidden:
            kwargs.pop("help", None)  # a parser added without help is not listed
        elif self.short and "help" in kwargs:
            kwargs["help"] = _short(str(kwargs["help"]))
        parser: argparse.ArgumentParser = self.sub.add_parser(self.name or name, **kwargs)
        parser.set_defaults(handler=self.run)
        return parser


def register_one(sub: Any, word: str) -> dict[str, Callable[[argparse.Namespace], int]] | None:
    """Register only the command ``word`` when a module of its own name defines it (``relgate certify …``: the other
    commands' modules and parsers are not built — ~30 ms of every run's start-up, issue 42 §7); None (nothing
    registered) for any other word — the judge family, an old word, an option, a typo: :func:`register_all`."""
    name = word.replace("-", "_")
    if word in JUDGE_FAMILY or name.startswith("_") or not name.isidentifier() or not any(
            info.name == name for info in pkgutil.iter_modules(__path__)):
        return None
    mod = importlib.import_module(f"{__name__}.{name}")
    if getattr(mod, "NAME", None) != word or word == "judge" or not hasattr(mod, "register"):
        return None
    mod.register(_Leaves(sub, None, mod.run, short=True))
    return {word: mod.run}


def register_all(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Register every command under the top-level ``sub`` (and the judge family under ``relgate judge``); returns
    each top-level word's ``run`` (the hidden aliases included)."""
    runs: dict[str, Callable[[argparse.Namespace], int]] = {}
    family: dict[str, ModuleType] = {}
    for mod in modules():
        if mod.NAME in JUDGE_FAMILY:
            family[JUDGE_FAMILY[mod.NAME]] = mod
            continue
        mod.register(_Leaves(sub, None, mod.run, short=True))
        runs[mod.NAME] = mod.run
    judge = sub.choices.get("judge")
    leaves = getattr(judge, "subcommands", None)
    if leaves is None:  # pragma: no cover - the judge module always registers its sub-commands
        raise RuntimeError("relgate judge has no sub-commands to add the judge family to")
    for word, mod in sorted(family.items(), key=lambda kv: list(JUDGE_FAMILY.values()).index(kv[0])):
        mod.register(_Leaves(leaves, word, mod.run))
    for old, word in JUDGE_FAMILY.items():  # the old words: hidden, same arguments, say where they moved
        mod = family[word]
        moved = _moved(old, f"judge {word}", mod.run)
        mod.register(_Leaves(sub, None, moved, hidden=True))
        runs[old] = moved
    return runs

