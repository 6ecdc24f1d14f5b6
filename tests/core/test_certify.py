import math

import numpy as np
import pytest

from relgate_tui.core.certification.certify import (
    CertificationInput,
    ItemRecord,
    build_input,
    compute_results,
    coverage_curve,
    item_record,
)
from relgate_tui.core.certification.conformal import m_star as conformal_m_star
from relgate_tui.core.certification.conformal import prediction_set
from relgate_tui.core.certification.intervals import wilson_interval
from relgate_tui.core.certification.quantile import conformal_quantile
from relgate_tui.core.certification.ranking import RankedClasses
from relgate_tui.core.certification.readouts import bootstrap_summary, split_permutations, split_stability
from relgate_tui.core.certification.scores import NONE_SCORE
from relgate_tui.core.certification.synthetic import SyntheticAgent, simulate_agent

WORKED = [1.0] * 45 + [2.0] * 3 + [math.inf] * 2


# ---------------------------------------------------------------------------------------- worked examples (α = 0.10)
def test_worked_example_45_3_2():
    res = compute_results(CertificationInput.from_arrays(WORKED, k_max=20), 0.10)
    assert (res.n, res.k, res.m_star) == (50, 46, 2.0)
    assert res.reliability_successes == 45 and res.reliability_n == 50
    assert res.reliability_level == 45 / 51 and round(res.reliability_level, 4) == 0.8824
    assert round(res.reliability_lower_bound, 4) == 0.8012
    assert res.calibration_message is None
    assert res.coverage is None and res.n_deployment == 0 and math.isnan(res.average_set_size)


def test_worked_example_n8():
    res = compute_results(CertificationInput.from_arrays([1.0] * 7 + [2.0], k_max=10), 0.10)
    assert res.k == 9 and res.m_star == math.inf
    assert res.calibration_message == "not enough calibration items: need n ≥ 9 (have 8)"
    assert res.reliability_level == 7 / 9  # still reported


def test_worked_example_all_none_is_never_zero_items():
    res = compute_results(CertificationInput.from_arrays([NONE_SCORE] * 10, k_max=10), 0.10)
    assert res.n == 10  # the "none" verdicts are items, not dropped
    assert res.reliability_level == 0.0 and res.reliability_lower_bound == 0.0
    assert res.m_star == math.inf
    assert res.calibration_message == ("M* = ∞: 10 of 10 calibration items have no acceptable answer among the "
                                       "samples; a finite M* at α = 0.1 allows at most 0")


def test_no_calibration_items_yet():
    res = compute_results(CertificationInput.from_arrays([], k_max=10, deployment_n_classes=[3, 1]), 0.10)
    assert res.n == 0 and res.m_star == math.inf
    assert res.reliability_level is None and res.reliability_lower_bound is None  # issue 33 §7: no number
    assert res.calibration_message == "not enough calibration items: need n ≥ 9 (have 0)"
    assert list(res.set_sizes) == [3, 1]


# ------------------------------------------------------------------------------------- records: none, skip, pending
def _ranked(*counts: int, n_invalid: int = 0) -> RankedClasses:
    names = tuple(f"c{i}" for i in range(len(counts)))
    return RankedClasses(names, tuple(counts), sum(counts) + n_invalid, n_invalid)


def test_human_none_counted_and_skips_reported_separately():
    r = _ranked(6, 3, 1)
    cal = (
        [item_record(f"ok{i}", r, score=1) for i in range(18)]
        + [item_record("none1", r, score=NONE_SCORE), item_record("none2", r, score=NONE_SCORE)]
        + [item_record("skip1", r, skipped=True), item_record("skip2", r, skipped=True), item_record("skip3", r, skipped=True)]
        + [ItemRecord("todo", n_classes=3, samples_used=10)]
    )
    inp = build_input(cal, [], k_max=10)
    res = compute_results(inp, 0.10)
    assert (res.n, res.n_skipped, res.n_pending) == (20, 3, 1)
    assert res.reliability_level == 18 / 21  # the two "none" items count against the model
    assert res.m_star == math.inf  # k = 19 > 18 finite scores
    # TrustGate's bug would drop the "none" items: 18/19 — make sure we are not doing that
    assert res.reliability_level != 18 / 19
    assert res.samples_used == 24 * 10 and res.calls_saved == 0.0
    assert res.tie_rate == 0.0
    tied = item_record("tied", RankedClasses(("a", "b"), (5, 5), 10, 0, tie_broken=True), score=2)
    assert compute_results(build_input(cal + [tied], [], k_max=10), 0.1).tie_rate == 1 / 25


