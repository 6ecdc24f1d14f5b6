"""The split-conformal order statistic (paper 004 Def. 6.6), shared by every conformal procedure in relgate.

With n calibration scores and miscoverage level α, let ``k = ⌈(n+1)(1−α)⌉``. The threshold is the k-th smallest
score; **if k > n the threshold is +∞** (the trivial set). k is never clamped to n (SPEC §3.4, §9).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike


def conformal_rank(n: int, alpha: float) -> int:
    """k = ⌈(n+1)(1−α)⌉ (paper 004 Def. 6.6). Computed with a small guard so that e.g. (n+1)(1−α) = 46.0 in exact
    arithmetic is not pushed to 47 by floating-point error."""
    if n < 0:
        raise ValueError("n must be >= 0")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be in (0, 1)")
    x = (n + 1) * (1.0 - alpha)
    return max(1, math.ceil(x - 1e-9))


def min_calibration_size(alpha: float) -> int:
    """Smallest n with k ≤ n, i.e. ⌈(n+1)(1−α)⌉ ≤ n ⇔ n ≥ ⌈1/α⌉ − 1 (up to the same floating guard)."""
    n = 0
    while conformal_rank(n, alpha) > n:
        n += 1
    return n


def conformal_quantile(scores: ArrayLike, alpha: float) -> float:
    """The k-th smallest of ``scores`` (k = ⌈(n+1)(1−α)⌉), or +∞ when k > n. Scores may contain +∞."""
    s = np.asarray(scores, dtype=np.float64).ravel()
    n = s.size
    k = conformal_rank(n, alpha)
    if k > n:
        return math.inf
    return float(np.partition(s, k - 1)[k - 1])
