"""Ranking methods for one input's tournament and their agreement with a reference (paper 000 §3.1, Table 2).

Notation: V[i, j] = number of valid verdicts in which i beat j (``Tournament.wins_matrix``); the tournament has an
edge i → j iff V[i, j] > V[j, i].

* **Win rate**: score_i = Σ_j V[i, j] / Σ_j (V[i, j] + V[j, i]) (fraction of valid verdicts won; 0.5 when a
  candidate has no valid verdict).
* **Bradley–Terry** (Bradley & Terry 1952): P(i beats j) = π_i / (π_i + π_j); maximum likelihood by damped Newton
  iterations on the concave log-likelihood in θ = log π (see :func:`bradley_terry_strengths`; same fixed point as
  Hunter's (2004) MM iteration, much faster). The plain MLE diverges (π_i → ∞) when a candidate never loses, so we
  add a symmetric pseudo-count c (default :data:`BT_PSEUDO_COUNT` = 0.1) of virtual wins in *each* direction
  for *every* pair: V' = V + c(J − I). This is the MAP estimate under a weak symmetric prior; it makes the
  comparison graph complete, so the estimate exists, is unique and finite (Hunter 2004, Assumption 1). Score =
  log π_i with geometric-mean normalisation, rounded to 1e-9 so that exactly symmetric candidates tie.
* **Schulze** (Schulze 2011, beatpath, "winning votes"): link strength d(i, j) = V[i, j] if V[i, j] > V[j, i] else
  0; p(i, j) = strength of the strongest (widest) path from i to j (Floyd–Warshall); i ranks above j iff
  p(i, j) > p(j, i). The relation is transitive; score_i = #{j : p(i, j) > p(j, i)}.
* **Copeland**: score_i = #out-edges − #in-edges (tied and missing pairs count 0).
* The two MFAS methods live in :mod:`relgate_tui.core.judge.mfas`.

Every method returns a :class:`Ranking`: scores (higher = better; equal scores are *reported* as ties and
Kendall's τ-b treats them as ties) and an order whose ties are broken by a seeded random order of the candidate ids
(:mod:`relgate_tui.core.judge.ties`), never by the tournament's candidate (file) order (issue 11 §2). Agreement with
a reference is Kendall's τ-b (ties allowed on both sides).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from relgate_tui.core.judge.ties import TieSeed, order_by_scores
from relgate_tui.core.judge.tournament import Tournament

BT_PSEUDO_COUNT = 0.1
"""Virtual wins added in each direction of every pair before the Bradley–Terry fit (see module docstring)."""


@dataclass(frozen=True)
class Ranking:
    """A ranking of a tournament's candidates. ``scores`` is aligned with ``candidates`` (higher = better; equal
    scores are ties). ``order`` is best first, ties broken by the seeded order of :func:`~.ties.tie_keys`."""

    method: str
    candidates: tuple[str, ...]
    scores: tuple[float, ...]
    order: tuple[str, ...]

    def score_of(self) -> dict[str, float]:
        return dict(zip(self.candidates, self.scores, strict=True))


def ranking_from_scores(method: str, candidates: Sequence[str], scores: ArrayLike, *,
                        tie_seed: TieSeed = 0) -> Ranking:
    """Build a :class:`Ranking` from per-candidate scores (higher = better). Equal scores stay ties in ``scores``;
    ``order`` breaks them by the seeded random order :func:`~relgate_tui.core.judge.ties.tie_keys` (``tie_seed``),
    never by position."""
    cands = tuple(candidates)
    s = np.asarray(scores, dtype=np.float64).ravel()
    if s.size != len(cands):
        raise ValueError(f"{len(cands)} candidates but {s.size} scores")
    if np.isnan(s).any():
        raise ValueError("ranking scores must not be NaN")
    order = tuple(cands[i] for i in order_by_scores(cands, s, tie_seed))
    return Ranking(method, cands, tuple(float(x) for x in s), order)


def win_rate_ranking(tournament: Tournament, *, tie_seed: TieSeed = 0) -> Ranking:
    """Fraction of valid verdicts won (paper Table 2 "Win Rate")."""
    v = tournament.wins_matrix().astype(np.float64)
    won = v.sum(axis=1)
    played = won + v.sum(axis=0)
    rate = np.divide(won, played, out=np.full_like(won, 0.5), where=played > 0)
    return ranking_from_scores("win_rate", tournament.candidates, rate, tie_seed=tie_seed)


def _bt_log_likelihood(theta: np.ndarray, vp: np.ndarray) -> float:
    """ℓ(θ) = Σ_{i≠j} V'_ij log σ(θ_i − θ_j), with log σ(x) = −log(1 + e^{−x}) computed stably."""
    d = theta[:, None] - theta[None, :]
    return float(-np.sum(vp * np.logaddexp(0.0, -d)))