def test_item_record_from_references_and_human_precedence():
    r = RankedClasses(("41", "42", "7"), (5, 3, 1), 10, 1)
    rec = item_record("q1", r, acceptable={"42"})
    assert rec.score == 2.0 and rec.acceptable_fraction == 0.3 and rec.n_classes == 3 and rec.samples_used == 10
    assert item_record("q1", r, acceptable={"99"}).score == math.inf
    assert item_record("q1", r, acceptable={"42"}, score=1).score == 1.0  # a human verdict wins
    with pytest.raises(ValueError):
        item_record("q1", r, score=0.5)


# ------------------------------------------------------------------------------- end to end against a slow path
@pytest.fixture(scope="module")
def synthetic_run():
    rng = np.random.default_rng(2024)
    agent = SyntheticAgent(0.6, distractor_weights=(0.4, 0.3, 0.2, 0.1), invalid_share=0.1, concentration=2.0, unsolvable_fraction=0.05)
    cal = simulate_agent(agent, 300, 10, rng)
    dep = simulate_agent(agent, 400, 10, rng)
    cal_recs = [item_record(f"c{i}", cal.ranked_item(i), acceptable={"correct"}) for i in range(cal.n_items)]
    dep_ranked = [dep.ranked_item(i) for i in range(dep.n_items)]
    first = [str(rng.choice(r.classes, p=np.array(r.counts) / sum(r.counts))) if r.counts else None for r in dep_ranked]
    dep_recs = [item_record(f"d{i}", r, acceptable={"correct"}, first_sample=first[i]) for i, r in enumerate(dep_ranked)]
    return cal_recs, dep_recs, dep_ranked


@pytest.mark.parametrize("alpha", [0.05, 0.10, 0.20, 0.30])
def test_results_match_a_direct_item_by_item_computation(synthetic_run, alpha):
    cal_recs, dep_recs, dep_ranked = synthetic_run
    inp = build_input(cal_recs, dep_recs, k_max=10)
    res = compute_results(inp, alpha, reliability_scope="calibration")
    cal_scores = [r.score for r in cal_recs]
    ms = conformal_m_star(cal_scores, alpha)
    assert res.m_star == ms
    sets = [prediction_set(r, ms) for r in dep_ranked]
    covered = [("correct" in s) for s in sets]
    solvable = [math.isfinite(r.score) for r in dep_recs]
    assert list(res.set_sizes) == [len(s) for s in sets]
    assert res.average_set_size == pytest.approx(np.mean([len(s) for s in sets]))
    assert list(res.deployment_covered) == [int(c) for c in covered]
    assert res.coverage.estimate == pytest.approx(np.mean(covered))
    assert (res.coverage.lower, res.coverage.upper) == wilson_interval(sum(covered), len(covered))
    n_solv = sum(solvable)
    assert res.conditional_coverage.estimate == pytest.approx(sum(covered) / n_solv)
    assert res.capability_gap.estimate == pytest.approx(1 - n_solv / len(dep_recs))
    assert res.mode_accuracy.estimate == pytest.approx(np.mean([r.leader == "correct" for r in dep_ranked]))
    known = [r.first_sample_acceptable for r in dep_recs if r.first_sample_acceptable is not None]
    assert res.single_sample_accuracy.estimate == pytest.approx(np.mean(known))
    x = sum(s <= 1 for s in cal_scores)
    assert res.reliability_level == x / (len(cal_scores) + 1)
    # SPEC §3.5 default: the reliability level uses every verified item (calibration + referenced deployment)
    full = compute_results(inp, alpha)
    x_all = x + sum(r.score <= 1 for r in dep_recs)
    assert full.reliability_n == 700 and full.reliability_level == x_all / 701


