import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from relgate_tui.core.certification.quantile import conformal_quantile, conformal_rank, min_calibration_size


def test_worked_example_n50():
    scores = [1.0] * 45 + [2.0] * 3 + [math.inf] * 2
    assert conformal_rank(50, 0.10) == 46
    assert conformal_quantile(scores, 0.10) == 2.0


def test_too_few_items_gives_infinity_never_clamped():
    assert conformal_rank(8, 0.10) == 9
    assert conformal_quantile([1.0] * 8, 0.10) == math.inf
    assert min_calibration_size(0.10) == 9
    assert conformal_quantile([1.0] * 9, 0.10) == 1.0


def test_all_none_is_infinite():
    assert conformal_quantile([math.inf] * 10, 0.10) == math.inf


@pytest.mark.parametrize("alpha,expected", [(0.05, 19), (0.2, 4), (0.25, 3), (0.3, 3), (0.01, 99)])
def test_min_calibration_size_is_ceil_inverse_alpha_minus_one(alpha, expected):
    assert min_calibration_size(alpha) == expected == math.ceil(round(1 / alpha, 9)) - 1


@given(st.lists(st.sampled_from([1.0, 2.0, 3.0, math.inf]), max_size=60), st.floats(0.01, 0.5))
def test_quantile_is_an_order_statistic_or_inf(scores, alpha):
    q = conformal_quantile(scores, alpha)
    k = conformal_rank(len(scores), alpha)
    if k > len(scores):
        assert q == math.inf
    else:
        assert q == sorted(scores)[k - 1]
        # at least k of the n scores are <= q
        assert np.sum(np.asarray(scores) <= q) >= k
