import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from relgate_tui.core.certification.ranking import RankedClasses, rank_classes
from relgate_tui.core.certification.scores import (
    NONE_SCORE,
    acceptable_fraction,
    aps_score,
    cumulative_score,
    lac_score,
    rank_score,
    validate_rank_score,
)
from relgate_tui.core.types import INVALID

# K = 10: "42" ×4, "41" ×2, "40" ×2, "7" ×1, INVALID ×1 — the 41/40 tie already broken (order given explicitly)
ITEM = RankedClasses(classes=("42", "41", "40", "7"), counts=(4, 2, 2, 1), n_samples=10, n_invalid=1, tie_broken=True)


def test_rank_score_is_best_rank_over_acceptable_answers():
    assert rank_score(ITEM, ["42"]) == 1.0
    assert rank_score(ITEM, ["40"]) == 3.0
    # several acceptable answers: the minimum rank (eq. 10.1)
    assert rank_score(ITEM, ["7", "40", "nope"]) == 3.0
    assert rank_score(ITEM, ["nope"]) == math.inf
    assert rank_score(ITEM, []) == math.inf
    # INVALID is never acceptable, even if a caller lists it
    assert rank_score(ITEM, [INVALID]) == math.inf
    assert NONE_SCORE == math.inf
    with pytest.raises(TypeError):
        rank_score(ITEM, "42")


def test_cumulative_score_eq_6_2():
    assert cumulative_score(ITEM, ["42"]) == 0.4
    assert cumulative_score(ITEM, ["40"]) == 0.8
    assert cumulative_score(ITEM, ["7"]) == 0.9  # the INVALID sample's share is never counted
    assert cumulative_score(ITEM, ["x"]) == math.inf


def test_lac_score():
    assert lac_score(ITEM, ["42"]) == pytest.approx(0.6)
    assert lac_score(ITEM, ["7", "41"]) == pytest.approx(0.8)  # the most frequent acceptable class
    assert lac_score(ITEM, ["x"]) == math.inf


def test_aps_score_standard_randomized_form():
    # Σ_{j<r} P̂ + u·P̂(c_r): for "40" (rank 3) = 0.6 + u·0.2
    assert aps_score(ITEM, ["40"], 0.0) == pytest.approx(0.6)
    assert aps_score(ITEM, ["40"], 0.5) == pytest.approx(0.7)
    assert aps_score(ITEM, ["40"], 1.0) == cumulative_score(ITEM, ["40"])
    assert aps_score(ITEM, ["x"], 0.3) == math.inf
    g1, g2 = np.random.default_rng(4), np.random.default_rng(4)
    assert aps_score(ITEM, ["41"], g1) == aps_score(ITEM, ["41"], float(g2.random()))
    with pytest.raises(ValueError):
        aps_score(ITEM, ["41"], 1.5)


def test_acceptable_fraction_is_single_sample_accuracy():
    assert acceptable_fraction(ITEM, ["42"]) == 0.4
    assert acceptable_fraction(ITEM, ["42", "7", INVALID]) == 0.5
    assert acceptable_fraction(ITEM, ["x"]) == 0.0
    assert math.isnan(acceptable_fraction(RankedClasses((), (), 0), ["x"]))


@pytest.mark.parametrize("good", [1, 2.0, 17, math.inf, np.float64(3)])
def test_validate_rank_score_accepts(good):
    assert validate_rank_score(good) == float(good)


@pytest.mark.parametrize("bad", [0, 0.5, -1, 2.5, math.nan, -math.inf])
def test_validate_rank_score_rejects(bad):
    with pytest.raises(ValueError):
        validate_rank_score(bad)


classes = st.sampled_from(["a", "b", "c", "d", "e", INVALID])


@given(st.lists(classes, min_size=1, max_size=30), st.sets(classes, max_size=4), st.sets(classes, max_size=3), st.floats(0, 1))
def test_score_laws(answers, acc, extra, u):
    r = rank_classes(answers, np.random.default_rng(0))
    s = rank_score(r, acc)
    # eq. 10.1 is the min of the single-answer scores
    assert s == min([rank_score(r, [a]) for a in acc], default=math.inf)
    # more acceptable answers never raise the score
    assert rank_score(r, acc | extra) <= s
    # every score is infinite exactly when the rank score is
    for other in (cumulative_score(r, acc), lac_score(r, acc), aps_score(r, acc, u)):
        assert math.isinf(other) == math.isinf(s)
    if math.isfinite(s):
        cp = cumulative_score(r, acc)
        assert 0.0 < cp <= 1.0
        assert cp == pytest.approx(sum(r.shares[: int(s)]))
        assert cp - r.shares[int(s) - 1] - 1e-12 <= aps_score(r, acc, u) <= cp + 1e-12
        assert 0.0 <= lac_score(r, acc) < 1.0
        # the mode's cumulative share is phi; scores increase with rank
        if s == 1:
            assert cp == r.phi