def test_covered_requires_an_observed_acceptable_answer_even_when_m_star_is_infinite():
    inp = CertificationInput.from_arrays(
        [1.0] * 5, k_max=5, deployment_n_classes=[2, 3, 1], deployment_scores=[2.0, math.inf, math.nan]
    )
    res = compute_results(inp, 0.10)  # n = 5 < 9: M* = ∞, sets are every observed class
    assert res.m_star == math.inf
    assert list(res.set_sizes) == [2, 3, 1]
    assert list(res.deployment_covered) == [1, 0, -1]
    assert res.coverage.successes == 1 and res.coverage.n == 2
    assert res.conditional_coverage.estimate == 1.0 and res.capability_gap.estimate == 0.5


def test_gate_and_calls_saved():
    inp = CertificationInput.from_arrays(WORKED, k_max=20, samples_used=[5] * 25 + [20] * 25)
    assert compute_results(inp, 0.1, gate=0.88, gate_on="level").passed is True  # 0.8824 ≥ 0.88
    assert compute_results(inp, 0.1, gate=0.89, gate_on="level").passed is False
    assert compute_results(inp, 0.1, gate=0.85, gate_on="bound").passed is False  # 0.8012 < 0.85
    assert compute_results(inp, 0.1).passed is None
    res = compute_results(inp, 0.1)
    assert res.samples_used == 625 and res.samples_budget == 1000 and res.calls_saved == pytest.approx(0.375)


def test_result_arrays_are_read_only():
    inp = CertificationInput.from_arrays(WORKED, k_max=20, deployment_n_classes=[1, 2])
    res = compute_results(inp, 0.1)
    with pytest.raises(ValueError):
        res.set_sizes[0] = 5
    with pytest.raises(ValueError):
        inp.calibration_scores[0] = 3.0


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(calibration_scores=[1.0, math.nan], k_max=5),
        dict(calibration_scores=[1.0, 0.5], k_max=5),
        dict(calibration_scores=[1.0, 2.5], k_max=5),
        dict(calibration_scores=[1.0], k_max=0),
        dict(calibration_scores=[1.0], k_max=5, samples_used=[6]),
        dict(calibration_scores=[1.0], k_max=5, deployment_n_classes=[1], deployment_scores=[1.0, 2.0]),
        dict(calibration_scores=[1.0], k_max=5, deployment_n_classes=[1], deployment_acceptable_fraction=[1.5]),
    ],
)
def test_bad_input_raises_value_error(kwargs):
    with pytest.raises(ValueError):
        CertificationInput.from_arrays(**kwargs)


@pytest.mark.parametrize("kwargs", [dict(alpha=0.0), dict(alpha=1.0), dict(alpha=0.1, gate=1.5), dict(alpha=0.1, confidence=1.0)])
def test_bad_parameters_raise(kwargs):
    with pytest.raises(ValueError):
        compute_results(CertificationInput.from_arrays(WORKED, k_max=20), **kwargs)


def test_coverage_curve_agrees_with_compute_results(synthetic_run):
    cal_recs, dep_recs, _ = synthetic_run
    inp = build_input(cal_recs, dep_recs, k_max=10)
    alphas = [0.01, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3]
    curve = coverage_curve(inp, alphas)
    for a, ms, cov, size in zip(alphas, curve.m_star, curve.coverage, curve.average_set_size):
        res = compute_results(inp, a)
        assert ms == res.m_star and cov == pytest.approx(res.coverage.estimate) and size == pytest.approx(res.average_set_size)
    assert list(curve.m_star) == sorted(curve.m_star, reverse=True)


