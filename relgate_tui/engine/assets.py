"""Where the bundled assets live: ``<checkout>/assets`` or, in an installed wheel, ``relgate_tui/_assets``."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]  # relgate_tui/


def assets_dir() -> Path:
    """The folder holding ``tasks.json``, ``tasks/`` and ``judge/`` (wheel layout first, then the source checkout)."""
    for candidate in (_PACKAGE / "_assets", _PACKAGE.parent / "assets"):
        if (candidate / "tasks.json").is_file():
            return candidate
    raise FileNotFoundError(f"relgate's bundled assets are missing (looked in {_PACKAGE / '_assets'})")
