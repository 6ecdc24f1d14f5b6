"""LVD — locally valid and discriminative intervals (Lin, Trivedi & Sun 2021) on z (paper Eqs. 31–33).

The authors' recipe: a DNN point predictor ŷ; a kernel learned by metric learning for kernel regression (MLKR,
Weinberger & Tesauro 2007) on the DNN's last hidden layer (``KernelMLKR(d=10)``); calibration residuals
R_i = |y_i − ŷ(z_i)| weighted by K(z_i, z_test), with the test point itself carrying weight K(z, z) = 1 at +∞.
"""

from __future__ import annotations

import numpy as np

from .base import INF_REASON, Bounds, SplitData, standardizer, train_mlp

MLKR_DIM = 10
MLKR_ITERS = 60
MLKR_MAX_POINTS = 300   # MLKR learns the metric on at most this many fit points (O(n²) per step)


def _mlkr(h: np.ndarray, y: np.ndarray, *, dim: int, seed: int) -> np.ndarray:
    """A (dim × p) minimising the leave-one-out kernel-regression error Σ_i (y_i − Σ_{j≠i} k_ij y_j)², k ∝ e^{−‖A(h_i−h_j)‖²}."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(seed)
    n, p = h.shape
    a0 = rng.normal(size=(dim, p)) / np.sqrt(p)
    proj = h @ a0.T
    d0 = ((proj[:, None, :] - proj[None, :, :]) ** 2).sum(-1)
    med = float(np.median(d0[d0 > 0])) if np.any(d0 > 0) else 1.0
    a0 = a0 / np.sqrt(max(med, 1e-12))

    def fun(flat: np.ndarray) -> tuple[float, np.ndarray]:
        a = flat.reshape(dim, p)
        z = h @ a.T
        sq = (z * z).sum(1)
        dist = np.maximum(sq[:, None] + sq[None, :] - 2 * z @ z.T, 0.0)
        kmat = np.exp(-dist)
        np.fill_diagonal(kmat, 0.0)
        rs = kmat.sum(1, keepdims=True) + 1e-300
        k = kmat / rs
        yhat = k @ y
        e = yhat - y
        loss = float(e @ e)
        w = -2.0 * e[:, None] * k * (y[None, :] - yhat[:, None])   # ∂L/∂D_ij
        ws = w + w.T
        grad = 2.0 * a @ (h.T @ (ws.sum(1)[:, None] * h - ws @ h))
        return loss, grad.ravel()

    res = minimize(fun, a0.ravel(), jac=True, method="L-BFGS-B", options={"maxiter": MLKR_ITERS})
    return np.asarray(res.x).reshape(dim, p)


def _widen(e: np.ndarray, *, n_cal: int, alpha: float) -> float:
    """A factor c ≤ 1 for the learned metric so that a typical point has ≥ 2(1−α)/α effective calibration
    neighbours (5th percentile over the *fit* points of (n_cal/n_fit)·Σ_j e^{−c²‖e_i−e_j‖²}). MLKR's leave-one-out objective
    can choose a kernel so narrow that the test point's own weight exceeds α and every q̂(z) is +∞; widening with
    the fit points only keeps the calibration points untouched.
    """
    sq = (e * e).sum(1)
    dist = np.maximum(sq[:, None] + sq[None, :] - 2 * e @ e.T, 0.0)
    np.fill_diagonal(dist, np.inf)
    need = 2.0 * (1.0 - alpha) / alpha
    ratio = n_cal / max(e.shape[0] - 1, 1)

    def neighbours(c: float) -> float:   # the 5th percentile over fit points, so ~95% of items get a finite q̂
        return float(np.quantile(np.exp(-(c * c) * dist).sum(1), 0.05)) * ratio

    if neighbours(1.0) >= need:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(30):
        mid = (lo + hi) / 2
        if neighbours(mid) >= need:
            lo = mid
        else:
            hi = mid
    return lo if lo > 0 else 1e-3


def lvd(d: SplitData, alpha: float, seed: int) -> Bounds:
    """LVD. Score s_i = |y_i − ŷ(z_i)| (Eq. 2); weights w_i(z) = K_f(z_i, z) / (Σ_j K_f(z_j, z) + 1) with the test
    point's own weight 1 placed at +∞ (as in Lin et al.; the paper's Eq. 31 omits it); q̂(z) = inf{s : Σ_i w_i(z)
    1{s_i ≤ s} ≥ 1 − α} (Eq. 32), +∞ when the calibration weight never reaches 1 − α; C(z) = ŷ(z) ± q̂(z) (Eq. 33).

    Guarantee (as its authors state it): asymptotic local (conditional) coverage as the kernel narrows, and marginal
    coverage ≥ 1 − α in the limit of a flat kernel (then it is split conformal). In finite samples with a learned
    kernel marginal coverage is approximate, not guaranteed; the simulation test checks it empirically.
    """
    std = standardizer(d.z_fit)
    x_fit = std(d.z_fit)
    y_mean = float(d.y_fit.mean())
    n_fit = x_fit.shape[0]

    def grad(out: np.ndarray) -> np.ndarray:
        return 2.0 * (out - (d.y_fit[:, None] - y_mean)) / n_fit

    net = train_mlp(x_fit, 1, grad, seed=seed, epochs=300, hidden=32)
    h_fit = net.hidden(x_fit)
    sub = slice(0, MLKR_MAX_POINTS)
    a = _mlkr(h_fit[sub], d.y_fit[sub] - y_mean, dim=MLKR_DIM, seed=seed)
    a = a * _widen(h_fit[sub] @ a.T, n_cal=d.z_cal.shape[0], alpha=alpha)
    x_cal, x_test = std(d.z_cal), std(d.z_test)
    r = np.abs(d.y_cal - (net.forward(x_cal)[:, 0] + y_mean))
    order = np.argsort(r)
    r_sorted = r[order]
    e_cal = net.hidden(x_cal) @ a.T
    e_test = net.hidden(x_test) @ a.T
    dist = ((e_test[:, None, :] - e_cal[None, :, :]) ** 2).sum(-1)
    w = np.exp(-dist)[:, order]
    cum = np.cumsum(w, axis=1) / (w.sum(axis=1, keepdims=True) + 1.0)
    reach = cum >= 1.0 - alpha - 1e-12
    has = reach.any(axis=1)
    idx = np.argmax(reach, axis=1)
    q = np.where(has, r_sorted[idx], np.inf)
    yhat = net.forward(x_test)[:, 0] + y_mean
    reason = None if has.all() else ("q̂(z) = ∞ for some items (too little kernel weight near them): "
                                     "their interval is the full scale")
    if not has.any():
        reason = INF_REASON
    return Bounds(yhat - q, yhat + q, reason)
