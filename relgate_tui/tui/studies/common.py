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

_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e"
                       "\u2066\u2067\u2068\u2069")


class StudyCancelled(Exception):
    """Raised from a study's progress callback when its worker was cancelled (ends the thread between splits)."""


def plain(text: object, limit: int = 60) -> str:
    """``text`` as one printable line: control/bidi/zero-width characters dropped, at most ``limit`` characters."""
    out = "".join(ch for ch in str(text) if ch.isprintable() and ch not in _INVISIBLE)
    return out if len(out) <= limit else out[: limit - 1] + "…"


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
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def file_stem(title: str) -> str:
    """A file-name stem from a title: runs of anything but ASCII letters, digits and ``_`` become one ``-``."""
    stem = re.sub(r"[^A-Za-z0-9_]+", "-", plain(title, 60)).strip("-")
    return stem or "study"
