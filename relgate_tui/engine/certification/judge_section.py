"""The ``pairwise_judge`` section of a certification result (issue 4, paper 000 statistics per issue 11 §2): both
rankings' reliability side by side — the frequency ranking and the judge's MFAS ranking, calibrated with the same
labels — and the cycle and position statistics of the judged items. Split from :mod:`judge_certify` (asking and
per-item judging), which it builds on."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from relgate_tui.core import judge as cj
from relgate_tui.core.certification import certify as core_certify
from relgate_tui.core.certification.scores import validate_rank_score
from relgate_tui.engine.judging.certify_judge import (
    ItemJudgement,
    JudgeCalls,
    PairwiseJudgeConfig,
    acceptable_from_verdict,
    judge_rank_score,
)


# ------------------------------------------------------------------------------------------------------ results
def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _score_json(score: float | None) -> int | None:
    return None if score is None or math.isinf(score) else int(score)


def _proportion_json(p: Any) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"estimate": _num(p.estimate), "lower": _num(p.lower), "upper": _num(p.upper), "successes": p.successes,
            "n": p.n}


def _ranking_results(res: core_certify.CertificationResult) -> dict[str, Any]:
    has_ref = res.n_with_reference > 0
    return {
        "n_cal": res.n,
        "reliability_level": res.reliability_level,
        "reliability_lower_bound": res.reliability_lower_bound,
        "reliability_n": res.reliability_n,
        "confidence": res.confidence,
        "m_star": None if math.isinf(res.m_star) else int(res.m_star),
        "calibration_message": res.calibration_message,
        "coverage": _proportion_json(res.coverage) if has_ref else None,
        "mode_accuracy": _proportion_json(res.mode_accuracy) if has_ref else None,
        "avg_set_size": _num(res.average_set_size) if res.n_deployment else None,
        "passed": res.passed,
    }


def transitivity_sections(judged: Sequence[ItemJudgement]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``cycles`` and ``position_bias`` parts of the judge section over the judged items: paper 000 Table 1
    (:func:`~relgate_tui.core.judge.summarize_transitivity` of the items' ρ over decided triples — a coin-flip judge
    gets mean ρ ≈ 1/4, the ``random_baseline``) and :func:`~relgate_tui.core.judge.position_consistency` of every
    verdict (flag ``position_only`` for a judge that follows the presentation order)."""
    reports = [j.cycles for j in judged]
    summary = cj.summarize_transitivity(reports)
    pc = cj.position_consistency([j.verdicts for j in judged])
    bias = pc.bias
    cycles = {
        "n_items_with_triples": summary.n_inputs_used,
        "n_items_with_cycle": sum(1 for r in reports if r.n_cycles > 0),
        "share_items_with_cycle": _num(summary.cycle_share),
        "cycle_share": _num(summary.cycle_share),
        "mean_rho": _num(summary.mean_rho),
        "max_rho": _num(summary.max_rho),
        "median_rho": _num(summary.median_rho),
        "pooled_rho": _num(summary.pooled_rho),
        "random_baseline": summary.random_baseline,
        "n_unresolved_pairs": summary.n_unresolved_pairs,
        "items_with_cycle": [j.item_id for j in judged if j.cycles.n_cycles > 0],
    }
    position = {
        "first_shown_share": _num(bias.first_share), "first_shown_pvalue": _num(bias.first_share_pvalue),
        "n_valid_verdicts": bias.n_valid, "pairs_flipped_by_order": bias.n_pairs_flipped,
        "pairs_decisive_both_orders": bias.n_pairs_decisive_both_orders, "flip_share": _num(bias.flip_share),
        "consistency": _num(pc.consistency), "position_share": _num(pc.position_share),
        "favoured": pc.favoured, "flag": pc.flag, "position_only": pc.flag == "position_only",
    }
    return cycles, position


