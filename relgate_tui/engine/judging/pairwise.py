"""The pairwise tournament study (paper 000 §3.1–3.3): both presentation orders, ``reps`` repetitions each.

Requests: per input of m candidates, every pair {a, b} (data order) shown as (a, b) and as (b, a), keyed
``("pairwise", variant, input_id, first_id, second_id)``. Analysis, per input: the majority tournament of the valid
verdicts (an even split is no edge), its directed 3-cycles and ρ(x) = #cycles / C(n, 3) (paper eq. 1), every ranking
method of Table 2 with Kendall τ-b against the human ranking (eq. 4), the exact weighted MFAS (eq. 3; solved **once**
per input and shared by the ``mfas_exact`` ranking); overall: Table 1 cycle figures and the position bias.

The result is a frozen :class:`PairwiseResult`; ``to_json()`` is the ``pairwise`` section of ``relgate judge-audit
--json`` exactly as before this package existed (NaN/±∞ → null through :mod:`~relgate_tui.core.jsonsafe`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from relgate_tui.core import judge as cj
from relgate_tui.core.jsonsafe import finite_or_none
from relgate_tui.core.types import INVALID
from relgate_tui.engine.judge_data import AuditInput
from relgate_tui.engine.judge_prompts import parse_pairwise_verdict
from relgate_tui.engine.judging.ask import Key, Request
from relgate_tui.engine.judging.variants import PromptVariant

KIND = "pairwise"


def ordered_pairs(inp: AuditInput) -> list[tuple[str, str]]:
    """(first, second) candidate ids: every pair in data order, then reversed."""
    out = []
    for a, b in combinations([c.id for c in inp.candidates], 2):
        out += [(a, b), (b, a)]
    return out


def requests(inputs: Sequence[AuditInput], criterion: str, description: str, variant: PromptVariant) -> list[Request]:
    out = []
    for inp in inputs:
        text = {c.id: c.text for c in inp.candidates}
        for first, second in ordered_pairs(inp):
            messages = variant.pairwise_messages(inp.input, text[first], text[second], criterion, description)
            out.append(Request((KIND, variant.name, inp.id, first, second), tuple(messages)))
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
    cycles: cj.CycleReport
    mfas: cj.MfasResult
    rankings: Mapping[str, cj.Ranking]
    kendall_tau: Mapping[str, float]
    human: Mapping[str, float]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "candidates": list(self.candidates),
            "rho": self.cycles.rho,
            "n_cycles": self.cycles.n_cycles,
            "cyclic_triples": [list(c) for c in self.cycles.cycles],
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
    cycles: cj.CycleSummary
    position_bias: cj.PositionBias
    mean_kendall_tau: Mapping[str, float]  # NaN when no input has a full human ranking
    n_tau_inputs: Mapping[str, int]
    n_verdicts: int
    n_invalid: int

    def to_json(self) -> dict[str, Any]:
        c, b = self.cycles, self.position_bias
        return {
            "inputs": [i.to_json() for i in self.inputs],
            "cycles": {"n_inputs": c.n_inputs, "mean_rho": c.mean_rho, "share_inputs_with_cycle": c.share_inputs_with_cycle,
                       "max_rho": c.max_rho, "median_rho": c.median_rho, "pooled_rho": c.pooled_rho},
            "rankings": {m: {"mean_kendall_tau": finite_or_none(t), "n_inputs": self.n_tau_inputs[m]}
                         for m, t in self.mean_kendall_tau.items()},
            "position_bias": {
                "first_shown_share": finite_or_none(b.first_share),
                "first_shown_pvalue": finite_or_none(b.first_share_pvalue),
                "n_valid_verdicts": b.n_valid, "n_pairs": b.n_pairs,
                "pairs_flipped_by_order": b.n_pairs_flipped, "flip_share": finite_or_none(b.flip_share),
            },
            "verdicts": {"total": self.n_verdicts, "invalid": self.n_invalid},
        }


def analyse_input(inp: AuditInput, verdicts: Sequence[cj.PairwiseVerdict], criterion: str) -> PairwiseInput:
    ids = [c.id for c in inp.candidates]
    tournament = cj.build_tournament(verdicts, ids)
    mfas = cj.mfas_exact(tournament)
    rankings = cj.all_rankings(tournament, mfas=mfas)
    human = {c.id: c.human[criterion] for c in inp.candidates if criterion in c.human}
    full = len(human) == len(ids)
    taus = {m: cj.kendall_tau_b(r, human) if full else math.nan for m, r in rankings.items()}
    return PairwiseInput(inp.id, tuple(ids), tuple(verdicts), tournament, cj.cycle_report(tournament), mfas,
                         rankings, taus, human)


def verdicts_of(inp: AuditInput, variant: str, parsed: Mapping[Key, Sequence[str]]) -> list[cj.PairwiseVerdict]:
    """The verdicts of one input from the parsed answers ("A" = first shown wins, "B", INVALID), in request order."""
    out = []
    for first, second in ordered_pairs(inp):
        for v in parsed.get((KIND, variant, inp.id, first, second), ()):
            winner = first if v == "A" else second if v == "B" else INVALID
            out.append(cj.PairwiseVerdict(first, second, winner))
    return out


def analyse(inputs: Sequence[AuditInput], variant: str, parsed: Mapping[Key, Sequence[str]],
            criterion: str) -> PairwiseResult:
    """The study's result from the parsed answers of every repetition (by key, in repetition order)."""
    per_input = [analyse_input(inp, verdicts_of(inp, variant, parsed), criterion) for inp in inputs]
    summary = cj.summarize_cycles([p.cycles for p in per_input])
    bias = cj.position_bias([list(p.verdicts) for p in per_input])
    means, counts = {}, {}
    for method in cj.RANKING_METHODS:
        taus = [p.kendall_tau[method] for p in per_input if not math.isnan(p.kendall_tau[method])]
        means[method] = float(np.mean(taus)) if taus else math.nan
        counts[method] = len(taus)
    n = sum(len(p.verdicts) for p in per_input)
    invalid = sum(1 for p in per_input for v in p.verdicts if v.winner == INVALID)
    ordered = tuple(sorted(per_input, key=lambda p: -p.cycles.rho))
    return PairwiseResult(ordered, summary, bias, means, counts, n, invalid)


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "—" if x is None or not math.isfinite(x) else format(x, spec)


