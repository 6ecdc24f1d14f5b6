"""Ranking methods for one input's tournament and their agreement with a reference (paper 000 §3.1, Table 2).

Notation: V[i, j] = number of valid verdicts in which i beat j (``Tournament.wins_matrix``); the tournament has an
edge i → j iff V[i, j] > V[j, i].

* **Win rate**: score_i = Σ_j V[i, j] / Σ_j (V[i, j] + V[j, i]) (fraction of valid verdicts won; 0.5 when a
  candidate has no valid verdict).
* **Bradley–Terry** (Bradley & Terry 1952): P(i beats j) = π_i / (π_i + π_j); maximum likelihood via Hunter's (2004)
  MM iteration π_i ← W_i / Σ_j N_ij / (π_i + π_j). The plain MLE diverges (π_i → ∞) when a candidate never loses,
  so we add a symmetric pseudo-count c (default :data:`BT_PSEUDO_COUNT` = 0.1) of virtual wins in *each* direction
  for *every* pair: V' = V + c(J − I). This is the MAP estimate under a weak symmetric prior; it makes the
  comparison graph complete, so the estimate exists, is unique and finite (Hunter 2004, Assumption 1). Score =
  log π_i with geometric-mean normalisation, rounded to 1e-9 so that exactly symmetric candidates tie.
* **Schulze** (Schulze 2011, beatpath, "winning votes"): link strength d(i, j) = V[i, j] if V[i, j] > V[j, i] else
  0; p(i, j) = strength of the strongest (widest) path from i to j (Floyd–Warshall); i ranks above j iff
  p(i, j) > p(j, i). The relation is transitive; score_i = #{j : p(i, j) > p(j, i)}.
* **Copeland**: score_i = #out-edges − #in-edges (tied and missing pairs count 0).
* The two MFAS methods live in :mod:`relgate_tui.core.judge.mfas`.

Every method returns a :class:`Ranking` (scores, higher = better, and an order with ties broken by the
tournament's candidate order). Agreement with a reference is Kendall's τ-b (ties allowed on both sides).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from relgate_tui.core.judge.tournament import Tournament

BT_PSEUDO_COUNT = 0.1
"""Virtual wins added in each direction of every pair before the Bradley–Terry fit (see module docstring)."""


@dataclass(frozen=True)
class Ranking:
    """A ranking of a tournament's candidates. ``scores`` is aligned with ``candidates`` (higher = better; equal
    scores are ties). ``order`` is best first, ties broken by candidate order."""

    method: str
    candidates: tuple[str, ...]
    scores: tuple[float, ...]
    order: tuple[str, ...]

    def score_of(self) -> dict[str, float]:
        return dict(zip(self.candidates, self.scores))


def ranking_from_scores(method: str, candidates: Sequence[str], scores: ArrayLike) -> Ranking:
    """Build a :class:`Ranking` from per-candidate scores (higher = better; stable tie-break by position)."""
    cands = tuple(candidates)
    s = np.asarray(scores, dtype=np.float64).ravel()
    if s.size != len(cands):
        raise ValueError(f"{len(cands)} candidates but {s.size} scores")
    if np.isnan(s).any():
        raise ValueError("ranking scores must not be NaN")
    order = tuple(cands[i] for i in np.argsort(-s, kind="stable"))
    return Ranking(method, cands, tuple(float(x) for x in s), order)


def win_rate_ranking(tournament: Tournament) -> Ranking:
    """Fraction of valid verdicts won (paper Table 2 "Win Rate")."""
    v = tournament.wins_matrix().astype(np.float64)
    won = v.sum(axis=1)
    played = won + v.sum(axis=0)
    rate = np.divide(won, played, out=np.full_like(won, 0.5), where=played > 0)
    return ranking_from_scores("win_rate", tournament.candidates, rate)


def bradley_terry_strengths(
    wins: ArrayLike, pseudo_count: float = BT_PSEUDO_COUNT, tol: float = 1e-10, max_iter: int = 100_000
) -> np.ndarray:
    """Log-strengths log π (geometric mean 1) of the Bradley–Terry model fitted by MM to V' = V + c(J − I).
    ``wins[i, j]`` = number of times i beat j. Requires c > 0 (finiteness when a candidate never loses)."""
    v = np.asarray(wins, dtype=np.float64)
    n = v.shape[0]
    if v.shape != (n, n):
        raise ValueError("wins must be a square matrix")
    if not pseudo_count > 0:
        raise ValueError("pseudo_count must be > 0 (the plain MLE is infinite when a candidate never loses)")
    if n == 0:
        return np.zeros(0)
    off = 1.0 - np.eye(n)
    vp = (v + pseudo_count) * off
    games = vp + vp.T
    w = vp.sum(axis=1)
    log_p = np.zeros(n)
    for _ in range(max_iter):
        p = np.exp(log_p)
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.log(w) - np.log(denom)
        new -= new.mean()
        if np.max(np.abs(new - log_p)) < tol:
            return new
        log_p = new
    return log_p


def bradley_terry_ranking(tournament: Tournament, pseudo_count: float = BT_PSEUDO_COUNT) -> Ranking:
    """Bradley–Terry maximum-likelihood (MAP with pseudo-count) strengths (paper Table 2 "Bradley–Terry")."""
    log_p = bradley_terry_strengths(tournament.wins_matrix(), pseudo_count=pseudo_count)
    return ranking_from_scores("bradley_terry", tournament.candidates, np.round(log_p, 9))


def schulze_strongest_paths(wins: ArrayLike) -> np.ndarray:
    """Widest-path strengths p(i, j) for the winning-votes link strengths d(i, j) (Floyd–Warshall)."""
    v = np.asarray(wins, dtype=np.float64)
    n = v.shape[0]
    p = np.where(v > v.T, v, 0.0)
    np.fill_diagonal(p, 0.0)
    for k in range(n):
        via = np.minimum(p[:, k][:, None], p[k, :][None, :])
        p = np.maximum(p, via)
        np.fill_diagonal(p, 0.0)
    return p


def schulze_ranking(tournament: Tournament) -> Ranking:
    """Schulze beatpath ranking (paper Table 2 "Schulze"): score_i = #{j : p(i, j) > p(j, i)}."""
    p = schulze_strongest_paths(tournament.wins_matrix())
    score = (p > p.T).sum(axis=1)
    return ranking_from_scores("schulze", tournament.candidates, score)


