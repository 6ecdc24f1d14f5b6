"""Split conformal prediction sets over 1–5 Likert judge scores (paper 000 §3.2, eqs. 2–3, Tables 3–5).

* Target: y* = the human mean score rounded to the nearest integer in {1, …, 5} (paper §4). Halves are rounded
  **up** (2.5 → 3), i.e. y* = ⌊ȳ + 1/2⌋, then clipped to 1..5. (Means of three integer ratings, as in SummEval and
  HANNA, are never exactly .5; the rule matters for an even number of raters.)
* Nonconformity score: s_i = |ŷ_i − y*_i| (paper §3.2). ŷ is the judge's point prediction; it may be an integer
  score or a real number (e.g. the mean over repetitions, or an expected score from score-token log-probs). A
  missing/unparseable judge output is passed as NaN and gets score +∞.
* Threshold (paper eq. 2): q̂ = the ⌈(n+1)(1−α)⌉-th smallest calibration score, and q̂ = +∞ when that rank
  exceeds n — :func:`relgate_tui.core.certification.quantile.conformal_quantile` (SPEC §3.4).
* Prediction set (paper eq. 3): C(x) = {y ∈ {1, …, 5} : |ŷ − y| ≤ q̂}, width w(x) = |C(x)|. For a NaN ŷ the set is
  empty unless q̂ = ∞ (then it is the whole scale), which keeps y* ∈ C(x) ⇔ s ≤ q̂ and hence the guarantee
  P(y* ∈ C(x)) ≥ 1 − α.

Note on widths: with one global q̂ the set is the interval [ŷ − q̂, ŷ + q̂] intersected with the scale, so for an
*integer* ŷ the width only varies through truncation at the ends of the scale (e.g. q̂ = 1: width 2 at ŷ ∈ {1, 5},
3 otherwise — the "only widths 2 and 3" case of paper §5.2). A *real-valued* ŷ also changes the width through its
position between integers (ŷ = 3.0, q̂ = 0.6: {3}; ŷ = 3.5: {3, 4}). Widths can be 0 for real ŷ and small q̂.

Evaluation protocol (paper §3.2): for each α ∈ {0.05, 0.10, 0.15, 0.20}, average over 20 random 50/50
calibration/test splits (seeded permutations; the same splits for every α) the test coverage, the mean width, and
the Spearman correlation r_s(w, |ŷ − y*|) on the test items; inter-judge width agreement is the Spearman
correlation between two judges' widths on the same test items, averaged over the same splits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from relgate_tui.core.certification.quantile import conformal_quantile

LIKERT_SCALE: tuple[int, ...] = (1, 2, 3, 4, 5)
DEFAULT_ALPHAS: tuple[float, ...] = (0.05, 0.10, 0.15, 0.20)
DEFAULT_SPLITS = 20
_SCALE = np.asarray(LIKERT_SCALE, dtype=np.float64)
_EPS = 1e-9  # guards |ŷ − y| ≤ q̂ against floating error (e.g. |3.1 − 2| vs q̂ = 1.1)


def round_human_mean(means: ArrayLike) -> np.ndarray:
    """y* = clip(⌊ȳ + 1/2⌋, 1, 5) (nearest integer, halves up). Raises ValueError on NaN or values outside [1, 5]."""
    m = np.asarray(means, dtype=np.float64)
    if np.isnan(m).any():
        raise ValueError("human mean scores must not be missing (NaN)")
    if (m < 1 - _EPS).any() or (m > 5 + _EPS).any():
        raise ValueError("human mean scores must lie on the 1-5 scale")
    return np.clip(np.floor(m + 0.5 + _EPS), 1, 5).astype(np.int64)


def _preds(preds: ArrayLike) -> np.ndarray:
    p = np.asarray(preds, dtype=np.float64).ravel()
    if np.isinf(p).any():
        raise ValueError("judge scores must be finite numbers (use NaN for a missing/unparseable score)")
    return p


def likert_nonconformity(preds: ArrayLike, targets: ArrayLike) -> np.ndarray:
    """s = |ŷ − y*| (paper §3.2); +∞ where ŷ is NaN."""
    p = _preds(preds)
    y = np.asarray(targets, dtype=np.float64).ravel()
    if p.shape != y.shape:
        raise ValueError(f"{p.size} judge scores but {y.size} human targets")
    s = np.abs(p - y)
    s[np.isnan(p)] = np.inf
    return s


def _membership(preds: np.ndarray, q_hat: float) -> np.ndarray:
    """M[i, y-1] = (y ∈ C(x_i)) for y = 1..5 (paper eq. 3)."""
    if math.isinf(q_hat):
        return np.ones((preds.size, _SCALE.size), dtype=bool)
    with np.errstate(invalid="ignore"):
        return np.abs(preds[:, None] - _SCALE[None, :]) <= q_hat + _EPS


def likert_prediction_sets(preds: ArrayLike, q_hat: float) -> tuple[tuple[int, ...], ...]:
    """C(x) = {y ∈ 1..5 : |ŷ − y| ≤ q̂} for each judge score (paper eq. 3)."""
    m = _membership(_preds(preds), float(q_hat))
    return tuple(tuple(int(y) for y in np.asarray(LIKERT_SCALE)[row]) for row in m)


def likert_set_widths(preds: ArrayLike, q_hat: float) -> np.ndarray:
    """w(x) = |C(x)| ∈ {0, …, 5}."""
    return _membership(_preds(preds), float(q_hat)).sum(axis=1)


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (as scipy.stats.rankdata's "average"); ±∞ allowed."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    new_group = np.r_[True, xs[1:] != xs[:-1]]
    starts = np.flatnonzero(new_group)
    ends = np.r_[starts[1:], x.size]
    ranks = np.empty(x.size)
    ranks[order] = ((starts + ends + 1) / 2.0)[np.cumsum(new_group) - 1]
    return ranks


def spearman_or_nan(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's r_s (Pearson correlation of average ranks), or NaN when either input is constant (r_s
    undefined) or has fewer than 2 items. Values may be ±∞ (ranked as extremes), not NaN."""
    a = np.asarray(x, dtype=np.float64).ravel()
    b = np.asarray(y, dtype=np.float64).ravel()
    if a.size != b.size:
        raise ValueError(f"Spearman needs paired vectors, got lengths {a.size} and {b.size}")
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("Spearman inputs must not be NaN")
    if a.size < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return math.nan
    ra = _average_ranks(a)
    rb = _average_ranks(b)
    ra -= ra.mean()
    rb -= rb.mean()
    return float(np.dot(ra, rb) / math.sqrt(np.dot(ra, ra) * np.dot(rb, rb)))


