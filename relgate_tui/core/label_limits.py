r"""How few human labels can *any* valid bound clear a gate with? Exact limits (issue 22, "fewer labels").

Setting (the one of :mod:`relgate_tui.core.ppi` and ``bench/judge_assisted.py``): each labelled item gives a judge
verdict f and a human verdict Y, a draw from a joint law q = (q₁₁, q₁₀, q₀₁, q₀₀) over the cells (f, Y) =
(1, 1), (1, 0), (0, 1), (0, 0); the reliability is θ = q₁₁ + q₀₁. A reviewer labels items one by one and stops the
first time the live lower bound L_t reaches the gate g. The bound is *valid under that stopping* when every law with
θ < g makes it reach g with probability ≤ δ.

**The limit.** Let τ be the first label at which the bound reaches g. The event {τ ≤ n} is decided by the first n
labels (and any randomisation the bound uses), and under every law with θ < g it has probability ≤ δ. So
P_q(τ ≤ n) is at most the power of the most powerful level-δ test of H₀ = {θ ≤ g} against the true law q on n
labels — *whatever* the bound, watched or not, however it learns the judge. For a finite set of null laws
Q ⊂ H₀ that power is the linear programme

.. math:: \max_{0 \le \varphi \le 1} \sum_x \varphi(x) P_q(x) \quad\text{s.t.}\quad \sum_x \varphi(x) P_{q'}(x)
          \le \delta \;\; \forall q' \in Q,

over the outcomes x = the four cell counts (a sufficient statistic of n i.i.d. labels), a relaxation of every
valid bound (a test valid for all of H₀ is valid for Q; randomised tests included). Q = the null laws with the true
judge-"yes" share and θ = g on a grid of P(Y = 1 | f = 0): moving the judge-"yes" share away from the truth only
makes a null easier to reject, since the N ≫ n judge verdicts then tell it apart. Hence: **no valid bound's median
labels to clear g can be below the smallest n at which this power reaches ½** (:func:`fewest_labels_any_bound`).

The reference the issue compares with, Clopper–Pearson *watched after every label*, is computed exactly here too
(:func:`watched_cp_clearing`, a dynamic programme over the success count): its median at θ = 0.9, g = 0.8, 95% is
37 labels, and it reaches g under θ = 0.8 in 23% of runs — it is not valid under that watching, which is why a valid
bound can need fewer labels than it only through the judge.

**What a target at the limit costs elsewhere.** A bound that also lets the reviewer stop early when the model is
much better than the gate spends part of its error early. :func:`two_look_limit` gives, for human-only information
(a coin-flip judge carries none), the largest P_θ(τ ≤ n₂) of any valid bound that also clears by n₁ with
probability ≥ ½ at a better θ' — a linear programme over the success counts (k₁ in the first n₁ labels, k₂ in the
next n₂ − n₁) with the clearing events nested, φ₁(k₁) ≤ φ₂(k₁, k₂). For a simple null law the binomial counts are
sufficient and a judge independent of Y is pure randomisation, so the programme covers every valid bound there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import betaincinv, gammaln, xlogy
from scipy.stats import binom

__all__ = ["Limit", "cells_of", "null_laws", "most_powerful", "fewest_labels_any_bound", "watched_cp_clearing",
           "watched_cp_median", "two_look_limit"]


@dataclass(frozen=True)
class Limit:
    """The fewest labels n at which some valid bound could clear the gate with probability ≥ ½ (``labels``), and
    that best probability at n − 1 and at n (``power_before``, ``power``)."""

    labels: int
    power_before: float
    power: float


def cells_of(theta: float, agree_if_right: float, agree_if_wrong: float) -> np.ndarray:
    """The joint law (q₁₁, q₁₀, q₀₁, q₀₀) of a judge that says "yes" to a right answer with probability
    ``agree_if_right`` and "no" to a wrong one with probability ``agree_if_wrong``, at reliability θ."""
    return np.array([theta * agree_if_right, (1 - theta) * (1 - agree_if_wrong),
                     theta * (1 - agree_if_right), (1 - theta) * agree_if_wrong])


def null_laws(law: np.ndarray, gate: float, grid: int = 201) -> np.ndarray:
    """Null laws with the judge-"yes" share of ``law`` and reliability exactly ``gate``, on a grid of
    r = P(Y = 1 | f = 0) (rows: (q₁₁, q₁₀, q₀₁, q₀₀))."""
    yes = float(law[0] + law[1])
    no = 1.0 - yes
    out = []
    for r in np.linspace(0.0, 1.0, grid):
        if yes <= 0.0:
            if abs(r * no - gate) < 1e-12:
                out.append((0.0, 0.0, gate, 1.0 - gate))
            continue
        e = 1.0 - (gate - no * r) / yes  # P(Y = 0 | f = 1) that puts θ at the gate
        if -1e-12 <= e <= 1.0 + 1e-12:
            e = min(max(e, 0.0), 1.0)
            out.append((yes * (1 - e), yes * e, no * r, no * (1 - r)))
    return np.array(out)


def _outcomes(n: int) -> np.ndarray:
    a, b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = a + b + c <= n
    x = np.stack([a[keep], b[keep], c[keep]], axis=1)
    return np.column_stack([x, n - x.sum(1)])


def _pmf(x: np.ndarray, law: np.ndarray) -> np.ndarray:
    n = int(x[0].sum())
    return np.exp(gammaln(n + 1) - gammaln(x + 1).sum(1) + xlogy(x, np.asarray(law, np.float64)[None, :]).sum(1))


def _lp_max(objective: np.ndarray, a_ub: np.ndarray, b_ub: np.ndarray) -> float:
    from scipy.optimize import linprog  # only here: the programmes are bench and test tools

    res = linprog(-objective, A_ub=a_ub, b_ub=b_ub, bounds=(0.0, 1.0), method="highs")
    if res.status != 0:
        raise RuntimeError(f"linear programme failed: {res.message}")
    return float(-res.fun)


def most_powerful(law: np.ndarray, nulls: np.ndarray, n: int, confidence: float = 0.95) -> float:
    """The largest probability, under ``law``, that a bound valid at ``confidence`` clears the gate within n labels
    (module docstring: the linear programme over the cell counts, valid for every null law in ``nulls``)."""
    if n <= 0:
        return 0.0
    x = _outcomes(n)
    target = _pmf(x, law)
    sizes = np.stack([_pmf(x, q) for q in nulls])
    return _lp_max(target, sizes, np.full(len(nulls), 1.0 - confidence))


def fewest_labels_any_bound(law: np.ndarray, gate: float, confidence: float = 0.95, *, start: int = 1,
                            horizon: int = 200, grid: int = 201) -> Limit:
    """The smallest n at which some valid bound clears ``gate`` within n labels with probability ≥ ½ under
    ``law``: no valid bound's median labels to clear can be smaller (module docstring)."""
    nulls = null_laws(law, gate, grid)
    before = most_powerful(law, nulls, start - 1, confidence) if start > 1 else 0.0
    for n in range(start, horizon + 1):
        power = most_powerful(law, nulls, n, confidence)
        if power >= 0.5:
            return Limit(n, before, power)
        before = power
    return Limit(horizon + 1, before, before)


