"""Shared pieces of the nine methods: the split data, the conformal quantile, a small numpy MLP, bins.

**Which data trains the learned models** (the paper does not say; notes §2.2). The paper splits items 50/50 into a
calibration half and a test half. A learned model fitted on the same points it is calibrated on breaks
exchangeability between calibration and test scores, so the guarantee is lost. The statistically valid reading used
here: the calibration half is split again (in its permutation order) into a *fit* part that trains the quantile
regressors / networks / kernels / boosting, and a *conformal* part (the rest) that computes the scores and q̂. The
fit part is 80% by default (at least min(50, m/2) items left to calibrate on; ``study.fit_size``, measured there). Ordinal methods learn nothing, so they calibrate on the whole calibration half.

**Conformal quantile.** q̂ is the ⌈(n+1)(1−α)⌉-th smallest of the n calibration scores (the notes: the paper prints
[·], ⌊·⌋ and ⌈·⌉; the guarantee of Eq. 5 needs the ceiling). When ⌈(n+1)(1−α)⌉ > n, q̂ = +∞ (the interval is the
whole label range; reported with that reason). It is relgate's one conformal quantile,
:func:`relgate_tui.core.certification.quantile.conformal_quantile` (paper 004 Def. 6.6), imported here for the nine
methods.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from relgate_tui.core.certification.quantile import conformal_quantile

INF_REASON = "q̂ = ∞: too few calibration points for this α (⌈(n+1)(1−α)⌉ > n); the interval is the full scale"


@dataclass(frozen=True)
class SplitData:
    """One split: fit / conformal parts of the calibration half, the test features, and the label range."""

    z_fit: np.ndarray
    y_fit: np.ndarray
    z_cal: np.ndarray
    y_cal: np.ndarray
    z_test: np.ndarray
    scale: np.ndarray    # the K scale values behind the columns of z (e.g. 1..5)
    lo: float            # smallest admissible label
    hi: float            # largest admissible label
    label_step: float | None = None   # the label grid's step (regular grids), for label-aligned bins

    @property
    def z_calib_all(self) -> np.ndarray:
        return np.vstack([self.z_fit, self.z_cal])

    @property
    def y_calib_all(self) -> np.ndarray:
        return np.concatenate([self.y_fit, self.y_cal])


@dataclass(frozen=True)
class Bounds:
    """One method's intervals on the test points, and a reason when they degenerate (q̂ = ∞)."""

    lower: np.ndarray
    upper: np.ndarray
    reason: str | None = None


def lower_conformal_quantile(scores: np.ndarray, alpha: float) -> float:
    """The ⌊(n+1)α⌋-th smallest score (for "larger is more conforming" scores), −∞ when that rank is 0.

    P(s_test ≥ this) ≥ 1 − α under exchangeability: it is the conformal quantile of −s, negated — the
    (n+1−⌈(n+1)(1−α)⌉) = ⌊(n+1)α⌋-th smallest of s, −∞ when ⌈(n+1)(1−α)⌉ > n.
    """
    return -conformal_quantile(-np.asarray(scores, dtype=float), alpha)


def single_thread() -> Any:
    """A context limiting BLAS and OpenMP to one thread. The matrices here are small: extra threads only oversubscribe
    a shared machine (LVD ran ten times slower, HistGradientBoosting six). threadpoolctl limits only the libraries
    loaded when its controller looks for them, so scikit-learn's OpenMP runtime is loaded first; the controller is
    made once (finding the libraries costs milliseconds: ``threadpool_limits`` per call was a tenth of a small fit).
    """
    global _CONTROLLER
    import contextlib

    import sklearn.ensemble  # noqa: F401  (loads libgomp before the libraries are looked for)

    if _CONTROLLER is None:
        try:   # threadpoolctl ships with scikit-learn (its dependency); without it, run unlimited
            from threadpoolctl import ThreadpoolController
        except ImportError:
            return contextlib.nullcontext()
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1)


_CONTROLLER: Any = None


