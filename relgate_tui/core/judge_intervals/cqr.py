"""Split CQR and asymmetric CQR (Romano, Patterson & Candès 2019) on the logit features z (paper Eqs. 24–27).

Both fit gradient-boosted quantile regressors (scikit-learn's histogram gradient boosting with the pinball loss, as
the paper's MAPIE gradient-boosting base model) on the *fit* part, then calibrate on the *conformal* part (see ``base``).
"""

from __future__ import annotations

import math

import numpy as np

from .base import INF_REASON, Bounds, SplitData, conformal_quantile


def _quantile_models(d: SplitData, levels: tuple[float, float], seed: int) -> tuple[np.ndarray, np.ndarray,
                                                                                      np.ndarray, np.ndarray]:
    from .base import quantile_gbm

    out = []
    z_both = np.vstack([d.z_cal, d.z_test])      # one predict call per model
    k = d.z_cal.shape[0]
    for q in levels:
        m = quantile_gbm(q, seed).fit(d.z_fit, d.y_fit)
        pred = m.predict(z_both)
        out.append((pred[:k], pred[k:]))
    (lo_cal, lo_test), (hi_cal, hi_test) = out
    # quantile crossing: order the pair (Romano et al. use the pair as given; sorting keeps the score well defined)
    lo_cal, hi_cal = np.minimum(lo_cal, hi_cal), np.maximum(lo_cal, hi_cal)
    lo_test, hi_test = np.minimum(lo_test, hi_test), np.maximum(lo_test, hi_test)
    return lo_cal, hi_cal, lo_test, hi_test


def cqr(d: SplitData, alpha: float, seed: int) -> Bounds:
    """Split CQR. Score s_i = max{q̂_{α/2}(z_i) − y_i, y_i − q̂_{1−α/2}(z_i)} (Eq. 24); Q = the ⌈(n+1)(1−α)⌉-th
    smallest score; C(z) = [q̂_{α/2}(z) − Q, q̂_{1−α/2}(z) + Q] (Eq. 25).

    Guarantee: P(Y ∈ C(Z)) ≥ 1 − α for an exchangeable test point (Romano et al. 2019, Thm 1), whatever the quality
    of the quantile regressors.
    """
    lo_cal, hi_cal, lo_test, hi_test = _quantile_models(d, (alpha / 2, 1 - alpha / 2), seed)
    s = np.maximum(lo_cal - d.y_cal, d.y_cal - hi_cal)
    q = conformal_quantile(s, alpha)
    return Bounds(lo_test - q, hi_test + q, INF_REASON if math.isinf(q) else None)


def asym_cqr(d: SplitData, alpha: float, seed: int) -> Bounds:
    """Asymmetric CQR (Romano et al. 2019 §4 / Sesia & Candès 2020). Scores s_i^ℓ = q̂_{α/2}(z_i) − y_i and
    s_i^u = y_i − q̂_{1−α/2}(z_i) (Eq. 26); Q_ℓ, Q_u = their ⌈(n+1)(1−α/2)⌉-th smallest; C(z) = [q̂_{α/2}(z) − Q_ℓ,
    q̂_{1−α/2}(z) + Q_u] (Eq. 27).

    The paper prints level α per side (notes §2.3); that bounds each tail by α, the total miscoverage only by 2α. The
    authors' definition uses α/2 per side, which is what is implemented. Guarantee: P(Y < lower) ≤ α/2 and
    P(Y > upper) ≤ α/2, so P(Y ∈ C) ≥ 1 − α (union bound).
    """
    lo_cal, hi_cal, lo_test, hi_test = _quantile_models(d, (alpha / 2, 1 - alpha / 2), seed)
    q_lo = conformal_quantile(lo_cal - d.y_cal, alpha / 2)
    q_hi = conformal_quantile(d.y_cal - hi_cal, alpha / 2)
    reason = INF_REASON if math.isinf(q_lo) or math.isinf(q_hi) else None
    return Bounds(lo_test - q_lo, hi_test + q_hi, reason)
