"""Ranking methods of paper 000 Table 2 and Kendall's τ-b."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from scipy.stats import kendalltau

from relgate_tui.core.judge import (
    PairwiseVerdict,
    all_rankings,
    bradley_terry_ranking,
    bradley_terry_strengths,
    build_tournament,
    copeland_ranking,
    kendall_tau_b,
    kendall_tau_b_scores,
    mfas_copeland,
    mfas_exact,
    ranking_from_scores,
    schulze_ranking,
    win_rate_ranking,
)
from tests.core.test_judge_tournament import verdicts_for


def _transitive(order: list[str], margin_of=lambda i, j: 2) -> list[PairwiseVerdict]:
    return verdicts_for([(order[i], order[j], margin_of(i, j)) for i, j in combinations(range(len(order)), 2)])


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_every_method_returns_the_order_of_a_unanimous_transitive_tournament(n):
    order = [f"s{i}" for i in np.random.default_rng(n).permutation(n)]
    t = build_tournament(_transitive(order), candidates=sorted(order))
    rankings = all_rankings(t)
    assert set(rankings) == {"win_rate", "bradley_terry", "schulze", "copeland", "mfas_exact", "mfas_copeland"}
    for method, r in rankings.items():
        assert r.order == tuple(order), method
        assert r.method == method
        assert len(set(r.scores)) == n, method  # strict order, no ties
        assert kendall_tau_b(r, {c: -i for i, c in enumerate(order)}) == pytest.approx(1.0)


def test_condorcet_methods_follow_a_transitive_majority_with_unequal_margins():
    """With a transitive majority relation but arbitrary margins, Schulze, Copeland and both MFAS methods return
    the majority order (Condorcet consistency); win rate and Bradley–Terry need not."""
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(3, 9))
        order = [f"c{i}" for i in rng.permutation(n)]
        margins = rng.integers(1, 6, size=(n, n))
        t = build_tournament(_transitive(order, lambda i, j: int(margins[i, j])), candidates=sorted(order))
        for r in (schulze_ranking(t), copeland_ranking(t), mfas_exact(t).ranking, mfas_copeland(t).ranking):
            assert r.order == tuple(order), r.method


def test_win_rate_counts_valid_verdicts():
    v = verdicts_for([("a", "b", 3), ("b", "c", 1)]) + [PairwiseVerdict("a", "b", "b")]
    r = win_rate_ranking(build_tournament(v, ["a", "b", "c"]))
    assert r.score_of() == pytest.approx({"a": 3 / 4, "b": 2 / 5, "c": 0.0})
    assert r.order == ("a", "b", "c")
    lonely = win_rate_ranking(build_tournament(v, ["a", "b", "c", "z"]))
    assert lonely.score_of()["z"] == 0.5


def test_bradley_terry_is_finite_when_a_candidate_never_loses():
    v = verdicts_for([("a", "b", 6), ("a", "c", 6), ("b", "c", 4)]) + [PairwiseVerdict("c", "b", "c")] * 2
    t = build_tournament(v, ["a", "b", "c"])
    log_p = bradley_terry_strengths(t.wins_matrix())
    assert np.isfinite(log_p).all()
    assert log_p[0] > log_p[1] > log_p[2]
    assert log_p.mean() == pytest.approx(0.0, abs=1e-9)
    assert bradley_terry_ranking(t).order == ("a", "b", "c")
    # a smaller prior makes the never-beaten candidate stronger, still finite
    tiny = bradley_terry_strengths(t.wins_matrix(), pseudo_count=1e-3)
    assert np.isfinite(tiny).all() and tiny[0] - tiny[1] > log_p[0] - log_p[1]
    extreme = bradley_terry_strengths(t.wins_matrix(), pseudo_count=1e-8)
    assert np.isfinite(extreme).all() and extreme[0] > tiny[0]
    with pytest.raises(ValueError, match="pseudo_count"):
        bradley_terry_strengths(t.wins_matrix(), pseudo_count=0.0)
    with pytest.raises(ValueError, match="non-negative"):
        bradley_terry_strengths([[0, -1], [1, 0]])


def test_bradley_terry_solves_the_map_score_equations():
    """At the fixed point: Σ_j V'_ij = Σ_j N'_ij π_i / (π_i + π_j) with V' = V + c(J − I)."""
    rng = np.random.default_rng(3)
    wins = rng.integers(0, 5, size=(6, 6))
    np.fill_diagonal(wins, 0)
    c = 0.1
    p = np.exp(bradley_terry_strengths(wins, pseudo_count=c))
    vp = (wins + c) * (1 - np.eye(6))
    expected = (vp + vp.T) * p[:, None] / (p[:, None] + p[None, :])
    assert np.allclose(vp.sum(axis=1), expected.sum(axis=1), rtol=1e-8)


