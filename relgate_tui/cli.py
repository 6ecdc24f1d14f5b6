"""Command-line entry point: ``relgate`` (the TUI) and its headless sub-commands."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run relgate. Returns the process exit code (0 ok / pass, 1 below the gate, 2 error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    print("relgate: the terminal application is not built yet", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
