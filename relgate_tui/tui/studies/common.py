"""Helpers shared by the study views: safe display of untrusted text, number formatting, exports.

Judge names, item ids, criteria and file paths come from files the user did not necessarily write: they are shown
only as :class:`rich.text.Text` (never parsed as markup), with control, zero-width and bidi characters removed and
their length bounded.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from rich.text import Text

from relgate_tui.core.text import one_line

_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")


class StudyCancelled(Exception):
    """Raised from a study's progress callback when its worker was cancelled (ends the thread between splits)."""


def plain(text: object, limit: int = 60) -> str:
    """``text`` as one line (:func:`relgate_tui.core.text.one_line`: escape sequences, control and bidi characters
    removed, newlines folded) without zero-width characters, at most ``limit`` characters."""
    return one_line(_ZERO_WIDTH.sub("", str(text)), limit)


def safe(text: object, limit: int = 60, style: str = "") -> Text:
    """Untrusted text as a Rich ``Text`` (no markup is ever parsed)."""
    return Text(plain(text, limit), style=style)


def num(x: float | None, nd: int = 2, signed: bool = False) -> str:
    """A number for a table cell; ``—`` for None and non-finite values."""
    if x is None or not math.isfinite(x):
        return "—"
    return f"{x:+.{nd}f}" if signed else f"{x:.{nd}f}"


def write_export(directory: Path, name: str, text: str) -> Path:
    """Write ``text`` to ``directory/name`` (created if needed) and return the path."""
    from relgate_tui.engine.runs.outputs import write_display, write_output

    write = write_output if name.endswith(".json") else write_display  # Markdown and CSV: for people to read
    return write(directory / name, text, mkdir=True)


def file_stem(title: str) -> str:
    """A file-name stem from a title: runs of anything but ASCII letters, digits and ``_`` become one ``-``."""
    stem = re.sub(r"[^A-Za-z0-9_]+", "-", plain(title, 60)).strip("-")
    return stem or "study"
