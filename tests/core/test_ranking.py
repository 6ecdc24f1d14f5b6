import math
from collections import Counter
from itertools import permutations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from relgate_tui.core.certification.ranking import (
    RankedClasses,
    leader_tie_rate,
    rank_classes,
    rank_from_counts,
    tie_rate,
)
from relgate_tui.core.types import INVALID


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_ranks_by_count_and_sets_invalid_aside():
    answers = ["b"] * 3 + ["a"] * 5 + [INVALID] + ["c"]
    r = rank_classes(answers, rng())
    assert r.classes == ("a", "b", "c")
    assert r.counts == (5, 3, 1)
    assert (r.n_samples, r.n_invalid, r.n_classes) == (10, 1, 3)
    assert not r.tie_broken and not r.leader_tied
    assert r.leader == "a"
    # shares are of all K = 10 samples, INVALID included in the denominator (paper: P̂_K(c) = count / K)
    assert r.shares == (0.5, 0.3, 0.1)
    assert r.cumulative_shares == (0.5, 0.8, 0.9)
    assert r.phi == 0.5
    assert r.margin == pytest.approx(0.2)
    assert r.entropy == pytest.approx(-(0.5 * math.log(0.5) + 0.3 * math.log(0.3) + 0.1 * math.log(0.1)))
    assert r.rank_of("b") == 2.0 and r.rank_of("zzz") == math.inf and r.rank_of(INVALID) == math.inf
    assert r.count_of(INVALID) == 1 and r.count_of("c") == 1 and r.count_of("zzz") == 0


def test_single_class_and_no_valid_class():
    r = rank_classes(["7"] * 4, rng())
    assert (r.phi, r.margin, r.entropy) == (1.0, 1.0, 0.0)
    r = rank_classes([INVALID] * 3, rng())
    assert r.classes == () and r.leader is None and (r.phi, r.margin, r.entropy) == (0.0, 0.0, 0.0)
    assert r.n_invalid == 3 and r.n_samples == 3
    r = rank_classes([], rng())
    assert r.n_samples == 0 and r.shares == () and r.phi == 0.0


def test_ties_are_broken_at_random_not_alphabetically():
    # Three tied classes: every one of the 3! orders must appear about equally often (uniform tie-breaking).
    g = rng(42)
    trials = 6000
    orders = Counter(rank_classes(["a", "b", "c", "a", "b", "c"], g).classes for _ in range(trials))
    assert set(orders) == set(permutations("abc"))
    expected = trials / 6
    sd = math.sqrt(trials * (1 / 6) * (5 / 6))
    for count in orders.values():
        assert abs(count - expected) < 5 * sd  # 5 binomial sd: a correct sampler essentially never fails


def test_ties_only_among_equal_counts_and_flags():
    r = rank_classes(["x", "x", "x", "b", "a", "c", "c"], rng(1))
    assert r.classes[0] == "x" and r.classes[1] == "c" and set(r.classes[2:]) == {"a", "b"}
    assert r.tie_broken and not r.leader_tied
    r = rank_classes(["y", "z"], rng(1))
    assert r.tie_broken and r.leader_tied


def test_untied_rankings_do_not_consume_randomness():
    g = rng(5)
    rank_classes(["a", "a", "b"], g)
    assert g.random() == rng(5).random()


def test_seeded_and_independent_of_answer_order():
    answers = ["p", "q", "r", "s", "p", "q", "r", "s", INVALID]
    base = rank_classes(answers, rng(9))
    for perm_seed in range(10):
        shuffled = list(np.random.default_rng(perm_seed).permutation(answers))
        assert rank_classes(shuffled, rng(9)) == base
    # a different seed may break the tie differently (and over several seeds it does)
    assert len({rank_classes(answers, rng(s)).classes for s in range(20)}) > 1


def test_rank_from_counts():
    r = rank_from_counts({"a": 2, "b": 0, INVALID: 3, "c": 5}, n_invalid=1, rng=rng())
    assert r.classes == ("c", "a") and r.counts == (5, 2) and r.n_invalid == 4 and r.n_samples == 11
    assert rank_from_counts({"a": 2, "b": 2}, 0, rng(3)) == rank_from_counts({"b": 2, "a": 2}, 0, rng(3))
    with pytest.raises(ValueError):
        rank_from_counts({"a": -1}, 0, rng())
    with pytest.raises(ValueError):
        rank_from_counts({"a": 1}, -1, rng())


def test_ranked_classes_validates_its_invariants():
    with pytest.raises(ValueError):
        RankedClasses(("a", "b"), (1, 2), 3)  # increasing counts
    with pytest.raises(ValueError):
        RankedClasses(("a",), (2,), 3)  # counts do not add up
    with pytest.raises(ValueError):
        RankedClasses((INVALID,), (2,), 2)
    with pytest.raises(ValueError):
        RankedClasses(("a", "a"), (2, 1), 3)


def test_tie_rates():
    ranked = [
        rank_classes(["a", "b"], rng()),  # leader tie
        rank_classes(["a", "a", "b", "c"], rng()),  # tie below the leader
        rank_classes(["a", "a", "b"], rng()),  # no tie
        rank_classes(["a"], rng()),
    ]
    assert tie_rate(ranked) == 0.5
    assert leader_tie_rate(ranked) == 0.25
    assert math.isnan(tie_rate([]))


answers_strategy = st.lists(st.sampled_from(["a", "b", "c", "d", "e", INVALID]), max_size=40)


@given(answers_strategy, st.integers(0, 2**32 - 1))
def test_ranking_properties(answers, seed):
    r = rank_classes(answers, rng(seed))
    counts = Counter(answers)
    assert r.n_samples == len(answers) and r.n_invalid == counts[INVALID]
    assert set(r.classes) == {c for c in counts if c != INVALID}
    assert all(r.count_of(c) == counts[c] for c in r.classes)
    assert list(r.counts) == sorted(r.counts, reverse=True)
    # eq. 4.8 up to the random order among ties
    for c in r.classes:
        above = sum(1 for d in r.classes if r.count_of(d) > r.count_of(c))
        at_least = sum(1 for d in r.classes if r.count_of(d) >= r.count_of(c))
        assert above + 1 <= r.rank_of(c) <= at_least
    assert r.tie_broken == (len(set(r.counts)) < len(r.counts))
    assert 0.0 <= r.margin <= r.phi <= 1.0
    valid_mass = sum(r.shares)
    if valid_mass > 0:  # max of -Σp ln p over m classes with Σp = s is s·ln(m/s) (uniform split)
        assert 0.0 <= r.entropy <= valid_mass * math.log(r.n_classes / valid_mass) + 1e-12
    if r.n_samples:
        assert sum(r.shares) == pytest.approx(1 - r.n_invalid / r.n_samples)