def markdown(r: PairwiseResult) -> list[str]:
    c, b = r.cycles, r.position_bias
    lines = [
        "", "## Preference cycles (pairwise, both orders)", "",
        "| mean ρ | inputs with ≥ 1 cycle | max ρ | median ρ | verdicts (invalid) |",
        "|---|---|---|---|---|",
        f"| {_fmt(c.mean_rho)} | {_fmt(c.share_inputs_with_cycle, '.0%')} | {_fmt(c.max_rho)} | "
        f"{_fmt(c.median_rho)} | {r.n_verdicts} ({r.n_invalid}) |",
        "",
        f"Position bias: the first-shown candidate wins {_fmt(b.first_share, '.1%')} of "
        f"{b.n_valid} valid verdicts (p = {_fmt(b.first_share_pvalue, '.3g')}); "
        f"{b.n_pairs_flipped} of {b.n_pairs} pairs flip with the order ({_fmt(b.flip_share, '.1%')}).",
        "", "## Ranking methods vs the human ranking", "",
        "| method | mean Kendall τ-b | inputs |", "|---|---|---|",
    ]
    lines += [f"| {m} | {_fmt(t, '+.3f')} | {r.n_tau_inputs[m]} |" for m, t in r.mean_kendall_tau.items()]
    cyclic = [i for i in r.inputs if i.cycles.n_cycles]
    lines += ["", f"## Inputs with a cycle ({len(cyclic)} of {len(r.inputs)})", ""]
    if cyclic:
        lines += ["| input | ρ | cycles | MFAS cost | cyclic triples |", "|---|---|---|---|---|"]
        lines += [f"| {i.id} | {i.cycles.rho:.3f} | {i.cycles.n_cycles} | {i.mfas.cost} | "
                  + "; ".join(" → ".join(t) for t in i.cycles.cycles) + " |" for i in cyclic]
    else:
        lines.append("No input has a preference cycle.")
    return lines
