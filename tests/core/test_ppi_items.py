"""Issue 33 §4: ``population="items"`` — the judge-assisted bound on the N judged items themselves (labels drawn
without replacement from them, the judge's mean π_N exact, no Clopper–Pearson step)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from relgate_tui.core import ppi


@pytest.mark.slow
@pytest.mark.parametrize("agree", [0.5, 0.95])
def test_items_bound_is_valid_at_the_first_crossing(agree):
    """N = 200 items with exactly 180 acceptable (θ_N = 0.90); a reviewer labels them in a random order, all 200,
    stopping the first time the bound reaches θ_N: that happens in ≤ δ + 2 MC s.e. of runs."""
    rng = np.random.default_rng(7 if agree == 0.5 else 8)
    runs, big_n = 600, 200
    y = np.zeros((runs, big_n))
    f = np.zeros((runs, big_n))
    yes = np.zeros(runs)
    for r in range(runs):
        pop = np.r_[np.ones(180), np.zeros(20)]
        judge = np.where(rng.random(big_n) < agree, pop, 1 - pop)
        order = rng.permutation(big_n)
        y[r], f[r], yes[r] = pop[order], judge[order], judge.sum()
    path = ppi.bound_paths(yes, big_n, f, y, 0.95, population="items")
    share = float((path >= 0.90).any(1).mean())
    assert share <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs), share
    # with every item labelled the items bound knows θ_N almost exactly; the task bound cannot (it bounds the task)
    task = ppi.bound_paths(yes, big_n, f, y, 0.95)
    assert float(np.median(path[:, -1])) > float(np.median(task[:, -1]))


def test_items_bound_needs_no_step_from_the_judged_items():
    """A perfect judge on all N items: the items bound with a few labels is above the task bound (no CP step for
    π), and both are ≤ the truth here."""
    rng = np.random.default_rng(3)
    pop = (rng.random(2000) < 0.9).astype(float)
    order = rng.permutation(2000)[:60]
    items = ppi.reliability_bound(pop, pop[order], pop[order], population="items").lower
    task = ppi.reliability_bound(pop, pop[order], pop[order]).lower
    assert task < items <= pop.mean()
    with pytest.raises(ValueError):
        ppi.reliability_bound(pop, pop[order], pop[order], population="judged")
