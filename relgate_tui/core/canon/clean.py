"""Unicode hygiene shared by every canonicalizer (SPEC §3.1): bounded size, control and bidi characters removed,
exotic spaces and minus signs unified, digit groups joined. Pure text → text; no IO."""

from __future__ import annotations

import re

from relgate_tui.core.text import strip_controls

__all__ = ["MAX_INPUT_CHARS", "clean"]

MAX_INPUT_CHARS = 20_000  # answers are truncated to their last characters beyond this (the answer is at the end)

_SPACE_CHARS = dict.fromkeys(map(ord, "\u00a0\u2007\u2009\u200a\u202f\u205f\u3000"), " ")
# zero-width and bidi controls (LRE…RLO, LRI…PDI, LRM/RLM/ALM): invisible, and never part of an answer
_INVISIBLE = dict.fromkeys(
    map(ord, "\u200b\u200c\u200d\u2060\ufeff\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"),
    None,
)
_MINUS_CHARS = dict.fromkeys(map(ord, "\u2212\u2796\ufe63\uff0d"), "-")  # minus sign, heavy minus, small/fullwidth
_DASH_SIGN = re.compile(r"(?:(?<=^)|(?<=[\s(=:$]))[\u2010\u2011\u2012\u2013\u2014](?=\s?\d)")
_THIN_GROUP = re.compile(r"(?<=\d)[\u2009\u202f\u00a0](?=\d{3}\b)")


def clean(text: str) -> str:
    """Unicode hygiene shared by all canonicalizers: size bounded (the last characters kept), terminal escape
    sequences, control, zero-width and bidi characters removed, thin-space digit groups joined, exotic spaces made plain, minus signs unified."""
    if len(text) > MAX_INPUT_CHARS:
        text = text[-MAX_INPUT_CHARS:]
    text = strip_controls(text).translate(_INVISIBLE)  # escape sequences whole, C0/C1/bidi (core/text.py)
    text = _THIN_GROUP.sub("", text)
    text = text.translate(_SPACE_CHARS).translate(_MINUS_CHARS)
    return _DASH_SIGN.sub("-", text)
