"""Certification of a run (SPEC §3–4, issue 5 items 3, 6, 7): the config, the prepared run, the result document.

The phases and who owns them:

1. :func:`prepare` — validate the :class:`CertifyConfig`, load the task, resolve the canonicalizer, split the items
   (:func:`~relgate_tui.engine.certification.analysis.split_items`: a seeded permutation of the sorted ids — never file order),
   open or resume the run (:class:`~relgate_tui.engine.runs.store.RunStore`; the run id is a hash of everything that
   determines the samples, so the same command resumes the same run). :func:`open_prepared` reopens a stored run
   for viewing: read only, no lock, no write, from the run's own copy of its items when the task file moved.
2. Sampling and the optional judge pass — :func:`relgate_tui.engine.certification.pipeline.run`, the one async pipeline the CLI
   (``asyncio.run``) and the TUI (its worker) both iterate.
3. Verification — automatic from the task's references (canonicalized by the same canonicalizer as the samples),
   and/or verdicts from a labels file (:mod:`relgate_tui.engine.runs.labels_file`) or from the TUI. A human/file verdict
   on an item takes precedence over its reference verdict.
4. :func:`analyse_prepared` → :class:`~relgate_tui.engine.certification.analysis.Analysis`, then :func:`build_document` at any α
   — the JSON of issue 5 item 7 (no timing fields, so an identical run gives an identical document apart from
   ``calls``, which by definition describes the invocation). :func:`build_document` is called only by
   :func:`relgate_tui.engine.certification.finish.finish`, the one end of a run (CLI, TUI, review pull, importer).

**Incomplete sampling.** When some item was not sampled to its stop or to K_max (requests failed), the document says
``"sampling_complete": false`` and ``"passed": null``: no PASS/FAIL is decided on partial data (the CLI exits with
its own code, see ``relgate_tui/cli.py``); unsampled items are listed with ``"not_sampled": true``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from relgate_tui import __version__
from relgate_tui.core.certification import certify as core_certify
from relgate_tui.core.certification.conformal import prediction_set
from relgate_tui.core.certification.readouts import readout_json
from relgate_tui.core.certification.weighted_sets import weighted_json
from relgate_tui.engine.certification.analysis import (
    Analysis,
    ItemAnalysis,
    analyse,
    item_rng,
    split_items,
    used_sample_count,
)
from relgate_tui.engine.certification.calls import CallCounts
from relgate_tui.engine.certification.identity import reference_classes, run_identity
from relgate_tui.engine.certification.options import CertifyConfig
from relgate_tui.engine.certification.prepared import Prepared, open_prepared, prepare
from relgate_tui.engine.runs.labels_file import (
    CRASH_AFTER_LABELS_ENV,
    apply_labels,
    check_label_ranks,
    parse_labels_file,
)
from relgate_tui.engine.runs.store import RunStatus
from relgate_tui.errors import CertifyError

if TYPE_CHECKING:  # the judge-assisted section (numpy, core.ppi) is imported by the end of a run only
    from relgate_tui.engine.certification.assisted import AssistedSection

__all__ = ["CertifyError", "CertifyConfig", "CallCounts", "Prepared", "ItemAnalysis", "Analysis", "split_items",
           "item_rng", "used_sample_count", "parse_labels_file", "check_label_ranks", "apply_labels", "prepare",
           "open_prepared", "run_identity", "reference_classes", "analyse", "analyse_prepared", "results_document",
           "build_document", "CRASH_AFTER_LABELS_ENV", "RunStatus"]

RESULT_SCHEMA = 2  # :data:`relgate_tui.engine.certification.result.SCHEMA`: "reliability_lower_bound" is the run's bound


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _score_json(score: float) -> int | None:
    return None if math.isinf(score) else int(score)


def _proportion_json(p: Any) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"estimate": _num(p.estimate), "lower": _num(p.lower), "upper": _num(p.upper),
            "successes": p.successes, "n": p.n}


def results_document(
    analysis: Analysis,
    *,
    alpha: float,
    header: Mapping[str, Any],
    calls: CallCounts,
    delta: float,
    stopping: str,
    confidence: float = 0.95,
    gate: float | None = None,
    prices: tuple[float, float] | None = None,
    gate_on: str = "bound",
    assisted: Callable[[float], float] | None = None,
    result: core_certify.CertificationResult | None = None,
) -> dict[str, Any]:
    """The result document of issue 5 item 7 (plus a few extra, clearly named fields). ``header`` supplies
    ``run_id``, ``endpoint``, ``model`` and ``task`` ({name, sha256, items}). The ``gate`` block is the
    :class:`~relgate_tui.core.certification.gate.GateDecision` of :meth:`Analysis.results` (undecided while sampling is
    incomplete); ``assisted``: the judge-assisted bound for the "assisted"/"best" gates; ``result``: that result when
    the caller has it (:func:`relgate_tui.engine.certification.finish.finish`)."""
    res = result if result is not None else analysis.results(alpha, confidence, gate, gate_on, assisted)
    m_star = res.m_star
    weighted = analysis.weighted(alpha, res.confidence)  # eq. 10.2, None unless the task gives weights
    weighted_items = {} if weighted is None else {w.item_id: w for w in weighted.items}
    items_json = []
    for a in analysis.items:
        entry: dict[str, Any] = {
            "id": a.item_id,
            "role": a.role,
            "samples": a.ranked.n_samples,
            "invalid": a.ranked.n_invalid,
            "classes": [{"answer": c, "count": n} for c, n in zip(a.ranked.classes, a.ranked.counts, strict=True)],
        }
        if a.score is not None:
            entry["score"] = _score_json(a.score)
        entry["prediction_set"] = list(prediction_set(a.ranked, m_star))
        entry["verified_by"] = a.verified_by
        if a.skipped:
            entry["skipped"] = True
        if a.samples_stored > a.ranked.n_samples:
            entry["samples_stored"] = a.samples_stored
        if not a.complete:
            entry["incomplete"] = True
        if not a.sampled:
            entry["not_sampled"] = True
        if a.weight is not None:
            entry["weight"] = a.weight
        if (w := weighted_items.get(a.item_id)) is not None:
            entry["weighted_m_star"] = _score_json(w.m_star)
            entry["weighted_prediction_set"] = list(w.prediction_set)
        items_json.append(entry)
    has_ref = res.n_with_reference > 0
    usage = dict(analysis.usage)
    cost = None
    if prices is not None:
        cost = (usage.get("prompt_tokens", 0) * prices[0] + usage.get("completion_tokens", 0) * prices[1]) / 1e6
    bound_fields: dict[str, Any] = {}
    if res.watch != "once":  # a person labelled (or a one-look): the fixed-n value under its own name, once
        bound_fields = {"reliability_watch": res.watch}
        if res.bound_differs:
            bound_fields["reliability_lower_bound_fixed_n"] = res.fixed_n_lower_bound
    return {
        "schema": RESULT_SCHEMA,
        "relgate_version": __version__,
        "run_id": header["run_id"],
        "endpoint": header["endpoint"],
        "model": header["model"],
        "task": dict(header["task"]),
        "alpha": float(alpha),
        "delta": float(delta),
        "stopping": stopping,
        "k_max": analysis.k_max,
        "n_cal": res.n,
        "n_skipped": res.n_skipped,
        "n_pending": res.n_pending,
        "n_incomplete": analysis.n_incomplete,
        "n_not_sampled": analysis.n_not_sampled,
        "sampling_complete": analysis.sampling_complete,
        "reliability_level": res.reliability_level,
        "reliability_lower_bound": res.reliability_lower_bound,
        "reliability_n": res.reliability_n,
        **bound_fields,
        "confidence": res.confidence,
        "m_star": None if math.isinf(m_star) else int(m_star),
        "calibration_message": res.calibration_message,
        "coverage": _num(res.coverage.estimate) if has_ref and res.coverage else None,
        "conditional_coverage": (_num(res.conditional_coverage.estimate) if has_ref and res.conditional_coverage
                                 else None),
        "capability_gap": _num(res.capability_gap.estimate) if has_ref and res.capability_gap else None,
        "avg_set_size": _num(res.average_set_size) if res.n_deployment else None,
        "validation": {
            "n_with_reference": res.n_with_reference,
            "coverage": _proportion_json(res.coverage),
            "conditional_coverage": _proportion_json(res.conditional_coverage),
            "capability_gap": _proportion_json(res.capability_gap),
            "mode_accuracy": _proportion_json(res.mode_accuracy),
            "single_sample_accuracy": _proportion_json(res.single_sample_accuracy),
        },
        "calls": {
            "made": calls.made, "cached": calls.cached, "failed": calls.failed, "saved_vs_kmax": res.calls_saved,
            "batch_rounds": calls.batch_rounds, "batched": calls.batched,
            **({"failure_reasons": dict(calls.failure_reasons)} if calls.failure_reasons else {}),
        },
        "samples_used": res.samples_used,
        "tie_rate": _num(res.tie_rate),
        "usage": {**usage, "cost": cost},
        "min_reliability": gate,
        "gate_on": res.gate_on,
        "passed": res.passed if analysis.sampling_complete else None,  # never decided on partial data
        **readout_json(res, analysis.input, alpha),
        "weighted_conformal": weighted_json(weighted),
        "items": items_json,
    }


def analyse_prepared(prepared: Prepared, samples_by_item: Mapping[str, Sequence[Any]] | None = None) -> Analysis:
    """Phase 4 on a prepared run: read samples (unless given) and labels back from the run store and analyse."""
    cfg = prepared.config
    return analyse(
        replace(prepared.task, items=prepared.items),
        prepared.roles,
        prepared.store.samples_by_item() if samples_by_item is None else samples_by_item,
        prepared.store.current_labels(),
        canonicalize_refs=reference_classes(prepared),
        rule=prepared.rule,
        k_max=cfg.k_max,
        seed=cfg.seed,
    )




def judge_section(prepared: Prepared, analysis: Analysis, *, alpha: float, confidence: float = 0.95,
                  gate: float | None = None, calls: Any = None, judgements: Any = None) -> dict[str, Any] | None:
    """The ``pairwise_judge`` section from the judge verdicts stored in the run (None without a judge or before its
    pass): both rankings' reliability side by side and the cycle data (:mod:`relgate_tui.engine.judging.certify_judge`).
    ``judgements``: the per-item judgements when the caller keeps them (the TUI), else computed here."""
    cfg = prepared.config.pairwise_judge_config()
    if cfg is None:  # no judge: the judge modules are never imported (~0.1 s of a run)
        return None
    from relgate_tui.engine.certification.judge_section import judgement_section
    from relgate_tui.engine.judging.certify_judge import judge_items, verdicts_from_document

    if judgements is None:
        verdicts = verdicts_from_document(prepared.store.read_judge_verdicts(), cfg)
        if verdicts is None:
            return None
        judgements = judge_items({a.item_id: a.ranked for a in analysis.items}, verdicts, cfg.max_classes)
    refs = reference_classes(prepared)
    by_id = {item.id: item for item in prepared.items}
    return judgement_section(analysis, judgements, lambda item_id: refs(by_id[item_id]), alpha=alpha,
                             confidence=confidence, gate=gate, calls=calls, judge=cfg)


def build_document(prepared: Prepared, analysis: Analysis, *, alpha: float, calls: CallCounts,
                   confidence: float = 0.95, gate: float | None = None, judge: dict[str, Any] | None = None,
                   gate_on: str | None = None, assisted: AssistedSection | None = None,
                   result: core_certify.CertificationResult | None = None,
                   review: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The run's ``results.json`` (CLI and TUI): :func:`results_document` over the run's header, config and prices, plus
    ``judge`` (``pairwise_judge``, :func:`judge_section`), ``assisted`` (``judge_assisted``; its bound feeds the
    "assisted"/"best" gates) and ``review`` (the last ``relgate review pull``'s summary, handed in by ``finish``)."""
    cfg = prepared.config
    on = gate_on or cfg.gate_on
    doc = results_document(
        analysis, alpha=alpha, header=prepared.header, calls=calls, delta=cfg.delta, stopping=cfg.stopping,
        confidence=confidence, gate=gate,
        prices=(cfg.price_in, cfg.price_out) if cfg.price_in is not None and cfg.price_out is not None else None,
        gate_on=on, assisted=None if assisted is None else assisted.gate_bound(), result=result,
    )
    doc["canon"] = {"spec": prepared.canon_spec, "source": prepared.canon_source}  # which canonicalizer, and why
    if cfg.batch is not None and isinstance(doc["usage"].get("cost"), (int, float)):  # --batch: the batch price
        doc["usage"] = {**doc["usage"], "cost": doc["usage"]["cost"] * cfg.batch, "cost_direct": doc["usage"]["cost"],
                        "batch_price": cfg.batch}
    if judge is not None:
        doc["pairwise_judge"] = judge
    if assisted is not None:
        doc["judge_assisted"] = assisted.to_json()
    if review is not None:  # the last `relgate review pull` into this run (issue 21)
        doc["review"] = dict(review)
    return doc
