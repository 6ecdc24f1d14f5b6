"""The planner (issue 41 §1): P(PASS) of the whole fixed sequence, checked against the shipped procedure."""

from __future__ import annotations

import numpy as np
import pytest

from relgate_tui.core.judge_certificate import selective
from relgate_tui.core.judge_certificate_plan import candidate_sequence, pass_probability, plan_labels


def _simulated_pass(n: int, a: float, e: float, below: float, cover: float, runs: int, seed: int) -> float:
    """Share of runs in which the shipped sequence (``selective``) certifies ≥ ``cover`` of n labelled items whose
    confidences are U(½, 1) and whose agreement is e on the ⌈cover n⌉ most confident, ``below`` on the rest."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(0.5, 1.0, (runs, n))
    rank = np.argsort(np.argsort(-c, axis=1), axis=1)
    z = (rng.random((runs, n)) < np.where(rank < np.ceil(cover * n), e, below)).astype(np.int64)
    passed = 0
    for r in range(runs):
        s = selective(c[r], z[r], c[r], a, 0.95)
        passed += s.threshold is not None and (s.coverage.value or 0.0) >= cover
    return passed / runs


@pytest.mark.parametrize(("a", "e", "below", "cover"), [(0.90, 0.97, 0.70, 0.30), (0.85, 0.97, 0.60, 0.50)])
def test_the_planners_half_and_ninety_hold_within_monte_carlo_error(a: float, e: float, below: float,
                                                                    cover: float) -> None:
    plan = plan_labels(a, e, cover, 0.95, expect_below=below)
    assert plan.n_half is not None and plan.n_ninety is not None
    for n, claimed, target in ((plan.n_half, plan.p_half, 0.5), (plan.n_ninety, plan.p_ninety, 0.9)):
        assert claimed is not None and claimed >= target
        runs = 500
        sim = _simulated_pass(n, a, e, below, cover, runs, seed=n)
        se = np.sqrt(claimed * (1 - claimed) / runs)
        assert abs(sim - claimed) <= 3.5 * se, (n, claimed, sim)


def test_the_issues_premise_the_old_planners_counts_rarely_pass_and_ninety_is_out_of_reach() -> None:
    """README: '177 labelled items with probability ½, 481 with probability 0.9' (c ~ U(½, 1), 0.95 on the top
    half, 0.6 below): the whole sequence passes in ≈ 7% and ≈ 49% — its first test, on 116 items, caps P(PASS)."""
    assert pass_probability(177, 0.9, 0.95, 0.95, 0.5, 0.6) < 0.1
    assert pass_probability(481, 0.9, 0.95, 0.95, 0.5, 0.6) < 0.5
    plan = plan_labels(0.9, 0.95, 0.5, 0.95, expect_below=0.6)
    assert plan.n_half is not None and plan.n_half > 481 and plan.n_ninety is None and plan.ceiling < 0.7
    assert abs(_simulated_pass(177, 0.9, 0.95, 0.6, 0.5, 400, seed=3) - 0.07) < 0.05


def test_the_counts_are_the_shipped_candidates_and_the_cap_is_kept() -> None:
    from relgate_tui.core.judge_certificate_plan import _distinct_counts, start_items

    for n in (30, 31, 117, 500, 1999, 4321):
        _, counts = candidate_sequence(np.arange(n, dtype=float), start_items(n, 0.9, 0.95))
        assert counts.tolist() == _distinct_counts(n, start_items(n, 0.9, 0.95)).tolist()
    capped = plan_labels(0.9, 0.97, 0.3, 0.95, have=100, cap=150, expect_below=0.7)
    assert capped.n_half is None and capped.cap == 150 and capped.p_cap == pytest.approx(
        pass_probability(150, 0.9, 0.95, 0.97, 0.3, 0.7))
    assert plan_labels(0.9, 0.85, 0.5).n_half is None  # an expected agreement below A never certifies