# ------------------------------------------------------------------------------------------------------ bootstrap
def test_bootstrap_summary(synthetic_run):
    cal_recs, dep_recs, _ = synthetic_run
    inp = build_input(cal_recs, dep_recs, k_max=10)
    b1 = bootstrap_summary(inp, 0.1, n_boot=2000, seed=3)
    assert b1 == bootstrap_summary(inp, 0.1, n_boot=2000, seed=3)
    res = compute_results(inp, 0.1)
    assert b1.set_size.estimate == pytest.approx(res.average_set_size)
    assert b1.set_size.lower <= b1.set_size.estimate <= b1.set_size.upper
    assert b1.samples_used.estimate == 10.0 and b1.samples_used.lower == b1.samples_used.upper == 10.0
    empty = bootstrap_summary(CertificationInput.from_arrays(WORKED, k_max=20), 0.1, n_boot=100)
    assert empty.set_size is None and empty.samples_used.estimate == 20.0


# ------------------------------------------------------------------------------------------------ split stability
def _population(seed: int, n: int, p_two: float, p_inf: float) -> np.ndarray:
    u = np.random.default_rng(seed).random(n)
    return np.where(u < p_inf, np.inf, np.where(u < p_inf + p_two, 2.0, 1.0))


def test_split_stability_matches_a_per_split_loop():
    scores = _population(1, 1000, 0.05, 0.06)
    ids = [f"item-{i:04d}" for i in range(1000)]
    st = split_stability(scores, alpha=0.1, n_splits=20, seed=5, item_ids=ids)
    perms = split_permutations(1000, 20, 5, ids)
    for j in range(20):
        cal, test = scores[perms[j, :500]], scores[perms[j, 500:]]
        ms = conformal_quantile(cal, 0.1)
        assert st.m_star_values[j] == ms
        assert st.coverage_values[j] == pytest.approx(np.mean(np.isfinite(test) & (test <= ms)))
        assert st.reliability_values[j] == pytest.approx(np.sum(cal <= 1) / 501)
        assert sorted(perms[j]) == list(range(1000))  # a permutation: every item exactly once
    assert st.coverage_mean == pytest.approx(np.mean(st.coverage_values))
    assert st.coverage_sd == pytest.approx(np.std(st.coverage_values))


def test_split_stability_depends_on_ids_and_seed_not_on_file_order():
    scores = _population(2, 600, 0.08, 0.04)
    ids = [f"q{i}" for i in range(600)]
    base = split_stability(scores, n_splits=30, seed=11, item_ids=ids)
    order = np.random.default_rng(0).permutation(600)
    shuffled = split_stability(scores[order], n_splits=30, seed=11, item_ids=[ids[i] for i in order])
    assert np.array_equal(base.m_star_values, shuffled.m_star_values)
    assert np.array_equal(base.coverage_values, shuffled.coverage_values)
    other = split_stability(scores, n_splits=30, seed=12, item_ids=ids)
    assert not np.array_equal(base.coverage_values, other.coverage_values)


def test_split_stability_at_the_capability_boundary_like_table_4():
    # GPT-4.1-nano/GSM8K regime: the fraction of non-top scores sits near α, so M* flips between 1 and 2.
    scores = _population(3, 1000, 0.06, 0.035)
    st = split_stability(scores, alpha=0.1, n_splits=100, seed=0, item_ids=[str(i) for i in range(1000)])
    assert set(st.m_star_frequencies) == {1.0, 2.0}
    f2 = st.m_star_frequencies[2.0]
    assert 0 < f2 < 1
    # population sd of a two-valued {1, 2} sample: sqrt(f(1−f)) (the paper's 1.18 ± 0.38 for f = 0.18)
    assert st.m_star_mean == pytest.approx(1 + f2) and st.m_star_sd == pytest.approx(math.sqrt(f2 * (1 - f2)))
    assert st.coverage_sd > 0


def test_split_stability_with_infinite_m_star_and_bad_input():
    st = split_stability(np.full(40, np.inf), n_splits=5)
    assert st.m_star_mean == math.inf and math.isnan(st.m_star_sd) and st.coverage_mean == 0.0
    st = split_stability(np.ones(10), n_splits=5)  # 5 calibration items < 9 at α = 0.1
    assert st.m_star_frequencies == {math.inf: 1.0}
    with pytest.raises(ValueError):
        split_stability(np.ones(1))
    with pytest.raises(ValueError):
        split_stability(np.ones(10), item_ids=["a"] * 10)
    with pytest.raises(ValueError):
        split_stability([1.0, math.nan, 2.0])


