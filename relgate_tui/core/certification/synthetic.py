"""A seeded synthetic agent with known p* (paper 004 Appendix C; SPEC §3.8), vectorised over items.

Each item has a correct canonical class (column 0), D distractor classes and optionally INVALID (last column).
One sample is correct with probability p*(x); otherwise it falls on distractor j with probability proportional to
``distractor_weights[j]``, or on INVALID with share ``invalid_share`` of the wrong mass.

Randomness is *coupled* (common random numbers, :class:`SyntheticNoise`): sample j of item i is correct iff
``u[i, j] < p*(x_i)`` and, when wrong, its class is chosen by ``v[i, j]`` alone. Raising p* therefore only moves
samples from distractors to the correct class, so with the same noise a better agent has pathwise smaller (or equal)
rank scores — the setting of paper Thm 7.5(1), which the tests check exactly. Ties are broken by per-(item, class)
uniform priorities (``tie``), equivalent to a uniformly random order among tied classes (eq. 4.8).

The same functions work on any count matrix (:func:`column_ranks`, :func:`rank_scores`, :func:`merge_columns`), which
is how surface forms are simulated at the class level for Prop. 4.6.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations_with_replacement

import numpy as np
from scipy.special import betaincinv, gammaln

from relgate_tui.core.certification.ranking import RankedClasses
from relgate_tui.core.types import INVALID

__all__ = [
    "SyntheticAgent",
    "SyntheticNoise",
    "SyntheticBatch",
    "make_noise",
    "simulate",
    "simulate_agent",
    "draw_counts",
    "column_ranks",
    "rank_scores",
    "merge_columns",
    "adaptive_set_sizes",
    "exact_mode_error",
    "hoeffding_mode_bound",
]

MAX_COLUMNS = 32
"""Tie priorities are drawn for this many columns, so an agent may have at most MAX_COLUMNS − 2 distractors."""


@dataclass(frozen=True)
class SyntheticAgent:
    """Agent quality and error profile.

    ``p_star``: per-sample probability of the correct class (the mean, when ``concentration`` is set, in which case
    per-item p* ~ Beta(p_star·c, (1 − p_star)·c)). ``unsolvable_fraction`` of the items have p* = 0 (capability gap).
    """

    p_star: float
    distractor_weights: tuple[float, ...] = (0.5, 0.3, 0.2)
    invalid_share: float = 0.0
    concentration: float | None = None
    unsolvable_fraction: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.p_star <= 1.0:
            raise ValueError("p_star must be in [0, 1]")
        if not self.distractor_weights or any(w < 0 for w in self.distractor_weights):
            raise ValueError("distractor_weights must be non-empty and non-negative")
        if sum(self.distractor_weights) <= 0:
            raise ValueError("distractor_weights must not all be zero")
        if len(self.distractor_weights) > MAX_COLUMNS - 2:
            raise ValueError(f"at most {MAX_COLUMNS - 2} distractors")
        if not 0.0 <= self.invalid_share < 1.0:
            raise ValueError("invalid_share must be in [0, 1)")
        if self.concentration is not None and self.concentration <= 0:
            raise ValueError("concentration must be positive")
        if not 0.0 <= self.unsolvable_fraction <= 1.0:
            raise ValueError("unsolvable_fraction must be in [0, 1]")

    @property
    def n_columns(self) -> int:
        """Correct class + distractors + INVALID."""
        return len(self.distractor_weights) + 2


@dataclass(frozen=True, eq=False)
class SyntheticNoise:
    """Common random numbers for ``n_items`` items × K samples (see the module docstring)."""

    u: np.ndarray  # (n, K) correct iff u < p*
    v: np.ndarray  # (n, K) which wrong class
    tie: np.ndarray  # (n, n_columns) tie-break priorities per class column
    item_u: np.ndarray  # (n,) quantile of the item's p* under the Beta profile
    item_w: np.ndarray  # (n,) item is unsolvable iff item_w < unsolvable_fraction

    @property
    def n_items(self) -> int:
        return int(self.u.shape[0])

    @property
    def k(self) -> int:
        return int(self.u.shape[1])


def make_noise(n_items: int, k: int, rng: np.random.Generator, n_columns: int = MAX_COLUMNS) -> SyntheticNoise:
    """Draw the uniforms for ``n_items`` items with ``k`` samples each; tie priorities for ``n_columns`` class
    columns (an agent needs ``agent.n_columns`` of them)."""
    if n_items < 0 or k < 1 or not 2 <= n_columns <= MAX_COLUMNS:
        raise ValueError(f"need n_items >= 0, k >= 1 and 2 <= n_columns <= {MAX_COLUMNS}")
    return SyntheticNoise(
        u=rng.random((n_items, k)),
        v=rng.random((n_items, k)),
        tie=rng.random((n_items, n_columns)),
        item_u=rng.random(n_items),
        item_w=rng.random(n_items),
    )


@dataclass(frozen=True, eq=False)
class SyntheticBatch:
    """Simulated items. ``counts[:, 0]`` is the correct class, ``counts[:, 1:-1]`` the distractors, ``counts[:, -1]``
    INVALID. ``scores`` are rank scores (eq. 6.1, +∞ when the correct class was never sampled), ``cp_scores`` the
    cumulative scores (eq. 6.2), ``count_before`` the number of samples on classes ranked above the correct one."""

    agent: SyntheticAgent
    p_star: np.ndarray
    counts: np.ndarray
    tie: np.ndarray
    scores: np.ndarray
    cp_scores: np.ndarray
    count_before: np.ndarray
    n_classes: np.ndarray
    acceptable_fraction: np.ndarray
    entropy: np.ndarray

    @property
    def n_items(self) -> int:
        return int(self.counts.shape[0])

    @property
    def k(self) -> int:
        return int(self.counts[0].sum()) if self.n_items else 0

    @property
    def valid_counts(self) -> np.ndarray:
        return self.counts[:, :-1]

    @staticmethod
    def class_names(n_distractors: int) -> tuple[str, ...]:
        """Names of the valid columns: ``"correct"``, ``"wrong1"``, …"""
        return ("correct",) + tuple(f"wrong{j}" for j in range(1, n_distractors + 1))

    def aps_scores(self, u: np.ndarray) -> np.ndarray:
        """Randomized APS scores (§11.8, standard form; see :mod:`relgate_tui.core.certification.scores`) with one uniform per
        item: ``(samples ranked above)/K + u · count(correct)/K``, +∞ when the correct class was never sampled."""
        c0 = self.counts[:, 0]
        return np.where(c0 > 0, self.count_before / self.k + u * c0 / self.k, np.inf)

    def ranked_item(self, i: int) -> RankedClasses:
        """Item ``i`` as :class:`RankedClasses`, ordered exactly as the vectorised ranks (count desc, priority asc)."""
        names = self.class_names(self.counts.shape[1] - 2)
        valid = self.valid_counts[i]
        cols = [j for j in range(valid.size) if valid[j] > 0]
        cols.sort(key=lambda j: (-int(valid[j]), float(self.tie[i, j])))
        counts = tuple(int(valid[j]) for j in cols)
        return RankedClasses(
            classes=tuple(names[j] for j in cols),
            counts=counts,
            n_samples=int(self.counts[i].sum()),
            n_invalid=int(self.counts[i, -1]),
            tie_broken=len(set(counts)) < len(counts),
        )

    def answers(self, i: int, rng: np.random.Generator) -> list[str]:
        """The K canonical answers of item ``i`` in a random order (INVALID as :data:`INVALID`)."""
        names = self.class_names(self.counts.shape[1] - 2) + (INVALID,)
        out = [names[j] for j, c in enumerate(self.counts[i]) for _ in range(int(c))]
        rng.shuffle(out)
        return out


def _item_p_star(agent: SyntheticAgent, noise: SyntheticNoise) -> np.ndarray:
    if agent.concentration is None or agent.p_star in (0.0, 1.0):
        p = np.full(noise.n_items, agent.p_star)
    else:
        c = agent.concentration
        p = betaincinv(agent.p_star * c, (1.0 - agent.p_star) * c, noise.item_u)
    return np.where(noise.item_w < agent.unsolvable_fraction, 0.0, p)


def simulate(agent: SyntheticAgent, noise: SyntheticNoise) -> SyntheticBatch:
    """Run the agent on the noise: counts, rank and cumulative scores, class counts, single-sample accuracy and
    consensus entropy per item."""
    n, k = noise.n_items, noise.k
    d = len(agent.distractor_weights)
    if noise.tie.shape[1] < agent.n_columns:
        raise ValueError(f"the noise has tie priorities for {noise.tie.shape[1]} columns, the agent needs {d + 2}")
    p = _item_p_star(agent, noise)
    w = np.asarray(agent.distractor_weights, dtype=np.float64)
    wrong = np.append((1.0 - agent.invalid_share) * w / w.sum(), agent.invalid_share)
    cdf = np.cumsum(wrong)
    cdf[-1] = 1.0
    wrong_col = 1 + np.minimum(np.searchsorted(cdf, noise.v, side="right"), d)
    cols = np.where(noise.u < p[:, None], 0, wrong_col)
    n_cols = d + 2
    flat = (np.arange(n)[:, None] * n_cols + cols).ravel()
    counts = np.bincount(flat, minlength=n * n_cols).reshape(n, n_cols)
    tie = noise.tie[:, :n_cols]
    valid = counts[:, :-1]
    ranks = column_ranks(valid, tie[:, :-1])
    scores = ranks[:, 0]
    before = (valid * (ranks < scores[:, None])).sum(axis=1)  # samples on classes ranked above the correct one
    cp = np.where(np.isfinite(scores), (before + counts[:, 0]) / k, np.inf)
    shares = valid / k
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(valid > 0, shares * np.log(shares), 0.0).sum(axis=1)
    return SyntheticBatch(
        agent=agent,
        p_star=p,
        counts=counts,
        tie=tie,
        scores=scores,
        cp_scores=cp,
        count_before=before,
        n_classes=(valid > 0).sum(axis=1),
        acceptable_fraction=counts[:, 0] / k,
        entropy=ent,
    )


def simulate_agent(agent: SyntheticAgent, n_items: int, k: int, rng: np.random.Generator) -> SyntheticBatch:
    """``simulate(agent, make_noise(n_items, k, rng, agent.n_columns))``."""
    return simulate(agent, make_noise(n_items, k, rng, agent.n_columns))


def draw_counts(probs: Sequence[float] | np.ndarray, n_items: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Multinomial(k, probs) counts for ``n_items`` independent items, shape (n_items, len(probs))."""
    pv = np.asarray(probs, dtype=np.float64)
    if (pv < 0).any() or not math.isclose(pv.sum(), 1.0, abs_tol=1e-9):
        raise ValueError("probs must be non-negative and sum to 1")
    return rng.multinomial(k, pv / pv.sum(), size=n_items)