def bradley_terry_strengths(
    wins: ArrayLike, pseudo_count: float = BT_PSEUDO_COUNT, tol: float = 1e-10, max_iter: int = 200
) -> np.ndarray:
    """Log-strengths θ = log π (mean 0, i.e. geometric-mean-1 strengths) maximising the Bradley–Terry
    log-likelihood ℓ(θ) = Σ_{i≠j} V'_ij log σ(θ_i − θ_j) of V' = V + c(J − I); ``wins[i, j]`` = times i beat j.

    ℓ is concave and, with c > 0, strictly concave on {Σθ = 0}, so the maximiser exists, is unique and finite even
    when a candidate never loses. It is found by damped Newton steps (gradient g_i = Σ_j V'_ij − Σ_j N'_ij
    σ(θ_i − θ_j), Hessian −L with L the Laplacian of the weights N'_ij σ(1 − σ), N' = V' + V'ᵀ; Armijo
    backtracking) — the same fixed point as Hunter's MM iteration, which needs thousands of steps when a candidate
    (nearly) never loses."""
    v = np.asarray(wins, dtype=np.float64)
    n = v.shape[0]
    if v.ndim != 2 or v.shape != (n, n):
        raise ValueError("wins must be a square matrix")
    if (v < 0).any() or not np.isfinite(v).all():
        raise ValueError("wins must be finite non-negative counts")
    if not pseudo_count > 0:
        raise ValueError("pseudo_count must be > 0 (the plain MLE is infinite when a candidate never loses)")
    if n <= 1:
        return np.zeros(n)
    vp = (v + pseudo_count) * (1.0 - np.eye(n))
    games = vp + vp.T
    won = vp.sum(axis=1)
    theta = np.zeros(n)
    ll = _bt_log_likelihood(theta, vp)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        grad = won - (games * p).sum(axis=1)
        if np.max(np.abs(grad)) < tol * max(1.0, float(won.max())):
            break
        weights = games * p * (1.0 - p)
        laplacian = np.diag(weights.sum(axis=1)) - weights
        step = np.linalg.solve(laplacian + 1.0 / n, grad)  # +11ᵀ/n fixes the free additive constant
        t = 1.0
        while True:
            cand = theta + t * step
            cand_ll = _bt_log_likelihood(cand, vp)
            if cand_ll >= ll + 1e-4 * t * float(grad @ step) or t < 1e-12:
                break
            t *= 0.5
        theta, ll = cand - cand.mean(), cand_ll
        if np.max(np.abs(t * step)) < tol:
            break
    return theta


def bradley_terry_ranking(tournament: Tournament, pseudo_count: float = BT_PSEUDO_COUNT, *,
                          tie_seed: TieSeed = 0) -> Ranking:
    """Bradley–Terry maximum-likelihood (MAP with pseudo-count) strengths (paper Table 2 "Bradley–Terry")."""
    log_p = bradley_terry_strengths(tournament.wins_matrix(), pseudo_count=pseudo_count)
    return ranking_from_scores("bradley_terry", tournament.candidates, np.round(log_p, 9), tie_seed=tie_seed)


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


def schulze_ranking(tournament: Tournament, *, tie_seed: TieSeed = 0) -> Ranking:
    """Schulze beatpath ranking (paper Table 2 "Schulze"): score_i = #{j : p(i, j) > p(j, i)}."""
    p = schulze_strongest_paths(tournament.wins_matrix())
    score = (p > p.T).sum(axis=1)
    return ranking_from_scores("schulze", tournament.candidates, score, tie_seed=tie_seed)


def copeland_scores(tournament: Tournament) -> np.ndarray:
    """Copeland score_i = out-degree − in-degree of i in the majority tournament."""
    a = tournament.adjacency()
    return a.sum(axis=1).astype(np.float64) - a.sum(axis=0)


def copeland_ranking(tournament: Tournament, *, tie_seed: TieSeed = 0) -> Ranking:
    """Copeland ranking (net majority wins)."""
    return ranking_from_scores("copeland", tournament.candidates, copeland_scores(tournament), tie_seed=tie_seed)


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
        noun = "candidate" if len(missing) == 1 else "candidates"
        raise ValueError(f"reference has no score for {noun} {', '.join(map(repr, missing))}")
    ref = [float(reference[c]) for c in ranking.candidates]
    return kendall_tau_b_scores(ranking.scores, ref)
