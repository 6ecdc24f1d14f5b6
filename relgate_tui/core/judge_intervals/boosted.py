"""Boosted conformal prediction for interval length (Xie, Barber & Candès 2024) on z (paper Eq. 34).

The authors boost the *components* of a baseline conformity score with gradient boosting on a differentiable
surrogate of the conformalized interval length, choose the number of rounds (≤ 500, learning rate 0.02) by held-out
length, and then run ordinary split conformal with the boosted score. Here:

- the (1−α) quantile inside the loss is smoothed with Harrell–Davis weights by rank (the authors use a smooth
  sorting operator; both make the quantile differentiable in every score);
- each round fits one depth-2 regression tree per component to the negative gradient (normalised to unit RMS);
- the fit part is split 75/25: boost on 75%, pick the round with the shortest conformalized length on 25%.

Because the last step is split conformal on points not used for boosting, the guarantee is exact whatever the
boosting did: P(Y ∈ C(Z)) ≥ 1 − α.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .base import INF_REASON, Bounds, SplitData, conformal_quantile

ROUNDS = 500
LEARNING_RATE = 0.02


def _hd_weights(n: int, alpha: float) -> np.ndarray:
    """Harrell–Davis weights of the sorted scores for the (1−α) quantile (sum to 1)."""
    from scipy.stats import beta

    p = 1.0 - alpha
    cdf = beta.cdf(np.arange(n + 1) / n, (n + 1) * p, (n + 1) * (1 - p))
    return np.diff(cdf)


def _smooth_q(s: np.ndarray, w_sorted: np.ndarray) -> tuple[float, np.ndarray]:
    """Q = Σ_k w_k s_(k) and ∂Q/∂s_i (the weight of i's rank)."""
    order = np.argsort(s)
    dq = np.empty_like(s)
    dq[order] = w_sorted
    return float(np.dot(w_sorted, s[order])), dq


def _boost(z_fit: np.ndarray, z_hold: np.ndarray, others: list[np.ndarray], init: list[np.ndarray],
           init_hold: list[np.ndarray], init_others: list[list[np.ndarray]],
           grad_fn: Callable[[list[np.ndarray]], list[np.ndarray]],
           length_fn: Callable[[list[np.ndarray]], float], seed: int) -> list[list[np.ndarray]]:
    """Gradient boosting of the score components; returns the components on ``others`` at the best round.

    The 2 × ``ROUNDS`` tiny trees spent most of their time in scikit-learn's checks, so: the features are converted
    once to what a tree works on anyway (C-contiguous float32), the per-fit checks are skipped when every feature is
    finite (``check_input=False``; ``skip_parameter_validation``), and one legacy ``RandomState`` is re-seeded with each
    tree's seed instead of a new one built (and seeded from OS entropy first) per tree. The trees are the same."""
    from sklearn import config_context
    from sklearn.tree import DecisionTreeRegressor

    comps = [c.copy() for c in init]
    hold = [c.copy() for c in init_hold]
    oth = [[c.copy() for c in cs] for cs in init_others]
    best_len = length_fn(hold)
    best = [[c.copy() for c in cs] for cs in oth]
    rng = np.random.default_rng(seed)
    z_all = np.vstack([z_fit, z_hold, *others])      # one predict call per tree
    check = not np.all(np.isfinite(z_all))           # missing values: the tree's own path for them
    x_fit = np.ascontiguousarray(z_fit, dtype=np.float32)
    x_all = np.ascontiguousarray(z_all, dtype=np.float32)
    tree_rs = np.random.RandomState(0)
    cuts = np.cumsum([len(z_fit), len(z_hold)] + [len(z) for z in others])[:-1]
    with config_context(skip_parameter_validation=True):
        for _ in range(ROUNDS):
            grads = grad_fn(comps)
            for c, g in enumerate(grads):
                rms = float(np.sqrt(np.mean(g * g)))
                if rms <= 0:
                    continue
                tree_rs.seed(int(rng.integers(1 << 30)))   # the state RandomState(that seed) would start in
                tree = DecisionTreeRegressor(max_depth=2, min_samples_leaf=10, random_state=tree_rs)
                tree.fit(x_fit, np.ascontiguousarray(-g / rms, dtype=np.float64), check_input=check)
                parts = np.split(LEARNING_RATE * tree.predict(x_all, check_input=check), cuts)
                comps[c] += parts[0]
                hold[c] += parts[1]
                for k in range(len(others)):
                    oth[k][c] += parts[2 + k]
            cur = length_fn(hold)
            if cur < best_len:
                best_len = cur
                best = [[c.copy() for c in cs] for cs in oth]
    return best


def _split_fit(d: SplitData) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    m = d.z_fit.shape[0]
    cut = max(2, int(round(0.75 * m)))
    return d.z_fit[:cut], d.y_fit[:cut], d.z_fit[cut:], d.y_fit[cut:]


def boosted_cqr(d: SplitData, alpha: float, seed: int) -> Bounds:
    """Boosted CQR (authors' ``len_cqr_boost``). Baseline score s⁰ = max{q_lo(z) − y, y − q_hi(z)} with gradient-
    boosted quantile regressors at α/2, 1−α/2; the components (q_lo, q_hi) are boosted to shorten the conformalized
    interval, mean(q_hi − q_lo) + 2Q; the boosted score s^T = max{q_lo^T(z) − y, y − q_hi^T(z)} is calibrated by
    split conformal (the ⌈(n+1)(1−α)⌉-th smallest); C(z) = [q_lo^T(z) − Q, q_hi^T(z) + Q]. (Eq. 34's s⁰ − g_T is
    the same boosting written on the score.) Guarantee: P(Y ∈ C(Z)) ≥ 1 − α.
    """
    from .base import quantile_gbm

    zf, yf, zh, yh = _split_fit(d)
    base = []
    for q in (alpha / 2, 1 - alpha / 2):
        m = quantile_gbm(q, seed).fit(zf, yf)
        base.append([m.predict(zf), m.predict(zh), m.predict(d.z_cal), m.predict(d.z_test)])
    w = _hd_weights(len(yf), alpha)
    n = len(yf)

    def grad_fn(c: list[np.ndarray]) -> list[np.ndarray]:
        lo, hi = c
        s = np.maximum(lo - yf, yf - hi)
        _, dq = _smooth_q(s, w)
        lo_side = (lo - yf) >= (yf - hi)
        return [-1.0 / n + 2 * dq * lo_side, 1.0 / n - 2 * dq * (~lo_side)]

    def length_fn(c: list[np.ndarray]) -> float:
        lo, hi = c
        q = conformal_quantile(np.maximum(lo - yh, yh - hi), alpha)
        return float(np.mean(hi - lo) + 2 * q) if math.isfinite(q) else math.inf

    (lo_c, hi_c), (lo_t, hi_t) = _boost(zf, zh, [d.z_cal, d.z_test], [base[0][0], base[1][0]],
                                        [base[0][1], base[1][1]], [[base[0][2], base[1][2]], [base[0][3], base[1][3]]],
                                        grad_fn, length_fn, seed)
    q = conformal_quantile(np.maximum(lo_c - d.y_cal, d.y_cal - hi_c), alpha)
    return Bounds(lo_t - q, hi_t + q, INF_REASON if math.isinf(q) else None)


def boosted_lcp(d: SplitData, alpha: float, seed: int) -> Bounds:
    """Boosted Local conformal (authors' ``len_local_boost``; the paper calls it "Boosted LCP"). Baseline score
    s⁰ = |y − μ(z)| / σ(z) with μ a gradient-boosted mean and σ a gradient-boosted fit of |y − μ|; (μ, log σ) are
    boosted to shorten the conformalized length 2Q·mean σ; the boosted score is calibrated by split conformal;
    C(z) = μ^T(z) ± Q·σ^T(z). Guarantee: P(Y ∈ C(Z)) ≥ 1 − α.
    """
    from .base import quantile_gbm

    zf, yf, zh, yh = _split_fit(d)
    mu_m = quantile_gbm(None, seed).fit(zf, yf)
    res = np.abs(yf - mu_m.predict(zf))
    sd_m = quantile_gbm(None, seed, max_iter=40).fit(zf, np.log(res + 0.1))
    sets = [zf, zh, d.z_cal, d.z_test]
    mus = [mu_m.predict(z) for z in sets]
    lss = [sd_m.predict(z) for z in sets]
    w = _hd_weights(len(yf), alpha)
    n = len(yf)

    def grad_fn(c: list[np.ndarray]) -> list[np.ndarray]:
        mu, ls = c
        sig = np.exp(ls)
        s = np.abs(yf - mu) / sig
        q, dq = _smooth_q(s, w)
        sbar = float(sig.mean())
        g_mu = 2 * sbar * dq * (-np.sign(yf - mu) / sig)
        g_ls = 2 * q * sig / n + 2 * sbar * dq * (-s)
        return [g_mu, g_ls]

    def length_fn(c: list[np.ndarray]) -> float:
        mu, ls = c
        sig = np.exp(ls)
        q = conformal_quantile(np.abs(yh - mu) / sig, alpha)
        return float(2 * q * sig.mean()) if math.isfinite(q) else math.inf

    (mu_c, ls_c), (mu_t, ls_t) = _boost(zf, zh, [d.z_cal, d.z_test], [mus[0], lss[0]], [mus[1], lss[1]],
                                        [[mus[2], lss[2]], [mus[3], lss[3]]], grad_fn, length_fn, seed)
    q = conformal_quantile(np.abs(d.y_cal - mu_c) / np.exp(ls_c), alpha)
    half = q * np.exp(ls_t)
    return Bounds(mu_t - half, mu_t + half, INF_REASON if math.isinf(q) else None)
