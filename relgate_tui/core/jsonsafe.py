"""The one JSON policy for results (issue 9 item 2): typed frozen results are serialised once, at the edge.

``jsonable(x)`` turns dataclasses, mappings, sequences, numpy scalars and arrays into plain JSON values, with every
non-finite float (NaN, +∞, −∞) written as ``null``. ``dumps`` then writes strict JSON (``allow_nan=False``), so a
non-finite number that slipped past would fail loudly instead of producing invalid JSON.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np


def finite_or_none(x: Any) -> float | None:
    """``float(x)`` when finite, else ``None`` (NaN, ±∞ and ``None`` all become ``None``)."""
    if x is None:
        return None
    v = float(x)
    return v if math.isfinite(v) else None


def jsonable(x: Any) -> Any:
    """A plain-JSON copy of ``x``: NaN/±∞ → null, numpy → Python, dataclasses and mappings → objects, tuples → lists."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, enum.Enum):
        return jsonable(x.value)
    if isinstance(x, (int, np.integer)) and not isinstance(x, np.bool_):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, (float, np.floating)):
        return finite_or_none(x)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        to_json = getattr(x, "to_json", None)
        if callable(to_json):
            return jsonable(to_json())
        return {f.name: jsonable(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return [jsonable(v) for v in x.tolist()]
    if isinstance(x, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in x]
    raise TypeError(f"not serialisable as JSON: {type(x).__name__}")


def dumps(x: Any, *, indent: int | None = 2) -> str:
    """Strict JSON text of ``jsonable(x)`` (UTF-8 characters kept, a trailing newline when indented; control and
    bidi characters as ``\\u`` escapes, :func:`~relgate_tui.core.text.escape_invisible`)."""
    from relgate_tui.core.text import escape_invisible

    text = escape_invisible(json.dumps(jsonable(x), indent=indent, ensure_ascii=False, allow_nan=False))
    return text + "\n" if indent is not None else text


class JSONInputError(ValueError):
    """Untrusted JSON relgate will not read, in relgate's own words (one line, no library text)."""


_MAX_INT_DIGITS = 308  # an integer beyond ±1e308 cannot become a number anywhere downstream (OverflowError)


def _strict_float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise JSONInputError(f"the number {text[:24]}{'…' if len(text) > 24 else ''} is beyond the range of a "
                             "double (±1.8e308)")
    return x


def _strict_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > _MAX_INT_DIGITS:
        raise JSONInputError(f"an integer of {digits:,} digits (beyond ±1e308)")
    return int(text)


def _no_constant(text: str) -> Any:
    raise JSONInputError(f"{text} is not a JSON number")


def _check_strings(x: Any) -> None:
    """Raise :class:`JSONInputError` when a string anywhere in ``x`` holds a lone surrogate (``\\ud800``): it cannot
    be written as UTF-8, so it would fail later, far from the line that holds it."""
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                raise JSONInputError("a string holds a lone surrogate (not valid Unicode)") from None
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def loads_strict(text: str | bytes) -> Any:
    """``json.loads`` for untrusted input, every refusal a :class:`JSONInputError` in our own words (a
    :class:`json.JSONDecodeError` keeps its message and position): numbers beyond a double's range (``1e400``,
    which Python reads as ∞) and ``NaN`` / ``Infinity``, integers of more than 308 digits, nesting too deep for the
    parser, strings with lone surrogates."""
    try:
        obj = json.loads(text, parse_float=_strict_float, parse_int=_strict_int, parse_constant=_no_constant)
    except json.JSONDecodeError:
        raise
    except JSONInputError:
        raise
    except RecursionError:
        raise JSONInputError("nested too deeply") from None
    except ValueError as exc:  # int-string conversion limits, or anything else the parser says in its own words
        raise JSONInputError(f"not readable as JSON ({type(exc).__name__})") from None
    if (b"\\u" in text) if isinstance(text, bytes) else ("\\u" in text):
        _check_strings(obj)
    return obj
