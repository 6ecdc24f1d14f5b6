import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from relgate_tui.core.certification.conformal import (
    adaptive_prediction_set,
    adaptive_threshold,
    aps_prediction_set,
    calibration_message,
    lac_prediction_set,
    m_star,
    prediction_set,
    weighted_m_star,
)
from relgate_tui.core.certification.quantile import conformal_rank
from relgate_tui.core.certification.ranking import RankedClasses, rank_classes
from relgate_tui.core.certification.scores import aps_score, cumulative_score, lac_score
from relgate_tui.core.types import INVALID

ALPHAS = [0.01, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30]
ITEM = RankedClasses(("a", "b", "c"), (5, 3, 1), n_samples=10, n_invalid=1)


# ---------------------------------------------------------------------------------------- worked examples (α = 0.10)
def test_worked_example_45_3_2():
    scores = [1.0] * 45 + [2.0] * 3 + [math.inf] * 2
    assert conformal_rank(50, 0.10) == 46
    assert m_star(scores, 0.10) == 2.0
    assert prediction_set(ITEM, m_star(scores, 0.10)) == ("a", "b")
    assert calibration_message(50, 0.10, n_infinite=2) is None


def test_worked_example_n8_needs_9():
    for scores in ([1.0] * 8, [2.0, 1.0, 3.0, 1.0, 1.0, 1.0, 1.0, 1.0]):
        assert m_star(scores, 0.10) == math.inf
    msg = calibration_message(8, 0.10)
    assert msg == "not enough calibration items: need n ≥ 9 (have 8)"
    assert prediction_set(ITEM, math.inf) == ITEM.classes


def test_worked_example_all_none():
    assert m_star([math.inf] * 10, 0.10) == math.inf
    msg = calibration_message(10, 0.10, n_infinite=10)
    assert msg is not None and "10 of 10" in msg


@pytest.mark.parametrize("alpha", ALPHAS)
def test_message_threshold_is_ceil_inverse_alpha_minus_one(alpha):
    need = math.ceil(round(1 / alpha, 9)) - 1
    assert calibration_message(need, alpha) is None
    assert calibration_message(need - 1, alpha) == f"not enough calibration items: need n ≥ {need} (have {need - 1})"


def test_message_for_too_many_infinite_scores():
    # n = 20, α = 0.1: k = 19, so up to 1 infinite score keeps M* finite; 2 make it infinite.
    assert calibration_message(20, 0.10, n_infinite=1) is None
    assert m_star([1.0] * 19 + [math.inf], 0.10) == 1.0
    assert m_star([1.0] * 18 + [math.inf] * 2, 0.10) == math.inf
    assert calibration_message(20, 0.10, n_infinite=2) is not None


def test_m_star_rejects_nan():
    with pytest.raises(ValueError):
        m_star([1.0, math.nan], 0.1)


# -------------------------------------------------------------------------------------------------- top-M* sets
def test_prediction_set_sizes():
    assert prediction_set(ITEM, 1.0) == ("a",)
    assert prediction_set(ITEM, 3.0) == ("a", "b", "c")
    assert prediction_set(ITEM, 7.0) == ("a", "b", "c")  # M* above the class count: every class
    assert prediction_set(RankedClasses((), (), 2, 2), 1.0) == ()
    for bad in (0.0, 1.5, math.nan, -1.0):
        with pytest.raises(ValueError):
            prediction_set(ITEM, bad)


score_values = st.sampled_from([1.0, 1.0, 1.0, 2.0, 3.0, 4.0, math.inf])


@given(st.lists(score_values, max_size=80), st.floats(0.01, 0.5), st.floats(0.01, 0.5))
def test_sets_are_nested_in_alpha(scores, a1, a2):
    lo, hi = sorted((a1, a2))
    m_lo, m_hi = m_star(scores, lo), m_star(scores, hi)
    assert m_hi <= m_lo
    assert set(prediction_set(ITEM, m_hi)) <= set(prediction_set(ITEM, m_lo))


@given(st.lists(score_values, min_size=1, max_size=80), st.floats(0.01, 0.6))
def test_guarantee_structure_and_reliability_duality(scores, alpha):
    n = len(scores)
    k = conformal_rank(n, alpha)
    q = m_star(scores, alpha)
    s = np.asarray(scores)
    if math.isfinite(q):
        # at least k of the n calibration scores are covered by M*, and fewer than k by anything smaller
        assert np.sum(s <= q) >= k and np.sum(s < q) < k
    # Def. 2.4: the mode alone (M* ≤ 1) suffices exactly when 1 − α ≤ #{s ≤ 1}/(n + 1)
    x = (n + 1) * (1 - alpha)
    assume(abs(x - round(x)) > 1e-6)  # away from the floating guard of conformal_rank
    level = np.sum(s <= 1) / (n + 1)
    assert (q <= 1.0) == (1 - alpha <= level)
    assert 0.0 <= level < 1.0