def judgement_section(
    analysis: Any,
    judgements: Mapping[str, ItemJudgement],
    reference_of: Callable[[str], Collection[str] | None],
    *,
    alpha: float,
    confidence: float = 0.95,
    gate: float | None = None,
    calls: JudgeCalls | None = None,
    judge: PairwiseJudgeConfig | None = None,
) -> dict[str, Any]:
    """The ``pairwise_judge`` section of the certification document (issue 4 items 3–4), from the pipeline's
    :class:`~relgate_tui.engine.certification.certify.Analysis` (items, roles, frequency rank scores and verdicts), the per-item
    judgements and ``reference_of(item_id)`` (canonical reference classes, None without a reference):

    * ``rankings.frequency`` / ``rankings.judge``: reliability level, 95% bound, M*, coverage, mode accuracy and
      average set size of each ranking, from the same labels (the judge's via s_J);
    * ``cycles``: over the judged items with ≥ 1 decided triple, paper Table 1 figures
      (:func:`~relgate_tui.core.judge.summarize_transitivity`: mean/max/median ρ, cycle share, pooled ρ, the random
      baseline 1/4) and the items with cycles; ``position_bias``: :func:`~relgate_tui.core.judge.position_consistency`
      over every verdict (the coin-flip orders keep the first-shown share unbiased) with its ``flag`` and
      ``position_only``;
    * ``items``: per judged item, the compared classes, the verdicts per pair and order, the tournament edges, ρ and
      cyclic triples, the MFAS cost, the judge order, both scores (``frequency_score`` / ``judge_score``: null = ∞;
      absent while the item is not verified, as the document's ``score``) and the judge's prediction set at its M*."""
    freq_records_cal, freq_records_dep, judge_cal, judge_dep = [], [], [], []
    judge_scores: dict[str, float | None] = {}
    for a in analysis.items:
        j = judgements.get(a.item_id)
        acceptable = acceptable_from_verdict(a.ranked, a.verified_by, a.score, a.skipped,
                                             reference_of(a.item_id) if a.verified_by == "reference" else None)
        js = None
        if acceptable is not None:
            order = j.order if j is not None else tuple(a.ranked.classes)
            js = validate_rank_score(judge_rank_score(order, acceptable))
        judge_scores[a.item_id] = js
        rec = a.record
        jrec = replace(rec, score=js if not a.skipped else rec.score)
        if a.role == "calibration":
            freq_records_cal.append(rec)
            judge_cal.append(jrec)
        else:
            if a.skipped:  # a skipped deployment item is simply unverified (as in the pipeline)
                rec = replace(rec, skipped=False, score=None)
                jrec = replace(jrec, skipped=False, score=None)
            freq_records_dep.append(rec)
            judge_dep.append(jrec)
    k_max = analysis.k_max
    freq_res = core_certify.compute_results(core_certify.build_input(freq_records_cal, freq_records_dep, k_max),
                                            alpha, confidence, gate)
    judge_res = core_certify.compute_results(core_certify.build_input(judge_cal, judge_dep, k_max),
                                             alpha, confidence, gate)
    judged = [judgements[a.item_id] for a in analysis.items if a.item_id in judgements and judgements[a.item_id].judged]
    cycles, position = transitivity_sections(judged)
    freq_score = {a.item_id: a.score for a in analysis.items}
    role = {a.item_id: a.role for a in analysis.items}
    items_json = []
    for j in judged:
        items_json.append({
            "id": j.item_id,
            "role": role[j.item_id],
            "compared": list(j.compared),
            "pairs": cj.verdicts_by_order(j.tournament, j.verdicts, include_unjudged=False),
            "edges": [[e.winner, e.loser, e.margin] for e in j.tournament.edges],
            "tied_pairs": [list(p) for p in j.tournament.tied_pairs],
            "n_cycles": j.cycles.n_cycles,
            "rho": _num(j.cycles.rho),
            "n_decided_triples": j.cycles.n_decided_triples,
            "n_unresolved_pairs": j.cycles.n_unresolved_pairs,
            "cyclic_triples": [list(c) for c in j.cycles.cycles],
            "mfas_cost": j.mfas.cost if j.mfas else 0,
            "mfas_optimal": j.mfas.optimal if j.mfas else True,
            "judge_order": list(j.order),
            "reordered": j.order != j.frequency_order,
            "judge_prediction_set": list(j.prediction_set(judge_res.m_star)),
        })
        # as the document's items: a score key only once the item is verified (null = ∞, no acceptable answer);
        # an item not labelled yet has neither key (issue 24 §5: null never means "pending")
        if freq_score.get(j.item_id) is not None:
            items_json[-1]["frequency_score"] = _score_json(freq_score[j.item_id])
        if judge_scores.get(j.item_id) is not None:
            items_json[-1]["judge_score"] = _score_json(judge_scores[j.item_id])
    n_verdicts = sum(len(j.verdicts) for j in judged)
    n_valid = sum(1 for j in judged for v in j.verdicts if v.is_valid)
    return {
        "judge": judge.public_dict() if judge is not None else None,
        "alpha": float(alpha),
        "rankings": {"frequency": _ranking_results(freq_res), "judge": _ranking_results(judge_res)},
        "n_items_judged": len(judged),
        "n_items_reordered": sum(1 for j in judged if j.order != j.frequency_order),
        "n_top_changed": sum(1 for j in judged if j.order[0] != j.frequency_order[0]),
        "cycles": cycles,
        "position_bias": position,
        "verdicts": {"total": n_verdicts, "valid": n_valid, "invalid": n_verdicts - n_valid},
        "calls": None if calls is None else {"made": calls.made, "cached": calls.cached, "failed": calls.failed},
        "items": items_json,
    }




