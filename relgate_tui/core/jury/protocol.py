"""Jury-on-demand and its baselines under the paper's protocol (paper 003, §3.4–3.5, §4.2–4.3).

Per item x, the K judges with the highest predicted reliability r_j(x) form the jury and the score is
ŷ(x) = Σ_{i∈J_K(x)} r_i(x) s_i(x) / Σ_{i∈J_K(x)} r_i(x)  (§3.4). K ∈ {2, …, min(8, N − 1)} and one tolerance per
judge are chosen jointly on the validation split by Kendall's τ-b of ŷ against the human scores: exhaustively when
there are at most 64 tolerance assignments, else by coordinate ascent (one judge's tolerance at a time, until no
change helps) from two starts — every judge at the smallest tolerance, and every judge at the largest.

Baselines, exactly as §4.2: every single judge; Average-All (mean of all judges); Average-Top-K (the K judges with
the best validation τ, simple mean, K tuned on validation); Weighted-Regression (least squares without intercept of
the human score on the judges' scores, on the training split); Weighted-Tau (weights = softmax of the judges'
validation τ, temperature 1 as printed).

Protocol: ``splits`` seeded random 60/20/20 partitions (split s uses ``numpy.random.default_rng(seed + s)``), of the
items or — by default when the items have groups (:mod:`.groups`: items sharing a source text) — of the groups, so
that no group is in both the training and the test part; Kendall τ-b on the test part, overall and per source data
set; mean ± sd over splits.

Significance, against each baseline over the splits:

- the paper's one-sided exact Wilcoxon signed-rank test (``scipy.stats.wilcoxon(..., alternative="greater",
  method="exact")``; all-zero differences give p = 1), reported as the paper's. The splits share most of their
  training items, so the per-split differences are correlated and this test overstates significance;
- the corrected resampled t-test of Nadeau & Bengio (2003, Machine Learning 52: 239–281, their "corrected resampled
  t"): with d_s the per-split differences (J splits), d̄ their mean and σ̂² their sample variance (ddof 1),
  t = d̄ / √((1/J + n_test/n_train) σ̂²) on J − 1 degrees of freedom, one-sided. n_train counts the items the method
  learns from (training plus validation part, 80%), n_test the test part (20%): n_test/n_train = 0.25. Zero variance
  gives p = 0 when d̄ > 0, else 1.

Cliff's delta is paired: the share of splits jury-on-demand wins minus the share it loses (ties count as neither).
Jury-on-demand *claims an improvement* only when its mean τ is above every baseline's and every *corrected* test has
p < ``claim_alpha``.

Scores are min–max normalised to [0, 1] (§3.3): the judges over their shared observed range (or the given scale);
the human scores per source data set over their observed range (human scales differ between data sets). A judge
with no score on an item cannot sit on that item's jury; static juries average the judges that scored the item
(Weighted-Regression fills a missing score with the judge's training mean); a single judge is scored on the items it
scored (``n`` in the JSON).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

BASELINES = ("average-all", "average-top-k", "weighted-regression", "weighted-tau")


@dataclass(frozen=True)
class JuryData:
    """The pool's scores on the items: ``scores`` is items × judges (NaN = no score); ``features`` items × F."""

    ids: tuple[str, ...]
    judges: tuple[str, ...]
    scores: np.ndarray
    human: np.ndarray
    features: np.ndarray
    feature_names: tuple[str, ...]
    sources: tuple[str, ...] | None = None
    judge_features: np.ndarray | None = None  # items × judges × G (e.g. log-prob entropy), judge-specific
    judge_feature_names: tuple[str, ...] = ()
    groups: tuple[str, ...] | None = None  # the item's group (splits keep a group in one part); None = item-level
    group_by: str | None = None  # what the groups are (``input``, ``source``, a field, ``id-prefix``)
    warnings: tuple[str, ...] = ()  # one-line warnings about the data (e.g. ids that look grouped), reported


@dataclass(frozen=True)
class MethodResult:
    name: str
    tau_per_split: tuple[float, ...]
    n_per_split: tuple[int, ...]
    per_source: dict[str, tuple[float, ...]] = field(default_factory=dict)

    @property
    def tau_mean(self) -> float:
        return float(np.mean(self.tau_per_split))

    @property
    def tau_sd(self) -> float:
        return float(np.std(self.tau_per_split, ddof=1)) if len(self.tau_per_split) > 1 else 0.0

    def to_json(self) -> dict:
        return {"tau_mean": self.tau_mean, "tau_sd": self.tau_sd, "tau_per_split": list(self.tau_per_split),
                "n_per_split": list(self.n_per_split),
                "per_source": {s: {"tau_mean": float(np.mean(v)), "tau_sd": float(np.std(v, ddof=1)) if len(v) > 1
                                   else 0.0} for s, v in self.per_source.items()}}


