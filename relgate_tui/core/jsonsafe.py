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
