"""Paper 001's nine methods use relgate's one conformal quantile (issue 28 §4): the numbers are those of the copy
``core/judge_intervals/base.py`` held before — checked against that copy, kept here verbatim as the reference, on
every n up to 400 and the α the methods use (α and α/2 of the usual levels, and seeded random ones), with ties,
±∞ and the empty set."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from relgate_tui.core.certification import quantile
from relgate_tui.core.judge_intervals import base


def _old_rank(n: int, alpha: float) -> int:
    return int(math.ceil((n + 1) * (1.0 - alpha) - 1e-9))


def _old_quantile(scores: np.ndarray, alpha: float) -> float:
    s = np.sort(np.asarray(scores, dtype=float))
    k = _old_rank(s.size, alpha)
    if k > s.size or s.size == 0:
        return math.inf
    return float(s[max(k, 1) - 1])


def _old_lower(scores: np.ndarray, alpha: float) -> float:
    s = np.sort(np.asarray(scores, dtype=float))
    k = int(math.floor((s.size + 1) * alpha + 1e-9))
    if k < 1:
        return -math.inf
    return float(s[k - 1])


ALPHAS = sorted({a for lvl in (0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 1 / 3, 0.4, 0.5) for a in (lvl, lvl / 2)}
                | set(np.random.default_rng(7).uniform(0.001, 0.999, 40).tolist()))


def test_the_nine_methods_use_the_one_conformal_quantile():
    assert base.conformal_quantile is quantile.conformal_quantile


def test_same_numbers_as_the_copy_it_replaces_on_every_n_and_alpha():
    rng = np.random.default_rng(0)
    for n in range(0, 401):
        scores = np.round(rng.normal(size=n), 1)  # rounded: ties
        for alpha in ALPHAS:
            assert base.conformal_quantile(scores, alpha) == _old_quantile(scores, alpha), (n, alpha)
            assert base.lower_conformal_quantile(scores, alpha) == _old_lower(scores, alpha), (n, alpha)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e6, 1e6), st.sampled_from([math.inf, -math.inf])), max_size=60),
       st.floats(0.001, 0.999))
def test_same_numbers_with_infinities(values: list[float], alpha: float):
    s = np.asarray(values, dtype=float)
    assert base.conformal_quantile(s, alpha) == _old_quantile(s, alpha)
    assert base.lower_conformal_quantile(s, alpha) == _old_lower(s, alpha)
