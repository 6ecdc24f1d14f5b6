"""Position bias: first-position share and order flips (majority per presentation order)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from relgate_tui.core.judge import TIE, PairwiseVerdict, position_bias
from relgate_tui.core.types import INVALID

V = PairwiseVerdict


def test_hand_counted_example():
    input1 = (
        [V("a", "b", "a")] * 3 + [V("b", "a", "b")] * 3  # a wins when first, b wins when first: flip to first
        + [V("a", "c", "a")] * 2 + [V("c", "a", "a")] * 2  # consistent: a in both orders
        + [V("b", "c", "b"), V("c", "b", "c"), V("c", "b", "b")]  # c-first order splits 1–1: undecided
        + [V("b", "c", INVALID), V("c", "b", TIE)]  # not valid
    )
    input2 = [V("a", "b", "b")] * 2 + [V("b", "a", "a")] * 3  # second position wins in both orders
    pb = position_bias([input1, input2])
    first_wins = 3 + 3 + 2 + 0 + 1 + 1 + 0 + 0  # a-b 6, a-c 2, b-c (b first won, c first won, c first lost)
    valid = 6 + 4 + 3 + 5
    assert pb.n_valid == valid and pb.n_first_wins == first_wins
    assert pb.first_share == pytest.approx(first_wins / valid)
    assert pb.first_share_pvalue == pytest.approx(binomtest(first_wins, valid, 0.5).pvalue)
    assert pb.n_pairs == 4  # a-b, a-c, b-c of input 1 and a-b of input 2 (pairs are per input)
    assert pb.n_pairs_decisive_both_orders == 3 and pb.n_pairs_undecided == 1
    assert pb.n_pairs_flipped == 2 and pb.flips_to_first == 1 and pb.flips_to_second == 1
    assert pb.flip_share == pytest.approx(2 / 3)


def test_pair_asked_in_one_order_only_is_undecided_and_no_valid_verdicts_gives_nan():
    pb = position_bias([[V("a", "b", "a")] * 3])
    assert pb.n_pairs_undecided == 1 and pb.n_pairs_decisive_both_orders == 0 and math.isnan(pb.flip_share)
    empty = position_bias([[V("a", "b", INVALID)]])
    assert empty.n_valid == 0 and math.isnan(empty.first_share) and math.isnan(empty.first_share_pvalue)


def test_simulated_judges_unbiased_versus_always_first():
    """An order-blind judge has first share ≈ 1/2 and few flips; a judge that always picks the first-shown answer
    has share 1 and flips every pair toward the first position."""
    rng = np.random.default_rng(0)
    unbiased, biased = [], []
    for _ in range(40):
        q = rng.normal(0, 2, 5)
        names = [f"s{i}" for i in range(5)]
        u, b = [], []
        for i in range(5):
            for j in range(5):
                if i == j:
                    continue
                p = 1 / (1 + np.exp(-(q[i] - q[j])))
                for _ in range(3):
                    u.append(V(names[i], names[j], names[i] if rng.random() < p else names[j]))
                    b.append(V(names[i], names[j], names[i]))
        unbiased.append(u)
        biased.append(b)
    pu, pbias = position_bias(unbiased), position_bias(biased)
    assert abs(pu.first_share - 0.5) < 0.03 and pu.first_share_pvalue > 0.01
    assert pbias.first_share == 1.0 and pbias.flip_share == 1.0 and pbias.flips_to_first == pbias.n_pairs == 400
    assert pu.flip_share < 0.3
