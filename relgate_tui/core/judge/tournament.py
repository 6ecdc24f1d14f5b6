"""Per-input tournaments from repeated pairwise judge verdicts (paper 000 §3.1, "Tournament formulation").

For one input x with candidates S = {s_1, …, s_n}, a pairwise judge is asked about each pair {i, j} several times
(k repetitions, in both presentation orders). Each answer is a :class:`PairwiseVerdict`. The tournament G = (S, E)
has an edge i → j ("i beats j") when i wins the strict majority of the pair's *valid* verdicts (those that name a
winner); the edge weight is the win margin w_ij = wins_i − wins_j ≥ 1. An even split (including 0–0, e.g. when all
answers were INVALID or "tie") gives no edge and the pair is reported in ``tied_pairs``. Pairs never asked at all
are reported in ``missing_pairs``. With ties or missing pairs G is not a complete tournament; every diagnostic in
this package is defined for such partial tournaments (a triple with a missing edge cannot be a 3-cycle).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from relgate_tui.core.types import INVALID

TIE = "\u2205TIE"
"""The verdict value for a judge answer that explicitly declares the two candidates equal."""


class VerdictError(ValueError):
    """A verdict record or a candidate list is malformed."""


@dataclass(frozen=True)
class PairwiseVerdict:
    """One judge answer for one ordered presentation of a pair.

    ``first`` is the candidate shown first (position "A"), ``second`` the one shown second (position "B").
    ``winner`` is ``first``, ``second``, :data:`~relgate_tui.core.types.INVALID` (unparseable answer) or
    :data:`TIE` (the judge declared them equal). Only the first two are *valid* verdicts.
    """

    first: str
    second: str
    winner: str

    @property
    def is_valid(self) -> bool:
        return self.winner == self.first or self.winner == self.second


@dataclass(frozen=True)
class Edge:
    """Directed tournament edge ``winner → loser`` with weight ``margin`` = wins_winner − wins_loser ≥ 1."""

    winner: str
    loser: str
    margin: int


@dataclass(frozen=True)
class PairCounts:
    """Verdict counts for one unordered pair; ``a`` precedes ``b`` in the tournament's candidate order."""

    a: str
    b: str
    wins_a: int
    wins_b: int
    ties: int
    invalid: int

    @property
    def n_valid(self) -> int:
        return self.wins_a + self.wins_b

    @property
    def n_total(self) -> int:
        return self.wins_a + self.wins_b + self.ties + self.invalid


@dataclass(frozen=True)
class Tournament:
    """The majority tournament of one input (see module docstring). Build it with :func:`build_tournament`."""

    candidates: tuple[str, ...]
    edges: tuple[Edge, ...]
    tied_pairs: tuple[tuple[str, str], ...]
    missing_pairs: tuple[tuple[str, str], ...]
    pair_counts: tuple[PairCounts, ...]

    @property
    def n(self) -> int:
        return len(self.candidates)

    def index(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.candidates)}

    def wins_matrix(self) -> np.ndarray:
        """V[i, j] = number of valid verdicts in which i beat j (int64, zero diagonal)."""
        idx = self.index()
        v = np.zeros((self.n, self.n), dtype=np.int64)
        for pc in self.pair_counts:
            i, j = idx[pc.a], idx[pc.b]
            v[i, j] = pc.wins_a
            v[j, i] = pc.wins_b
        return v

    def margin_matrix(self) -> np.ndarray:
        """W[i, j] = w_ij if the edge i → j exists, else 0 (int64). Hence W[i, j] · W[j, i] = 0."""
        idx = self.index()
        w = np.zeros((self.n, self.n), dtype=np.int64)
        for e in self.edges:
            w[idx[e.winner], idx[e.loser]] = e.margin
        return w

    def adjacency(self) -> np.ndarray:
        """A[i, j] = True iff the edge i → j exists."""
        return self.margin_matrix() > 0


