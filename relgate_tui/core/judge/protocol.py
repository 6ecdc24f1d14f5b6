"""The paper's pairwise protocol and its transitivity figures (paper 000 §3.1, eq. 1, Table 1; issue 11 §2).

**Protocol.** For one input with candidates S, every unordered pair {a, b} is judged by an *odd* number k of
verdicts (paper §3.1 "Repetitions": k = 3). Each verdict's presentation order — which candidate is shown first —
is an independent fair coin, drawn reproducibly from (seed, input id, pair, verdict index) by
:func:`presentation_order`. The pair's winner is the majority of its k verdicts; since k is odd every pair has a
winner, so the majority graph is a complete tournament G and paper eq. (1) applies as written:

    ρ(x) = #directed 3-cycles in G / C(n, 3).

Why not "both orders × k, drop even splits" (the previous engine protocol): a judge that always picks the first-
shown candidate then splits every pair evenly, has no edge, no cycle and ρ = 0 — it looks perfectly transitive —
and a coin-flip judge loses most of its edges, giving ρ ≈ 0.08 instead of the random baseline 1/4. With random
presentation orders the always-first judge's majority is the first-shown candidate of ≥ (k+1)/2 of k fair coins,
i.e. a uniformly random winner, so it scores like a coin flip. Position bias is measured separately, from verdicts
asked in both orders (:func:`relgate_tui.core.judge.bias.position_consistency`).

**Random baseline.** For a uniformly random tournament each triple is one of 8 equally likely orientations, 2 of
which are directed 3-cycles, so E[ρ] = 1/4 (:data:`RANDOM_BASELINE_RHO`, the dashed line of paper Fig. 2).

**Unusable verdicts** (INVALID: unparseable; TIE: the judge declared no preference) are not votes. The protocol
re-asks them: :func:`plan_reasks` lists, for every pair with fewer than k valid verdicts, the extra verdicts to ask
(each with its own fresh seeded presentation order, indices k, k+1, …) up to ``max_asks_per_pair`` asks in all.
Re-asking keeps every pair's winner a majority of k valid verdicts, exchangeable with the planned ones. A pair that
still has no strict majority (an even number of valid verdicts splitting evenly, or none at all) or was never asked
is *unresolved*: it has no edge, and ρ is computed over the *decided* triples (all three pairs resolved),

    ρ(x) = #directed 3-cycles / #decided triples,

which equals eq. (1) when every pair is resolved. Counting an undecided triple as acyclic (dividing by C(n, 3))
would bias ρ towards 0 for judges that fail often; breaking the tie by a coin would push it towards 1/4. The number
of unresolved pairs is reported so a reader can see the departure from the protocol.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from relgate_tui.core.judge.cycles import three_cycles_from_adjacency
from relgate_tui.core.judge.tournament import PairwiseVerdict, Tournament, VerdictError

DEFAULT_K = 3
"""Verdicts per pair (paper §3.1 "Repetitions": k = 3)."""

RANDOM_BASELINE_RHO = 0.25
"""E[ρ] of a uniformly random tournament (2 of the 8 orientations of a triple are 3-cycles; paper Fig. 2)."""


@dataclass(frozen=True)
class PlannedAsk:
    """One verdict to ask: the unordered pair (``a`` before ``b`` in the plan's candidate order), the verdict's
    ``index`` within the pair (0 … k−1 planned, ≥ k re-asks) and its presentation order (``first`` shown first)."""

    a: str
    b: str
    index: int
    first: str
    second: str


@dataclass(frozen=True)
class PairwisePlan:
    """Every verdict of one input under the protocol: C(n, 2) pairs × k asks, pairs in candidate order."""

    input_id: str
    seed: int
    k: int
    candidates: tuple[str, ...]
    asks: tuple[PlannedAsk, ...]


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1 or k % 2 == 0:
        raise ValueError(f"k must be an odd number of verdicts per pair (1, 3, 5, …), got {k!r}")


def presentation_order(a: str, b: str, index: int, *, seed: int, input_id: str) -> tuple[str, str]:
    """(first, second) for verdict ``index`` of the pair {a, b} of input ``input_id``: a fair coin from
    BLAKE2b(repr((seed, input_id, lo, hi, index))) with (lo, hi) = sorted ids, so the order depends on the pair and
    not on how the caller lists it or the candidates; independent across indices, pairs, inputs and seeds."""
    if a == b:
        raise VerdictError(f"cannot present candidate {a!r} against itself")
    lo, hi = (a, b) if a < b else (b, a)
    digest = hashlib.blake2b(repr((int(seed), str(input_id), lo, hi, int(index))).encode("utf-8"),
                             digest_size=8).digest()
    return (lo, hi) if digest[0] & 1 == 0 else (hi, lo)


def plan_pairwise(candidates: Sequence[str], *, k: int = DEFAULT_K, seed: int = 0,
                  input_id: str = "") -> PairwisePlan:
    """The protocol's asks for one input: every pair × k verdicts, each with a seeded random presentation order
    (:func:`presentation_order`). Reproducible from (seed, input id, candidate ids)."""
    _check_k(k)
    cands = tuple(str(c) for c in candidates)
    if len(set(cands)) != len(cands):
        raise VerdictError("duplicate candidate ids in the candidate list")
    asks = []
    for a, b in combinations(cands, 2):
        for r in range(k):
            first, second = presentation_order(a, b, r, seed=seed, input_id=input_id)
            asks.append(PlannedAsk(a, b, r, first, second))
    return PairwisePlan(str(input_id), int(seed), k, cands, tuple(asks))


def plan_both_orders(candidates: Sequence[str], *, k_per_order: int = 1) -> tuple[PlannedAsk, ...]:
    """The asks of the position-consistency analysis (:func:`~relgate_tui.core.judge.bias.position_consistency`):
    every pair ``k_per_order`` times in each presentation order (indices 0 … 2·k_per_order − 1, a-first ones
    first). Kept apart from the protocol's verdicts: ρ never uses them."""
    if isinstance(k_per_order, bool) or not isinstance(k_per_order, int) or k_per_order < 1:
        raise ValueError(f"k_per_order must be a positive integer, got {k_per_order!r}")
    cands = tuple(str(c) for c in candidates)
    if len(set(cands)) != len(cands):
        raise VerdictError("duplicate candidate ids in the candidate list")
    asks = []
    for a, b in combinations(cands, 2):
        asks += [PlannedAsk(a, b, r, a, b) for r in range(k_per_order)]
        asks += [PlannedAsk(a, b, k_per_order + r, b, a) for r in range(k_per_order)]
    return tuple(asks)


def plan_reasks(plan: PairwisePlan, verdicts: Iterable[PairwiseVerdict], *,
                max_asks_per_pair: int | None = None) -> tuple[PlannedAsk, ...]:
    """The extra asks that bring every pair of ``plan`` to k valid verdicts (module docstring, "Unusable
    verdicts"). ``verdicts`` = every answer received so far for this input under this plan (valid or not; not
    the position analysis's both-orders verdicts, which would count as asks); a pair with
    m answers of which v are valid gets min(k − v, cap − m) more asks with indices m, m+1, …, each with its own
    seeded order. ``max_asks_per_pair`` (default 3k) caps the asks per pair, so a judge that never answers ends."""
    cap = 3 * plan.k if max_asks_per_pair is None else int(max_asks_per_pair)
    if cap < plan.k:
        raise ValueError("max_asks_per_pair must be at least k")
    asked: dict[frozenset[str], int] = {}
    valid: dict[frozenset[str], int] = {}
    for v in verdicts:
        key = frozenset((v.first, v.second))
        asked[key] = asked.get(key, 0) + 1
        valid[key] = valid.get(key, 0) + int(v.is_valid)
    out = []
    for a, b in combinations(plan.candidates, 2):
        key = frozenset((a, b))
        m = asked.get(key, 0)
        more = min(plan.k - valid.get(key, 0), cap - m)
        for r in range(m, m + max(more, 0)):
            first, second = presentation_order(a, b, r, seed=plan.seed, input_id=plan.input_id)
            out.append(PlannedAsk(a, b, r, first, second))
    return tuple(out)


@dataclass(frozen=True)
class TransitivityReport:
    """ρ of one input's majority tournament (module docstring). ``cycles`` as in
    :class:`~relgate_tui.core.judge.cycles.CycleReport`; ``rho`` = n_cycles / n_decided_triples (NaN when no
    triple is decided, e.g. n < 3); ``n_unresolved_pairs`` = tied + never-asked pairs."""

    n_candidates: int
    n_triples: int
    n_decided_triples: int
    n_unresolved_pairs: int
    cycles: tuple[tuple[str, str, str], ...]
    rho: float

    @property
    def n_cycles(self) -> int:
        return len(self.cycles)

    @property
    def has_cycle(self) -> bool:
        return bool(self.cycles)


def transitivity_report(tournament: Tournament) -> TransitivityReport:
    """Directed 3-cycles and ρ(x) (paper eq. 1, over decided triples) of one input's majority tournament."""
    n = tournament.n
    a = tournament.adjacency()
    decided_pair = a | a.T
    if n >= 3:
        t = np.array(list(combinations(range(n), 3)), dtype=np.intp)
        i, j, k = t[:, 0], t[:, 1], t[:, 2]
        decided = int(np.count_nonzero(decided_pair[i, j] & decided_pair[j, k] & decided_pair[i, k]))
    else:
        decided = 0
    c = tournament.candidates
    cycles = tuple((c[x], c[y], c[z]) for x, y, z in three_cycles_from_adjacency(a))
    return TransitivityReport(
        n_candidates=n,
        n_triples=math.comb(n, 3),
        n_decided_triples=decided,
        n_unresolved_pairs=len(tournament.tied_pairs) + len(tournament.missing_pairs),
        cycles=cycles,
        rho=len(cycles) / decided if decided else math.nan,
    )


@dataclass(frozen=True)
class TransitivitySummary:
    """Paper Table 1 over the inputs with ≥ 1 decided triple (``n_inputs_used``): mean ρ, the *cycle share* (share
    of inputs with ≥ 1 directed 3-cycle), max and median ρ, pooled ρ = Σ cycles / Σ decided triples, next to the
    random baseline 1/4. Rates are NaN when no input is used."""

    n_inputs: int
    n_inputs_used: int
    mean_rho: float
    cycle_share: float
    max_rho: float
    median_rho: float
    pooled_rho: float
    n_unresolved_pairs: int
    random_baseline: float = RANDOM_BASELINE_RHO


def summarize_transitivity(reports: Iterable[TransitivityReport]) -> TransitivitySummary:
    """Aggregate per-input :class:`TransitivityReport` s into paper Table 1 (mean ρ, cycle share, max, median)."""
    reports = list(reports)
    used = [r for r in reports if r.n_decided_triples > 0]
    unresolved = sum(r.n_unresolved_pairs for r in reports)
    if not used:
        nan = math.nan
        return TransitivitySummary(len(reports), 0, nan, nan, nan, nan, nan, unresolved)
    rho = np.array([r.rho for r in used], dtype=np.float64)
    return TransitivitySummary(
        n_inputs=len(reports),
        n_inputs_used=len(used),
        mean_rho=float(rho.mean()),
        cycle_share=float(np.mean([r.has_cycle for r in used])),
        max_rho=float(rho.max()),
        median_rho=float(np.median(rho)),
        pooled_rho=sum(r.n_cycles for r in used) / sum(r.n_decided_triples for r in used),
        n_unresolved_pairs=unresolved,
    )
