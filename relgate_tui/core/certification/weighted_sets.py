"""Weighted conformal prediction sets under covariate shift (paper 004 §10.3, eq. 10.2; SPEC §3.4).

When the deployment questions are drawn from a different distribution than the calibration questions — a covariate
shift, p_test(x) ≠ p_cal(x), while the model's behaviour given a question (its samples, hence the rank score) is
unchanged — the calibration scores are no longer exchangeable with a deployment item's score, and the plain M* can
under-cover. Given the likelihood ratio w(x) = p_test(x)/p_cal(x) of every item (the task file's ``weight``), the
weighted threshold of Tibshirani, Barber, Candès & Ramdas (2019, "Conformal prediction under covariate shift")
restores the guarantee. For a deployment item with weight w_{n+1} = w(x_{n+1}):

    p_i = w_i / (Σ_j w_j + w_{n+1})  (i ≤ n),   p_{n+1} = w_{n+1} / (Σ_j w_j + w_{n+1}),
    M*_w(x_{n+1}) = the (1 − α) quantile of  Σ_i p_i δ_{s_i} + p_{n+1} δ_{+∞}          (eq. 10.2)

and its weighted prediction set is the top-M*_w classes (every observed class when M*_w = ∞). Guarantee (their
Corollary 1, weighted exchangeability): if the calibration items are i.i.d. from p_cal, the deployment item is from
p_test, and w is the true likelihood ratio (known up to a constant factor), then P(covered) ≥ 1 − α under p_test.
Each deployment item gets its own M*_w because the mass on +∞ depends on its own weight: an item that is rare under
calibration (large w_{n+1}) gets a wider set, or M*_w = ∞ when the calibration mass cannot reach 1 − α.

The paper writes only "weighted quantile of s_1, …, s_n with weights w_i"; we use the version with the test point's
mass on +∞ above, because the quantile of the calibration scores alone (no p_{n+1}) is not valid in finite samples.
With equal weights M*_w equals the plain M* exactly (tested). The reported coverage counts the displayed weighted
sets on the deployment items that have a reference; it estimates coverage under p_test when the deployment items are
a sample from p_test.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from relgate_tui.core.certification.conformal import prediction_set, weighted_m_stars
from relgate_tui.core.certification.intervals import Proportion, wilson_proportion
from relgate_tui.core.certification.ranking import RankedClasses

__all__ = ["WeightedDeploymentItem", "WeightedItem", "WeightedConformal", "weighted_conformal", "weighted_json",
           "weighted_summary"]


@dataclass(frozen=True)
class WeightedDeploymentItem:
    """Input: one deployment item — its ranked classes, its likelihood ratio w_{n+1} and its rank score when it has a
    reference (None: unverified; +∞: no acceptable class observed)."""

    item_id: str
    ranked: RankedClasses
    weight: float
    score: float | None = None


@dataclass(frozen=True)
class WeightedItem:
    """Output per deployment item: M*_w at its own test weight (+∞ allowed), the top-M*_w set, and whether that set
    holds an acceptable answer (None without a reference)."""

    item_id: str
    weight: float
    m_star: float
    prediction_set: tuple[str, ...]
    covered: bool | None


@dataclass(frozen=True)
class WeightedConformal:
    """Weighted conformal results at α (eq. 10.2). ``effective_n_cal`` is Kish's (Σw)²/Σw² over the calibration
    weights: how many unweighted calibration items the weighted ones are worth (small = the shift is severe)."""

    alpha: float
    confidence: float
    n_cal: int
    effective_n_cal: float
    items: tuple[WeightedItem, ...]
    n_infinite: int
    share_infinite: float  # nan without deployment items
    average_set_size: float  # nan without deployment items
    coverage: Proportion | None  # None when no deployment item has a reference

    @property
    def m_star_frequencies(self) -> dict[float, int]:
        """How many deployment items got each M*_w (+∞ included), in increasing order."""
        return dict(sorted(Counter(it.m_star for it in self.items).items()))


def weighted_conformal(
    calibration_scores: ArrayLike,
    calibration_weights: ArrayLike,
    deployment: Sequence[WeightedDeploymentItem],
    alpha: float,
    confidence: float = 0.95,
) -> WeightedConformal:
    """Per deployment item, M*_w at its own test weight and its weighted prediction set; the share of items with
    M*_w = ∞, the mean set size and (with references) the coverage of the displayed sets with its Wilson interval.
    Calibration scores are rank scores (positive integers or +∞), one weight each; weights finite and ≥ 0."""
    scores = np.asarray(calibration_scores, dtype=np.float64).ravel()
    weights = np.asarray(calibration_weights, dtype=np.float64).ravel()
    tests = np.array([d.weight for d in deployment], dtype=np.float64)
    m = weighted_m_stars(scores, weights, alpha, tests)  # validates scores, weights and α
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    items = []
    hits = known = 0
    for d, ms in zip(deployment, m, strict=True):
        sset = prediction_set(d.ranked, float(ms))
        covered = None
        if d.score is not None:
            covered = bool(math.isfinite(d.score) and d.score <= ms)
            known += 1
            hits += covered
        items.append(WeightedItem(d.item_id, float(d.weight), float(ms), sset, covered))
    n_inf = int(np.count_nonzero(np.isinf(m)))
    sizes = [len(it.prediction_set) for it in items]
    ess = 0.0
    if weights.size and weights.max() > 0:
        u = weights / weights.max()  # scale-free, no overflow
        ess = float(u.sum()) ** 2 / float(np.square(u).sum())
    return WeightedConformal(
        alpha=float(alpha),
        confidence=float(confidence),
        n_cal=int(scores.size),
        effective_n_cal=float(ess),
        items=tuple(items),
        n_infinite=n_inf,
        share_infinite=n_inf / len(items) if items else math.nan,
        average_set_size=float(np.mean(sizes)) if sizes else math.nan,
        coverage=wilson_proportion(hits, known, confidence) if known else None,
    )


def weighted_json(wc: WeightedConformal | None) -> dict[str, Any] | None:
    """The results document's ``weighted_conformal`` block (null without weights); ∞/NaN → null."""
    from relgate_tui.core.jsonsafe import jsonable

    if wc is None:
        return None
    cov = wc.coverage
    return jsonable({
        "alpha": wc.alpha,
        "n_cal": wc.n_cal,
        "effective_n_cal": wc.effective_n_cal,
        "n_deployment": len(wc.items),
        "n_infinite": wc.n_infinite,
        "share_infinite": wc.share_infinite,
        "average_set_size": wc.average_set_size,
        "coverage": None if cov is None else {"estimate": cov.estimate, "lower": cov.lower, "upper": cov.upper,
                                              "successes": int(cov.successes), "n": cov.n, "confidence": wc.confidence},
        "m_star_frequencies": {("inf" if math.isinf(k) else str(int(k))): v for k, v in wc.m_star_frequencies.items()},
    })


def weighted_summary(wc: WeightedConformal) -> str:
    """One line for the Results screen."""
    freq = ", ".join(f"{'∞' if math.isinf(k) else int(k)}: {v}" for k, v in wc.m_star_frequencies.items())
    text = (f"weighted conformal (eq. 10.2, covariate shift): M*_w per item {{{freq}}}, "
            f"∞ for {wc.share_infinite:.0%}, avg size {wc.average_set_size:.2f}"
            if wc.items else "weighted conformal (eq. 10.2, covariate shift): no deployment items")
    if wc.coverage is not None:
        c = wc.coverage
        text += f", coverage {c.estimate:.1%} [{c.lower:.1%}, {c.upper:.1%}] on {c.n}"
    return text + f" (n_cal {wc.n_cal}, effective {wc.effective_n_cal:.1f})"
