"""Synthetic validation of paper 004 (Appendix C; SPEC §3.8) with the seeded synthetic agent.

Monte-Carlo tolerances. Every statistical check compares an average over T independent trials with a bound. Each
trial's value lies in [0, 1] and has mean p, so its variance is at most p(1 − p) — the binomial variance — even when
one trial averages many (correlated) test items. For a coverage p ≥ 1 − α ≥ ½ this is at most α(1 − α), so the
average's standard deviation is at most ``sqrt(α(1 − α)/T)``. We allow 4 of these standard deviations: a correct
implementation falls below the bound with probability < 1e-4 per check (normal approximation), and the seeds are
fixed, so the outcome is deterministic.
"""

import math

import numpy as np
import pytest

from relgate_tui.core.certification.certify import CertificationInput, coverage_curve
from relgate_tui.core.certification.conformal import adaptive_threshold, m_star
from relgate_tui.core.certification.quantile import conformal_quantile, conformal_rank
from relgate_tui.core.certification.ranking import rank_classes
from relgate_tui.core.certification.scores import cumulative_score, rank_score
from relgate_tui.core.certification.synthetic import (
    SyntheticAgent,
    adaptive_set_sizes,
    column_ranks,
    draw_counts,
    exact_mode_error,
    hoeffding_mode_bound,
    make_noise,
    merge_columns,
    rank_scores,
    simulate,
    simulate_agent,
)

ALPHAS = [0.01, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30]


def tolerance(p_bound_gap: float, trials: int, n_sd: float = 4.0) -> float:
    """n_sd binomial standard deviations of an average of `trials` [0,1]-valued trials: sqrt(a(1−a)/T)."""
    return n_sd * math.sqrt(p_bound_gap * (1 - p_bound_gap) / trials)


# ---------------------------------------------------------------------------------- the simulator is the real thing
def test_vectorised_scores_equal_the_scalar_ranking_path():
    agent = SyntheticAgent(0.45, distractor_weights=(0.5, 0.3, 0.2), invalid_share=0.2, concentration=2.0, unsolvable_fraction=0.1)
    batch = simulate_agent(agent, 1500, 8, np.random.default_rng(7))
    assert batch.counts.sum(axis=1).tolist() == [8] * 1500
    ties = 0
    for i in range(batch.n_items):
        r = batch.ranked_item(i)
        ties += r.tie_broken
        assert rank_score(r, ["correct"]) == batch.scores[i]
        assert cumulative_score(r, ["correct"]) == batch.cp_scores[i]
        assert r.n_classes == batch.n_classes[i] and r.n_invalid == batch.counts[i, -1]
        assert r.entropy == pytest.approx(batch.entropy[i], abs=1e-12)
    assert ties > 100  # the comparison exercised the tie-breaking


def test_answers_go_through_rank_classes_consistently():
    batch = simulate_agent(SyntheticAgent(0.6, invalid_share=0.3), 300, 10, np.random.default_rng(8))
    g = np.random.default_rng(0)
    for i in range(batch.n_items):
        r = rank_classes(batch.answers(i, g), g)
        ref = batch.ranked_item(i)
        assert sorted(zip(r.classes, r.counts)) == sorted(zip(ref.classes, ref.counts))
        assert r.n_invalid == ref.n_invalid
        if not ref.tie_broken:
            assert r == ref
        else:  # ties are random, but the correct class's rank stays within its tie group
            s = rank_score(r, ["correct"])
            c = ref.count_of("correct")
            if c:
                assert sum(x > c for x in ref.counts) < s <= sum(x >= c for x in ref.counts)


def test_column_ranks_and_merging():
    counts = np.array([[3, 1, 3, 0], [0, 2, 2, 2]])
    tie = np.array([[0.9, 0.1, 0.2, 0.5], [0.1, 0.3, 0.2, 0.1]])
    ranks = column_ranks(counts, tie)
    assert ranks.tolist() == [[2.0, 3.0, 1.0, math.inf], [math.inf, 3.0, 2.0, 1.0]]
    assert rank_scores(counts, tie, [0, 1]).tolist() == [2.0, 3.0]
    merged, mtie = merge_columns(counts, tie, [[0, 1], [2], [3]])
    assert merged.tolist() == [[4, 3, 0], [2, 2, 2]] and mtie[:, 0].tolist() == [0.1, 0.1]


# ------------------------------------------------------------------------------------- C.2: coverage validation
AGENTS = {
    "p*=0.6": SyntheticAgent(0.6),
    "p*=0.7": SyntheticAgent(0.7),
    "p*=0.8": SyntheticAgent(0.8),
    # biased: the most frequent answer is usually wrong (0.455 > 0.35)
    "biased p*=0.35": SyntheticAgent(0.35, distractor_weights=(0.7, 0.2, 0.1)),
    # heterogeneous items, INVALID answers, and a 3% capability gap
    "mixed": SyntheticAgent(0.55, distractor_weights=(0.4, 0.3, 0.2, 0.1), invalid_share=0.1, concentration=2.0, unsolvable_fraction=0.03),
}