# ------------------------------------------------------------------------------------------------------ typed view
@dataclass(frozen=True)
class PairCounts:
    """One judged pair {a, b}: ``a_first`` / ``b_first`` = (a won, b won, no verdict) with that answer shown first
    (:func:`~relgate_tui.core.judge.verdicts_by_order`); ``winner`` is the tournament edge's winner, if any."""

    a: str
    b: str
    winner: str | None
    a_first: tuple[int, int, int]
    b_first: tuple[int, int, int]


@dataclass(frozen=True)
class RankingSummary:
    """One ranking's calibration (frequency or judge), as in ``rankings.*`` of the section."""

    reliability_level: float | None
    reliability_lower_bound: float | None
    confidence: float
    m_star: int | None  # None = ∞
    coverage: float | None  # the estimate, None without references
    avg_set_size: float | None


@dataclass(frozen=True)
class JudgedItem:
    """One judged item: its compared answers (frequency order), the verdicts per pair, ρ and cyclic triples, the MFAS
    cost, the judge's order and both rank scores: a rank, ``math.inf`` (no acceptable answer) or None (not verified
    yet — the document then has no score key)."""

    id: str
    compared: tuple[str, ...]
    pairs: tuple[PairCounts, ...]
    rho: float | None
    n_cycles: int
    cyclic_triples: tuple[tuple[str, ...], ...]
    mfas_cost: int
    judge_order: tuple[str, ...]
    frequency_score: float | None
    judge_score: float | None


@dataclass(frozen=True)
class JudgeSectionView:
    """What a front end shows of the ``pairwise_judge`` section (:func:`judgement_section`): both rankings, the cycle
    and position-bias figures and the judged items — read as attributes, never as JSON keys."""

    alpha: float
    judge_model: str | None
    judge_reps: int | None
    frequency: RankingSummary
    judge: RankingSummary
    n_items_judged: int
    n_items_reordered: int
    n_top_changed: int
    n_items_with_triples: int
    n_items_with_cycle: int
    mean_rho: float | None
    max_rho: float | None
    first_shown_share: float | None
    n_valid_verdicts: int
    pairs_flipped_by_order: int
    pairs_decisive_both_orders: int
    position_only: bool
    verdicts_valid: int
    verdicts_total: int
    calls_made: int | None  # None: no judge call this session (verdicts reused from the run)
    calls_cached: int | None
    items: tuple[JudgedItem, ...]


def _ranking_summary(r: Mapping[str, Any]) -> RankingSummary:
    cov = r["coverage"]
    return RankingSummary(r["reliability_level"], r["reliability_lower_bound"], float(r.get("confidence", 0.95)),
                          r["m_star"], None if not cov else cov["estimate"], r["avg_set_size"])


def _judged_item(it: Mapping[str, Any]) -> JudgedItem:
    pairs = tuple(PairCounts(p["a"], p["b"], p["winner"], tuple(p["a_first"]), tuple(p["b_first"]))  # type: ignore[arg-type]
                  for p in it["pairs"])
    return JudgedItem(str(it["id"]), tuple(it["compared"]), pairs, it["rho"], int(it["n_cycles"]),
                      tuple(tuple(c) for c in it["cyclic_triples"]), int(it["mfas_cost"]), tuple(it["judge_order"]),
                      _item_score(it, "frequency_score"), _item_score(it, "judge_score"))


def _item_score(it: Mapping[str, Any], key: str) -> float | None:
    """A judged item's score as the view holds it: absent key = not verified (None), null = ∞, else the rank."""
    if key not in it:
        return None
    return math.inf if it[key] is None else it[key]


def judge_section_view(section: Mapping[str, Any]) -> JudgeSectionView:
    """The typed view of a section built by :func:`judgement_section` (the document stays the one serialised form;
    this reads it once, here, so no screen indexes it)."""
    c, b, v = section["cycles"], section["position_bias"], section["verdicts"]
    judge, calls = section.get("judge") or {}, section.get("calls") or {}
    return JudgeSectionView(
        alpha=float(section["alpha"]),
        judge_model=judge.get("model"), judge_reps=judge.get("reps"),
        frequency=_ranking_summary(section["rankings"]["frequency"]),
        judge=_ranking_summary(section["rankings"]["judge"]),
        n_items_judged=section["n_items_judged"], n_items_reordered=section["n_items_reordered"],
        n_top_changed=section["n_top_changed"],
        n_items_with_triples=c["n_items_with_triples"], n_items_with_cycle=c["n_items_with_cycle"],
        mean_rho=c["mean_rho"], max_rho=c["max_rho"],
        first_shown_share=b["first_shown_share"], n_valid_verdicts=b["n_valid_verdicts"],
        pairs_flipped_by_order=b["pairs_flipped_by_order"], pairs_decisive_both_orders=b["pairs_decisive_both_orders"],
        position_only=bool(b.get("position_only")),
        verdicts_valid=v["valid"], verdicts_total=v["total"],
        calls_made=calls.get("made"), calls_cached=calls.get("cached"),
        items=tuple(_judged_item(it) for it in section["items"]),
    )