@dataclass(frozen=True, eq=False)
class LikertSplitResult:
    """One calibration/test split: q̂ (paper eq. 2), per-test-item widths, errors |ŷ − y*| and coverage flags."""

    alpha: float
    q_hat: float
    widths: np.ndarray
    errors: np.ndarray
    covered: np.ndarray

    @property
    def coverage(self) -> float:
        return float(self.covered.mean())

    @property
    def mean_width(self) -> float:
        return float(self.widths.mean())


def split_conformal_likert(cal_preds: ArrayLike, cal_targets: ArrayLike, test_preds: ArrayLike,
                           test_targets: ArrayLike, alpha: float) -> LikertSplitResult:
    """Calibrate q̂ on (cal_preds, cal_targets) and evaluate the sets on the test items. Targets are the
    rounded human scores y* (see :func:`round_human_mean`)."""
    q_hat = conformal_quantile(likert_nonconformity(cal_preds, cal_targets), alpha)
    errors = likert_nonconformity(test_preds, test_targets)
    p = _preds(test_preds)
    return LikertSplitResult(
        alpha=alpha,
        q_hat=q_hat,
        widths=likert_set_widths(p, q_hat),
        errors=errors,
        covered=errors <= q_hat + _EPS,
    )


def seeded_splits(n: int, n_splits: int = DEFAULT_SPLITS, seed: int = 0
                  ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n_splits`` 50/50 splits (calibration = first ⌊n/2⌋ of a seeded permutation of 0..n−1, test = the rest)."""
    if n < 2:
        raise ValueError("need at least 2 items to split into calibration and test halves")
    if n_splits < 1:
        raise ValueError("n_splits must be >= 1")
    rng = np.random.default_rng(seed)
    half = n // 2
    out = []
    for _ in range(n_splits):
        perm = rng.permutation(n)
        out.append((np.sort(perm[:half]), np.sort(perm[half:])))
    return out


@dataclass(frozen=True)
class LikertConformalRow:
    """Averages over the splits at one α (paper Table 5 row; Table 3 at α = 0.10).

    ``spearman_width_error`` is the mean over splits of r_s(w, |ŷ − y*|) on the test items, over the splits where
    it is defined (NaN if none: widths constant). ``n_infinite_q`` counts splits with q̂ = ∞ (too few calibration
    items for this α: every set is the full scale)."""

    alpha: float
    target_coverage: float
    coverage: float
    coverage_sd: float
    mean_width: float
    mean_q_hat: float
    spearman_width_error: float
    n_splits: int
    n_cal: int
    n_test: int
    n_infinite_q: int


def likert_conformal_table(preds: ArrayLike, human_means: ArrayLike, alphas: Sequence[float] = DEFAULT_ALPHAS,
                           n_splits: int = DEFAULT_SPLITS, seed: int = 0) -> tuple[LikertConformalRow, ...]:
    """Coverage, mean width and width–error Spearman for each α averaged over seeded 50/50 splits (paper §3.2
    "Evaluation protocol", Table 5). ``preds`` = judge point scores ŷ (NaN = invalid), ``human_means`` = ȳ."""
    p = _preds(preds)
    y = round_human_mean(np.asarray(human_means).ravel())
    if p.size != y.size:
        raise ValueError(f"{p.size} judge scores but {y.size} human scores")
    splits = seeded_splits(p.size, n_splits, seed)
    rows = []
    for alpha in alphas:
        per_split = []  # (coverage, Spearman, q̂, mean width) of each split: one split's arrays alive at a time
        for c, t in splits:
            r = split_conformal_likert(p[c], y[c], p[t], y[t], alpha)
            per_split.append((r.coverage, spearman_or_nan(r.widths, r.errors), r.q_hat, r.mean_width))
            del r
        cov, rhos, qs, widths = (np.array(col, dtype=float) for col in zip(*per_split, strict=True))
        rows.append(LikertConformalRow(
            alpha=float(alpha),
            target_coverage=1.0 - float(alpha),
            coverage=float(cov.mean()),
            coverage_sd=float(cov.std(ddof=1)) if cov.size > 1 else 0.0,
            mean_width=float(np.mean(widths)),
            mean_q_hat=float(qs.mean()),
            spearman_width_error=float(np.nanmean(rhos)) if np.isfinite(rhos).any() else math.nan,
            n_splits=len(per_split),
            n_cal=int(splits[0][0].size),
            n_test=int(splits[0][1].size),
            n_infinite_q=int(np.isinf(qs).sum()),
        ))
    return tuple(rows)


def inter_judge_width_agreement(preds_a: ArrayLike, preds_b: ArrayLike, human_means: ArrayLike,
                                alpha: float = 0.10, n_splits: int = DEFAULT_SPLITS, seed: int = 0) -> float:
    """Mean over the seeded splits of r_s(w_A, w_B): Spearman between the widths two judges' sets have on the same
    test items, each judge calibrated on the same calibration half (paper §3.2 (4), Table 4). NaN if undefined on
    every split (a judge's widths constant)."""
    a, b = _preds(preds_a), _preds(preds_b)
    y = round_human_mean(np.asarray(human_means).ravel())
    if not a.size == b.size == y.size:
        raise ValueError("both judges must score the same items as the human scores")
    rhos = []
    for c, t in seeded_splits(y.size, n_splits, seed):
        wa = split_conformal_likert(a[c], y[c], a[t], y[t], alpha).widths
        wb = split_conformal_likert(b[c], y[c], b[t], y[t], alpha).widths
        rhos.append(spearman_or_nan(wa, wb))
    r = np.array(rhos)
    return float(np.nanmean(r)) if np.isfinite(r).any() else math.nan


LIKERT_PROTOCOLS: tuple[str, ...] = ("single", "mean")
"""How ŷ is formed from an item's k judge scores: ``"single"`` (paper §3.2: one integer score per item, the
default) or ``"mean"`` (the mean of the k valid scores, an option)."""


def _valid_scores(scores: Sequence[object]) -> list[float]:
    out = []
    for s in scores:
        if s is None or isinstance(s, bool) or not isinstance(s, (int, float, np.integer, np.floating)):
            continue
        f = float(s)
        if math.isfinite(f) and 1 - _EPS <= f <= 5 + _EPS:
            out.append(f)
    return out


def likert_point_predictions(scores_per_item: Sequence[Sequence[object]], protocol: str = "single"
                             ) -> tuple[np.ndarray, int, int]:
    """ŷ per item from its judge scores (in the order asked) under ``protocol`` (:data:`LIKERT_PROTOCOLS`).

    A *valid* score is a finite number on the 1–5 scale; anything else (None, NaN, text, 7) is an unparseable
    answer. ``"single"``: ŷ = the first valid score — the paper's one integer score; a first answer that was
    unparseable is replaced by the next valid one, as a re-ask would (the same rule on calibration and test items,
    so exchangeability and the guarantee are untouched). ``"mean"``: ŷ = the mean of the valid scores. ŷ = NaN
    (nonconformity +∞) when an item has no valid score. Returns (ŷ, #items whose first answer was unusable but a
    later one was used under "single" — 0 under "mean", #items without any valid score)."""
    if protocol not in LIKERT_PROTOCOLS:
        raise ValueError(f"unknown Likert protocol {protocol!r} (choose one of {', '.join(LIKERT_PROTOCOLS)})")
    preds = np.full(len(scores_per_item), np.nan)
    replaced = none = 0
    for i, scores in enumerate(scores_per_item):
        valid = _valid_scores(list(scores))
        if not valid:
            none += 1
            continue
        if protocol == "single":
            preds[i] = valid[0]
            replaced += int(not _valid_scores(list(scores)[:1]))
        else:
            preds[i] = float(np.mean(valid))
    return preds, replaced, none


@dataclass(frozen=True)
class LikertAnalysis:
    """Split conformal analysis of direct Likert scores under a named protocol (paper §3.2, eqs. 2–3, Table 5).
    ``protocol`` says how ŷ was formed (:func:`likert_point_predictions`); ``max_scores_per_item`` = k asked."""

    protocol: str
    n_items: int
    max_scores_per_item: int
    n_first_score_replaced: int
    n_without_valid_score: int
    rows: tuple[LikertConformalRow, ...]


def likert_conformal_analysis(scores_per_item: Sequence[Sequence[object]], human_means: ArrayLike, *,
                              protocol: str = "single", alphas: Sequence[float] = DEFAULT_ALPHAS,
                              n_splits: int = DEFAULT_SPLITS, seed: int = 0) -> LikertAnalysis:
    """The paper's conformal protocol from raw judge scores: ŷ per item by ``protocol`` (default ``"single"``,
    the paper's one integer score; ``"mean"`` = mean of k), then :func:`likert_conformal_table`. The result names
    the protocol used."""
    preds, replaced, none = likert_point_predictions(scores_per_item, protocol)
    rows = likert_conformal_table(preds, human_means, alphas, n_splits=n_splits, seed=seed)
    return LikertAnalysis(
        protocol=protocol,
        n_items=len(scores_per_item),
        max_scores_per_item=max((len(s) for s in scores_per_item), default=0),
        n_first_score_replaced=replaced,
        n_without_valid_score=none,
        rows=rows,
    )
