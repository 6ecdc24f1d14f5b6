"""A *simulated* judge's score-token log-probabilities, for tests and benchmarks only (never presented as real).

Each item has a latent quality q ∈ [1, 5]. Human labels: the mean of ``raters`` integer ratings round(q + noise)
(``raters=3`` gives the SummEval-style 1/3 grid, ``raters=1`` integers). The judge sees q with its own error (larger
for mid-scale items: heteroscedastic, as the paper's Table 4 finds), and puts log-probabilities
−β·(k − q̃)² (normalised) on the K rating tokens. Items are i.i.d., hence exchangeable.
"""

from __future__ import annotations

import numpy as np


def simulate(n: int, *, seed: int = 0, k: int = 5, raters: int = 3, beta: float = 1.5,
             judge_noise: float = 0.6, rater_noise: float = 0.7,
             quality: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(z log-probs n × k, human labels, the judge's raw score argmax) for ``n`` simulated items."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(1, k, size=n) if quality is None else np.asarray(quality, dtype=float)
    r = np.clip(np.rint(q[:, None] + rng.normal(0, rater_noise, size=(n, raters))), 1, k)
    y = r.mean(axis=1)
    mid = 1 - np.abs(q - (k + 1) / 2) / ((k - 1) / 2)            # 1 at mid-scale, 0 at the ends
    q_judge = q + 0.3 + rng.normal(0, judge_noise * (0.5 + mid), size=n)  # biased upward, noisier mid-scale
    vals = np.arange(1, k + 1)
    logits = -beta * (vals[None, :] - q_judge[:, None]) ** 2 + rng.normal(0, 0.3, size=(n, k))
    z = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
    return z, y, vals[np.argmax(z, axis=1)].astype(float)
