"""Command-line entry point: ``relgate`` (the TUI) and its headless sub-commands (SPEC §5.5, issue 5 item 7).

::

    relgate                                  the terminal UI
    relgate certify --task T --endpoint URL --model M [options]   headless certification (exit 0 / 1 / 2)
    relgate certify --config run.toml [options]   the same, every flag read from a TOML file (flags win)
    relgate runs [--run-dir DIR] [--repair RUN]   list runs (or quarantine a run's corrupt lines)
    relgate runs rm RUN | relgate runs prune [--dry-run]
    relgate report RUN [--format md|json|csv] [--output PATH]
    relgate tasks                            bundled tasks
    relgate demo-server [--port N] [--latency-ms X] [--fault-rate R]
    relgate judge audit | intervals | irt | jury | certify | apply | list   the judge family

Exit codes: 0 done (and passed, or no gate), 1 below ``--min-reliability``, 2 error, 3 sampling incomplete (some
items were not sampled to their stop because requests failed: no PASS/FAIL is decided on partial data; rerun the same
command to retry them). Every user error is one line on stderr ("relgate: error: …"), never a traceback.
``relgate certify`` never imports Textual.

This module is the parser shell: it finds the sub-commands (one module each in :mod:`relgate_tui.commands`), expands
``certify --config``, passes ``demo-server`` to the demo, runs the TUI without a command and turns every error into
one line.
"""

from __future__ import annotations

import argparse
import gc
import sys
from typing import Any, NoReturn

EXIT_OK, EXIT_ERROR = 0, 2


class UsageError(Exception):
    """A bad command line (raised instead of argparse's multi-line usage dump)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        raise UsageError(f"{message} (see `{self.prog} --help`)")

    def add_subparsers(self, **kwargs: Any) -> Any:
        """As argparse's, and kept as ``subcommands`` (the judge family adds its studies to ``relgate judge``'s)."""
        self.subcommands = super().add_subparsers(**kwargs)
        return self.subcommands


def _err(message: str) -> None:
    from relgate_tui.core.redact import redact, redact_urls
    from relgate_tui.core.text import one_line

    text = " ".join(one_line(redact_urls(redact(str(message)))).split()) or "unknown error"
    print(f"relgate: error: {text}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------------------ parser
def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """relgate's parser: every command's, or with ``argv`` naming a command of its own module only that one's (the
    parser a run parses with: the same options, help and errors; :func:`relgate_tui.commands.register_one`)."""
    parser = _Parser(prog="relgate", description="How far can this language model be trusted on this task?",
                     epilog="Exit codes: 0 done or PASS, 1 below the gate, 2 error, 3 undecided. "
                            "`relgate COMMAND --help` says more.")
    from relgate_tui import __version__

    parser.add_argument("--version", action="version", version=f"relgate {__version__}")
    parser.set_defaults(launch_tui=launch_review)  # the one way a command opens the terminal UI
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")

    from relgate_tui import commands

    one = commands.register_one(sub, argv[0]) if argv else None
    COMMANDS.update(one if one is not None else commands.register_all(sub))
    sub.add_parser("demo-server", help="serve simulated models on 127.0.0.1 (OpenAI API)", add_help=False)
    return parser


COMMANDS: dict[str, Any] = {}
"""Sub-command word → its ``run(args) -> int``, filled by :func:`build_parser` from :mod:`relgate_tui.commands`
(each leaf parser also sets ``handler``, which :func:`main` calls: ``relgate judge audit`` → the audit's ``run``)."""


def _run_tui() -> int:
    try:
        from relgate_tui.tui.app import run
    except ImportError:
        _err("the terminal UI is not installed in this build")
        return EXIT_ERROR
    result = run()
    return result if isinstance(result, int) else EXIT_OK


def launch_review(store: Any, session: str, name: str) -> int:
    """``relgate review open SESSION``: the team-review labelling screen on its own — the second way into the terminal
    UI, launched here like the first (``relgate``) so that no command module imports the TUI: the parser hands it
    to every command as ``args.launch_tui``."""
    from relgate_tui.tui.review.app import run_review_app

    return run_review_app(store, session, name)


def _user_error_types() -> tuple[type[BaseException], ...]:
    """Error types whose message is meant for the user: :class:`relgate_tui.errors.RelgateError` (the root), and,
    until every module raises it, ValueError (TaskError, CertifyError, RunStoreError, the canonicalizer's and the
    stopping rule's errors); OSError covers files and sockets."""
    from relgate_tui.errors import RelgateError

    types: list[type[BaseException]] = [RelgateError, ValueError, OSError, UsageError]
    for module, name in (("relgate_tui.engine.transport.sampler", "EndpointUnreachable"),):
        mod = sys.modules.get(module)
        exc = getattr(mod, name, None) if mod is not None else None
        if isinstance(exc, type) and issubclass(exc, BaseException):
            types.append(exc)
    return tuple(types)


def _expand_config(argv: list[str]) -> list[str]:
    """``relgate certify --config FILE …``: the file's keys become flags placed before the command line's own, so
    a flag given on the command line wins (:mod:`relgate_tui.engine.certification.run_config`)."""
    if not argv or argv[0] != "certify":
        return argv
    rest, path = [], None
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--config" and i + 1 < len(argv):
            path, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--config="):
            path = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    if path is None:
        return argv
    from relgate_tui.engine.certification.run_config import config_argv, load_run_config

    return ["certify", *config_argv(load_run_config(path)), *rest]


def main(argv: list[str] | None = None) -> int:
    """Run relgate. Returns the process exit code (0 ok / pass, 1 below the gate, 2 error). Without ``argv`` (the
    ``relgate`` program itself, which exits next) every object is frozen out of the collector first: the collections
    at interpreter exit then walk nothing (~10 ms of every run; a caller in a long-lived process passes ``argv``)."""
    code = _main(list(sys.argv[1:] if argv is None else argv))
    if argv is None:
        gc.freeze()
    return code


def _main(argv: list[str]) -> int:
    if not argv:
        return _run_tui()
    if argv[0] == "demo-server":
        from relgate_tui.demo.cli import main as demo_main

        return int(demo_main(argv[1:]) or 0)
    args: argparse.Namespace | None = None
    try:
        collecting = gc.isenabled()
        gc.disable()  # building the parser imports the command's modules (numpy among them): nothing to collect
        try:
            argv = _expand_config(argv)
            args = build_parser(argv).parse_args(argv)
        finally:
            if collecting:
                gc.enable()
        if args.command is None:
            return _run_tui()
        handler = getattr(args, "handler", None) or COMMANDS[args.command]
        return int(handler(args))
    except KeyboardInterrupt:
        _err("interrupted (the run is saved; rerun the same command to resume)")
        return EXIT_ERROR
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - the top level turns every error into one line
        moved = getattr(args, "moved_to", None)  # an old word (commands/__init__.py): where the command moved
        where = f" ({moved})" if moved else ""
        if isinstance(exc, _user_error_types()):
            _err((str(exc) or exc.__class__.__name__) + where)
        else:
            _err(f"unexpected {exc.__class__.__name__}: {exc} — please report this (with the command you ran){where}")
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
