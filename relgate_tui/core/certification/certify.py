"""Every certification result of a run, computed fast enough to follow an α slider (SPEC §3.4–3.6, §8).

Usage (engine, TUI and CLI all go through here)::

    inp = build_input(calibration_records, deployment_records, k_max=20)   # once per run / label change
    res = compute_results(inp, alpha=0.10, gate=0.90)                       # per α change: O(m), < 1 ms
    boot = bootstrap_summary(inp, alpha=0.10)                               # on demand: seeded B = 10,000
    stab = split_stability(scores, item_ids=ids, alpha=0.10)               # on demand: 100 seeded splits

Conventions (each is a decision, stated once here):

* **Calibration items** are the verified items used for M*: each has a rank score (eq. 10.1; +∞ when the human or
  the reference found no acceptable class — kept, never dropped). Items the human skipped are excluded from n but
  counted in ``n_skipped``; items not yet verified are counted in ``n_pending``.
* **Deployment items** get prediction sets ``top-M*`` (all observed classes when M* = ∞). When they also have
  references, the validation metrics of §3.6 are computed on them (held out from M*).
* **Reliability level** (Def. 2.4) ``1 − α* = #{s_i ≤ 1} / (n + 1)`` with **the** lower bound of the run: the one its
  gate decides on (``watch``, :func:`~relgate_tui.core.certification.gate.watched_lower_bound`) — the one-sided
  Clopper–Pearson bound on #{s_i ≤ 1} out of n when every verdict came from a reference (decided once) or at a
  one-look's planned labels, the anytime confidence sequence once a person labelled. The fixed-n Clopper–Pearson value
  is kept as ``fixed_n_lower_bound`` (valid only if the number of labels was fixed before labelling). By default
  (``reliability_scope="all_verified"``, SPEC §3.5) it uses *all* verified items: the calibration items and the
  deployment items with references; ``"calibration"`` restricts it to the former.
* **Covered** means the displayed set contains an acceptable class: a *finite* score ≤ M*. With M* = ∞ the
  theoretical trivial set is the whole answer space, but relgate shows observed classes, so an item whose acceptable
  answer was never sampled is a miss (paper Fig. 2 caption: such items cannot be covered by any finite set).
* **Solvable** (paper §11.9, Table 2): at least one sample was acceptable, i.e. the rank score is finite.
  Conditional coverage is coverage among solvable items, the capability gap β is the fraction unsolvable.
* **Mode accuracy**: score = 1. **Single-sample accuracy**: the share of items whose *first* sample is acceptable.
  The first sample is drawn before any stopping decision, so it is an unbiased draw of one sample of the model and
  the estimate is unbiased under optional stopping (exact Bernoulli count, Wilson interval). The mean fraction of
  acceptable samples among the *used* samples is not: sequential stopping ends sampling early exactly when the
  leader looks strong, which over-weights agreeing samples (+1.5 points on SPEC §8's reference workload). Records
  without a known first sample are left out of it (``first_sample_acceptable`` None).
* **Gate** (:class:`GateDecision`, decided by :func:`relgate_tui.core.certification.gate.decide_gate`, the one gate
  rule): by default (``gate_on="bound"``) PASS iff the one-sided lower confidence bound at ``confidence`` clears the
  threshold, so a model whose true top-answer coverage equals the threshold passes with probability <= 1 − confidence
  (Clopper–Pearson is exact-conservative). ``"level"`` gates on the point estimate 1 − α* (Def. 2.4), which passes
  such a model about half of the time — offered, never default. ``"assisted"`` (an old name: ``"best"``) uses the judge-assisted
  bound given as ``assisted`` (see the gate module).
* **Calls saved** = (samples not drawn because the stopping rule stopped) / (items × K_max): an item counts K_max −
  used only when its rule stopped it (``stopped_early``); items cut short by failed requests, or never answered,
  save nothing (their samples were not drawn for another reason). The **tie rate** is the fraction of the run's items
  whose ranking needed a random tie-break.
* **Worst-case level** with skips: skipped calibration items counted as misses (score ∞), ``#{s ≤ 1} / (n + n_skipped
  + 1)``, and its lower bound, shown beside the level so that skipping hard items cannot raise it unnoticed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from relgate_tui.core.certification.adaptive_sets import (
    AdaptiveSets,
    adaptive_arrays,
    adaptive_inputs,
    adaptive_results,
)
from relgate_tui.core.certification.base import (
    ItemRecord,
    item_record,
    m_star_sorted,
    n_covered,
    readonly,
    validated_scores,
)
from relgate_tui.core.certification.conformal import calibration_message
from relgate_tui.core.certification.gate import (
    GATE_ON_CHOICES,
    HUMAN_GATES,
    WATCH,
    GateDecision,
    GateOn,
    Watch,
    check_gate_on,
    decide_gate,
    watched_lower_bound,
)
from relgate_tui.core.certification.intervals import (
    Proportion,
    clopper_pearson_lower,
    wilson_proportion,
)
from relgate_tui.core.certification.scores import validate_rank_score

__all__ = [
    "ItemRecord",
    "item_record",
    "CertificationInput",
    "build_input",
    "CertificationResult",
    "GATE_ON_CHOICES",
    "GateOn",
    "AdaptiveSets",
    "GateDecision",
    "decide_gate",
    "compute_results",
    "CoverageCurve",
    "coverage_curve",
]

ReliabilityScope = Literal["all_verified", "calibration"]


# ------------------------------------------------------------------------------------------------------------- input
@dataclass(frozen=True, eq=False)
class CertificationInput:
    """Arrays behind every result, built once (:func:`build_input` or :meth:`from_arrays`), read-only.

    Calibration: ``calibration_scores`` sorted ascending (so M* at any α is one lookup). Deployment (m items):
    ``deployment_ids``, ``deployment_n_classes``, ``deployment_scores`` (nan = no reference),
    ``deployment_acceptable_fraction`` (nan = unknown), ``deployment_entropy``. ``samples_used`` covers every
    item of the run and ``n_tie_broken`` counts the items of the run whose ranking needed a random tie-break. The
    fields after ``k_max`` are derived counts precomputed by :meth:`from_arrays` (the constructor to use).
    """

    calibration_scores: np.ndarray
    n_skipped: int
    n_pending: int
    deployment_ids: tuple[str, ...]
    deployment_n_classes: np.ndarray
    deployment_scores: np.ndarray
    deployment_acceptable_fraction: np.ndarray
    deployment_entropy: np.ndarray
    samples_used: np.ndarray
    k_max: int
    n_tie_broken: int = 0
    samples_saved: int = -1  # samples not drawn because the rule stopped; -1 = infer (see from_arrays)
    first_sample_n: int = 0
    first_sample_ok: int = 0
    # adaptive sets (eq. 6.7): sorted calibration cp scores (None = unknown), padded deployment cumulative shares
    calibration_cp_scores: np.ndarray | None = None
    deployment_cumulative: np.ndarray | None = None
    deployment_cp_scores: np.ndarray | None = None
    # derived (filled by from_arrays)
    calibration_top: int = 0
    calibration_infinite: int = 0
    reference_sorted_finite: np.ndarray | None = None
    n_reference: int = 0
    reference_top: int = 0
    fraction_n: int = 0
    fraction_sum: float = 0.0

    @property
    def n(self) -> int:
        """Number of calibration items with a verdict (skipped and pending items excluded)."""
        return int(self.calibration_scores.size)

    @property
    def n_deployment(self) -> int:
        return int(self.deployment_n_classes.size)

    @classmethod
    def from_arrays(
        cls,
        calibration_scores: ArrayLike,
        *,
        k_max: int,
        deployment_n_classes: ArrayLike = (),
        deployment_scores: ArrayLike | None = None,
        deployment_acceptable_fraction: ArrayLike | None = None,
        deployment_entropy: ArrayLike | None = None,
        deployment_ids: Sequence[str] | None = None,
        samples_used: ArrayLike | None = None,
        n_skipped: int = 0,
        n_pending: int = 0,
        n_tie_broken: int = 0,
        stopped_early: ArrayLike | None = None,
        first_sample_acceptable: ArrayLike | None = None,
        calibration_cp_scores: ArrayLike | None = None,
        deployment_cumulative: ArrayLike | None = None,
        deployment_cp_scores: ArrayLike | None = None,
    ) -> CertificationInput:
        """Validate, sort and precompute. Missing deployment arrays default to nan (no reference) / 0 entropy;
        missing ``samples_used`` means every item used ``k_max`` samples; ids default to "0", "1", …
        ``stopped_early`` (one bool per item of ``samples_used``; None = every item with fewer than K_max samples
        stopped early) decides which items count towards calls saved. ``first_sample_acceptable``: per deployment
        item, 1/0 or nan (unknown); the unbiased single-sample accuracy is computed from it. Adaptive sets (eq.
        6.7) need ``calibration_cp_scores`` (one per calibration score, +∞ for "none"), ``deployment_cumulative``
        (m × C cumulative class shares, padded with +∞) and optionally ``deployment_cp_scores`` (nan = no
        reference); without the first two the adaptive results are None."""
        if isinstance(k_max, bool) or not isinstance(k_max, (int, np.integer)) or k_max < 1:
            raise ValueError(f"k_max must be a positive integer, got {k_max!r}")
        if n_skipped < 0 or n_pending < 0:
            raise ValueError("n_skipped and n_pending must be >= 0")
        cal = np.sort(validated_scores(calibration_scores, "calibration", allow_nan=False))
        ncls = np.asarray(deployment_n_classes, dtype=np.int64).ravel()
        m = ncls.size
        if (ncls < 0).any():
            raise ValueError("deployment_n_classes must be >= 0")

        def per_item(values: ArrayLike | None, fill: float, what: str) -> np.ndarray:
            if values is None:
                return np.full(m, fill, dtype=np.float64)
            a = np.asarray(values, dtype=np.float64).ravel()
            if a.size != m:
                raise ValueError(f"{what} must have one entry per deployment item ({m}), got {a.size}")
            return a

        dep = validated_scores(per_item(deployment_scores, np.nan, "deployment_scores"), "deployment", True)
        frac = per_item(deployment_acceptable_fraction, np.nan, "deployment_acceptable_fraction")
        known_frac = frac[~np.isnan(frac)]
        if ((known_frac < 0) | (known_frac > 1)).any():
            raise ValueError("acceptable fractions must be in [0, 1]")
        ent = per_item(deployment_entropy, 0.0, "deployment_entropy")
        ids = tuple(str(i) for i in range(m)) if deployment_ids is None else tuple(deployment_ids)
        if len(ids) != m:
            raise ValueError(f"deployment_ids must have one entry per deployment item ({m}), got {len(ids)}")
        n_items = cal.size + n_skipped + n_pending + m
        used = (
            np.full(n_items, k_max, dtype=np.int64)
            if samples_used is None
            else np.asarray(samples_used, dtype=np.int64).ravel()
        )
        if (used < 0).any() or (used > k_max).any():
            raise ValueError(f"samples used per item must be in [0, k_max = {k_max}]")
        if not 0 <= n_tie_broken <= used.size:
            raise ValueError("n_tie_broken must be between 0 and the number of items")
        if stopped_early is None:
            stopped = used < k_max
        else:
            stopped = np.asarray(stopped_early, dtype=bool).ravel()
            if stopped.size != used.size:
                raise ValueError(f"stopped_early must have one entry per item ({used.size}), got {stopped.size}")
        saved = int(np.where(stopped, k_max - used, 0).sum())
        first = np.asarray([] if first_sample_acceptable is None else first_sample_acceptable, dtype=np.float64).ravel()
        first = first[~np.isnan(first)]
        if ((first != 0) & (first != 1)).any():
            raise ValueError("first_sample_acceptable must be 0, 1 or nan")

        has_ref = ~np.isnan(dep)
        ref = dep[has_ref]
        return cls(
            calibration_scores=readonly(cal),
            n_skipped=int(n_skipped),
            n_pending=int(n_pending),
            deployment_ids=ids,
            deployment_n_classes=readonly(ncls),
            deployment_scores=readonly(dep),
            deployment_acceptable_fraction=readonly(frac),
            deployment_entropy=readonly(ent),
            samples_used=readonly(used),
            k_max=int(k_max),
            n_tie_broken=int(n_tie_broken),
            samples_saved=saved,
            **adaptive_arrays(calibration_cp_scores, cal.size, deployment_cumulative, deployment_cp_scores, m),
            first_sample_n=int(first.size),
            first_sample_ok=int(first.sum()),
            calibration_top=int(np.count_nonzero(cal <= 1.0)),
            calibration_infinite=int(np.count_nonzero(np.isinf(cal))),
            reference_sorted_finite=readonly(np.sort(ref[np.isfinite(ref)])),
            n_reference=int(ref.size),
            reference_top=int(np.count_nonzero(ref <= 1.0)),
            fraction_n=int(known_frac.size),
            fraction_sum=float(known_frac.sum()),
        )


def build_input(
    calibration: Sequence[ItemRecord],
    deployment: Sequence[ItemRecord],
    k_max: int,
) -> CertificationInput:
    """Turn per-item records into a :class:`CertificationInput`.

    Calibration records: skipped ones are counted in ``n_skipped``; records without a score (not yet verified) in
    ``n_pending``; the rest give the calibration scores. Deployment records keep their order (``deployment_ids``).
    ``samples_used`` covers every record of both lists.
    """
    cal_scores = [validate_rank_score(r.score) for r in calibration if not r.skipped and r.score is not None]
    n_skipped = sum(1 for r in calibration if r.skipped)
    n_pending = sum(1 for r in calibration if not r.skipped and r.score is None)
    nan = math.nan
    return CertificationInput.from_arrays(
        np.array(cal_scores, dtype=np.float64),
        k_max=k_max,
        deployment_n_classes=np.array([r.n_classes for r in deployment], dtype=np.int64),
        deployment_scores=np.array([nan if r.score is None else r.score for r in deployment], dtype=np.float64),
        deployment_acceptable_fraction=np.array(
            [nan if r.acceptable_fraction is None else r.acceptable_fraction for r in deployment], dtype=np.float64
        ),
        deployment_entropy=np.array([r.entropy for r in deployment], dtype=np.float64),
        deployment_ids=[r.item_id for r in deployment],
        samples_used=np.array([r.samples_used for r in (*calibration, *deployment)], dtype=np.int64),
        n_skipped=n_skipped,
        n_pending=n_pending,
        n_tie_broken=sum(1 for r in (*calibration, *deployment) if r.tie_broken),
        stopped_early=[
            (r.samples_used < k_max) if r.stopped_early is None else r.stopped_early for r in (*calibration, *deployment)
        ],
        first_sample_acceptable=np.array(
            [nan if r.first_sample_acceptable is None else float(r.first_sample_acceptable) for r in deployment],
            dtype=np.float64,
        ),
        **adaptive_inputs(calibration, deployment),
    )


# ----------------------------------------------------------------------------------------------------------- results
@dataclass(frozen=True, eq=False)
class CertificationResult:
    """Every number of the results screen at one α (see the module docstring for the conventions).

    Proportions are :class:`~relgate_tui.core.certification.intervals.Proportion` with 95% (``confidence``) Wilson intervals, or
    None when the deployment items have no references. ``set_sizes`` (one per deployment item) and
    ``deployment_covered`` (1 covered, 0 missed, −1 no reference) are read-only arrays.
    """

    alpha: float
    confidence: float
    n: int
    n_skipped: int
    n_pending: int
    k: int
    m_star: float
    calibration_message: str | None
    reliability_n: int
    reliability_successes: int
    reliability_level: float | None  # None with no verified item (issue 33 §7)
    reliability_lower_bound: float | None  # *the* lower bound: the one of ``watch``, the gate's (gate.py)
    n_deployment: int
    set_sizes: np.ndarray
    average_set_size: float
    deployment_covered: np.ndarray
    n_with_reference: int
    coverage: Proportion | None
    conditional_coverage: Proportion | None
    capability_gap: Proportion | None
    mode_accuracy: Proportion | None
    single_sample_accuracy: Proportion | None
    samples_used: int
    samples_budget: int
    calls_saved: float
    tie_rate: float
    gate: float | None
    gate_on: GateOn
    passed: bool | None
    gate_decision: GateDecision | None = None
    worst_case_level: float = math.nan
    worst_case_lower_bound: float = math.nan
    adaptive: AdaptiveSets | None = None
    fixed_n_lower_bound: float | None = None  # the one-look Clopper–Pearson L(x, n): valid only for a fixed n
    watch: str = "once"
    planned: int | None = None

    @property
    def bound_differs(self) -> bool:
        """The fixed-n Clopper–Pearson bound is not the run's bound (a person labelled, or a one-look not at its
        planned labels): it is then shown once, under its own name and with its condition."""
        return self.fixed_n_lower_bound != self.reliability_lower_bound and self.fixed_n_lower_bound is not None

    @property
    def bound_label(self) -> str:
        """The run's bound by name, with its confidence: "95% lower bound" (every verdict from a reference, decided
        once), "95% anytime lower bound" (a person labelled), "95% one-look lower bound"."""
        kind = {"anytime": "anytime ", "one-look": "one-look "}.get(self.watch, "")
        return f"{self.confidence:.0%} {kind}lower bound"

    @property
    def bound_note(self) -> str | None:
        """Why there is no bound although items are verified (a one-look before its planned labels), else None."""
        if self.reliability_lower_bound is None and self.reliability_n and self.watch == "one-look":
            return f"not decided yet: one-look at {self.planned} labels, {self.reliability_n} so far"
        return None

    @property
    def no_guarantee(self) -> bool:
        """M* = ∞: the displayed sets (observed classes only) carry no coverage guarantee."""
        return math.isinf(self.m_star)


def compute_results(
    inp: CertificationInput,
    alpha: float,
    confidence: float = 0.95,
    gate: float | None = None,
    *,
    gate_on: GateOn = "bound",
    reliability_scope: ReliabilityScope = "all_verified",
    assisted: Callable[[float], float] | None = None,
    undecided: str | None = None,
    watch: Watch = "once",
    planned: int | None = None,
) -> CertificationResult:
    """All results at miscoverage level ``alpha``; the gate (with ``gate``) is :func:`decide_gate` on the reliability
    counts (``watch``/``planned``: how the human-only bound is looked at, gate.py), with ``assisted`` (the judge-assisted bound at a confidence, for ``gate_on`` "assisted") and
    ``undecided`` (why no PASS/FAIL may be decided). Cost: O(m) numpy work for the per-item set sizes plus O(log m)
    lookups — about a tenth of a millisecond for 10,000 items (``bench/stats_speed.py``)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if gate is not None and not 0.0 <= gate <= 1.0:
        raise ValueError(f"the gate threshold must be in [0, 1], got {gate!r}")
    check_gate_on(gate_on)
    if watch not in WATCH:
        raise ValueError(f"watch must be one of {', '.join(WATCH)}, got {watch!r}")
    if reliability_scope not in ("all_verified", "calibration"):
        raise ValueError(f"reliability_scope must be 'all_verified' or 'calibration', got {reliability_scope!r}")

    n = inp.n
    k, m_star = m_star_sorted(inp.calibration_scores, alpha)
    message = calibration_message(n, alpha, inp.calibration_infinite)

    # Reliability level (Def. 2.4) and its exact one-sided lower bound.
    rel_n, rel_x = n, inp.calibration_top
    if reliability_scope == "all_verified":
        rel_n += inp.n_reference
        rel_x += inp.reference_top
    # no verified item: no number (issue 33 §7)
    level = rel_x / (rel_n + 1) if rel_n else None
    fixed_n = clopper_pearson_lower(rel_x, rel_n, confidence) if rel_n else None
    # the run's bound is its gate's: the bound of ``watch`` (gate.py), Clopper–Pearson only when decided once
    lower = fixed_n if watch == "once" else watched_lower_bound(rel_x, rel_n, confidence, watch, planned)

    # Prediction-set sizes: top-M*, all observed classes when M* = ∞ or M* > class count.
    ncls = inp.deployment_n_classes
    sizes = ncls.copy() if m_star == math.inf else np.minimum(ncls, int(m_star))
    avg_size = float(sizes.mean()) if sizes.size else math.nan

    dep = inp.deployment_scores
    covered = np.where(np.isnan(dep), -1, (np.isfinite(dep) & (dep <= m_star)).astype(np.int8)).astype(np.int8)

    coverage = conditional = gap = mode = single = None
    m_ref = inp.n_reference
    if m_ref and inp.reference_sorted_finite is not None:
        solvable = int(inp.reference_sorted_finite.size)
        n_cov = n_covered(inp.reference_sorted_finite, m_star)
        coverage = wilson_proportion(n_cov, m_ref, confidence)
        conditional = wilson_proportion(n_cov, solvable, confidence)
        gap = wilson_proportion(m_ref - solvable, m_ref, confidence)
        mode = wilson_proportion(inp.reference_top, m_ref, confidence)
    if inp.first_sample_n:
        single = wilson_proportion(inp.first_sample_ok, inp.first_sample_n, confidence)

    used = int(inp.samples_used.sum())
    budget = int(inp.samples_used.size) * inp.k_max
    saved = inp.samples_saved / budget if budget else 0.0

    # worst case: every skipped calibration item a miss
    worst_n = rel_n + inp.n_skipped
    worst_level = rel_x / (worst_n + 1) if worst_n else math.nan
    worst_lower = clopper_pearson_lower(rel_x, worst_n, confidence) if worst_n else math.nan

    adaptive = adaptive_results(inp.calibration_cp_scores, inp.deployment_cumulative, inp.deployment_n_classes,
                                inp.deployment_scores, alpha, confidence)

    decision = None
    if gate is not None:
        decision = decide_gate(gate, successes=rel_x, n=rel_n, confidence=confidence, gate_on=gate_on,
                               assisted=assisted, undecided=undecided, watch=watch, planned=planned)
    passed = None if decision is None else decision.passed

    return CertificationResult(
        alpha=float(alpha),
        confidence=float(confidence),
        n=n,
        n_skipped=inp.n_skipped,
        n_pending=inp.n_pending,
        k=k,
        m_star=m_star,
        calibration_message=message,
        reliability_n=rel_n,
        reliability_successes=rel_x,
        reliability_level=level,
        reliability_lower_bound=lower,
        n_deployment=inp.n_deployment,
        set_sizes=readonly(sizes),
        average_set_size=avg_size,
        deployment_covered=readonly(covered),
        n_with_reference=m_ref,
        coverage=coverage,
        conditional_coverage=conditional,
        capability_gap=gap,
        mode_accuracy=mode,
        single_sample_accuracy=single,
        samples_used=used,
        samples_budget=budget,
        calls_saved=saved,
        tie_rate=inp.n_tie_broken / inp.samples_used.size if inp.samples_used.size else math.nan,
        gate=gate,
        gate_on=(decision.gate_on if decision is not None else gate_on if gate_on in HUMAN_GATES else "bound"),
        passed=passed,
        gate_decision=decision,
        worst_case_level=worst_level,
        worst_case_lower_bound=worst_lower,
        adaptive=adaptive,
        fixed_n_lower_bound=fixed_n,
        watch=watch,
        planned=int(planned) if watch == "one-look" and planned is not None else None,
    )



@dataclass(frozen=True, eq=False)
class CoverageCurve:
    """M* and deployment coverage for a sweep of α (the "coverage vs 1 − α" plot, paper Fig. 2)."""

    alphas: np.ndarray
    m_star: np.ndarray
    coverage: np.ndarray  # nan when no deployment item has a reference
    average_set_size: np.ndarray


def coverage_curve(inp: CertificationInput, alphas: ArrayLike) -> CoverageCurve:
    """:func:`compute_results`' M*, coverage and average set size for every α in ``alphas``."""
    a = np.asarray(alphas, dtype=np.float64).ravel()
    ms, cov, size = np.empty(a.size), np.full(a.size, np.nan), np.full(a.size, np.nan)
    ncls = inp.deployment_n_classes
    for i, alpha in enumerate(a):
        _, ms[i] = m_star_sorted(inp.calibration_scores, float(alpha))
        if inp.n_reference and inp.reference_sorted_finite is not None:
            cov[i] = n_covered(inp.reference_sorted_finite, ms[i]) / inp.n_reference
        if ncls.size:
            size[i] = float(np.minimum(ncls, ms[i]).mean())
    return CoverageCurve(readonly(a), readonly(ms), readonly(cov), readonly(size))
