"""The pairwise tournament study (paper 000 §3.1–3.3) under the paper's protocol (issue 11 §2).

Requests: per input, every unordered pair {a, b} gets an **odd** number k of verdicts (k = the audit's ``reps``;
even k is rejected by :class:`~relgate_tui.engine.judging.audit.AuditSpec`), each with its own presentation order
drawn by a seeded fair coin (:func:`relgate_tui.core.judge.plan_pairwise`). Each verdict is one request, keyed
``("pairwise", variant, input_id, first_id, second_id, index)`` and asked once. Unusable answers are not re-asked
(the platform asks a fixed list of requests): a pair left without a strict majority of valid verdicts is
*unresolved* — no edge — and is counted (``n_unresolved_pairs``), as the core protocol prescribes.

Analysis, per input: the majority tournament of the valid verdicts (k odd: a winner for every pair whose verdicts
are all valid), its directed 3-cycles and ρ(x) = #cycles / #decided triples (paper eq. 1; = #cycles / C(n, 3) when
every pair is resolved; :func:`~relgate_tui.core.judge.transitivity_report`); every ranking method of Table 2 with
ties broken by the seeded order of ``(seed, input_id)`` (never the file order) and Kendall τ-b against the human
ranking (eq. 4); the exact weighted MFAS (eq. 3) solved **once** per input and shared by the ``mfas_exact`` ranking.
Overall: paper Table 1 (mean ρ, the cycle share, max and median ρ beside the random baseline 1/4,
:func:`~relgate_tui.core.judge.summarize_transitivity`) and, *separately*, position consistency
(:func:`~relgate_tui.core.judge.position_consistency`) over the same verdicts: their presentation orders are fair
coins, so the first-shown share test is unbiased, and a judge that always picks the first-shown candidate is flagged
``position_only`` (under random orders its majorities are coin flips, so its ρ is ≈ 1/4, never 0).

The result is a frozen :class:`PairwiseResult`; ``to_json()`` is the ``pairwise`` section of ``relgate judge audit
--json`` (NaN/±∞ → null through :mod:`~relgate_tui.core.jsonsafe`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from relgate_tui.core import judge as cj
from relgate_tui.core.jsonsafe import finite_or_none
from relgate_tui.core.types import INVALID
from relgate_tui.engine.judging.ask import Key, Request
from relgate_tui.engine.judging.data import AuditInput
from relgate_tui.engine.judging.prompts import parse_pairwise_verdict
from relgate_tui.engine.judging.variants import PromptVariant

KIND = "pairwise"
PROTOCOL_NAME = "paper000"
"""The pairwise protocol's name in the JSON: odd k verdicts per pair, seeded fair-coin presentation orders."""


def plans(inputs: Sequence[AuditInput], k: int, seed: int) -> list[cj.PairwisePlan]:
    """The protocol's plan of every input (:func:`relgate_tui.core.judge.plan_pairwise`; k odd)."""
    return [cj.plan_pairwise([c.id for c in inp.candidates], k=k, seed=seed, input_id=inp.id) for inp in inputs]


def key_of(variant: str, input_id: str, ask: cj.PlannedAsk) -> Key:
    return (KIND, variant, input_id, ask.first, ask.second, str(ask.index))


def requests(inputs: Sequence[AuditInput], criterion: str, description: str, variant: PromptVariant, *,
             k: int, seed: int) -> list[Request]:
    """One request per planned verdict (asked once), in plan order."""
    out = []
    for inp, plan in zip(inputs, plans(inputs, k, seed), strict=True):
        text = {c.id: c.text for c in inp.candidates}
        for a in plan.asks:
            messages = variant.pairwise_messages(inp.input, text[a.first], text[a.second], criterion, description)
            out.append(Request(key_of(variant.name, inp.id, a), tuple(messages)))
    return out


def parse(text: str) -> str:
    """"A", "B" or INVALID (the strict parser of paper 000's verdict format)."""
    return parse_pairwise_verdict(text) or INVALID


@dataclass(frozen=True)
class PairwiseInput:
    """One input's tournament and everything derived from it."""

    id: str
    candidates: tuple[str, ...]
    verdicts: tuple[cj.PairwiseVerdict, ...]
    tournament: cj.Tournament
    transitivity: cj.TransitivityReport
    mfas: cj.MfasResult
    rankings: Mapping[str, cj.Ranking]
    kendall_tau: Mapping[str, float]
    human: Mapping[str, float]

    def to_json(self) -> dict[str, Any]:
        t = self.transitivity
        return {
            "id": self.id,
            "candidates": list(self.candidates),
            "rho": finite_or_none(t.rho),
            "n_cycles": t.n_cycles,
            "n_decided_triples": t.n_decided_triples,
            "n_unresolved_pairs": t.n_unresolved_pairs,
            "cyclic_triples": [list(c) for c in t.cycles],
            "edges": [[e.winner, e.loser, e.margin] for e in self.tournament.edges],
            "pairs": cj.verdicts_by_order(self.tournament, list(self.verdicts)),
            "tied_pairs": [list(p) for p in self.tournament.tied_pairs],
            "mfas": {"cost": self.mfas.cost, "optimal": self.mfas.optimal,
                     "reversed": [[e.winner, e.loser, e.margin] for e in self.mfas.reversed_edges]},
            "rankings": {m: {"order": list(r.order), "kendall_tau": finite_or_none(self.kendall_tau[m])}
                         for m, r in self.rankings.items()},
            "human": dict(self.human),
        }