def test_bradley_terry_ties_exactly_symmetric_candidates():
    r = bradley_terry_ranking(build_tournament(verdicts_for([("a", "b", 2), ("b", "c", 2), ("c", "a", 2)])))
    assert len(set(r.scores)) == 1


def test_schulze_on_a_classic_beatpath_example():
    """Wins matrix of the 5-candidate example of Schulze (2011) / Wikipedia "Schulze method" (45 voters):
    the strongest paths give the ranking E > A > C > B > D."""
    names = ["A", "B", "C", "D", "E"]
    d = np.array([[0, 20, 26, 30, 22],
                  [25, 0, 16, 33, 18],
                  [19, 29, 0, 17, 24],
                  [15, 12, 28, 0, 14],
                  [23, 27, 21, 31, 0]])
    v = [PairwiseVerdict(names[i], names[j], names[i]) for i in range(5) for j in range(5) for _ in range(d[i, j])]
    r = schulze_ranking(build_tournament(v, names))
    assert r.order == ("E", "A", "C", "B", "D")
    assert r.scores == (3.0, 1.0, 2.0, 0.0, 4.0)


def test_copeland_counts_net_majority_wins_and_ties():
    v = verdicts_for([("a", "b", 1), ("a", "c", 1), ("c", "b", 1)])
    v += [PairwiseVerdict("a", "d", "a"), PairwiseVerdict("d", "a", "d")]  # tie: no edge
    r = copeland_ranking(build_tournament(v, ["a", "b", "c", "d"]))
    assert r.score_of() == {"a": 2.0, "b": -2.0, "c": 0.0, "d": 0.0}
    # c and d tie: the scores report the tie; the order breaks it by the seeded key order, never by position
    assert r.order[0] == "a" and r.order[3] == "b" and set(r.order[1:3]) == {"c", "d"}
    flipped = copeland_ranking(build_tournament(v, ["d", "c", "b", "a"]))
    assert flipped.order == r.order
    orders = {copeland_ranking(build_tournament(v, ["a", "b", "c", "d"]), tie_seed=s).order for s in range(20)}
    assert orders == {("a", "c", "d", "b"), ("a", "d", "c", "b")}


def test_kendall_tau_b_of_a_ranking_with_itself_is_one():
    r = ranking_from_scores("x", ["a", "b", "c", "d"], [4, 2, 3, 1])
    assert kendall_tau_b(r, r.score_of()) == 1.0
    tied = ranking_from_scores("x", ["a", "b", "c", "d"], [4, 2, 2, 1])
    assert kendall_tau_b(tied, tied.score_of()) == pytest.approx(1.0)
    assert kendall_tau_b(r, {c: -s for c, s in r.score_of().items()}) == -1.0


def test_kendall_tau_b_matches_scipy_with_ties():
    rng = np.random.default_rng(4)
    for _ in range(200):
        n = int(rng.integers(2, 12))
        x = rng.integers(0, 4, size=n).astype(float)
        y = rng.integers(0, 4, size=n) + rng.choice([0.0, 0.5], size=n)
        ours = kendall_tau_b_scores(x, y)
        if len(set(x)) == 1 or len(set(y)) == 1:
            assert math.isnan(ours)
        else:
            assert ours == pytest.approx(kendalltau(x, y, variant="b").statistic, abs=1e-12)


def test_kendall_tau_b_reference_must_cover_candidates():
    r = ranking_from_scores("x", ["a", "b"], [1, 0])
    with pytest.raises(ValueError, match="no score for candidate"):
        kendall_tau_b(r, {"a": 3.0})