@pytest.mark.parametrize("name", list(AGENTS))
def test_marginal_coverage_at_least_one_minus_alpha(name):
    """Paper Thm 6.7 / App. C.2: n_cal = 200 as in the paper, 200 test items per trial, T = 400 trials."""
    trials, n_cal, n_test = 400, 200, 200
    rng = np.random.default_rng(list(AGENTS).index(name) + 100)
    batch = simulate_agent(AGENTS[name], trials * (n_cal + n_test), 10, rng)
    scores = batch.scores.reshape(trials, n_cal + n_test)
    covered = np.zeros((trials, len(ALPHAS)))
    shown = np.zeros((trials, len(ALPHAS)))
    for t in range(trials):
        cal, test = scores[t, :n_cal], scores[t, n_cal:]
        inp = CertificationInput.from_arrays(cal, k_max=10, deployment_n_classes=np.ones(n_test), deployment_scores=test)
        curve = coverage_curve(inp, ALPHAS)
        covered[t] = (test[None, :] <= curve.m_star[:, None]).mean(axis=1)  # theorem's event (∞ ≤ ∞: trivial set)
        shown[t] = curve.coverage  # an observed acceptable class is in the displayed set
    for j, alpha in enumerate(ALPHAS):
        assert covered[:, j].mean() >= 1 - alpha - tolerance(alpha, trials), (name, alpha)
    # Where M* is finite the displayed sets themselves carry the guarantee (paper Fig. 6: points on/above the
    # diagonal); the "mixed" agent at α below its 3% capability gap gets M* = ∞ instead (Thm 7.5(3)).
    for j, alpha in enumerate(ALPHAS):
        if name != "mixed" or alpha >= 0.10:
            assert shown[:, j].mean() >= 1 - alpha - tolerance(alpha, trials), (name, alpha)


def test_coverage_is_exactly_k_over_n_plus_1_for_continuous_scores():
    """Eq. 6.6 is tight without ties: with randomized APS scores (continuous), n = 19 and one test item per trial,
    P(covered) = ⌈20(1−α)⌉/20 exactly. Two-sided binomial check; an off-by-one in k moves it by 0.05."""
    trials, n = 10_000, 19
    rng = np.random.default_rng(77)
    batch = simulate_agent(SyntheticAgent(0.7), trials * (n + 1), 10, rng)
    aps = batch.aps_scores(rng.random(batch.n_items)).reshape(trials, n + 1)
    for alpha in (0.05, 0.10, 0.20):
        exact = conformal_rank(n, alpha) / (n + 1)
        hits = sum(aps[t, n] <= conformal_quantile(aps[t, :n], alpha) for t in range(trials))
        sd = math.sqrt(exact * (1 - exact) / trials)
        assert abs(hits / trials - exact) <= 4 * sd, (alpha, hits / trials, exact)


# ------------------------------------------------------------------------------------- C.3: variance reduction
@pytest.mark.parametrize("p", [0.6, 0.7, 0.8])
def test_mode_error_matches_exact_value_and_stays_below_hoeffding(p):
    agent = SyntheticAgent(p, distractor_weights=(0.6, 0.4))
    probs = [p, 0.6 * (1 - p), 0.4 * (1 - p)]
    trials = 4000
    rng = np.random.default_rng(int(p * 100))
    errors = []
    for k in (1, 2, 5, 10, 20):
        batch = simulate_agent(agent, trials, k, rng)
        observed = float(np.mean(batch.scores != 1.0))
        exact = exact_mode_error(probs, k)
        bound = hoeffding_mode_bound(p, k)
        assert exact <= bound
        assert abs(observed - exact) <= tolerance(exact, trials) + 1e-12, (p, k, observed, exact)
        assert observed <= bound + tolerance(bound, trials)
        errors.append(exact)
    # exponential decay: K = 1 and K = 2 tie (a 1–1 split is a coin flip), then strictly decreasing
    assert errors[0] == pytest.approx(errors[1]) and errors[1] > errors[2] > errors[3] > errors[4]


def test_exact_mode_error_sanity():
    assert exact_mode_error([1.0, 0.0], 5) == pytest.approx(0.0)
    assert exact_mode_error([0.5, 0.5], 1) == pytest.approx(0.5)
    assert exact_mode_error([0.5, 0.5], 2) == pytest.approx(0.5)  # 2-0, 0-2, or a 1-1 coin flip
    assert exact_mode_error([0.7, 0.3], 1) == pytest.approx(0.3)
    # K = 3, two classes: mode correct iff ≥ 2 correct draws
    assert exact_mode_error([0.7, 0.3], 3) == pytest.approx(1 - (0.7**3 + 3 * 0.7**2 * 0.3))


