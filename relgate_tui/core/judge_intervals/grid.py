"""Admissible label grid and boundary adjustment (paper 001 §3.3, Eqs. 6–9, Theorem 1, A.10).

**Grid.** Human labels are integers (one rater, Likert) or means of R raters (a 1/R grid; SummEval/DialSumm use the
mean of three raters, so Y = {1, 4/3, 5/3, …, 5}). :func:`detect_grid` finds the coarsest step 1/R (R = 1, 2, 3, 4)
that holds every label; ``"integer"``, ``"thirds"`` or an explicit list may be given instead.

**Boundary adjustment.** Each endpoint moves to its nearest admissible label when it lies within λ of it (A.10:
"only those interval endpoints within absolute distance λ to [a label] will be rounded"). λ = 0 is no adjustment;
λ = half the grid step is full adjustment (every endpoint snaps; the paper's worked examples: [2.2, 3.9] → [2, 4];
on thirds [4.6, 4.9] → [4.67, 5]; λ = 0.1 on integers [3.2, 4.9] → [3.2, 5.0]). An endpoint halfway between two
labels moves outward (the coverage-safe side). Before rounding, intervals are clipped to [min label, max label]
(no label lies outside, so coverage is unchanged; this also turns a q̂ = ∞ interval into the full scale).

**Theorem 1 (coverage never decreases).** Rounding a lower endpoint l up to the nearest label g ≥ l removes only
(l, g), which holds no label; rounding it down only adds points (and symmetrically for u). So every label in [l, u]
stays in [l', u'] — per test point, hence on every split: coverage after ≥ coverage before. Tested per split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_TOL = 1e-6


@dataclass(frozen=True)
class Grid:
    """Admissible labels ``values`` (sorted) and their ``step`` (the spacing, for full adjustment λ = step/2)."""

    values: tuple[float, ...]
    step: float
    name: str

    @property
    def full_lambda(self) -> float:
        return self.step / 2.0

    def snap_labels(self, y: np.ndarray) -> np.ndarray:
        """Each label replaced by the exact grid value it denotes (4.6667 → 14/3)."""
        v = np.asarray(self.values)
        idx = np.abs(np.asarray(y, dtype=float)[:, None] - v[None, :]).argmin(axis=1)
        return v[idx]


def _regular(lo: float, hi: float, r: int, name: str) -> Grid:
    n = int(round((hi - lo) * r))
    return Grid(tuple(float(lo + k / r) for k in range(n + 1)), 1.0 / r, name)


def off_grid(labels: np.ndarray, grid: Grid) -> np.ndarray:
    """Indices of labels that are not on ``grid``."""
    v = np.asarray(grid.values)
    d = np.abs(np.asarray(labels, dtype=float)[:, None] - v[None, :]).min(axis=1)
    return np.flatnonzero(d > 1e-3)


def detect_grid(labels: np.ndarray, lo: float, hi: float) -> Grid | None:
    """The coarsest regular grid from ``lo`` to ``hi`` with step 1/R (R = 1, 2, 3, 4) holding every label, else None."""
    names = {1: "integer", 2: "halves", 3: "thirds", 4: "quarters"}
    for r in (1, 2, 3, 4):
        g = _regular(lo, hi, r, names[r])
        if off_grid(labels, g).size == 0:
            return g
    return None


def make_grid(spec: str | Sequence[float], labels: np.ndarray, lo: float, hi: float) -> Grid | None:
    """``auto`` (detect), ``integer``, ``thirds``, or an explicit list of labels. None when ``auto`` finds no grid."""
    if isinstance(spec, str):
        if spec == "auto":
            return detect_grid(labels, lo, hi)
        if spec == "integer":
            return _regular(lo, hi, 1, "integer")
        if spec == "thirds":
            return _regular(lo, hi, 3, "thirds")
        raise ValueError(f"unknown grid {spec!r}")
    vals = tuple(sorted({float(x) for x in spec}))
    if len(vals) < 2:
        raise ValueError("a grid needs at least two labels")
    return Grid(vals, float(np.min(np.diff(vals))), "list")


def adjust(lower: np.ndarray, upper: np.ndarray, grid: Grid, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Boundary adjustment with threshold ``lam`` (absolute distance); endpoints first clipped to the grid's range."""
    v = np.asarray(grid.values)
    lo = np.clip(np.asarray(lower, dtype=float), v[0], v[-1])
    up = np.clip(np.asarray(upper, dtype=float), v[0], v[-1])
    if lam <= 0:
        return lo, up
    return _round(lo, v, lam, side="lower"), _round(up, v, lam, side="upper")


def _round(x: np.ndarray, v: np.ndarray, lam: float, *, side: str) -> np.ndarray:
    j = np.clip(np.searchsorted(v, x, side="left"), 1, len(v) - 1)
    below, above = v[j - 1], v[j]
    d_below, d_above = x - below, above - x
    # an endpoint already on a label stays put; "on" is an absolute 1e-12 (np.isclose's default relative tolerance,
    # 1e-5 · |label|, kept an endpoint 5·10⁻⁵ below a label 5 unsnapped, and the label was then counted as missed)
    nearest_label = v[np.abs(x[:, None] - v[None, :]).argmin(axis=1)] if x.size else x
    exact = np.isclose(x, nearest_label, rtol=0.0, atol=1e-12) if x.size else x.astype(bool)
    if side == "lower":   # ties go down (outward)
        nearest = np.where(d_below <= d_above + _TOL, below, above)
    else:                 # ties go up (outward)
        nearest = np.where(d_above <= d_below + _TOL, above, below)
    dist = np.abs(nearest - x)
    out = np.where(dist <= lam + _TOL, nearest, x)
    return np.where(exact, x, out)
