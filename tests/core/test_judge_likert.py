"""Split conformal prediction sets over 1–5 Likert judge scores (paper 000 §3.2, eqs. 2–3, Table 5)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from relgate_tui.core.certification.quantile import conformal_rank
from relgate_tui.core.judge import (
    DEFAULT_ALPHAS,
    inter_judge_width_agreement,
    likert_conformal_table,
    likert_nonconformity,
    likert_prediction_sets,
    likert_set_widths,
    round_human_mean,
    seeded_splits,
    spearman_or_nan,
    split_conformal_likert,
)

HANNA = Path(__file__).resolve().parents[2] / "assets" / "judge" / "hanna.jsonl"  # the bundled copy (MIT)
HANNA_CRITERIA = ("Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity")


def noisy_rounded_judge(human_means: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    """Simulated direct-scoring judge: human mean + N(0, σ²), rounded to the nearest integer on 1..5."""
    rng = np.random.default_rng(seed)
    return np.clip(np.rint(human_means + rng.normal(0.0, sigma, human_means.size)), 1, 5)


def test_rounding_of_human_means_halves_up():
    assert round_human_mean([1.0, 1.49, 1.5, 2.5, 3.3333333, 3.6666667, 4.5, 5.0]).tolist() == [1, 1, 2, 3, 3, 4, 5, 5]
    with pytest.raises(ValueError, match="1-5 scale"):
        round_human_mean([0.5])
    with pytest.raises(ValueError, match="missing"):
        round_human_mean([float("nan")])


def test_prediction_sets_follow_eq_3():
    assert likert_prediction_sets([3, 1, 5], 1.0) == ((2, 3, 4), (1, 2), (4, 5))
    assert likert_set_widths([3, 1, 5], 1.0).tolist() == [3, 2, 2]
    assert likert_prediction_sets([3], 0.0) == ((3,),)
    assert likert_prediction_sets([3.5, 3.0, 3.5], 0.6) == ((3, 4), (3,), (3, 4))
    assert likert_prediction_sets([2.5], 0.4) == ((),)  # real-valued ŷ and small q̂: empty set
    assert likert_prediction_sets([3.1], 1.1) == ((2, 3, 4),)  # |3.1 − 2| = 1.1 exactly (floating guard)
    assert likert_prediction_sets([3, float("nan")], math.inf) == ((1, 2, 3, 4, 5),) * 2
    assert likert_prediction_sets([float("nan")], 4.0) == ((),)
    assert likert_nonconformity([2.5, float("nan")], [4, 1]).tolist() == [1.5, math.inf]
    with pytest.raises(ValueError, match="finite"):
        likert_set_widths([math.inf], 1.0)


def test_coverage_flag_equals_set_membership():
    rng = np.random.default_rng(0)
    preds = np.where(rng.random(300) < 0.1, np.nan, rng.uniform(1, 5, 300).round(1))
    y = rng.integers(1, 6, 300)
    for alpha in (0.05, 0.3, 0.6):
        res = split_conformal_likert(preds[:150], y[:150], preds[150:], y[150:], alpha)
        sets = likert_prediction_sets(preds[150:], res.q_hat)
        assert res.covered.tolist() == [int(t) in s for t, s in zip(y[150:], sets)]
        assert res.widths.tolist() == [len(s) for s in sets]


def test_too_few_calibration_items_give_q_infinity_and_full_sets():
    """n_cal = 5 < ⌈1/0.05⌉ − 1 = 19: k = ⌈6 · 0.95⌉ = 6 > 5 ⇒ q̂ = ∞ (SPEC §3.4), every set is 1..5."""
    h = np.array([1, 2, 3, 4, 5, 1, 2, 3, 4, 5], dtype=float)
    (row,) = likert_conformal_table(np.full(10, 3.0), h, alphas=[0.05], n_splits=4)
    assert row.n_cal == 5 and row.n_infinite_q == 4 and math.isinf(row.mean_q_hat)
    assert row.coverage == 1.0 and row.mean_width == 5.0


def test_splits_are_seeded_permutations():
    a = seeded_splits(11, 3, seed=5)
    b = seeded_splits(11, 3, seed=5)
    assert all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(a, b))
    for cal, test in a:
        assert cal.size == 5 and test.size == 6 and sorted(np.concatenate([cal, test]).tolist()) == list(range(11))
    assert not np.array_equal(a[0][0], seeded_splits(11, 1, seed=6)[0][0])
    with pytest.raises(ValueError):
        seeded_splits(1, 3)


def test_table_rows_are_averages_over_the_same_splits():
    rng = np.random.default_rng(1)
    h = rng.integers(3, 16, 80) / 3
    preds = noisy_rounded_judge(h, 1.0, 2) + rng.choice([0.0, 0.25], 80)
    rows = likert_conformal_table(preds, h, alphas=[0.1, 0.2], n_splits=7, seed=3)
    y = round_human_mean(h)
    for row in rows:
        res = [split_conformal_likert(preds[c], y[c], preds[t], y[t], row.alpha) for c, t in seeded_splits(80, 7, 3)]
        assert row.coverage == pytest.approx(np.mean([r.coverage for r in res]))
        assert row.mean_width == pytest.approx(np.mean([r.mean_width for r in res]))
        assert row.mean_q_hat == pytest.approx(np.mean([r.q_hat for r in res]))
        rhos = [spearman_or_nan(r.widths, r.errors) for r in res]
        assert row.spearman_width_error == pytest.approx(np.nanmean(rhos))
        assert row.target_coverage == pytest.approx(1 - row.alpha) and row.n_splits == 7


def _assert_valid(rows, label):
    assert [r.alpha for r in rows] == list(DEFAULT_ALPHAS)
    for r in rows:
        assert r.n_splits == 20
        assert r.coverage >= 1 - r.alpha, f"{label}: coverage {r.coverage:.3f} < {1 - r.alpha:.2f}"
        assert 0 < r.mean_width < 5 or r.n_infinite_q > 0


@pytest.mark.parametrize("sigma", [0.5, 0.8, 1.2])
def test_coverage_on_synthetic_likert_data(sigma):
    """Never skipped: human means of 3 simulated raters, judge = noisy rounded human mean."""
    rng = np.random.default_rng(42)
    latent = rng.uniform(1, 5, 800)
    raters = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.7, (800, 3))), 1, 5)
    h = raters.mean(axis=1)
    rows = likert_conformal_table(noisy_rounded_judge(h, sigma, 7), h)
    _assert_valid(rows, f"synthetic σ={sigma}")


@pytest.mark.parametrize("criterion", HANNA_CRITERIA)
def test_coverage_on_hanna_human_scores_with_a_simulated_judge(criterion):
    inputs = [json.loads(line) for line in HANNA.read_text(encoding="utf-8").split("\n") if line.strip()]
    h = np.array([c["human"][criterion] for i in inputs for c in i["candidates"]], dtype=float)
    assert h.size == 1056
    for sigma in (0.5, 0.8, 1.2):
        _assert_valid(likert_conformal_table(noisy_rounded_judge(h, sigma, 0), h, seed=1), f"{criterion} σ={sigma}")


def test_mean_coverage_equals_k_over_n_plus_one_for_continuous_scores():
    """Real-valued judge scores ⇒ distinct nonconformity scores ⇒ over random splits the expected test coverage is
    exactly k/(n+1), k = ⌈(n+1)(1−α)⌉ (≥ 1−α, < 1−α + 1/(n+1)). 2,000 seeded splits; tolerance 4 standard
    errors of the split mean."""
    rng = np.random.default_rng(9)
    h = rng.integers(3, 16, 200) / 3
    preds = h + rng.normal(0, 0.8, 200)  # not clipped to 1..5: clipping would create tied scores
    assert np.unique(likert_nonconformity(preds, round_human_mean(h))).size == 200
    for row in likert_conformal_table(preds, h, n_splits=2000, seed=4):
        exact = conformal_rank(row.n_cal, row.alpha) / (row.n_cal + 1)
        assert abs(row.coverage - exact) < 4 * row.coverage_sd / math.sqrt(row.n_splits), row


def test_spearman_helper():
    assert math.isnan(spearman_or_nan([2, 2, 2], [1, 2, 3]))
    assert math.isnan(spearman_or_nan([1], [1]))
    assert spearman_or_nan([1, 2, 3, 4], [10, 20, 30, 45]) == pytest.approx(1.0)
    assert spearman_or_nan([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    rng = np.random.default_rng(8)
    for _ in range(100):
        n = int(rng.integers(2, 40))
        x = rng.integers(0, 5, n).astype(float)
        y = np.where(rng.random(n) < 0.1, np.inf, rng.integers(0, 4, n).astype(float))
        if len(set(x)) > 1 and len(set(y)) > 1:
            assert spearman_or_nan(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    with pytest.raises(ValueError, match="NaN"):
        spearman_or_nan([1.0, float("nan")], [1.0, 2.0])


def test_inter_judge_width_agreement():
    """Identical judges agree perfectly; judges whose real-valued scores share an item-difficulty component agree
    positively; independent judges do not."""
    rng = np.random.default_rng(5)
    n = 600
    h = rng.integers(3, 16, n) / 3
    hard = rng.random(n) < 0.4  # hard items: both judges drift by ±0.5
    drift = np.where(hard, rng.choice([-0.5, 0.5], n), 0.0)
    a = np.clip(h + drift + rng.normal(0, 0.05, n), 1, 5)
    b = np.clip(h + drift + rng.normal(0, 0.05, n), 1, 5)
    c = np.clip(h + rng.uniform(-0.5, 0.5, n), 1, 5)
    d = np.clip(h + rng.uniform(-0.5, 0.5, n), 1, 5)
    assert inter_judge_width_agreement(a, a, h) == pytest.approx(1.0)
    assert inter_judge_width_agreement(a, b, h) > 0.5
    assert abs(inter_judge_width_agreement(c, d, h)) < 0.15
    with pytest.raises(ValueError, match="same items"):
        inter_judge_width_agreement(a, b[:-1], h)
