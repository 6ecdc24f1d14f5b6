"""Ordinal methods on p = softmax(z) over the K scale values (paper Eqs. 37–39).

Both grow a contiguous set of scale values from the most probable one, adding at each step the neighbour with the
larger (weighted) probability — Lu et al.'s ordinal APS order, and the greedy order of Xu et al.'s
``WeightedCRPredictor``. These methods learn nothing, so they calibrate on the whole calibration half.
A label y (possibly a 3-rater mean such as 10/3) is covered by a set [l, u] of scale values when l ≤ y ≤ u.

**Classes on the label grid** (:func:`on_label_grid`, ``--ordinal-grid``). With three-rater-mean labels the grid has
13 values (1, 4/3, …, 5) but the judge's tokens only 5, so sets over 1–5 end on integers and cover a label like 10/3
only by reaching 3 or 4. The authors' construction (their ``OrdinalAPS_random.ipynb``, commented out there) classifies
on the grid instead: each item's K log-probs are interpolated linearly onto the grid values (np.interp; the grid's
end points are the scale's, 1 → 1 and 5 → 13 under 3y − 2) and softmax over the G grid classes gives p; the methods
then grow sets of grid values. Any score keeps the conformal guarantee, so coverage stays ≥ 1 − α; the sets can end
on thirds, which makes them narrower on three-rater data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from .base import INF_REASON, Bounds, SplitData
from .features import softmax_rows


def on_label_grid(d: SplitData, values: Sequence[float]) -> SplitData:
    """The split with its log-prob columns interpolated onto the label grid ``values`` (module docstring)."""
    v = np.asarray(values, dtype=float)

    def interp(z: np.ndarray) -> np.ndarray:
        return np.vstack([np.interp(v, d.scale, row) for row in z]) if z.size else np.empty((0, v.size))

    return replace(d, z_fit=interp(d.z_fit), z_cal=interp(d.z_cal), z_test=interp(d.z_test), scale=v)


def _grow(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nested sets from the argmax: for k = 1..K, the bounds (L_k, U_k) (indices) and the accumulated mass M_k."""
    n, k = s.shape
    rows = np.arange(n)
    lo = np.argmax(s, axis=1)
    hi = lo.copy()
    mass = s[rows, lo].copy()
    L = np.empty((n, k), dtype=int)
    U = np.empty((n, k), dtype=int)
    M = np.empty((n, k))
    L[:, 0], U[:, 0], M[:, 0] = lo, hi, mass
    for step in range(1, k):
        left = np.where(lo > 0, s[rows, np.maximum(lo - 1, 0)], -np.inf)
        right = np.where(hi < k - 1, s[rows, np.minimum(hi + 1, k - 1)], -np.inf)
        go_left = left >= right
        lo = np.where(go_left, lo - 1, lo)
        hi = np.where(go_left, hi, hi + 1)
        mass = mass + np.where(go_left, left, right)
        L[:, step], U[:, step], M[:, step] = lo, hi, mass
    return L, U, M