# ------------------------------------------------------------------------------------------- issue 11 §4: honest gates
def test_gate_defaults_to_the_lower_bound_and_reports_both():
    inp = CertificationInput.from_arrays(WORKED, k_max=20)
    res = compute_results(inp, 0.1, gate=0.85)  # level 0.8824 ≥ 0.85 but the 95% bound 0.8012 < 0.85
    assert res.passed is False and res.gate_on == "bound"
    d = res.gate_decision
    assert d.gate_on == "bound" and d.value == res.reliability_lower_bound and d.level == res.reliability_level
    assert d.summary().startswith("FAIL: 95% lower bound 80.1% < gate 85.0% (level 88.2%)")
    assert compute_results(inp, 0.1, gate=0.85, gate_on="level").gate_decision.passed is True
    assert compute_results(inp, 0.1, gate=0.85, gate_on="bound").gate_on == "bound"
    d90 = compute_results(inp, 0.1, gate=0.7, confidence=0.9).gate_decision
    assert d90.basis_label == "90% lower bound" and d90.passed
    with pytest.raises(ValueError):
        compute_results(inp, 0.1, gate=0.8, gate_on="median")


def _pass_probability(n: int, p: float, gate: float, gate_on: str) -> float:
    """Exact P(pass) when each of n verified items is top-covered with probability p: a sum over the binomial count,
    each count decided by compute_results itself."""
    from scipy import stats

    total = 0.0
    for x in range(n + 1):
        inp = CertificationInput.from_arrays([1.0] * x + [math.inf] * (n - x), k_max=5)
        if compute_results(inp, 0.1, gate=gate, gate_on=gate_on).passed:
            total += stats.binom.pmf(x, n, p)
    return total


@pytest.mark.parametrize("n", [20, 50, 200])
def test_bound_gate_passes_a_model_at_the_threshold_at_most_one_minus_confidence(n):
    """True coverage exactly at the gate (0.90): the bound gate passes it with probability <= 5% (exact sum over
    the binomial), while the level gate passes it about half the time (issue 11 §4: 43-48% at n = 50)."""
    assert _pass_probability(n, 0.90, 0.90, "bound") <= 0.05
    assert _pass_probability(n, 0.88, 0.90, "bound") <= 0.05
    if n == 50:
        assert _pass_probability(n, 0.90, 0.90, "level") > 0.3
    # and the same by simulation, seeded
    rng = np.random.default_rng(n)
    xs = rng.binomial(n, 0.90, size=4000)
    passes = sum(
        compute_results(CertificationInput.from_arrays([1.0] * x + [math.inf] * (n - x), k_max=5), 0.1, gate=0.9).passed
        for x in xs[:400]
    )
    assert passes / 400 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 400)


def test_calls_saved_counts_only_samples_the_rule_did_not_draw():
    """Rule `none` with two failed items (3 and 0 samples of K_max = 10): nothing was saved by stopping."""
    ranked_full = RankedClasses(("a",), (10,), 10, 0)
    failed = RankedClasses(("a",), (3,), 3, 0)
    empty = RankedClasses((), (), 0, 0)
    recs = [item_record(f"i{i}", ranked_full, score=1, stopped_early=False) for i in range(2)]
    recs += [item_record("f1", failed, score=1, stopped_early=False), item_record("f2", empty, stopped_early=False)]
    res = compute_results(build_input(recs, [], k_max=10), 0.1)
    assert res.samples_used == 23 and res.calls_saved == 0.0
    stopped = [item_record("s", RankedClasses(("a",), (6,), 6, 0), score=1, stopped_early=True)]
    res = compute_results(build_input(recs + stopped, [], k_max=10), 0.1)
    assert res.calls_saved == pytest.approx(4 / 50)