@dataclass(frozen=True)
class Comparison:
    """Jury-on-demand against one baseline: ``p_value`` the paper's Wilcoxon, ``p_corrected`` the corrected
    resampled t-test (the claim's), ``cliffs_delta`` the paired δ (share of splits won minus lost)."""

    baseline: str
    p_value: float
    cliffs_delta: float
    p_corrected: float = 1.0


@dataclass(frozen=True)
class JuryStudy:
    judges: tuple[str, ...]
    n_items: int
    splits: int
    seed: int
    methods: dict[str, MethodResult]
    k_per_split: tuple[int, ...]
    tolerance_per_split: tuple[tuple[float, ...], ...]
    auc_per_judge: dict[str, float | None]
    comparisons: tuple[Comparison, ...]
    feature_groups: tuple[str, ...]
    example_items: tuple[dict, ...]
    claim_alpha: float = 0.05
    group_by: str | None = None
    n_groups: int | None = None
    warnings: tuple[str, ...] = ()

    @property
    def claims_improvement(self) -> bool:
        """Mean τ above every baseline's and every corrected resampled t-test significant (module docstring)."""
        jury = self.methods["jury"].tau_mean
        return all(jury > self.methods[c.baseline].tau_mean and c.p_corrected < self.claim_alpha
                   for c in self.comparisons)

    def split_words(self) -> str:
        return split_words_for(self.group_by, self.n_groups)

    def to_json(self) -> dict:
        methods = {name: m.to_json() for name, m in self.methods.items()}
        counts = np.bincount(np.array(self.k_per_split))
        tol = np.array(self.tolerance_per_split)
        methods["jury"] |= {
            "k": int(np.argmax(counts)), "k_per_split": list(self.k_per_split),
            "tolerance": {j: float(np.median(tol[:, i])) for i, j in enumerate(self.judges)},
            "tolerance_per_split": [list(t) for t in self.tolerance_per_split],
            "auc": dict(self.auc_per_judge),
            "vs": {c.baseline: {"p_value": c.p_value, "p_corrected": c.p_corrected,
                                "cliffs_delta": c.cliffs_delta, "significant": c.p_corrected < self.claim_alpha}
                   for c in self.comparisons},
            "claims_improvement": self.claims_improvement,
        }
        return {"group_by": self.group_by, "n_groups": self.n_groups, "warnings": list(self.warnings),
                "claims_improvement": self.claims_improvement,
                "significance": {"claim": "corrected resampled t-test (Nadeau & Bengio 2003), one-sided",
                                 "paper": "exact Wilcoxon signed-rank, one-sided", "alpha": self.claim_alpha,
                                 "n_test_over_n_train": NB_RATIO},
                "n_items": self.n_items, "judges": list(self.judges), "splits": self.splits, "seed": self.seed,
                "feature_groups": list(self.feature_groups), "methods": methods,
                "items": list(self.example_items)}

    def to_markdown(self) -> str:
        lines = ["# Jury-on-demand (paper 003)", "",
                 f"{self.n_items} items, {len(self.judges)} judges, {self.splits} splits (60/20/20, "
                 f"{self.split_words()}); feature groups: {', '.join(self.feature_groups)}.", "",
                 "| method | Kendall τ (mean ± sd) | p corrected (jury > method) | p Wilcoxon (paper) | paired δ |",
                 "|---|---|---|---|---|"]
        comp = {c.baseline: c for c in self.comparisons}
        for name, m in sorted(self.methods.items(), key=lambda kv: -kv[1].tau_mean):
            c = comp.get(name)
            extra = f"{c.p_corrected:.3f} | {c.p_value:.3f} | {c.cliffs_delta:+.2f}" if c else "— | — | —"
            lines.append(f"| {name} | {m.tau_mean:.3f} ± {m.tau_sd:.3f} | {extra} |")
        verdict = "claims" if self.claims_improvement else "does not claim"
        lines += ["", f"Jury-on-demand {verdict} an improvement over every baseline (one-sided corrected resampled "
                      f"t-test, Nadeau & Bengio, p < {self.claim_alpha}; the paper's Wilcoxon is shown beside it and "
                      "overstates significance: the splits overlap)."]
        lines += [f"\nWarning: {w}" for w in self.warnings]
        return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------------ helpers
