"""Likert protocols (issue 11 §2): the paper's one integer score per item as ŷ is the default of the conformal
analysis (paper 000 §3.2), the mean of k scores an option, and the result says which was used."""

from __future__ import annotations

import math

import numpy as np
import pytest

from relgate_tui.core.judge import (
    LIKERT_PROTOCOLS,
    likert_conformal_analysis,
    likert_conformal_table,
    likert_point_predictions,
    likert_set_widths,
)


def test_point_predictions_single_and_mean():
    scores = [[4, 2, 3], [None, 5, 1], ["x", float("nan"), 7], [2.0], []]
    single, replaced, none = likert_point_predictions(scores)
    assert single[:2].tolist() == [4.0, 5.0] and math.isnan(single[2]) and single[3] == 2.0 and math.isnan(single[4])
    assert replaced == 1 and none == 2
    mean, replaced_m, none_m = likert_point_predictions(scores, "mean")
    assert mean[:2].tolist() == [3.0, 3.0] and mean[3] == 2.0 and math.isnan(mean[2])
    assert replaced_m == 0 and none_m == 2
    assert LIKERT_PROTOCOLS == ("single", "mean")
    with pytest.raises(ValueError, match="protocol"):
        likert_point_predictions(scores, "median")


def _simulated(n: int = 200, k: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    human = rng.uniform(1, 5, size=n)
    scores = np.clip(np.rint(human[:, None] + rng.normal(0, 0.9, size=(n, k))), 1, 5).astype(int)
    return scores.tolist(), human


def test_analysis_defaults_to_the_papers_single_score_and_names_the_protocol():
    scores, human = _simulated()
    default = likert_conformal_analysis(scores, human, n_splits=5)
    assert default.protocol == "single"
    first = np.array([s[0] for s in scores], dtype=float)
    assert default.rows == likert_conformal_table(first, human, n_splits=5)
    assert default.n_items == 200 and default.max_scores_per_item == 3
    assert default.n_first_score_replaced == 0 and default.n_without_valid_score == 0
    mean = likert_conformal_analysis(scores, human, protocol="mean", n_splits=5)
    assert mean.protocol == "mean"
    assert mean.rows == likert_conformal_table(np.mean(scores, axis=1), human, n_splits=5)
    assert mean.rows != default.rows


def test_single_protocol_gives_integer_predictions_and_the_papers_widths():
    """With one integer ŷ and q̂ = 1 the sets have width 2 at the ends of the scale and 3 inside (paper §5.2), and
    ŷ is always in its own set; the mean of 3 scores gives real ŷ, whose set can be empty for a small q̂."""
    scores, _ = _simulated(60)
    single, _, _ = likert_point_predictions(scores)
    assert np.all(single == np.rint(single))
    assert set(likert_set_widths(single, 1.0).tolist()) <= {2, 3}
    assert set(likert_set_widths(single, 0.2).tolist()) == {1}  # an integer ŷ is always in its own set
    mean, _, _ = likert_point_predictions(scores, "mean")
    assert 0 in set(likert_set_widths(mean, 0.2).tolist())  # ŷ = 3.33 with q̂ = 0.2: an empty set