def _inclusion_mass(s: np.ndarray, y: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For each row, the accumulated mass of the first grown set that covers y (l ≤ y ≤ u in scale values)."""
    L, U, M = _grow(s)
    covered = (values[L] <= y[:, None] + 1e-9) & (y[:, None] - 1e-9 <= values[U])
    return np.where(covered, M, np.inf).min(axis=1)


def _sets_at(s: np.ndarray, threshold: float, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    L, U, M = _grow(s)
    reach = M >= threshold - 1e-12
    k = np.where(reach.any(axis=1), np.argmax(reach, axis=1), s.shape[1] - 1)
    rows = np.arange(s.shape[0])
    return values[L[rows, k]].astype(float), values[U[rows, k]].astype(float)


def ordinal_aps(d: SplitData, alpha: float, seed: int) -> Bounds:
    """Ordinal APS (Lu et al. 2022). Score s_i = the probability mass of the smallest grown set that contains y_i
    (the paper's Eq. 37 prints an indicator; this is the authors' score); q̂ = the ⌈(n+1)(1−α)⌉-th smallest score;
    C(z) = the smallest grown set with mass ≥ q̂ (Eq. 38). Guarantee: P(Y ∈ C(Z)) ≥ 1 − α.
    """
    from .base import conformal_quantile

    values = np.asarray(d.scale)
    p_cal = softmax_rows(d.z_calib_all)
    scores = _inclusion_mass(p_cal, d.y_calib_all, values)
    q = conformal_quantile(scores, alpha)
    m = d.z_test.shape[0]
    if math.isinf(q):
        return Bounds(np.full(m, d.lo), np.full(m, d.hi), INF_REASON)
    lo, up = _sets_at(softmax_rows(d.z_test), q, values)
    return Bounds(lo, up)


def default_weights(values: np.ndarray) -> np.ndarray:
    """h(v) = 1 + ½·|v − mid| / half-range ∈ [1, 1.5]: a miss at an end of the scale costs 1.5× a miss at the middle.

    The paper gives no h ("default setting … with WeightedCRPredictor"); h ≥ 1 keeps the coverage guarantee.
    """
    v = np.asarray(values, dtype=float)
    mid, half = (v.min() + v.max()) / 2, max((v.max() - v.min()) / 2, 1e-9)
    return 1.0 + 0.5 * np.abs(v - mid) / half


def _weighted(p: np.ndarray, h: np.ndarray) -> np.ndarray:
    """h·p renormalised per item (the authors' "conditional" b = Σ h·p option), so one threshold suits every item."""
    s = p * h[None, :]
    return s / s.sum(axis=1, keepdims=True)


def ordinal_rc(d: SplitData, alpha: float, seed: int, weights: np.ndarray | None = None) -> Bounds:
    """Ordinal conformal risk control with a weighted loss (Xu, Guo & Wei 2024, ``WeightedCRPredictor``).

    Sets grow from the argmax of h·p (Eq. 39) until Σ_{j∈C} h_j p_j / Σ_j h_j p_j ≥ τ (the authors' code offers
    this normalisation as its "conditional" option; without it τ is unreachable for items whose Σ h·p is small and
    they get the full scale); loss L_i(τ) = h(y_i)·1{y_i ∉ C_τ(z_i)} (h of the nearest scale value). With t_i the
    grown mass at which y_i enters, a miss needs t_i > τ, so L̃_i(τ) = h(y_i)·1{t_i > τ} ≥ L_i(τ) is non-increasing in
    τ and bounded by B = max h. τ̂ is the smallest τ with (n/(n+1))·R̂(τ) + B/(n+1) ≤ α on L̃ (Angelopoulos et al.'s
    conformal risk control; the authors' code bisects a threshold instead — the exact search here is the same rule
    without bisection error).

    Guarantee: E[h(Y)·1{Y ∉ C(Z)}] ≤ α, and since h ≥ 1, P(Y ∈ C(Z)) ≥ 1 − α.
    """
    values = np.asarray(d.scale)
    h = default_weights(values) if weights is None else np.asarray(weights, dtype=float)
    y = d.y_calib_all
    s_cal = _weighted(softmax_rows(d.z_calib_all), h)
    t = _inclusion_mass(s_cal, y, values)        # y_i is covered whenever t_i ≤ τ
    hy = h[np.abs(y[:, None] - values[None, :]).argmin(axis=1)]
    n, big_b = len(y), float(h.max())
    budget = (n + 1) * alpha - big_b              # need Σ_i h(y_i)·1{t_i > τ} ≤ budget
    m = d.z_test.shape[0]
    if budget < 0:
        return Bounds(np.full(m, d.lo), np.full(m, d.hi), INF_REASON)
    order = np.argsort(t)
    ts, hs = t[order], hy[order]
    # A miss at τ needs t_i > τ, so L̃_i(τ) = h(y_i)·1{t_i > τ} ≥ L_i(τ) is a monotone loss that CRC controls.
    total = float(hs.sum())
    cum = np.concatenate([[0.0], np.cumsum(hs)])
    lost = total - cum[np.searchsorted(ts, ts, side="right")]
    ok = lost <= budget + 1e-12
    tau = 0.0 if total <= budget + 1e-12 else float(ts[np.flatnonzero(ok)[0]])
    lo, up = _sets_at(_weighted(softmax_rows(d.z_test), h), tau, values)
    return Bounds(lo, up)