def watched_cp_clearing(theta: float, gate: float, confidence: float = 0.95, horizon: int = 300) -> np.ndarray:
    """P(the one-sided Clopper–Pearson lower bound, recomputed after every label, has reached ``gate`` by label t)
    for t = 1..horizon, exactly (labels i.i.d. Bernoulli(θ); a dynamic programme over the success count)."""
    delta = 1.0 - confidence
    alive = np.zeros(horizon + 1)
    alive[0] = 1.0
    k = np.arange(horizon + 1)
    out = np.empty(horizon)
    cleared = 0.0
    for t in range(1, horizon + 1):
        nxt = alive * (1.0 - theta)
        nxt[1:] += alive[:-1] * theta
        ok = (k >= 1) & (k <= t)
        lower = np.zeros(horizon + 1)
        lower[ok] = betaincinv(k[ok], t - k[ok] + 1.0, delta)
        hit = ok & (lower >= gate)
        cleared += float(nxt[hit].sum())
        nxt[hit] = 0.0
        alive = nxt
        out[t - 1] = cleared
    return out


def watched_cp_median(theta: float, gate: float, confidence: float = 0.95, horizon: int = 300) -> int:
    """The median labels for Clopper–Pearson watched after every label to reach ``gate``: the first t at which
    :func:`watched_cp_clearing` reaches ½ (``horizon`` + 1 when it never does within ``horizon``)."""
    reached = watched_cp_clearing(theta, gate, confidence, horizon) >= 0.5
    return int(np.argmax(reached)) + 1 if reached.any() else horizon + 1


def two_look_limit(theta: float, better: float, gate: float, n1: int, n2: int, confidence: float = 0.95) -> float:
    """The largest P_θ(τ ≤ n2) of a valid bound on human-only information whose clearing time also satisfies
    P_better(τ ≤ n1) ≥ ½ (module docstring); −inf when no valid bound can have the latter at all."""
    if not 0 < n1 < n2:
        raise ValueError("need 0 < n1 < n2")
    delta = 1.0 - confidence
    m = n2 - n1
    k1, k2 = np.meshgrid(np.arange(n1 + 1), np.arange(m + 1), indexing="ij")

    def joint(p: float) -> np.ndarray:
        return binom.pmf(k1, n1, p) * binom.pmf(k2, m, p)

    first, both = n1 + 1, (n1 + 1) * (m + 1)
    # variables: φ1(k1) (cleared by n1), then φ2(k1, k2) (cleared by n2), row-major
    c = np.r_[np.zeros(first), joint(theta).ravel()]
    rows = [np.r_[np.zeros(first), joint(gate).ravel()],                    # size under the null θ = gate
            np.r_[-binom.pmf(np.arange(n1 + 1), n1, better), np.zeros(both)]]  # P_better(τ ≤ n1) ≥ ½
    b = [delta, -0.5]
    nest = np.zeros((both, first + both))  # φ1(k1) − φ2(k1, k2) ≤ 0
    idx = np.arange(both)
    nest[idx, idx // (m + 1)] = 1.0
    nest[idx, first + idx] = -1.0
    a_ub = np.vstack([np.array(rows), nest])
    b_ub = np.r_[b, np.zeros(both)]
    try:
        return _lp_max(c, a_ub, b_ub)
    except RuntimeError:
        return -math.inf
