"""Untrusted text made safe to show and to store (issue 10 §3): model answers, item ids, model names, file contents and
server error bodies may carry terminal control sequences, bidirectional-override characters or spreadsheet formulas.

* :func:`strip_controls` removes ANSI/VT escape sequences whole (CSI ``ESC [ … final``, OSC ``ESC ] … BEL|ST``, DCS /
  SOS / PM / APC strings, two-byte ``ESC x``), then every remaining C0 control except tab and newline (carriage return
  too: it rewrites the line), DEL, every C1 control (U+0080–U+009F, among them the one-byte CSI U+009B and OSC U+009D)
  and the bidi embedding / override / isolate / mark characters (U+061C, U+200E–U+200F, U+202A–U+202E,
  U+2066–U+2069), which can make displayed text read differently from what it is ("Trojan Source"). Used by the
  canonicalizers (so no class carries them) and before display.
* :func:`one_line` additionally folds tabs and newlines to spaces (table cells, status lines).
* :func:`escape_invisible` writes DEL, C1 and bidi controls inside JSON text as ``\\uXXXX`` escapes (the JSON value is
  unchanged; printed to a terminal, nothing runs or reorders) — used by :func:`relgate_tui.core.jsonsafe.dumps`.
* :func:`csv_cell` neutralises spreadsheet formulas: a cell starting with ``= + - @`` (or tab / carriage return,
  OWASP "CSV injection") is prefixed with an apostrophe.

Pure functions; no Rich or Textual here — widgets wrap the result in ``rich.text.Text`` so it is never parsed as
markup.
"""

from __future__ import annotations

import re

_ESCAPE_SEQUENCE = re.compile(
    r"""
      \x1b\[[0-?]*[ -/]*[@-~]?              # CSI: parameters, intermediates, final byte (maybe cut off)
    | \x1b[\]PX^_].*?(?:\x07|\x1b\\|\x9c|$)  # OSC / DCS / SOS / PM / APC string up to BEL or ST (or the end)
    | [\x9d\x90\x98\x9e\x9f].*?(?:\x07|\x1b\\|\x9c|$)  # the same strings opened by their one-byte C1 forms
    | \x9b[0-?]*[ -/]*[@-~]?                # one-byte CSI
    | \x1b[ -/]*[0-~]?                      # any other escape (ESC c, ESC ( B, …)
    """,
    re.VERBOSE | re.DOTALL,
)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_WHITESPACE_RUN = re.compile(r"[\t\n]+")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def strip_controls(text: str) -> str:
    """``text`` without escape sequences, C0 (but tab and newline), DEL, C1 and bidi control characters."""
    if not _CONTROLS.search(text):  # the common case costs one scan
        return text
    return _CONTROLS.sub("", _ESCAPE_SEQUENCE.sub("", text))


def one_line(text: str, limit: int | None = None) -> str:
    """:func:`strip_controls`, tabs and newlines folded to one space, cut to ``limit`` characters (with "…")."""
    text = _WHITESPACE_RUN.sub(" ", strip_controls(text))
    if limit is not None and len(text) > limit:
        return text[: max(0, limit - 1)] + "…"
    return text


def printable(text: object, limit: int = 60) -> str:
    """An untrusted name (a judge, a criterion, a field) as one plain bounded line: :func:`one_line` of its text."""
    return one_line(str(text), limit)


def csv_cell(value: object) -> object:
    """A CSV cell that a spreadsheet will not run as a formula: text starting with ``= + - @`` (tab, CR) gets a
    leading apostrophe; numbers and None pass through (a negative number is data, not a formula)."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


_INVISIBLE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def escape_invisible(json_text: str) -> str:
    """JSON text with DEL, the C1 controls and the bidi controls written as ``\\uXXXX`` escapes (``json.dumps``
    already escapes C0): the same JSON value, but nothing a terminal would run or reorder when it is printed."""
    if not _INVISIBLE.search(json_text):
        return json_text
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", json_text)


def counted(n: int, noun: str, plural: str | None = None, *, grouped: bool = False) -> str:
    """"1 label", "3 labels": a count with its noun in the singular or the plural (issue 31 item 18); ``grouped``
    writes the number with thousands separators ("1,204 rows")."""
    number = f"{n:,}" if grouped else f"{n}"
    return f"{number} {noun if n == 1 else plural or noun + 's'}"


def as_misses(n: int) -> str:
    """"1 disputed item counted as a miss", "3 disputed items counted as misses"."""
    return f"{counted(n, 'disputed item')} counted as {'a miss' if n == 1 else 'misses'}"
