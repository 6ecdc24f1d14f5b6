"""The one check of a rating scale read from a file (issue 23 §2: numbers in files never size an allocation).

A judge's scale comes from data — the keys of its log-probabilities, the ratings it gave — and studies build arrays,
grids and ``range(min, max)`` over it. :func:`check_scale` runs before anything is built: the values must be
integers spanning 2 to :data:`MAX_POINTS` points (``max − min + 1``), so a log-prob key ``"1000000000"`` or one
score of ``1e15`` is a one-line :class:`~relgate_tui.errors.DataError` instead of an allocation without bound.
Pure (no IO).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from relgate_tui.errors import DataError

MAX_POINTS = 101
"""Largest scale read (0–100 is the widest in use)."""


def check_scale(values: Iterable[float], where: str, what: str = "scale") -> tuple[int, int]:
    """``(lo, hi)`` of ``values`` when they are integers whose span ``hi − lo + 1`` is 2 to :data:`MAX_POINTS`
    points; :class:`DataError` (one line naming ``where`` and the offending value) otherwise."""
    lo = hi = None
    for v in values:
        x = float(v)
        if not math.isfinite(x) or not x.is_integer():
            raise DataError(f"{where}: {what} value {v!r} is not an integer")
        lo = x if lo is None or x < lo else lo
        hi = x if hi is None or x > hi else hi
    if lo is None or hi is None:
        raise DataError(f"{where}: no {what} values")
    span = hi - lo + 1
    if span < 2:
        raise DataError(f"{where}: the {what} has a single value ({lo:g}); need at least two")
    if span > MAX_POINTS:
        raise DataError(f"{where}: the {what} runs from {lo:g} to {hi:g} ({span:g} points); relgate reads scales of "
                        f"2 to {MAX_POINTS} points")
    return int(lo), int(hi)
