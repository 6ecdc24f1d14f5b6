"""Weighted conformal sets under covariate shift (eq. 10.2; core/weighted_sets.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from relgate_tui.core.certification.conformal import m_star, weighted_m_star, weighted_m_stars
from relgate_tui.core.certification.ranking import RankedClasses
from relgate_tui.core.certification.weighted_sets import (
    WeightedDeploymentItem,
    weighted_conformal,
    weighted_json,
    weighted_summary,
)
from relgate_tui.core.jsonsafe import dumps

RANKED = RankedClasses(("a", "b", "c", "d"), (4, 3, 2, 1), 10)
score_values = st.one_of(st.integers(1, 6).map(float), st.just(math.inf))


# --------------------------------------------------------------------------------------------------------- laws
@given(st.lists(score_values, max_size=60), st.floats(0.01, 0.6), st.floats(1e-6, 1e6),
       st.lists(st.floats(0.0, 50.0), max_size=5))
def test_equal_weights_reproduce_the_unweighted_m_star(scores, alpha, w, other_tests):
    """Law: with every weight equal (test weight included) M*_w = M* exactly, at any common scale — and the
    per-item function agrees with the scalar one at every test weight."""
    expected = m_star(scores, alpha)
    got = weighted_m_stars(scores, np.full(len(scores), w), alpha, [w, w])
    assert list(got) == [expected, expected]
    ws = np.full(len(scores), w)
    tests = [w, *other_tests]
    many = weighted_m_stars(scores, ws, alpha, tests)
    for t, value in zip(tests, many, strict=True):
        if w * len(scores) + t > 0:
            assert value == weighted_m_star(scores, ws, alpha, test_weight=t)
    if scores:
        items = [WeightedDeploymentItem(str(i), RANKED, w) for i in range(3)]
        wc = weighted_conformal(scores, np.full(len(scores), w), items, alpha)
        assert all(it.m_star == expected for it in wc.items)


@given(st.lists(st.tuples(score_values, st.floats(0.0, 10.0)), min_size=1, max_size=40), st.floats(0.02, 0.5),
       st.floats(0.0, 10.0), st.floats(0.0, 10.0))
def test_a_heavier_test_weight_never_lowers_m_star_w(pairs, alpha, t1, t2):
    """More mass on +∞ (a test item rarer under calibration) can only widen the set."""
    scores, weights = zip(*pairs, strict=True)
    lo, hi = sorted((t1, t2))
    a, b = weighted_m_stars(scores, weights, alpha, [lo, hi])
    assert a <= b


def test_weights_tiny_beside_another_test_weight_still_give_the_unweighted_m_star():
    """Calibration weights and one test weight of 1e-310 (subnormal) beside a test weight of 1: divided by the
    largest weight, that row's total mass is subnormal and (n + 1)/total overflowed (inf × 0 = NaN masses). Equal
    weights are the unweighted case, so the row's M*_w is M*."""
    scores = [1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    with np.errstate(over="raise", invalid="raise"):
        got = weighted_m_stars(scores, [1e-310] * 10, 0.2, [1.0, 1e-310])
    assert got[1] == m_star(scores, 0.2) and got[0] == math.inf


# ------------------------------------------------------------------------------------------------ exact example
def test_exact_small_example():
    # calibration scores 1, 1, 2, 3 with weights 1, 1, 1, 5 (total 8); α = 0.2
    scores, weights = [1.0, 2.0, 1.0, 3.0], [1.0, 1.0, 1.0, 5.0]
    # test weight 1: masses /9 → cumulative at 1: 2/9, at 2: 3/9, at 3: 8/9 ≥ 0.8 → M*_w = 3
    # test weight 0.5: /8.5 → at 3: 8/8.5 = 0.941 → 3; test weight 2: /10 → at 3: 0.8 ≥ 0.8 → 3
    # test weight 3: /11 → at 3: 8/11 = 0.727 < 0.8 → ∞
    items = [
        WeightedDeploymentItem("p", RANKED, 1.0, 3.0),
        WeightedDeploymentItem("q", RANKED, 2.0, math.inf),
        WeightedDeploymentItem("r", RANKED, 3.0, 4.0),
        WeightedDeploymentItem("s", RankedClasses(("x",), (2,), 2), 0.5, None),
    ]
    wc = weighted_conformal(scores, weights, items, 0.2, confidence=0.9)
    assert [it.m_star for it in wc.items] == [3.0, 3.0, math.inf, 3.0]
    assert [it.prediction_set for it in wc.items] == [("a", "b", "c"), ("a", "b", "c"), ("a", "b", "c", "d"), ("x",)]
    assert [it.covered for it in wc.items] == [True, False, True, None]
    assert wc.n_infinite == 1 and wc.share_infinite == 0.25
    assert wc.average_set_size == (3 + 3 + 4 + 1) / 4
    assert wc.coverage is not None and (wc.coverage.successes, wc.coverage.n) == (2, 3)
    assert wc.coverage.confidence == 0.9
    assert wc.effective_n_cal == pytest.approx(8 ** 2 / 28)  # Kish: (Σw)²/Σw²
    assert wc.m_star_frequencies == {3.0: 3, math.inf: 1}
    doc = weighted_json(wc)
    assert doc is not None and doc["m_star_frequencies"] == {"3": 3, "inf": 1} and doc["n_deployment"] == 4
    assert doc["coverage"]["n"] == 3 and doc["coverage"]["successes"] == 2 and "NaN" not in dumps(doc)
    assert weighted_json(None) is None
    line = weighted_summary(wc)
    assert "{3: 3, ∞: 1}" in line and "∞ for 25%" in line and "coverage 66.7%" in line


def test_zero_and_huge_weights():
    # every weight zero (no calibration information) → ∞; huge finite weights do not overflow
    assert list(weighted_m_stars([1.0, 2.0], [0.0, 0.0], 0.5, [0.0, 1.0])) == [math.inf, math.inf]
    assert list(weighted_m_stars([1.0, 2.0, 2.0], [1e308, 1e308, 1e308], 0.25, [1e308])) == [2.0]
    assert weighted_m_stars([1.0], [1.0], 0.5, []).size == 0
    with pytest.raises(ValueError):
        weighted_m_stars([1.0], [1.0], 0.5, [-1.0])
    with pytest.raises(ValueError):
        weighted_m_stars([1.0], [math.nan], 0.5, [1.0])
    empty = weighted_conformal([1.0, 1.0], [1.0, 1.0], [], 0.3)
    assert math.isnan(empty.share_infinite) and empty.coverage is None and "no deployment items" in weighted_summary(empty)


# ------------------------------------------------------------------------------------------- covariate shift
def test_covariate_shift_weighted_covers_where_unweighted_under_covers():
    """Two kinds of question: easy (rank score 1 w.p. 0.95, else 2) and hard (1: 0.5, 2: 0.25, 3: 0.2, ∞: 0.05).
    Calibration questions are 10% hard, deployment questions 70% hard, so w(easy) = 0.3/0.9, w(hard) = 0.7/0.1.
    At α = 0.1 the unweighted M* (1 or 2) covers ~64–86% of the shifted items; M*_w (3 on hard, 1–3 on easy) covers
    ≥ 90% averaged over 300 seeded calibration draws (the guarantee is marginal over calibration and test)."""
    rng = np.random.default_rng(20261123)
    alpha, n_cal, n_test, trials = 0.1, 200, 100, 300
    w_of = {False: 0.3 / 0.9, True: 0.7 / 0.1}

    def draw(hard: np.ndarray) -> np.ndarray:
        u = rng.random(hard.size)
        easy_s = np.where(u < 0.95, 1.0, 2.0)
        hard_s = np.select([u < 0.5, u < 0.75, u < 0.95], [1.0, 2.0, 3.0], math.inf)
        return np.where(hard, hard_s, easy_s)

    cov_w, cov_u = [], []
    for _ in range(trials):
        cal_hard = rng.random(n_cal) < 0.1
        test_hard = rng.random(n_test) < 0.7
        cal_s, test_s = draw(cal_hard), draw(test_hard)
        cal_w = np.where(cal_hard, w_of[True], w_of[False])
        items = [WeightedDeploymentItem(str(i), RANKED, w_of[bool(h)], float(s))
                 for i, (h, s) in enumerate(zip(test_hard, test_s, strict=True))]
        wc = weighted_conformal(cal_s, cal_w, items, alpha)
        assert wc.coverage is not None
        cov_w.append(wc.coverage.estimate)
        m = m_star(cal_s, alpha)
        cov_u.append(float(np.mean(np.isfinite(test_s) & (test_s <= m))))
    assert np.mean(cov_w) >= 1 - alpha
    assert np.mean(cov_u) < 1 - alpha - 0.03