def kendall(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-b over the pairs where both are finite (0 when undefined: a constant side).

    τ-b = (C − D) / √((n₀ − n₁)(n₀ − n₂)), n₀ = n(n−1)/2 and n₁, n₂ the pairs tied in x, in y. Up to 1,500 items it is
    computed from the pair sign matrices up to 120 items (exact, and faster than SciPy's there, which also computes a
    p-value), by SciPy above."""
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 2:
        return 0.0
    if ok.sum() <= 120:
        xs, ys = x[ok], y[ok]
        sx = np.sign(xs[:, None] - xs[None, :])
        sy = np.sign(ys[:, None] - ys[None, :])
        num = float(np.sum(sx * sy)) / 2
        m = xs.size
        n0 = m * (m - 1) / 2
        tx = n0 - float(np.count_nonzero(sx)) / 2
        ty = n0 - float(np.count_nonzero(sy)) / 2
        den = math.sqrt((n0 - tx) * (n0 - ty))
        return num / den if den > 0 else 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tau = stats.kendalltau(x[ok], y[ok]).statistic
    return 0.0 if tau is None or not math.isfinite(tau) else float(tau)


def normalise(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return (values - lo) / (hi - lo) if hi > lo else np.zeros_like(values)


def jury_scores(r: np.ndarray, s: np.ndarray, ks: Sequence[int]) -> dict[int, np.ndarray]:
    """ŷ for every K at once: per item, judges sorted by r (missing scores last), cumulative weighted sums."""
    r = np.where(np.isnan(s), -np.inf, r)
    order = np.argsort(-r, axis=1, kind="stable")
    rs = np.take_along_axis(r, order, axis=1)
    ss = np.take_along_axis(s, order, axis=1)
    w = np.where(np.isfinite(rs), np.maximum(rs, 1e-9), 0.0)
    num = np.cumsum(w * np.nan_to_num(ss), axis=1)
    den = np.cumsum(w, axis=1)
    out = {}
    for k in ks:
        kk = min(k, s.shape[1]) - 1
        with np.errstate(invalid="ignore", divide="ignore"):
            out[k] = np.where(den[:, kk] > 0, num[:, kk] / den[:, kk], np.nan)
    return out


def _mean_available(s: np.ndarray, w: np.ndarray) -> np.ndarray:
    mask = ~np.isnan(s)
    ww = np.where(mask, w[None, :], 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ww.sum(1) > 0, (ww * np.nan_to_num(s)).sum(1) / ww.sum(1), np.nan)


def cliffs_delta(a: Sequence[float], b: Sequence[float]) -> float:
    x, y = np.asarray(a)[:, None], np.asarray(b)[None, :]
    return (int(np.count_nonzero(x > y)) - int(np.count_nonzero(x < y))) / (x.size * y.size)


NB_RATIO = 0.25  # n_test / n_train of the 60/20/20 protocol: the test 20% over the 80% the method learns from


def split_words_for(group_by: str | None, n_groups: int | None) -> str:
    """How the splits were drawn, in words."""
    return "by item" if group_by is None else f"grouped by {group_by}: {n_groups} groups, none in two parts"


def paired_delta(a: Sequence[float], b: Sequence[float]) -> float:
    """Paired Cliff's δ over splits: the share of splits where ``a`` wins minus the share where it loses."""
    d = np.asarray(a, float) - np.asarray(b, float)
    return (int(np.count_nonzero(d > 1e-12)) - int(np.count_nonzero(d < -1e-12))) / d.size if d.size else 0.0


def corrected_t_greater(a: Sequence[float], b: Sequence[float], ratio: float = NB_RATIO) -> float:
    """One-sided p of the corrected resampled t-test (Nadeau & Bengio 2003) that ``a`` > ``b`` over J splits:
    t = d̄ / √((1/J + ratio)·σ̂²), J − 1 degrees of freedom (module docstring)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    j = d.size
    if j < 2:
        return 1.0
    mean, var = float(np.mean(d)), float(np.var(d, ddof=1))
    if var <= 1e-24:
        return 0.0 if mean > 1e-12 else 1.0
    t = mean / math.sqrt((1.0 / j + ratio) * var)
    return float(stats.t.sf(t, j - 1))


def wilcoxon_greater(a: Sequence[float], b: Sequence[float]) -> float:
    d = np.asarray(a) - np.asarray(b)
    if np.all(np.abs(d) < 1e-12):
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.wilcoxon(a, b, alternative="greater", method="exact").pvalue)