# ------------------------------------------------------------------------------------------------- adaptive sets
def test_adaptive_set_eq_6_7():
    # cumulative shares of ITEM: 0.5, 0.8, 0.9
    assert adaptive_prediction_set(ITEM, 0.5) == ("a",)
    assert adaptive_prediction_set(ITEM, 0.6) == ("a", "b")
    assert adaptive_prediction_set(ITEM, 0.85) == ("a", "b", "c")
    assert adaptive_prediction_set(ITEM, 0.95) == ("a", "b", "c")  # never reached (INVALID share): every class
    assert adaptive_prediction_set(ITEM, math.inf) == ("a", "b", "c")
    assert adaptive_threshold([0.5, 0.8, 0.9, 1.0] * 5, 0.1) == 1.0
    assert adaptive_threshold([0.5] * 5, 0.1) == math.inf


answers = st.lists(st.sampled_from(["a", "b", "c", "d", INVALID]), min_size=1, max_size=25)


@given(answers, st.sets(st.sampled_from(["a", "b", "c", "d", "z"]), min_size=1), st.floats(0.0, 1.2))
def test_adaptive_set_covers_iff_cp_score_within_threshold(ans, acc, q):
    r = rank_classes(ans, np.random.default_rng(1))
    s = cumulative_score(r, acc)
    in_set = bool(set(adaptive_prediction_set(r, q)) & acc)
    if s <= q:
        assert in_set
    # and with q set to the item's own score, the set stops exactly at the acceptable class
    if math.isfinite(s):
        assert adaptive_prediction_set(r, s)[-1] in acc


@given(answers, st.sets(st.sampled_from(["a", "b", "c", "d", "z"]), min_size=1), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_lac_and_aps_sets_contain_acceptable_iff_score_within_threshold(ans, acc, tau, u):
    r = rank_classes(ans, np.random.default_rng(2))
    assert (lac_score(r, acc) <= tau) == bool(set(lac_prediction_set(r, tau)) & acc)
    assert (aps_score(r, acc, u) <= tau) == bool(set(aps_prediction_set(r, tau, u)) & acc)


# ------------------------------------------------------------------------------------------------------ weighted
@given(st.lists(score_values, max_size=60), st.floats(0.01, 0.6), st.floats(0.1, 50.0))
def test_equal_weights_reproduce_the_unweighted_threshold(scores, alpha, w):
    assert weighted_m_star(scores, np.ones(len(scores)), alpha) == m_star(scores, alpha)
    # only relative weights matter (exactly: the weights are normalised by the largest one first)
    assert weighted_m_star(scores, np.full(len(scores), w), alpha, test_weight=w) == m_star(scores, alpha)


def test_weighted_quantile_by_hand():
    scores = [1.0, 2.0, 3.0]
    weights = [1.0, 1.0, 8.0]
    # masses 1/11, 1/11, 8/11 and 1/11 at +inf: cumulative 1/11, 2/11, 10/11
    assert weighted_m_star(scores, weights, 0.10) == 3.0  # 10/11 ≥ 0.90
    assert weighted_m_star(scores, weights, 0.05) == math.inf  # 10/11 < 0.95
    # heavy weight on the easy item lowers the threshold
    assert weighted_m_star(scores, [20.0, 1.0, 1.0], 0.15) == 1.0
    # a test point with a huge likelihood ratio leaves too little calibration mass
    assert weighted_m_star(scores, [20.0, 1.0, 1.0], 0.15, test_weight=100.0) == math.inf


def test_weighted_rejects_bad_weights():
    with pytest.raises(ValueError):
        weighted_m_star([1.0, 2.0], [1.0], 0.1)
    with pytest.raises(ValueError):
        weighted_m_star([1.0, 2.0], [1.0, -1.0], 0.1)
    with pytest.raises(ValueError):
        weighted_m_star([1.0, 2.0], [0.0, 0.0], 0.1, test_weight=0.0)
    with pytest.raises(ValueError):
        weighted_m_star([1.0], [math.nan], 0.1)
    with pytest.raises(ValueError):
        weighted_m_star([1.0], [1.0], 1.5)