def build_tournament(verdicts: Iterable[PairwiseVerdict], candidates: Sequence[str] | None = None) -> Tournament:
    """Aggregate one input's verdicts into its majority tournament (edge i → j iff wins_i > wins_j, weight
    wins_i − wins_j). ``candidates`` fixes the candidate order (and may include candidates that were never
    compared); by default the order of first appearance in ``verdicts`` is used."""
    verdicts = list(verdicts)
    for v in verdicts:
        if not isinstance(v, PairwiseVerdict):
            raise VerdictError(f"expected a PairwiseVerdict, got {type(v).__name__}")
    if candidates is None:
        seen: dict[str, None] = {}
        for v in verdicts:
            seen.setdefault(v.first, None)
            seen.setdefault(v.second, None)
        cands = tuple(seen)
    else:
        cands = tuple(candidates)
        if len(set(cands)) != len(cands):
            raise VerdictError("duplicate candidate ids in the candidate list")
    idx = {c: i for i, c in enumerate(cands)}
    counts: dict[tuple[int, int], list[int]] = {}  # (i<j) -> [wins_i, wins_j, ties, invalid]
    for v in verdicts:
        if v.first == v.second:
            raise VerdictError(f"verdict compares candidate {v.first!r} with itself")
        for c in (v.first, v.second):
            if c not in idx:
                raise VerdictError(f"verdict names candidate {c!r}, which is not in the candidate list")
        if v.winner not in (v.first, v.second, INVALID, TIE):
            raise VerdictError(
                f"verdict winner {v.winner!r} is neither {v.first!r}, {v.second!r}, INVALID nor TIE"
            )
        i, j = sorted((idx[v.first], idx[v.second]))
        row = counts.setdefault((i, j), [0, 0, 0, 0])
        if v.winner == INVALID:
            row[3] += 1
        elif v.winner == TIE:
            row[2] += 1
        elif idx[v.winner] == i:
            row[0] += 1
        else:
            row[1] += 1
    edges: list[Edge] = []
    tied: list[tuple[str, str]] = []
    missing: list[tuple[str, str]] = []
    pcs: list[PairCounts] = []
    n = len(cands)
    for i in range(n):
        for j in range(i + 1, n):
            got = counts.get((i, j))
            if got is None:
                missing.append((cands[i], cands[j]))
                continue
            wi, wj, ties, inv = got
            pcs.append(PairCounts(cands[i], cands[j], wi, wj, ties, inv))
            if wi > wj:
                edges.append(Edge(cands[i], cands[j], wi - wj))
            elif wj > wi:
                edges.append(Edge(cands[j], cands[i], wj - wi))
            else:
                tied.append((cands[i], cands[j]))
    return Tournament(cands, tuple(edges), tuple(tied), tuple(missing), tuple(pcs))


def verdicts_by_order(tournament: Tournament, verdicts: Iterable[PairwiseVerdict], *,
                      include_unjudged: bool = True) -> list[dict[str, object]]:
    """The verdicts behind each pair, split by presentation order (what a cycle viewer shows behind an edge).

    One row per unordered pair (a before b in the tournament's candidate order): ``a_first`` = [a won, b won, no
    verdict (tie or unparseable)] over the verdicts where a was shown first, ``b_first`` likewise; ``winner`` is the
    majority edge's winner (None on an even split) and ``margin`` its margin. Pairs without any verdict are kept
    with zero counts when ``include_unjudged``, left out otherwise.
    """
    pos = tournament.index()
    table: dict[tuple[str, str], dict[str, list[int]]] = {}
    for v in verdicts:
        a, b = sorted((v.first, v.second), key=pos.__getitem__)
        row = table.setdefault((a, b), {"a_first": [0, 0, 0], "b_first": [0, 0, 0]})
        row["a_first" if v.first == a else "b_first"][0 if v.winner == a else 1 if v.winner == b else 2] += 1
    edge_of = {frozenset((e.winner, e.loser)): e for e in tournament.edges}
    out: list[dict[str, object]] = []
    cands = tournament.candidates
    for i, a in enumerate(cands):
        for b in cands[i + 1:]:
            found = table.get((a, b))
            if found is None:
                if not include_unjudged:
                    continue
                found = {"a_first": [0, 0, 0], "b_first": [0, 0, 0]}
            edge = edge_of.get(frozenset((a, b)))
            out.append({"a": a, "b": b, "a_first": found["a_first"], "b_first": found["b_first"],
                        "winner": edge.winner if edge else None, "margin": edge.margin if edge else 0})
    return out