def _stopped_sampling(probs_by_item: np.ndarray, k_max: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(samples matrix, samples used) under the anytime rule: class 0 is the correct one."""
    from relgate_tui.core.certification.stopping import get_stopping_rule

    rule = get_stopping_rule("anytime")
    n, c = probs_by_item.shape
    cum = probs_by_item.cumsum(axis=1)
    samples = (rng.random((n, k_max, 1)) > cum[:, None, :]).sum(axis=2)
    used = np.full(n, k_max)
    counts = np.zeros((n, c), dtype=np.int64)
    active = np.ones(n, dtype=bool)
    for k in range(1, k_max):
        counts[np.arange(n), samples[:, k - 1]] += 1
        top = -np.sort(-counts, axis=1)
        stop = active & rule.should_stop_batch(top[:, 0], top[:, 1], (counts > 0).sum(axis=1), k)
        used[stop] = k
        active &= ~stop
    return samples, used


def test_single_sample_accuracy_is_unbiased_under_optional_stopping():
    """SPEC §8's reference workload under the anytime rule: the mean acceptable fraction of the *used* samples
    overstates the single-sample accuracy; the first-sample estimator does not."""
    rng = np.random.default_rng(77)
    workload = [(0.60, (0.97, 0.02, 0.01, 0.0)), (0.25, (0.75, 0.15, 0.10, 0.0)), (0.15, (0.45, 0.30, 0.15, 0.10))]
    n = 12_000
    sizes = [int(share * n) for share, _ in workload]
    probs = np.concatenate([np.tile(p, (m, 1)) for (_, p), m in zip(workload, sizes)])
    truth = float(np.mean(probs[:, 0]))
    samples, used = _stopped_sampling(probs, 20, rng)
    dep = []
    for i in range(probs.shape[0]):
        seq = [str(x) for x in samples[i, : used[i]]]
        classes = sorted(set(seq), key=lambda x: -seq.count(x))
        ranked = RankedClasses(tuple(classes), tuple(seq.count(x) for x in classes), len(seq), 0)
        dep.append(item_record(f"d{i}", ranked, acceptable={"0"}, first_sample=seq[0]))
    res = compute_results(build_input([], dep, k_max=20), 0.1)
    se = math.sqrt(truth * (1 - truth) / len(dep))
    assert abs(res.single_sample_accuracy.estimate - truth) < 4 * se
    biased = float(np.mean([r.acceptable_fraction for r in dep]))
    assert biased - truth > 0.01  # the estimator used before issue 11


def test_worst_case_level_counts_skips_as_misses_and_m_star_infinity_is_flagged():
    inp = CertificationInput.from_arrays(WORKED, k_max=20, n_skipped=5)
    res = compute_results(inp, 0.1)
    assert res.reliability_level == 45 / 51 and res.worst_case_level == 45 / 56
    assert res.worst_case_lower_bound < res.reliability_lower_bound
    assert not res.no_guarantee
    assert compute_results(CertificationInput.from_arrays([1.0] * 5, k_max=20), 0.1).no_guarantee


@pytest.mark.parametrize("alpha", [0.05, 0.10, 0.30])
def test_adaptive_sets_match_the_conformal_module(synthetic_run, alpha):
    """SPEC §3.4 adaptive sets (eq. 6.7) in the results: q̂, set sizes and coverage equal core/conformal.py's."""
    from relgate_tui.core.certification.conformal import adaptive_prediction_set, adaptive_threshold
    from relgate_tui.core.certification.scores import cumulative_score

    cal_recs, dep_recs, dep_ranked = synthetic_run
    res = compute_results(build_input(cal_recs, dep_recs, k_max=10), alpha)
    q = adaptive_threshold([r.cp_score for r in cal_recs], alpha)
    assert res.adaptive.threshold == q
    sets = [adaptive_prediction_set(r, q) for r in dep_ranked]
    assert res.adaptive.average_set_size == pytest.approx(np.mean([len(s) for s in sets]))
    covered = [("correct" in s) for s in sets]
    assert res.adaptive.coverage.estimate == pytest.approx(np.mean(covered))
    assert [r.cp_score for r in dep_recs] == [cumulative_score(r, {"correct"}) for r in dep_ranked]


def test_adaptive_sets_are_absent_without_class_shares():
    assert compute_results(CertificationInput.from_arrays(WORKED, k_max=20), 0.1).adaptive is None
