"""Judge audit (issue 4, paper 000): ask an LLM judge pairwise preferences (both presentation orders, k repetitions)
and/or direct 1–5 scores on an audit data set, then report preference cycles, rankings repaired by exact MFAS with
their Kendall τ-b against the human ranking, position bias, and conformal prediction sets over the judge's Likert
scores.

Requests go through the same machinery as certification (:class:`~relgate_tui.engine.sampler.Sampler`): bounded
concurrency, retries with backoff, the disk cache, fault counting. Each prompt is one sampler item whose ``reps``
samples are the repetitions; the strict parsers of :mod:`~relgate_tui.engine.judge_prompts` play the canonicalizer
(unparseable verdicts are INVALID and count as no verdict). All statistics come from :mod:`relgate_tui.core.judge`.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from relgate_tui import __version__
from relgate_tui.core import judge as cj
from relgate_tui.core.stopping import get_stopping_rule
from relgate_tui.core.types import INVALID
from relgate_tui.engine.judge_data import AuditDataError, AuditInput, AuditSet, load_audit_set
from relgate_tui.engine.judge_prompts import direct_prompt, pairwise_prompt, parse_direct_score, parse_pairwise_verdict
from relgate_tui.engine.tasks import TaskItem

PROTOCOLS = ("pairwise", "direct", "both")


@dataclass(frozen=True)
class JudgeAuditConfig:
    """Options of ``relgate judge-audit`` (issue 4 item 4). ``inputs`` / ``candidates``: how many to use (a seeded
    choice; None = all)."""

    data: str
    criterion: str
    endpoint: str
    model: str
    api_key_env: str | None = None
    protocol: str = "pairwise"
    reps: int = 3
    inputs: int | None = None
    candidates: int | None = None
    alpha: float = 0.10
    seed: int = 0
    concurrency: int = 8
    temperature: float = 0.7
    max_tokens: int | None = 16
    timeout_s: float = 60.0
    cache_dir: str | None = None

    def validate(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"--protocol must be one of {', '.join(PROTOCOLS)}, got {self.protocol!r}")
        if not (isinstance(self.reps, int) and 1 <= self.reps <= 50):
            raise ValueError(f"--reps must be an integer in [1, 50], got {self.reps!r}")
        for name, value in (("--inputs", self.inputs), ("--candidates", self.candidates)):
            if value is not None and not (isinstance(value, int) and value >= (2 if name == "--candidates" else 1)):
                raise ValueError(f"{name} must be an integer ≥ {2 if name == '--candidates' else 1}, got {value!r}")
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"--alpha must be in (0, 1), got {self.alpha!r}")
        if not (isinstance(self.concurrency, int) and 1 <= self.concurrency <= 1024):
            raise ValueError(f"--concurrency must be an integer in [1, 1024], got {self.concurrency!r}")


def select(audit: AuditSet, n_inputs: int | None, n_candidates: int | None, seed: int) -> list[AuditInput]:
    """A seeded choice of inputs (by sorted id) and, within each, of candidates (kept in data order)."""
    rng = random.Random(seed)
    inputs = sorted(audit.inputs, key=lambda i: i.id)
    if n_inputs is not None and n_inputs < len(inputs):
        inputs = sorted(rng.sample(inputs, n_inputs), key=lambda i: i.id)
    out = []
    for inp in inputs:
        cands = list(inp.candidates)
        if n_candidates is not None and n_candidates < len(cands):
            keep = set(rng.sample(range(len(cands)), n_candidates))
            cands = [c for i, c in enumerate(cands) if i in keep]
        out.append(replace(inp, candidates=tuple(cands)))
    return out


def _pairwise_items(inputs: Sequence[AuditInput], criterion: str, description: str) -> list[TaskItem]:
    items = []
    for inp in inputs:
        for a, b in combinations(inp.candidates, 2):
            for first, second in ((a, b), (b, a)):
                messages = pairwise_prompt(inp.input, first.text, second.text, criterion, description)
                items.append(TaskItem(f"pw|{inp.id}|{first.id}|{second.id}", inp.input, messages=tuple(messages)))
    return items


def _direct_items(inputs: Sequence[AuditInput], criterion: str, description: str) -> list[TaskItem]:
    return [
        TaskItem(f"di|{inp.id}|{c.id}", inp.input, messages=tuple(direct_prompt(inp.input, c.text, criterion, description)))
        for inp in inputs
        for c in inp.candidates
    ]


def _verdict_class(text: str, choices: Sequence[str] = ()) -> str:
    return parse_pairwise_verdict(text) or INVALID


def _score_class(text: str, choices: Sequence[str] = ()) -> str:
    score = parse_direct_score(text)
    return str(score) if score is not None else INVALID


def _sample(cfg: JudgeAuditConfig, items: list[TaskItem], parse: Callable[[str, Sequence[str]], str],
            on_event: Callable[[Any], None] | None) -> tuple[dict[str, list[str]], Any]:
    """Ask every item ``reps`` times; returns parsed answers per item id and the sampler totals."""
    from relgate_tui.engine.cache import SampleCache
    from relgate_tui.engine.endpoints import EndpointConfig
    from relgate_tui.engine.paths import cache_dir
    from relgate_tui.engine.sampler import SampleDone, Sampler, SamplingJob, run_sampling

    endpoint = EndpointConfig(cfg.endpoint, cfg.model, api_key_env=cfg.api_key_env, temperature=cfg.temperature,
                              max_tokens=cfg.max_tokens, timeout_s=cfg.timeout_s)
    answers: dict[str, list[tuple[int, str]]] = {it.id: [] for it in items}

    def collect(event: Any) -> None:
        if isinstance(event, SampleDone):
            answers[event.item_id].append((event.index, event.canonical))
        if on_event is not None:
            on_event(event)

    cache = SampleCache(Path(cfg.cache_dir) if cfg.cache_dir else cache_dir() / "requests")
    try:
        sampler = Sampler(endpoint, concurrency=cfg.concurrency, cache=cache, max_down_s=120.0)
        job = SamplingJob(items, parse, get_stopping_rule("none"), cfg.reps, seed=cfg.seed)
        totals = run_sampling(sampler, job, collect)
    finally:
        cache.close()
    return {k: [c for _, c in sorted(v)] for k, v in answers.items()}, totals


def _pairwise_results(inputs: Sequence[AuditInput], answers: dict[str, list[str]], criterion: str) -> dict[str, Any]:
    per_input, verdict_lists, reports = [], [], []
    taus: dict[str, list[float]] = {m: [] for m in cj.RANKING_METHODS}
    for inp in inputs:
        verdicts = []
        for a, b in combinations(inp.candidates, 2):
            for first, second in ((a, b), (b, a)):
                for v in answers.get(f"pw|{inp.id}|{first.id}|{second.id}", []):
                    winner = first.id if v == "A" else second.id if v == "B" else INVALID
                    verdicts.append(cj.PairwiseVerdict(first.id, second.id, winner))
        verdict_lists.append(verdicts)
        tournament = cj.build_tournament(verdicts, [c.id for c in inp.candidates])
        report = cj.cycle_report(tournament)
        reports.append(report)
        rankings = cj.all_rankings(tournament)
        human = {c.id: c.human[criterion] for c in inp.candidates if criterion in c.human}
        ranking_json = {}
        for method, ranking in rankings.items():
            tau = cj.kendall_tau_b(ranking, human) if len(human) == len(inp.candidates) else math.nan
            if not math.isnan(tau):
                taus[method].append(tau)
            ranking_json[method] = {"order": list(ranking.order), "kendall_tau": _num(tau)}
        mfas = cj.mfas_exact(tournament)
        per_input.append({
            "id": inp.id,
            "candidates": [c.id for c in inp.candidates],
            "rho": report.rho,
            "n_cycles": report.n_cycles,
            "cyclic_triples": [list(c) for c in report.cycles],
            "edges": [[e.winner, e.loser, e.margin] for e in tournament.edges],
            "tied_pairs": [list(p) for p in tournament.tied_pairs],
            "mfas": {"cost": mfas.cost, "optimal": mfas.optimal,
                     "reversed": [[e.winner, e.loser, e.margin] for e in mfas.reversed_edges]},
            "rankings": ranking_json,
            "human": human,
        })
    summary = cj.summarize_cycles(reports)
    bias = cj.position_bias(verdict_lists)
    n_verdicts = sum(len(v) for v in verdict_lists)
    n_invalid = sum(1 for vs in verdict_lists for v in vs if v.winner == INVALID)
    return {
        "inputs": sorted(per_input, key=lambda d: -d["rho"]),
        "cycles": {
            "n_inputs": summary.n_inputs, "mean_rho": summary.mean_rho, "share_inputs_with_cycle": summary.share_inputs_with_cycle,
            "max_rho": summary.max_rho, "median_rho": summary.median_rho, "pooled_rho": summary.pooled_rho,
        },
        "rankings": {m: {"mean_kendall_tau": _num(float(np.mean(t))) if t else None, "n_inputs": len(t)}
                     for m, t in taus.items()},
        "position_bias": {
            "first_shown_share": _num(bias.first_share), "first_shown_pvalue": _num(bias.first_share_pvalue),
            "n_valid_verdicts": bias.n_valid, "n_pairs": bias.n_pairs,
            "pairs_flipped_by_order": bias.n_pairs_flipped, "flip_share": _num(bias.flip_share),
        },
        "verdicts": {"total": n_verdicts, "invalid": n_invalid},
    }


def _direct_results(inputs: Sequence[AuditInput], answers: dict[str, list[str]], criterion: str, alpha: float,
                    seed: int) -> dict[str, Any]:
    preds, human, rows = [], [], []
    for inp in inputs:
        for c in inp.candidates:
            scores = [int(s) for s in answers.get(f"di|{inp.id}|{c.id}", []) if s != INVALID]
            pred = float(np.mean(scores)) if scores else math.nan
            rows.append({"input": inp.id, "candidate": c.id, "judge_scores": scores, "judge_mean": _num(pred),
                         "human": c.human.get(criterion)})
            if criterion in c.human:
                preds.append(pred)
                human.append(c.human[criterion])
    alphas = sorted(set(cj.DEFAULT_ALPHAS) | {alpha})
    table = []
    if len(preds) >= 4:
        for row in cj.likert_conformal_table(np.array(preds), np.array(human), alphas, seed=seed):
            table.append({
                "alpha": row.alpha, "target_coverage": row.target_coverage, "coverage": _num(row.coverage),
                "coverage_sd": _num(row.coverage_sd), "mean_width": _num(row.mean_width), "mean_q_hat": _num(row.mean_q_hat),
                "spearman_width_error": _num(row.spearman_width_error), "n_cal": row.n_cal, "n_test": row.n_test,
                "n_infinite_q": row.n_infinite_q,
            })
    return {"scores": rows, "likert_conformal": table, "n_scored": len(preds)}


def run_judge_audit(cfg: JudgeAuditConfig, on_event: Callable[[Any], None] | None = None) -> dict[str, Any]:
    """The whole audit; returns the JSON document (issue 4 item 4)."""
    cfg.validate()
    audit = load_audit_set(cfg.data)
    criterion = audit.criterion_name(cfg.criterion)
    description = audit.criteria.get(criterion, "")
    inputs = select(audit, cfg.inputs, cfg.candidates, cfg.seed)
    started = time.perf_counter()
    doc: dict[str, Any] = {
        "relgate_version": __version__, "data": audit.name, "criterion": criterion, "endpoint": cfg.endpoint,
        "model": cfg.model, "protocol": cfg.protocol, "reps": cfg.reps, "seed": cfg.seed, "alpha": cfg.alpha,
        "n_inputs": len(inputs), "candidates_per_input": [len(i.candidates) for i in inputs],
    }
    calls = {"made": 0, "cached": 0, "failed": 0}
    if cfg.protocol in ("pairwise", "both"):
        answers, totals = _sample(cfg, _pairwise_items(inputs, criterion, description), _verdict_class, on_event)
        doc["pairwise"] = _pairwise_results(inputs, answers, criterion)
        for k in calls:
            calls[k] += getattr(totals, k)
    if cfg.protocol in ("direct", "both"):
        answers, totals = _sample(cfg, _direct_items(inputs, criterion, description), _score_class, on_event)
        doc["direct"] = _direct_results(inputs, answers, criterion, cfg.alpha, cfg.seed)
        for k in calls:
            calls[k] += getattr(totals, k)
    doc["calls"] = calls
    doc["wall_seconds"] = round(time.perf_counter() - started, 3)
    return doc


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


# ------------------------------------------------------------------------------------------------------ CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, help="bundled audit set (hanna) or a JSONL file")
    parser.add_argument("--criterion", required=True)
    parser.add_argument("--endpoint", required=True, help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-key-env", default=None, help="NAME of the environment variable holding the API key")
    parser.add_argument("--protocol", default="pairwise", choices=PROTOCOLS)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--inputs", type=int, default=None)
    parser.add_argument("--candidates", type=int, default=None)
    parser.add_argument("--alpha", type=float, default=0.10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--json", default=None, help="write the result JSON here ('-' = stdout)")


def summary_lines(doc: dict[str, Any]) -> list[str]:
    lines = [f"judge audit: {doc['model']} on {doc['data']} / {doc['criterion']} "
             f"({doc['n_inputs']} inputs, {doc['protocol']}, k = {doc['reps']})"]
    if "pairwise" in doc:
        pw = doc["pairwise"]
        cyc, bias = pw["cycles"], pw["position_bias"]
        lines.append(f"  cycles: mean rho {cyc['mean_rho']:.3f}, inputs with >=1 cycle {cyc['share_inputs_with_cycle']:.0%}, "
                     f"max rho {cyc['max_rho']:.3f}")
        fs = bias["first_shown_share"]
        lines.append(f"  position bias: first-shown wins {fs:.1%}" if fs is not None else "  position bias: no valid verdicts")
        taus = ", ".join(f"{m} {v['mean_kendall_tau']:+.3f}" for m, v in pw["rankings"].items() if v["mean_kendall_tau"] is not None)
        lines.append(f"  Kendall tau vs human: {taus or 'n/a'}")
    if "direct" in doc:
        for row in doc["direct"]["likert_conformal"]:
            lines.append(f"  Likert sets alpha {row['alpha']:.2f}: coverage {row['coverage']:.3f} "
                         f"(target {row['target_coverage']:.2f}), mean width {row['mean_width']:.2f}")
    c = doc["calls"]
    lines.append(f"  calls: {c['made']} made, {c['cached']} cached, {c['failed']} failed; {doc['wall_seconds']:.1f} s")
    return lines


def judge_audit_main(args: argparse.Namespace) -> int:
    """``relgate judge-audit``: 0 done, 2 error (one line on stderr)."""
    cfg = JudgeAuditConfig(
        data=args.data, criterion=args.criterion, endpoint=args.endpoint, model=args.model,
        api_key_env=args.api_key_env, protocol=args.protocol, reps=args.reps, inputs=args.inputs,
        candidates=args.candidates, alpha=args.alpha, seed=args.seed, concurrency=args.concurrency,
        temperature=args.temperature, max_tokens=args.max_tokens,
    )
    done = [0]

    def progress(event: Any) -> None:
        from relgate_tui.engine.sampler import EndpointDown, SampleDone

        if isinstance(event, SampleDone):
            done[0] += 1
            if done[0] % 100 == 0:
                print(f"relgate: {done[0]} judge answers", file=sys.stderr, flush=True)
        elif isinstance(event, EndpointDown):
            print(f"relgate: {event.message}", file=sys.stderr, flush=True)

    try:
        doc = run_judge_audit(cfg, progress)
    except (ValueError, AuditDataError, OSError) as exc:
        print(f"relgate: error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback
        from relgate_tui.engine.sampler import EndpointUnreachable

        kind = "" if isinstance(exc, EndpointUnreachable) else f"{type(exc).__name__}: "
        print(f"relgate: error: {kind}{str(exc).splitlines()[0] if str(exc) else ''}", file=sys.stderr)
        return 2
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)
    if args.json == "-":
        print(text)
    elif args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    for line in summary_lines(doc):
        print(line, file=sys.stderr if args.json == "-" else sys.stdout)
    return 0
