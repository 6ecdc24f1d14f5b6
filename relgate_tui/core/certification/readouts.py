"""On-demand readouts of a certification (SPEC §3.6, issue 11 §4): bootstrap intervals, split stability, and the
JSON block that shows them with the gate, the worst-case level and the no-guarantee flag.

* :func:`bootstrap_summary` — seeded percentile bootstrap (B = 10,000, paper §11.1) of the mean prediction-set size
  and of the mean samples used per item.
* :func:`split_stability` — M*, coverage and reliability over 100 seeded random calibration/test splits (Table 4).
* :func:`readout_json` — the document block (``gate``, ``worst_case``, ``prediction_sets``, ``bootstrap``,
  ``split_stability``) the engine adds to its JSON and the report renders.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from relgate_tui.core.certification.base import m_star_sorted, readonly, validated_scores
from relgate_tui.core.certification.intervals import Interval, bootstrap_ci
from relgate_tui.core.certification.quantile import conformal_rank

if TYPE_CHECKING:
    from relgate_tui.core.certification.certify import CertificationInput, CertificationResult

__all__ = ["BootstrapSummary", "SplitStability", "bootstrap_summary", "split_permutations", "split_stability",
           "readout_json"]


# --------------------------------------------------------------------------------------------------------- bootstrap
@dataclass(frozen=True)
class BootstrapSummary:
    """Percentile-bootstrap intervals (SPEC §3.6) for the mean prediction-set size of the deployment items at α
    (M* held fixed; deployment items resampled) and for the mean samples used per item (all items). None when
    there is nothing to resample."""

    set_size: Interval | None
    samples_used: Interval | None
    n_boot: int
    seed: int


def bootstrap_summary(
    inp: CertificationInput,
    alpha: float,
    n_boot: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapSummary:
    """Seeded percentile bootstrap (paper §11.1: B = 10,000) of the average set size and of samples used."""

    _, m_star = m_star_sorted(inp.calibration_scores, alpha)
    ncls = inp.deployment_n_classes
    set_size = used = None
    if ncls.size:
        sizes = np.minimum(ncls, m_star).astype(np.float64)
        lo, hi = bootstrap_ci(sizes, np.mean, n_boot, confidence, seed)
        set_size = Interval(float(sizes.mean()), lo, hi, confidence)
    if inp.samples_used.size:
        s = inp.samples_used.astype(np.float64)
        lo, hi = bootstrap_ci(s, np.mean, n_boot, confidence, seed + 1)
        used = Interval(float(s.mean()), lo, hi, confidence)
    return BootstrapSummary(set_size, used, n_boot, seed)


# --------------------------------------------------------------------------------------------------- split stability
@dataclass(frozen=True, eq=False)
class SplitStability:
    """M*, coverage and reliability level over random calibration/test splits (paper Table 4).

    Means and standard deviations are over splits, population sd (ddof = 0, which reproduces the paper's
    ``1.18 ± 0.38`` for 82%/18% of M* = 1/2). When some split has M* = ∞, ``m_star_mean`` is ∞ and
    ``m_star_sd`` nan; ``m_star_frequencies`` gives the distribution of M* over splits.
    """

    n_splits: int
    n_cal: int
    n_test: int
    alpha: float
    seed: int
    m_star_values: np.ndarray
    coverage_values: np.ndarray
    reliability_values: np.ndarray
    m_star_mean: float
    m_star_sd: float
    coverage_mean: float
    coverage_sd: float
    reliability_mean: float
    reliability_sd: float
    m_star_frequencies: dict[float, float]


def split_permutations(n_items: int, n_splits: int, seed: int, item_ids: Sequence[str] | None = None) -> np.ndarray:
    """``n_splits`` seeded permutations of item positions, shape (n_splits, n_items).

    With ``item_ids`` the permutations act on the items *sorted by id*, so a split is a function of the id set and
    the seed only — never of file order (SPEC §3.6). Without ids the caller's order is used as given.
    """
    base = np.arange(n_items)
    if item_ids is not None:
        names = [str(i) for i in item_ids]
        if len(names) != n_items:
            raise ValueError(f"item_ids must have one entry per item ({n_items}), got {len(names)}")
        if len(set(names)) != len(names):  # (a set, not np.unique: that imports numpy.ma, ~15 ms of every start)
            raise ValueError("item_ids must be unique")
        ids = np.asarray(names)
        base = np.argsort(ids, kind="stable")
    rng = np.random.default_rng(seed)
    return base[rng.permuted(np.tile(np.arange(n_items), (n_splits, 1)), axis=1)]


def split_stability(
    scores: ArrayLike,
    *,
    alpha: float = 0.10,
    n_splits: int = 100,
    cal_fraction: float = 0.5,
    seed: int = 0,
    item_ids: Sequence[str] | None = None,
) -> SplitStability:
    """Re-split the reference-verified items ``n_splits`` times (seeded permutation of item ids, see
    :func:`split_permutations`), calibrate M* on ``round(cal_fraction · N)`` items and measure coverage (finite
    score ≤ M*) on the rest. Fully vectorised: one gather and one ``np.partition`` along the split axis.
    """

    s = validated_scores(scores, "split_stability", allow_nan=False)
    n_items = s.size
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if n_splits < 1:
        raise ValueError("n_splits must be >= 1")
    n_cal = int(round(n_items * cal_fraction))
    if not 1 <= n_cal <= n_items - 1:
        raise ValueError(f"need at least one calibration and one test item (have {n_items} items)")
    perms = split_permutations(n_items, n_splits, seed, item_ids)
    cal = s[perms[:, :n_cal]]
    test = s[perms[:, n_cal:]]
    k = conformal_rank(n_cal, alpha)
    if k > n_cal:
        m_star = np.full(n_splits, np.inf)
    else:
        m_star = np.partition(cal, k - 1, axis=1)[:, k - 1]
    coverage = (np.isfinite(test) & (test <= m_star[:, None])).mean(axis=1)
    reliability = (cal <= 1.0).sum(axis=1) / (n_cal + 1)
    finite = bool(np.isfinite(m_star).all())
    values, counts = np.unique(m_star, return_counts=True)
    return SplitStability(
        n_splits=n_splits,
        n_cal=n_cal,
        n_test=n_items - n_cal,
        alpha=float(alpha),
        seed=seed,
        m_star_values=readonly(m_star),
        coverage_values=readonly(coverage),
        reliability_values=readonly(reliability),
        m_star_mean=float(m_star.mean()) if finite else math.inf,
        m_star_sd=float(m_star.std()) if finite else math.nan,
        coverage_mean=float(coverage.mean()),
        coverage_sd=float(coverage.std()),
        reliability_mean=float(reliability.mean()),
        reliability_sd=float(reliability.std()),
        m_star_frequencies={float(v): int(c) / n_splits for v, c in zip(values, counts, strict=True)},
    )


# ------------------------------------------------------------------------------------------------------ JSON block
def _interval_json(iv: Interval | None) -> dict[str, Any] | None:
    if iv is None:
        return None
    return {"estimate": iv.estimate, "lower": iv.lower, "upper": iv.upper, "confidence": iv.confidence}


def verified_scores(inp: CertificationInput) -> np.ndarray:
    """Every verified score (calibration + referenced deployment items), sorted: the split-stability population."""
    dep = inp.deployment_scores[~np.isnan(inp.deployment_scores)]
    return np.sort(np.concatenate([inp.calibration_scores, dep]))


def readout_json(
    res: CertificationResult, inp: CertificationInput, alpha: float, *, n_boot: int = 10_000, seed: int = 0,
    n_splits: int = 100,
) -> dict[str, Any]:
    """The readouts issue 11 §4 asks every export to show, as plain JSON (NaN/∞ → null through core/jsonsafe):

    ``gate`` (the :class:`~relgate_tui.core.certification.gate.GateDecision`, or null without a gate), ``worst_case`` (the level
    and bound with skipped calibration items counted as misses), ``prediction_sets`` (``guarantee`` false and a
    message when M* = ∞: the displayed sets are observed classes only and carry no coverage guarantee),
    ``bootstrap`` (percentile intervals of the mean set size and mean samples used, B = ``n_boot``, seeded) and
    ``adaptive_sets`` (eq. 6.7: threshold q̂ of the cumulative-probability score, mean set size, coverage with
    references; null when the class shares are unknown), ``split_stability`` (``n_splits`` seeded half/half splits of every verified score — sorted first, so the splits
    depend on the scores and the seed only, never on file order; null with fewer than 2 verified items).

    The scores' split is by a seeded permutation of the sorted verified scores rather than of item ids: the
    distribution of every split statistic is the same, and it needs no ids.
    """
    from relgate_tui.core.jsonsafe import jsonable

    d = res.gate_decision
    gate = None if d is None else d.to_json()
    boot = bootstrap_summary(inp, alpha, n_boot=n_boot, confidence=res.confidence, seed=seed)
    scores = verified_scores(inp)
    stab = None
    if scores.size >= 2:
        st = split_stability(scores, alpha=alpha, n_splits=n_splits, seed=seed)
        stab = {
            "n_splits": st.n_splits, "n_cal": st.n_cal, "n_test": st.n_test, "seed": st.seed,
            "m_star_mean": st.m_star_mean, "m_star_sd": st.m_star_sd,
            "m_star_frequencies": {("inf" if math.isinf(k) else str(int(k))): v
                                   for k, v in st.m_star_frequencies.items()},
            "coverage_mean": st.coverage_mean, "coverage_sd": st.coverage_sd,
            "reliability_mean": st.reliability_mean, "reliability_sd": st.reliability_sd,
        }
    return jsonable({
        "gate": gate,
        "worst_case": {"level": res.worst_case_level, "lower_bound": res.worst_case_lower_bound,
                       "n_skipped": res.n_skipped},
        "prediction_sets": {
            "guarantee": not res.no_guarantee,
            "message": (f"M* = ∞ at α = {alpha:g}: the displayed sets (observed answers only) carry no coverage "
                        "guarantee") if res.no_guarantee else None,
        },
        "bootstrap": {"set_size": _interval_json(boot.set_size), "samples_used": _interval_json(boot.samples_used),
                      "n_boot": boot.n_boot, "seed": boot.seed},
        "split_stability": stab,
        "adaptive_sets": None if res.adaptive is None else {
            "threshold": res.adaptive.threshold,
            "average_set_size": res.adaptive.average_set_size,
            "coverage": None if res.adaptive.coverage is None else {
                "estimate": res.adaptive.coverage.estimate, "lower": res.adaptive.coverage.lower,
                "upper": res.adaptive.coverage.upper, "n": res.adaptive.coverage.n},
        },
    })