# ---------------------------------------------------------------------------- C.5: M* monotone in agent quality
@pytest.mark.parametrize("concentration", [None, 3.0])
def test_m_star_non_increasing_in_agent_quality(concentration):
    """Thm 7.5(1)-(2): with common random numbers a better agent has pathwise smaller-or-equal rank scores, hence
    a smaller-or-equal M* at every α; the perfect agent gets M* = 1."""
    noise = make_noise(200, 10, np.random.default_rng(31), n_columns=6)
    qualities = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    batches = [simulate(SyntheticAgent(q, (0.4, 0.3, 0.2, 0.1), concentration=concentration), noise) for q in qualities]
    for worse, better in zip(batches, batches[1:]):
        assert np.all(better.scores <= worse.scores)
    for alpha in ALPHAS:
        ms = [m_star(b.scores, alpha) for b in batches]
        assert all(a >= b for a, b in zip(ms, ms[1:])), (alpha, ms)
        assert ms[-1] == 1.0
    assert m_star(batches[0].scores, 0.10) > 1.0  # and it actually moves


def test_capability_gap_above_alpha_gives_infinite_m_star():
    """Thm 7.5(3): a fraction β > α of unsolvable items forces M* = ∞."""
    batch = simulate_agent(SyntheticAgent(0.9, unsolvable_fraction=0.2), 200, 10, np.random.default_rng(5))
    assert m_star(batch.scores, 0.10) == math.inf
    assert m_star(batch.scores, 0.30) < math.inf


# ------------------------------------------------------------------------------------- C.6: set size vs entropy
def test_set_size_rises_with_consensus_entropy():
    agent = SyntheticAgent(0.6, distractor_weights=(0.4, 0.3, 0.2, 0.1), concentration=2.0)
    rng = np.random.default_rng(12)
    cal, dep = simulate_agent(agent, 500, 10, rng), simulate_agent(agent, 3000, 10, rng)
    for alpha in (0.10, 0.20):
        ms = m_star(cal.scores, alpha)
        assert 2.0 <= ms < math.inf
        sizes = np.minimum(dep.n_classes, ms)
        assert np.corrcoef(dep.entropy, sizes)[0, 1] > 0.5  # paper Fig. 11: r > 0.5
        lo, mid, hi = np.array_split(np.argsort(dep.entropy, kind="stable"), 3)
        # non-decreasing across entropy terciles (the top ones may both be capped at M*), strictly overall
        assert sizes[lo].mean() < sizes[mid].mean() <= sizes[hi].mean()
        assert np.all(sizes[dep.entropy == 0] == 1)  # unanimous items get singletons (§11.4)
    # adaptive sets (eq. 6.7) at a level where the threshold is below 1
    q = adaptive_threshold(cal.cp_scores, 0.40)
    assert q < 1.0
    asizes = adaptive_set_sizes(dep, q)
    assert np.corrcoef(dep.entropy, asizes)[0, 1] > 0.5


# ------------------------------------------------------------------------- C.7: canonicalization amplification
def test_canonicalization_amplifies_consensus():
    """Prop. 4.6 / Remark 4.7 / App. C.7: six surface forms of the correct answer (0.1 each, total 0.6) against
    wrong answers of 0.25 and 0.15. Raw, no single form beats 0.25 (p_raw = 0.1 < ½); merged, p_canon = 0.6 > ½."""
    raw_probs = [0.1] * 6 + [0.25, 0.15]
    groups = [[0, 1, 2, 3, 4, 5], [6], [7]]
    trials, k = 4000, 10
    rng = np.random.default_rng(46)
    raw = draw_counts(raw_probs, trials, k, rng)
    tie = rng.random(raw.shape)
    canon, ctie = merge_columns(raw, tie, groups)
    raw_scores = rank_scores(raw, tie, range(6))  # generous to raw: any surface form counts as acceptable
    canon_scores = rank_scores(canon, ctie, [0])
    # pathwise: merging the acceptable surface forms never worsens the rank of the acceptable answer
    assert np.all(canon_scores <= raw_scores)
    raw_acc, canon_acc = np.mean(raw_scores == 1), np.mean(canon_scores == 1)
    exact = 1 - exact_mode_error([0.6, 0.25, 0.15], k)
    assert abs(canon_acc - exact) <= tolerance(exact, trials)
    assert 1 - canon_acc <= hoeffding_mode_bound(0.6, k)
    assert canon_acc - raw_acc > 0.3, (raw_acc, canon_acc)
    # and the prediction sets shrink (paper Table 8): calibrate on half, measure on the other half
    half = trials // 2
    n_raw, n_canon = (raw > 0).sum(axis=1), (canon > 0).sum(axis=1)
    size_raw = np.minimum(n_raw[half:], m_star(raw_scores[:half], 0.10)).mean()
    size_canon = np.minimum(n_canon[half:], m_star(canon_scores[:half], 0.10)).mean()
    assert size_canon < size_raw


def test_draw_counts_validates():
    with pytest.raises(ValueError):
        draw_counts([0.5, 0.6], 3, 4, np.random.default_rng())
    with pytest.raises(ValueError):
        SyntheticAgent(1.2)
    with pytest.raises(ValueError):
        simulate(SyntheticAgent(0.5, distractor_weights=(1.0,) * 5), make_noise(3, 2, np.random.default_rng(), n_columns=4))
