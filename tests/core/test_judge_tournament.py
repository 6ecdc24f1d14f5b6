"""Tournament construction from repeated pairwise verdicts (paper 000 §3.1)."""

from __future__ import annotations

import numpy as np
import pytest

from relgate_tui.core.judge import TIE, Edge, PairwiseVerdict, VerdictError, build_tournament, verdicts_by_order
from relgate_tui.core.types import INVALID


def verdicts_for(edges: list[tuple[str, str, int]], both_orders: bool = True) -> list[PairwiseVerdict]:
    """Unanimous verdicts realising margin m for each (winner, loser, m): m verdicts for the winner, alternating the
    presentation order when ``both_orders``."""
    out = []
    for w, l, m in edges:
        for r in range(m):
            first, second = (w, l) if (r % 2 == 0 or not both_orders) else (l, w)
            out.append(PairwiseVerdict(first, second, w))
    return out


def test_majority_edges_margins_and_counts():
    v = [
        PairwiseVerdict("a", "b", "a"), PairwiseVerdict("b", "a", "a"), PairwiseVerdict("a", "b", "b"),
        PairwiseVerdict("b", "a", INVALID), PairwiseVerdict("a", "b", TIE),
        PairwiseVerdict("b", "c", "c"), PairwiseVerdict("c", "b", "c"), PairwiseVerdict("c", "b", "c"),
    ]
    t = build_tournament(v)
    assert t.candidates == ("a", "b", "c")
    assert set(t.edges) == {Edge("a", "b", 1), Edge("c", "b", 3)}
    assert t.tied_pairs == ()
    assert t.missing_pairs == (("a", "c"),)
    ab = next(pc for pc in t.pair_counts if (pc.a, pc.b) == ("a", "b"))
    assert (ab.wins_a, ab.wins_b, ab.ties, ab.invalid, ab.n_valid, ab.n_total) == (2, 1, 1, 1, 3, 5)
    v_mat = t.wins_matrix()
    assert v_mat.tolist() == [[0, 2, 0], [1, 0, 0], [0, 3, 0]]
    assert t.margin_matrix().tolist() == [[0, 1, 0], [0, 0, 0], [0, 3, 0]]


def test_even_split_gives_no_edge_and_is_reported():
    v = [PairwiseVerdict("a", "b", "a"), PairwiseVerdict("b", "a", "b"),  # 1–1
         PairwiseVerdict("a", "c", INVALID), PairwiseVerdict("c", "a", TIE)]  # 0–0: only invalid / tie
    t = build_tournament(v)
    assert t.edges == ()
    assert t.tied_pairs == (("a", "b"), ("a", "c"))
    assert t.missing_pairs == (("b", "c"),)
    assert not t.adjacency().any()


def test_explicit_candidate_order_and_isolated_candidate():
    t = build_tournament(verdicts_for([("b", "a", 2)]), candidates=["a", "b", "z"])
    assert t.candidates == ("a", "b", "z")
    assert t.edges == (Edge("b", "a", 2),)
    assert t.missing_pairs == (("a", "z"), ("b", "z"))
    assert np.array_equal(t.margin_matrix(), np.array([[0, 0, 0], [2, 0, 0], [0, 0, 0]]))


@pytest.mark.parametrize(
    "verdicts,candidates,message",
    [
        ([PairwiseVerdict("a", "a", "a")], None, "itself"),
        ([PairwiseVerdict("a", "b", "c")], None, "neither"),
        ([PairwiseVerdict("a", "q", "a")], ["a", "b"], "not in the candidate list"),
        ([], ["a", "a"], "duplicate"),
        (["a>b"], None, "PairwiseVerdict"),
    ],
)
def test_bad_input_raises_one_line_value_error(verdicts, candidates, message):
    with pytest.raises(VerdictError, match=message) as exc:
        build_tournament(verdicts, candidates)
    assert isinstance(exc.value, ValueError) and "\n" not in str(exc.value)


def test_verdicts_by_order_split_each_pair_by_who_was_shown_first():
    verdicts = [
        PairwiseVerdict("y", "x", "y"), PairwiseVerdict("y", "x", "y"),  # y shown first, wins twice
        PairwiseVerdict("x", "y", "x"), PairwiseVerdict("x", "y", INVALID),  # x shown first: a win, no verdict
        PairwiseVerdict("x", "z", TIE),
    ]
    t = build_tournament(verdicts, ["x", "y", "z"])
    rows = verdicts_by_order(t, verdicts)
    assert rows == [
        {"a": "x", "b": "y", "a_first": [1, 0, 1], "b_first": [0, 2, 0], "winner": "y", "margin": 1},
        {"a": "x", "b": "z", "a_first": [0, 0, 1], "b_first": [0, 0, 0], "winner": None, "margin": 0},
        {"a": "y", "b": "z", "a_first": [0, 0, 0], "b_first": [0, 0, 0], "winner": None, "margin": 0},
    ]
    assert [(r["a"], r["b"]) for r in verdicts_by_order(t, verdicts, include_unjudged=False)] == [("x", "y"), ("x", "z")]

