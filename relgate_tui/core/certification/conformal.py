"""Conformal thresholds and prediction sets (paper 004 §6.3–6.5, §10.3, §11.8; SPEC §3.4).

The order statistic itself (k = ⌈(n+1)(1−α)⌉, +∞ when k > n, never clamped) lives in
:mod:`relgate_tui.core.certification.quantile`; this module builds on it:

* :func:`m_star` — M* of the rank score (Def. 6.6, eq. 6.3) and :func:`prediction_set` — the top-M* set (eq. 6.4);
* :func:`adaptive_threshold` / :func:`adaptive_prediction_set` — the cumulative-score sets of eq. 6.7;
* :func:`weighted_m_star` — the weighted quantile of eq. 10.2 (covariate shift), and :func:`weighted_m_stars` — the
  same at many test weights at once;
* :func:`lac_prediction_set`, :func:`aps_prediction_set` — the comparison scores of §11.8;
* :func:`calibration_message` — the user-facing reason when M* is infinite.

Prediction sets only ever contain observed, non-INVALID classes, listed in rank order.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from relgate_tui.core.certification.quantile import conformal_quantile, conformal_rank, min_calibration_size
from relgate_tui.core.certification.ranking import RankedClasses

__all__ = [
    "m_star",
    "prediction_set",
    "adaptive_threshold",
    "adaptive_prediction_set",
    "weighted_m_star",
    "weighted_m_stars",
    "lac_prediction_set",
    "aps_prediction_set",
    "calibration_message",
]


def _scores_array(scores: ArrayLike) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64).ravel()
    if np.isnan(s).any():
        raise ValueError("scores must not contain NaN (use +inf for 'no acceptable answer')")
    return s


def m_star(scores: ArrayLike, alpha: float) -> float:
    """M* = the k-th smallest calibration rank score, k = ⌈(n+1)(1−α)⌉; +∞ when k > n or when that score is +∞
    (Def. 6.6). A thin validating wrapper around :func:`~relgate_tui.core.certification.quantile.conformal_quantile`."""
    return conformal_quantile(_scores_array(scores), alpha)


def prediction_set(ranked: RankedClasses, m_star: float) -> tuple[str, ...]:
    """Top-M* set (eq. 5.1/6.4): the first M* ranked classes; every observed class when M* = ∞ or M* exceeds the
    number of classes (the trivial set). M* must be a positive integer value or +∞."""
    if m_star == math.inf:
        return ranked.classes
    if math.isnan(m_star) or m_star < 1 or m_star != math.floor(m_star):
        raise ValueError(f"M* must be a positive integer or infinity, got {m_star!r}")
    return ranked.classes[: int(m_star)]


def adaptive_threshold(cp_scores: ArrayLike, alpha: float) -> float:
    """q̂_{1−α}^{CP}: the conformal quantile (same k rule) of calibration cumulative-probability scores (eq. 6.2)."""
    return conformal_quantile(_scores_array(cp_scores), alpha)


def adaptive_prediction_set(ranked: RankedClasses, q: float) -> tuple[str, ...]:
    """Adaptive set (eq. 6.7): ``{c_(1), …, c_(R)}`` with ``R = min{r : Σ_{j≤r} P̂(c_(j)) ≥ q}``; every observed class
    when no r reaches q (q = ∞, or q above the total valid share because of INVALID samples).

    Coverage law (tested): an item whose acceptable class has cumulative score ``s_cp ≤ q`` is always covered,
    because cumulative shares strictly increase with r.
    """
    if math.isnan(q):
        raise ValueError("q must not be NaN")
    for r, cum in enumerate(ranked.cumulative_shares, start=1):
        if cum >= q:
            return ranked.classes[:r]
    return ranked.classes


def weighted_m_star(
    scores: ArrayLike,
    weights: ArrayLike,
    alpha: float,
    test_weight: float = 1.0,
) -> float:
    """Weighted conformal threshold M*_w (eq. 10.2; Tibshirani, Barber, Candès & Ramdas 2019).

    With calibration weights w_i ∝ p_test(x_i)/p_cal(x_i) and the test point's weight w_{n+1} (``test_weight``;
    the likelihood ratio at the test input, 1.0 when unknown), put mass ``p_i = w_i / (Σ_j w_j + w_{n+1})`` on each
    calibration score and the remaining mass ``p_{n+1}`` on +∞. M*_w is the smallest score s with
    ``Σ_{i: s_i ≤ s} p_i ≥ 1 − α``, and +∞ when the calibration mass never reaches 1 − α.

    With equal weights and ``test_weight`` equal to them this is exactly :func:`m_star` (same floating guard).
    """
    s = _scores_array(scores)
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != s.shape:
        raise ValueError(f"weights must have one entry per score ({s.size}), got {w.size}")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise ValueError("weights must be finite and non-negative")
    if not (math.isfinite(test_weight) and test_weight >= 0):
        raise ValueError("test_weight must be finite and non-negative")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be in (0, 1)")
    if float(w.sum()) + test_weight <= 0:
        raise ValueError("the weights must not all be zero")
    return float(weighted_m_stars(s, w, alpha, [test_weight])[0])


def weighted_m_stars(scores: ArrayLike, weights: ArrayLike, alpha: float, test_weights: ArrayLike) -> np.ndarray:
    """:func:`weighted_m_star` (eq. 10.2) at each of ``test_weights`` — one M*_w per deployment item, each at its
    own w_{n+1} — sorting the calibration scores once. +∞ where the calibration mass never reaches 1 − α, and
    where every weight (calibration and that test weight) is zero (no calibration information: no finite set).

    The weighted quantile is invariant to rescaling all weights, so they are first divided by the largest one (no
    overflow, whatever finite weights are given; equal weights become exactly 1.0), then rescaled so the total mass
    is n + 1: with equal weights and an equal test weight every mass is exactly 1.0 and the threshold below is the
    same expression (and the same 1e-9 guard) as conformal_rank's k = ⌈(n+1)(1−α) − 1e-9⌉, so M*_w = M* exactly.
    """
    s = _scores_array(scores)
    w = np.asarray(weights, dtype=np.float64).ravel()
    t = np.asarray(test_weights, dtype=np.float64).ravel()
    if w.shape != s.shape:
        raise ValueError(f"weights must have one entry per score ({s.size}), got {w.size}")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise ValueError("weights must be finite and non-negative")
    if not (np.all(np.isfinite(t)) and np.all(t >= 0)):
        raise ValueError("test weights must be finite and non-negative")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be in (0, 1)")
    out = np.full(t.size, math.inf)
    n = s.size
    if n == 0 or t.size == 0:
        return out
    order = np.argsort(s, kind="stable")
    ss = s[order]
    top = max(float(w.max()), float(t.max()))
    if top <= 0:
        return out
    ws = w[order] / top
    w_sum = float(ws.sum())
    unique, inverse = np.unique(t / top, return_inverse=True)
    needed = (n + 1) * (1.0 - alpha) - 1e-9
    found = np.full(unique.size, n, dtype=np.int64)  # index of M*_w in ss; n = +∞
    rows = max(1, (1 << 20) // n)  # bound the temporary (rows × n) matrix
    for start in range(0, unique.size, rows):
        total = w_sum + unique[start:start + rows]
        ok = total > 0
        with np.errstate(over="ignore"):
            scale = np.where(ok, (n + 1) / np.where(ok, total, 1.0), 0.0)
        tiny = ~np.isfinite(scale)  # a subnormal total: this row's masses are all tiny beside the largest weight
        scale[tiny] = 0.0
        cum = np.cumsum(ws[None, :] * scale[:, None], axis=1)
        found[start:start + rows] = np.where(ok, (cum < needed).sum(axis=1), n)  # cum is non-decreasing
        for r in np.flatnonzero(tiny):  # rescale such a row by its own largest weight instead (its total is ≥ 1)
            u = unique[start + r] * top
            row_top = max(float(w.max()), u)
            wr = w[order] / row_top
            cum_r = np.cumsum(wr * ((n + 1) / (float(wr.sum()) + u / row_top)))
            found[start + r] = int((cum_r < needed).sum())
    idx = found[inverse]
    finite = idx < n
    out[finite] = ss[idx[finite]]
    return out


def lac_prediction_set(ranked: RankedClasses, tau: float) -> tuple[str, ...]:
    """LAC set (§11.8): the observed classes with ``1 − P̂(c) ≤ τ``, in rank order (a top-R set, since shares are
    non-increasing in rank). τ is the conformal quantile of calibration LAC scores."""
    if math.isnan(tau):
        raise ValueError("tau must not be NaN")
    k = ranked.n_samples
    return tuple(c for c, n in zip(ranked.classes, ranked.counts, strict=False) if 1.0 - n / k <= tau)


def aps_prediction_set(ranked: RankedClasses, tau: float, u: float) -> tuple[str, ...]:
    """Randomized APS set (§11.8): the classes whose APS score ``Σ_{j<r} P̂(c_(j)) + u·P̂(c_(r))`` is ≤ τ (one
    uniform u per test item). Computed with exactly the arithmetic of :func:`~relgate_tui.core.certification.scores.aps_score`,
    so ``aps_score ≤ τ ⇔ class in set``."""
    if math.isnan(tau):
        raise ValueError("tau must not be NaN")
    if not 0.0 <= u <= 1.0:
        raise ValueError("u must be in [0, 1]")
    k = ranked.n_samples
    out, before = [], 0
    for c, n in zip(ranked.classes, ranked.counts, strict=False):
        if before / k + u * n / k <= tau:
            out.append(c)
        else:
            break  # the score is non-decreasing in rank
        before += n
    return tuple(out)


def calibration_message(n: int, alpha: float, n_infinite: int = 0) -> str | None:
    """Why M* is infinite at this α, in one line for the user, or None when M* is finite.

    * k > n: "not enough calibration items: need n ≥ ⌈1/α⌉−1 (have n)" (SPEC §3.4);
    * otherwise, when at least n − k + 1 of the scores are +∞ (``n_infinite``), the k-th smallest score is +∞:
      too many items have no acceptable answer among the observed classes (paper Thm 7.5(3)).
    """
    k = conformal_rank(n, alpha)
    if k > n:
        return f"not enough calibration items: need n ≥ {min_calibration_size(alpha)} (have {n})"
    if not 0 <= n_infinite <= n:
        raise ValueError("n_infinite must be in [0, n]")
    if n_infinite > n - k:
        return (
            f"M* = ∞: {n_infinite} of {n} calibration items have no acceptable answer among the samples; "
            f"a finite M* at α = {alpha:g} allows at most {n - k}"
        )
    return None