@dataclass(frozen=True)
class PairwiseResult:
    """The pairwise study of one judge under one prompt variant. ``inputs`` most cyclic first."""

    inputs: tuple[PairwiseInput, ...]
    transitivity: cj.TransitivitySummary
    position: cj.PositionConsistency
    mean_kendall_tau: Mapping[str, float]  # NaN when no input has a full human ranking
    n_tau_inputs: Mapping[str, int]
    n_verdicts: int
    n_invalid: int
    k: int = cj.DEFAULT_K
    seed: int = 0

    def to_json(self) -> dict[str, Any]:
        c, p = self.transitivity, self.position
        b = p.bias
        return {
            "protocol": {"name": PROTOCOL_NAME, "k": self.k, "seed": self.seed, "orders": "seeded fair coin per verdict",
                         "reasks": False},
            "inputs": [i.to_json() for i in self.inputs],
            # null, never NaN, when no input has a decided triple (e.g. every verdict unparseable)
            "cycles": {"n_inputs": c.n_inputs, "n_inputs_used": c.n_inputs_used,
                       "mean_rho": finite_or_none(c.mean_rho), "cycle_share": finite_or_none(c.cycle_share),
                       "share_inputs_with_cycle": finite_or_none(c.cycle_share),
                       "random_baseline": c.random_baseline, "max_rho": finite_or_none(c.max_rho),
                       "median_rho": finite_or_none(c.median_rho), "pooled_rho": finite_or_none(c.pooled_rho),
                       "n_unresolved_pairs": c.n_unresolved_pairs},
            "rankings": {m: {"mean_kendall_tau": finite_or_none(t), "n_inputs": self.n_tau_inputs[m]}
                         for m, t in self.mean_kendall_tau.items()},
            "position_bias": {
                "first_shown_share": finite_or_none(b.first_share),
                "first_shown_pvalue": finite_or_none(b.first_share_pvalue),
                "n_valid_verdicts": b.n_valid, "n_pairs": b.n_pairs,
                "pairs_flipped_by_order": b.n_pairs_flipped, "flip_share": finite_or_none(b.flip_share),
            },
            "position_consistency": {
                "flag": p.flag, "position_only": p.flag == "position_only", "favoured": p.favoured,
                "consistency": finite_or_none(p.consistency), "position_share": finite_or_none(p.position_share),
                "min_share_decided_by_position": finite_or_none(p.min_share_decided_by_position),
                "first_shown_share": finite_or_none(b.first_share),
                "first_shown_pvalue": finite_or_none(b.first_share_pvalue),
                "n_valid_verdicts": b.n_valid, "n_pairs_decisive_both_orders": b.n_pairs_decisive_both_orders,
                "pairs_flipped_by_order": b.n_pairs_flipped, "flips_to_first": b.flips_to_first,
                "flips_to_second": b.flips_to_second, "alpha": p.alpha, "position_only_share": p.position_only_share,
                "source": "protocol verdicts (random orders)",
            },
            "verdicts": {"total": self.n_verdicts, "invalid": self.n_invalid},
        }


def analyse_input(inp: AuditInput, verdicts: Sequence[cj.PairwiseVerdict], criterion: str,
                  seed: int = 0) -> PairwiseInput:
    ids = [c.id for c in inp.candidates]
    tournament = cj.build_tournament(verdicts, ids)
    tie_seed = (int(seed), str(inp.id))
    mfas = cj.mfas_exact(tournament, tie_seed=tie_seed)
    rankings = cj.all_rankings(tournament, tie_seed=tie_seed, mfas=mfas)
    human = {c.id: c.human[criterion] for c in inp.candidates if criterion in c.human}
    # a ranking built from no valid verdict is the tie-break order, not the judge's: no τ from zero verdicts
    full = len(human) == len(ids) and any(v.is_valid for v in verdicts)
    taus = {m: cj.kendall_tau_b(r, human) if full else math.nan for m, r in rankings.items()}
    return PairwiseInput(inp.id, tuple(ids), tuple(verdicts), tournament, cj.transitivity_report(tournament), mfas,
                         rankings, taus, human)


