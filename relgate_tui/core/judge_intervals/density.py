"""Histogram-based methods on z: CHR (Sesia & Romano 2021) and R2CCP (Guha et al. 2024) (paper Eqs. 28–30, 35–36).

Both learn a conditional histogram P(Y ∈ bin_j | z) over J equal bins of [lo, hi] with a small numpy network
(``base.train_mlp``; no torch) on the *fit* part, then calibrate on the *conformal* part.
"""

from __future__ import annotations

import math

import numpy as np

from .base import (
    INF_REASON,
    Bounds,
    SplitData,
    bin_edges,
    bin_index,
    conformal_quantile,
    histogram_net,
    lower_conformal_quantile,
    softmax,
    standardizer,
    train_mlp,
)

CHR_BINS = 50      # at most; fewer when the fit part is small (J is not given in the paper)
R2CCP_BINS = 50
R2CCP_P = 0.5      # R2CCP loss exponent p (authors' default)
R2CCP_TAU = 0.2    # R2CCP entropy weight τ (authors' default)


# ---- CHR ------------------------------------------------------------------------------------------------------


def _nested_sequence(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row, the nested bin intervals [L_k, U_k] of k = 1..J bins and their masses M_k (M_J = 1).

    Built from the full range by peeling, one bin at a time, the end bin with the smaller mass — nested by
    construction, and equal to the shortest intervals of Eq. 28 for unimodal histograms.
    """
    n, j = p.shape
    lo = np.zeros(n, dtype=int)
    hi = np.full(n, j - 1)
    cum = np.concatenate([np.zeros((n, 1)), np.cumsum(p, axis=1)], axis=1)
    rows = np.arange(n)
    big_l = np.empty((n, j), dtype=int)
    big_u = np.empty((n, j), dtype=int)
    mass = np.empty((n, j))
    for k in range(j, 0, -1):
        big_l[:, k - 1], big_u[:, k - 1] = lo, hi
        mass[:, k - 1] = cum[rows, hi + 1] - cum[rows, lo]
        if k > 1:
            drop_low = p[rows, lo] <= p[rows, hi]
            lo = lo + drop_low
            hi = hi - (~drop_low)
    return big_l, big_u, mass


def chr_edges(d: SplitData) -> np.ndarray:
    """CHR's bins: label-aligned when the labels lie on a regular grid of at most CHR_BINS values (one bin per label,
    centred on it: edges halfway between labels, the outer ones clipped to [lo, hi]); else equal bins, ~8 fit points
    each, 10–50."""
    if d.label_step is not None and d.label_step > 0:
        g = int(round((d.hi - d.lo) / d.label_step)) + 1
        if 2 <= g <= CHR_BINS:
            inner = d.lo + d.label_step * (np.arange(1, g) - 0.5)
            return np.concatenate([[d.lo], inner, [d.hi]])
    return bin_edges(d.lo, d.hi, int(np.clip(d.z_fit.shape[0] // 8, 10, CHR_BINS)))


def chr_method(d: SplitData, alpha: float, seed: int) -> Bounds:
    """Conformal histogram regression with the randomised score of Sesia & Romano (2021, §2.3).

    For levels τ, C_τ(z) is the nested bin interval whose estimated mass first reaches τ (Eq. 28): C_1 ⊂ … ⊂ C_J, with
    masses M_1 ≤ … ≤ M_J = 1 (M_0 = 0). A label y first enters at k_y; the deterministic score of Eq. 29 is M_{k_y},
    which jumps by a whole bin's mass — with 13-valued labels (three-rater means) nearly every label sits at such a
    jump, and the set grows by whole bins: conservative, and 2–3× wider than need be. The randomised score is
    s = M_{k_y − 1} + U·(M_{k_y} − M_{k_y − 1}), U ~ Uniform(0, 1) (seeded). With t̂ the ⌈(n+1)(1−α)⌉-th smallest
    calibration score, a test point's set is C_{k−1} or C_k, where M_{k−1} < t̂ ≤ M_k, taking C_k with probability
    (t̂ − M_{k−1}) / (M_k − M_{k−1}): y is in the set exactly when its own randomised score is ≤ t̂.

    Guarantee: the randomised scores are exchangeable and continuous, so P(Y ∈ C(Z)) ≥ 1 − α (and ≤ 1 − α + 1/(n+1)):
    exact rather than conservative. This *is* the conformal calibration step (the paper's authors' code skipped it,
    hence their ~80% coverage).
    """
    std = standardizer(d.z_fit)
    edges = chr_edges(d)
    n_bins = len(edges) - 1
    net = histogram_net(std(d.z_fit), bin_index(d.y_fit, edges), n_bins, seed=seed)
    rng = np.random.default_rng([seed, 20_211])
    p_cal = softmax(net.forward(std(d.z_cal)))
    L, U, M = _nested_sequence(p_cal)
    b = bin_index(d.y_cal, edges)[:, None]
    contained = (L <= b) & (b <= U)
    k_y = np.argmax(contained, axis=1)   # nested: the first interval holding y (C_J holds every bin)
    rows = np.arange(len(k_y))
    m_hi = M[rows, k_y]
    m_lo = np.where(k_y > 0, M[rows, np.maximum(k_y - 1, 0)], 0.0)
    scores = m_lo + rng.uniform(size=len(k_y)) * (m_hi - m_lo)
    t = conformal_quantile(scores, alpha)
    if math.isinf(t):
        n = d.z_test.shape[0]
        return Bounds(np.full(n, d.lo), np.full(n, d.hi), INF_REASON)
    p_test = softmax(net.forward(std(d.z_test)))
    Lt, Ut, Mt = _nested_sequence(p_test)
    k = np.argmax(Mt >= t - 1e-12, axis=1)   # first (smallest) interval reaching t; M_J = 1 ≥ t always
    rows = np.arange(len(k))
    below = np.where(k > 0, Mt[rows, np.maximum(k - 1, 0)], 0.0)
    gap = Mt[rows, k] - below
    take = np.where(gap > 1e-12, (t - below) / np.where(gap > 1e-12, gap, 1.0), 1.0)
    k = np.where((k > 0) & (rng.uniform(size=len(k)) > take), k - 1, k)
    if _label_aligned(d, edges):   # one label per bin: the interval from the first to the last label it holds
        centres = d.lo + d.label_step * np.arange(n_bins)  # type: ignore[operator]
        return Bounds(centres[Lt[rows, k]], centres[Ut[rows, k]])
    return Bounds(edges[Lt[rows, k]], edges[Ut[rows, k] + 1])


def _label_aligned(d: SplitData, edges: np.ndarray) -> bool:
    return d.label_step is not None and len(edges) - 1 == int(round((d.hi - d.lo) / d.label_step)) + 1


# ---- R2CCP ----------------------------------------------------------------------------------------------------


def _density_knots(p: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knots (x, f) of the piecewise-linear density: f = p_j / width at bin midpoints, flat to the range ends."""
    width = np.diff(edges)
    mids = (edges[:-1] + edges[1:]) / 2
    x = np.concatenate([[edges[0]], mids, [edges[-1]]])
    dens = p / width[None, :]
    f = np.concatenate([dens[:, :1], dens, dens[:, -1:]], axis=1)
    return x, f


