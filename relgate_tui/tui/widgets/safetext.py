"""Untrusted text (model answers, item ids, model names, file contents, server messages) as Rich ``Text``: never
parsed as markup (``[/]``, ``[link=…]`` and Textual ``[@click=…]`` action links stay literal text) and stripped of
terminal escape sequences, C0/C1 and bidi controls (:mod:`relgate_tui.core.text`). Every widget that shows such
text goes through :func:`safe` or :func:`safe_line` instead of a markup string."""

from __future__ import annotations

from rich.text import Text

from relgate_tui.core.text import one_line, strip_controls


def safe(text: object, style: str = "", **kwargs: object) -> Text:
    """``text`` (any value, shown with ``str``) as a plain ``Text`` without controls; newlines kept."""
    return Text(strip_controls(str(text)), style=style, **kwargs)  # type: ignore[arg-type]


def safe_line(text: object, limit: int | None = None, style: str = "", **kwargs: object) -> Text:
    """``text`` as one plain line (tabs and newlines folded), cut to ``limit`` characters."""
    return Text(one_line(str(text), limit), style=style, **kwargs)  # type: ignore[arg-type]


def clean(text: object) -> str:
    """``text`` without controls, as a string for places that take plain strings (never markup)."""
    return strip_controls(str(text))