def verdicts_of(inp: AuditInput, plan: cj.PairwisePlan, variant: str,
                parsed: Mapping[Key, Sequence[str]]) -> list[cj.PairwiseVerdict]:
    """The verdicts of one input from the parsed answers ("A" = first shown wins, "B", INVALID), in plan order. A
    planned verdict without an answer (a request that failed for good) is simply absent."""
    out = []
    for a in plan.asks:
        for v in parsed.get(key_of(variant, inp.id, a), ())[:1]:
            winner = a.first if v == "A" else a.second if v == "B" else INVALID
            out.append(cj.PairwiseVerdict(a.first, a.second, winner))
    return out


def analyse(inputs: Sequence[AuditInput], variant: str, parsed: Mapping[Key, Sequence[str]],
            criterion: str, *, k: int = cj.DEFAULT_K, seed: int = 0) -> PairwiseResult:
    """The study's result from the parsed answers (by key; one answer per planned verdict). ``k`` and ``seed`` must
    be the audit's: they re-derive the plan (which verdict was asked in which order)."""
    per_input = [analyse_input(inp, verdicts_of(inp, plan, variant, parsed), criterion, seed)
                 for inp, plan in zip(inputs, plans(inputs, k, seed), strict=True)]
    summary = cj.summarize_transitivity([p.transitivity for p in per_input])
    position = cj.position_consistency([list(p.verdicts) for p in per_input])
    means, counts = {}, {}
    for method in cj.RANKING_METHODS:
        taus = [p.kendall_tau[method] for p in per_input if not math.isnan(p.kendall_tau[method])]
        means[method] = float(np.mean(taus)) if taus else math.nan
        counts[method] = len(taus)
    n = sum(len(p.verdicts) for p in per_input)
    invalid = sum(1 for p in per_input for v in p.verdicts if not v.is_valid)
    ordered = tuple(sorted(per_input, key=lambda p: -p.transitivity.rho if math.isfinite(p.transitivity.rho) else 1.0))
    return PairwiseResult(ordered, summary, position, means, counts, n, invalid, k, seed)


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "—" if x is None or not math.isfinite(x) else format(x, spec)


def markdown(r: PairwiseResult) -> list[str]:
    c, p = r.transitivity, r.position
    b = p.bias
    flag = {"position_only": "**position-only judge**: its verdicts follow the presentation order, not the content",
            "position_biased": "position-biased", "no_bias_detected": "no position bias detected",
            "insufficient": "too few valid verdicts to test"}.get(p.flag, p.flag)
    lines = [
        "", f"## Preference cycles (pairwise, k = {r.k} verdicts per pair, seeded random orders)", "",
        "| mean ρ | random baseline | cycle share (inputs with ≥ 1 cycle) | max ρ | median ρ | unresolved pairs "
        "| verdicts (invalid) |",
        "|---|---|---|---|---|---|---|",
        f"| {_fmt(c.mean_rho)} | {c.random_baseline:.2f} | {_fmt(c.cycle_share, '.0%')} | {_fmt(c.max_rho)} | "
        f"{_fmt(c.median_rho)} | {c.n_unresolved_pairs} | {r.n_verdicts} ({r.n_invalid}) |",
        "",
        f"Position consistency: {flag}. The first-shown candidate wins {_fmt(b.first_share, '.1%')} of "
        f"{b.n_valid} valid verdicts (p = {_fmt(b.first_share_pvalue, '.3g')}); "
        f"{b.n_pairs_flipped} of {b.n_pairs_decisive_both_orders} pairs seen decisively in both orders flip with "
        f"the order ({_fmt(b.flip_share, '.1%')}; consistency {_fmt(p.consistency, '.1%')}).",
        "", "## Ranking methods vs the human ranking", "",
        "| method | mean Kendall τ-b | inputs |", "|---|---|---|",
    ]
    lines += [f"| {m} | {_fmt(t, '+.3f')} | {r.n_tau_inputs[m]} |" for m, t in r.mean_kendall_tau.items()]
    cyclic = [i for i in r.inputs if i.transitivity.n_cycles]
    lines += ["", f"## Inputs with a cycle ({len(cyclic)} of {len(r.inputs)})", ""]
    if cyclic:
        lines += ["| input | ρ | cycles | MFAS cost | cyclic triples |", "|---|---|---|---|---|"]
        lines += [f"| {i.id} | {_fmt(i.transitivity.rho)} | {i.transitivity.n_cycles} | {i.mfas.cost} | "
                  + "; ".join(" → ".join(t) for t in i.transitivity.cycles) + " |" for i in cyclic]
    else:
        lines.append("No input has a preference cycle.")
    return lines