def quantile_gbm(q: float | None, seed: int, *, max_iter: int = 40) -> Any:
    """Gradient-boosted regression (pinball loss at level ``q``, squared error when None); small trees, no early stop."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    if q is None:
        return HistGradientBoostingRegressor(max_iter=max_iter, max_depth=3, learning_rate=0.2, min_samples_leaf=5,
                                             early_stopping=False, random_state=seed)
    return HistGradientBoostingRegressor(loss="quantile", quantile=q, max_iter=max_iter, max_depth=3,
                                         learning_rate=0.2, min_samples_leaf=20, early_stopping=False,
                                         random_state=seed)


def standardizer(z: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    mu = z.mean(axis=0)
    sd = z.std(axis=0)
    sd = np.where(sd > 1e-9, sd, 1.0)
    return lambda x: (np.asarray(x, dtype=float) - mu) / sd


def bin_edges(lo: float, hi: float, n_bins: int) -> np.ndarray:
    return np.linspace(lo, hi, n_bins + 1)


def bin_index(y: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The bin holding each y (the last bin is closed on the right)."""
    return np.clip(np.searchsorted(edges, y, side="right") - 1, 0, len(edges) - 2)


# ---- a small MLP in numpy (full-batch Adam), shared by CHR, LVD and R2CCP -------------------------------------


@dataclass
class MLP:
    """x → ReLU(x W1 + b1) → ReLU(· W2 + b2) → · W3 + b3 (two hidden layers)."""

    params: list[np.ndarray]

    def hidden(self, x: np.ndarray) -> np.ndarray:
        w1, b1, w2, b2 = self.params[:4]
        h1 = np.maximum(x @ w1 + b1, 0.0)
        return np.maximum(h1 @ w2 + b2, 0.0)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.hidden(x) @ self.params[4] + self.params[5]


def train_mlp(x: np.ndarray, out_dim: int, grad_out: Callable[[np.ndarray], np.ndarray], *, hidden: int = 64,
              epochs: int = 300, lr: float = 5e-3, weight_decay: float = 1e-4, seed: int = 0) -> MLP:
    """Fit an MLP by full-batch Adam; ``grad_out(outputs)`` returns ∂loss/∂outputs (mean loss over rows)."""
    rng = np.random.default_rng(seed)
    d = x.shape[1]

    def init(fan_in: int, fan_out: int) -> np.ndarray:
        return rng.normal(0.0, math.sqrt(2.0 / fan_in), size=(fan_in, fan_out))

    params = [init(d, hidden), np.zeros(hidden), init(hidden, hidden), np.zeros(hidden),
              init(hidden, out_dim) * 0.1, np.zeros(out_dim)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    b1, b2, eps = 0.9, 0.999, 1e-8
    for t in range(1, epochs + 1):
        w1, bb1, w2, bb2, w3, bb3 = params
        a1 = x @ w1 + bb1
        h1 = np.maximum(a1, 0.0)
        a2 = h1 @ w2 + bb2
        h2 = np.maximum(a2, 0.0)
        out = h2 @ w3 + bb3
        g_out = grad_out(out)
        g_w3 = h2.T @ g_out
        g_b3 = g_out.sum(axis=0)
        g_h2 = g_out @ w3.T
        g_a2 = g_h2 * (a2 > 0)
        g_w2 = h1.T @ g_a2
        g_b2 = g_a2.sum(axis=0)
        g_h1 = g_a2 @ w2.T
        g_a1 = g_h1 * (a1 > 0)
        g_w1 = x.T @ g_a1
        g_b1 = g_a1.sum(axis=0)
        grads = [g_w1 + weight_decay * w1, g_b1, g_w2 + weight_decay * w2, g_b2, g_w3 + weight_decay * w3, g_b3]
        for i, g in enumerate(grads):
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            mh = m[i] / (1 - b1 ** t)
            vh = v[i] / (1 - b2 ** t)
            params[i] = params[i] - lr * mh / (np.sqrt(vh) + eps)
    return MLP(params)


def softmax(a: np.ndarray) -> np.ndarray:
    a = a - a.max(axis=1, keepdims=True)
    e = np.exp(a)
    return e / e.sum(axis=1, keepdims=True)


def histogram_net(x: np.ndarray, bins: np.ndarray, n_bins: int, *, seed: int, epochs: int = 300,
                  label_smoothing: float = 0.05) -> MLP:
    """A softmax-over-bins network trained by cross-entropy (a conditional histogram estimator P(Y ∈ bin_j | z))."""
    n = x.shape[0]
    target = np.full((n, n_bins), label_smoothing / n_bins)
    target[np.arange(n), bins] += 1.0 - label_smoothing

    def grad(out: np.ndarray) -> np.ndarray:
        return (softmax(out) - target) / n

    return train_mlp(x, n_bins, grad, seed=seed, epochs=epochs)