def copeland_scores(tournament: Tournament) -> np.ndarray:
    """Copeland score_i = out-degree − in-degree of i in the majority tournament."""
    a = tournament.adjacency()
    return a.sum(axis=1).astype(np.float64) - a.sum(axis=0)


def copeland_ranking(tournament: Tournament) -> Ranking:
    """Copeland ranking (net majority wins)."""
    return ranking_from_scores("copeland", tournament.candidates, copeland_scores(tournament))


def kendall_tau_b_scores(x: ArrayLike, y: ArrayLike) -> float:
    """Kendall's τ-b of two paired score vectors (ties allowed):

        τ_b = (C − D) / sqrt((P − T_x)(P − T_y)),

    P = C(n, 2) pairs, C/D = concordant/discordant pairs, T_x/T_y = pairs tied in x/y. NaN when either vector is
    constant (τ-b undefined) or n < 2."""
    a = np.asarray(x, dtype=np.float64).ravel()
    b = np.asarray(y, dtype=np.float64).ravel()
    if a.size != b.size:
        raise ValueError(f"Kendall tau needs paired vectors, got lengths {a.size} and {b.size}")
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("Kendall tau inputs must not be NaN")
    iu = np.triu_indices(a.size, k=1)
    sa = np.sign(a[:, None] - a[None, :])[iu]
    sb = np.sign(b[:, None] - b[None, :])[iu]
    pairs = sa.size
    tx = int(np.count_nonzero(sa == 0))
    ty = int(np.count_nonzero(sb == 0))
    denom = math.sqrt((pairs - tx) * (pairs - ty))
    if denom == 0:
        return math.nan
    return float(np.sum(sa * sb) / denom)


def kendall_tau_b(ranking: Ranking, reference: Mapping[str, float]) -> float:
    """Kendall's τ-b between a ranking's scores and reference scores per candidate (higher = better, e.g. human
    mean Likert scores; ties allowed). ``reference`` must score every candidate of the ranking."""
    missing = [c for c in ranking.candidates if c not in reference]
    if missing:
        raise ValueError(f"reference has no score for candidate(s) {', '.join(map(repr, missing))}")
    ref = [float(reference[c]) for c in ranking.candidates]
    return kendall_tau_b_scores(ranking.scores, ref)