def _density_at(x: np.ndarray, f: np.ndarray, y: np.ndarray) -> np.ndarray:
    j = np.clip(np.searchsorted(x, y, side="right") - 1, 0, len(x) - 2)
    t = (y - x[j]) / (x[j + 1] - x[j])
    rows = np.arange(len(y))
    return f[rows, j] * (1 - t) + f[rows, j + 1] * t


def _superlevel_hull(x: np.ndarray, f: np.ndarray, q: float) -> tuple[np.ndarray, np.ndarray]:
    """[min, max] of {a : f(a) ≥ q} for each row, exactly (f piecewise linear); the argmax point when empty."""
    n, m = f.shape
    ok = f >= q
    any_ok = ok.any(axis=1)
    first = np.argmax(ok, axis=1)
    last = m - 1 - np.argmax(ok[:, ::-1], axis=1)
    rows = np.arange(n)

    def cross(i0: np.ndarray, i1: np.ndarray) -> np.ndarray:
        f0, f1 = f[rows, i0], f[rows, i1]
        denom = np.where(np.abs(f1 - f0) > 1e-15, f1 - f0, 1.0)
        t = np.clip((q - f0) / denom, 0.0, 1.0)
        return x[i0] + t * (x[i1] - x[i0])

    lower = np.where(first == 0, x[0], cross(np.maximum(first - 1, 0), first))
    upper = np.where(last == m - 1, x[-1], cross(np.minimum(last + 1, m - 1), last))
    peak = x[np.argmax(f, axis=1)]
    return np.where(any_ok, lower, peak), np.where(any_ok, upper, peak)


def r2ccp(d: SplitData, alpha: float, seed: int) -> Bounds:
    """R2CCP: regression as classification. A softmax network over J bins is trained with the authors' loss
    Σ_j |y − m_j|^p π_j(z) − τ·H(π(z)) (p = 0.5, τ = 0.2); the density f̂_z is the linear interpolation of π_j/width
    between bin midpoints (Eq. 35). Score s_i = f̂_{z_i}(y_i) (larger = more conforming); q̂ = the ⌊(n+1)α⌋-th
    smallest score (the finite-sample-corrected lower quantile; −∞ when that rank is 0); the set {a : f̂_z(a) ≥ q̂}
    (Eq. 36) is merged into one interval [min, max] as the paper does ({[1,1.35],[2.02,3.1]} → [1,3.1]).

    Guarantee: P(f̂_Z(Y) ≥ q̂) ≥ 1 − α, and merging only enlarges the set, so P(Y ∈ C(Z)) ≥ 1 − α.
    """
    std = standardizer(d.z_fit)
    edges = bin_edges(d.lo, d.hi, R2CCP_BINS)
    mids = (edges[:-1] + edges[1:]) / 2
    x_fit = std(d.z_fit)
    cost = np.abs(d.y_fit[:, None] - mids[None, :]) ** R2CCP_P
    n = x_fit.shape[0]

    def grad(out: np.ndarray) -> np.ndarray:
        pi = softmax(out)
        g_pi = cost + R2CCP_TAU * (np.log(pi + 1e-12) + 1.0)
        return pi * (g_pi - (pi * g_pi).sum(axis=1, keepdims=True)) / n

    net = train_mlp(x_fit, R2CCP_BINS, grad, seed=seed, epochs=300)
    xk, f_cal = _density_knots(softmax(net.forward(std(d.z_cal))), edges)
    scores = _density_at(xk, f_cal, d.y_cal)
    q = lower_conformal_quantile(scores, alpha)
    m = d.z_test.shape[0]
    if math.isinf(q):
        return Bounds(np.full(m, d.lo), np.full(m, d.hi), INF_REASON)
    _, f_test = _density_knots(softmax(net.forward(std(d.z_test))), edges)
    lower, upper = _superlevel_hull(xk, f_test, q)
    return Bounds(lower, upper)