def column_ranks(counts: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """Rank (eq. 4.8 with random tie-break) of every column of a count matrix: ``1 + #{columns with a larger count,
    or an equal count and a smaller priority}``; +∞ for columns with count 0. Shape (n, C), float."""
    c = np.asarray(counts)
    t = np.asarray(tie)
    if t.shape != c.shape:
        raise ValueError("tie priorities must have the same shape as counts")
    own, other = c[:, :, None], c[:, None, :]  # beats[n, j, i]: does column i rank ahead of column j?
    beats = (other > own) | ((other == own) & (t[:, None, :] < t[:, :, None]))
    ranks = 1.0 + beats.sum(axis=2)
    return np.where(c > 0, ranks, np.inf)


def rank_scores(counts: np.ndarray, tie: np.ndarray, acceptable: Sequence[int]) -> np.ndarray:
    """Rank score (eq. 10.1) per row: the best rank among the ``acceptable`` columns, +∞ if none was observed."""
    return column_ranks(counts, tie)[:, list(acceptable)].min(axis=1)


def merge_columns(
    counts: np.ndarray, tie: np.ndarray, groups: Sequence[Sequence[int]]
) -> tuple[np.ndarray, np.ndarray]:
    """Canonicalize at the class level: each group of raw columns (surface forms) becomes one class whose count is
    the group's total and whose tie priority is the group's smallest. Returns (counts, tie) of shape (n, len(groups))."""
    merged = np.stack([counts[:, list(g)].sum(axis=1) for g in groups], axis=1)
    merged_tie = np.stack([tie[:, list(g)].min(axis=1) for g in groups], axis=1)
    return merged, merged_tie


def adaptive_set_sizes(batch: SyntheticBatch, q: float) -> np.ndarray:
    """Size of the eq. 6.7 set of every item: ``min{r : Σ_{j≤r} P̂(c_(j)) ≥ q}``, capped at the number of observed
    classes (the whole observed set when q is never reached)."""
    desc = -np.sort(-batch.valid_counts, axis=1)
    cum = np.cumsum(desc, axis=1) / batch.k
    r = (cum < q).sum(axis=1) + 1
    return np.minimum(r, batch.n_classes)


def exact_mode_error(probs: Sequence[float], k: int) -> float:
    """Exact P(mode ≠ class 0) for K i.i.d. draws from ``probs`` (valid classes only) with uniformly random
    tie-breaking among the tied top classes, by enumerating every count vector (small K and few classes)."""
    p = np.asarray(probs, dtype=np.float64)
    if (p < 0).any() or not math.isclose(p.sum(), 1.0, abs_tol=1e-9):
        raise ValueError("probs must be non-negative and sum to 1")
    n_cls = p.size
    logp = np.log(np.where(p > 0, p, 1.0))
    correct = 0.0
    for combo in combinations_with_replacement(range(n_cls), k):
        c = np.bincount(combo, minlength=n_cls)
        if (c[p == 0] > 0).any():
            continue
        top = c.max()
        if c[0] != top:
            continue
        logpmf = gammaln(k + 1) - gammaln(c + 1).sum() + float((c * logp).sum())
        correct += math.exp(logpmf) / int((c == top).sum())
    return 1.0 - correct


def hoeffding_mode_bound(p: float, k: int) -> float:
    """Hoeffding bound on the mode error, ``exp(−2K(p − ½)²)`` for p > ½ (paper Thm 4.4 part 3; App. C.3); 1 else."""
    return math.exp(-2.0 * k * (p - 0.5) ** 2) if p > 0.5 else 1.0
