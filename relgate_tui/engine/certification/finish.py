"""The end of a run (issue 28 §1): :func:`finish` is the one place a certification is finished, whoever asks —
``relgate certify`` (:func:`relgate_tui.engine.certification.pipeline.run_certify`), the TUI session (view-only with
``write=False``), ``relgate review pull`` and the log importer.

The steps, in order:

1. analyse the stored samples and labels (:func:`~relgate_tui.engine.certification.certify.analyse_prepared`), or take
   the caller's analysis when no labels are to be applied;
2. check the new ``labels`` against the sampled items' candidates and apply them (one event each, idempotent), then
   analyse again when any was written;
3. the pairwise judge's section and the verification judge's ``judge_assisted`` section;
4. the result at ``alpha`` with its gate (:func:`relgate_tui.core.certification.gate.decide_gate`, the one gate rule;
   the assisted bound feeds the "assisted"/"best" gates) and the document built once from them
   (:func:`~relgate_tui.engine.certification.certify.build_document`, called nowhere else);
5. the :class:`~relgate_tui.engine.certification.result.RunResult` of that document; with ``write``:
   ``results.json`` (:func:`~relgate_tui.engine.certification.result.write_result`) and the run's status
   (incomplete while sampling is incomplete, "labelling" while items still wait for a person's verdict, else
   complete), with the labelling counts in the manifest (``labelling``: ``done`` calibration items a person verified
   or skipped, of ``total`` = done + waiting) — what ``relgate runs`` and the TUI's Runs list as "labelling: 0 of 50".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from relgate_tui.engine.certification.analysis import Analysis
from relgate_tui.engine.certification.assisted import assisted_section
from relgate_tui.engine.certification.calls import CallCounts
from relgate_tui.engine.certification.certify import Prepared, analyse_prepared, build_document, judge_section
from relgate_tui.engine.certification.result import RunResult, write_result
from relgate_tui.engine.runs.files import read_review_summary
from relgate_tui.engine.runs.labels import by_a_person
from relgate_tui.engine.runs.labels_file import apply_labels, check_label_ranks
from relgate_tui.engine.runs.store import Label, RunStatus

__all__ = ["FROM_CONFIG", "finish"]


class _Config(Enum):
    FROM_CONFIG = "from the run's config"


FROM_CONFIG = _Config.FROM_CONFIG
"""``finish(gate=…)``'s default: the run's configured ``min_reliability`` (None means "no gate")."""


def finish(prepared: Prepared, *, calls: CallCounts, labels: Sequence[Label] = (), alpha: float | None = None,
           confidence: float | None = None, gate: float | None | _Config = FROM_CONFIG, gate_on: str | None = None,
           write: bool = True, labels_source: str = "labels", analysis: Analysis | None = None,
           samples_by_item: Mapping[str, Sequence[Any]] | None = None, judge_calls: Any = None,
           verify_calls: CallCounts | None = None, judgements: Any = None, pending: int | None = None,
           set_status: bool = True, item_fields: Mapping[str, Mapping[str, Any]] | None = None,
           doc_fields: Mapping[str, Any] | None = None, review: Mapping[str, Any] | None = None) -> RunResult:
    """Finish ``prepared`` (module docstring). ``alpha``, ``confidence``, ``gate`` (min reliability) and ``gate_on``
    default to the run's config (``gate`` None: no gate). ``labels_source`` names the labels in an error; ``analysis``: the caller's current
    analysis (used when no label is written); ``samples_by_item``: the samples when the caller holds them (the
    importer); ``judge_calls``/``verify_calls``/``judgements``: what the judge passes report; ``pending``: how many
    items still wait for a person's verdict (the TUI's, audit items included; None: the result's calibration items
    without a verdict, ``n_pending``) — status "labelling" while any does; ``set_status`` False leaves the status alone (a TUI run whose
    sampling pass has not ended); ``item_fields``/``doc_fields``: fields added to the document's items / top level
    (the importer's flags and provenance); ``review``: the run's team-review summary (``review`` section; None: the
    one the run store holds from the last ``relgate review pull``). Returns the :class:`RunResult` (with the core's
    result, the labels written and the status set)."""
    cfg = prepared.config
    a_ = cfg.alpha if alpha is None else alpha
    conf = cfg.confidence if confidence is None else confidence
    threshold = cfg.min_reliability if gate is FROM_CONFIG else gate
    on = gate_on or cfg.gate_on
    if analysis is None or labels:
        analysis = analyse_prepared(prepared, samples_by_item)
    written = 0
    if labels:
        n_classes = {a.item_id: a.ranked.n_classes for a in analysis.items if a.sampled}
        sampled = [lab for lab in labels if lab.item in n_classes]
        check_label_ranks(sampled, n_classes, labels_source)
        written = apply_labels(prepared.store, sampled)
        if written:
            analysis = analyse_prepared(prepared, samples_by_item)
    judge = judge_section(prepared, analysis, alpha=a_, confidence=conf, gate=threshold, calls=judge_calls,
                          judgements=judgements)
    assisted = assisted_section(prepared, analysis, confidence=conf, gate=threshold, calls=verify_calls)
    result = analysis.results(a_, conf, threshold, on, None if assisted is None else assisted.gate_bound(),
                              one_look=cfg.one_look)
    doc = build_document(prepared, analysis, alpha=a_, calls=calls, confidence=conf, gate=threshold, judge=judge,
                         gate_on=on, assisted=assisted, result=result,
                         review=read_review_summary(prepared.store.path) if review is None else review)
    if item_fields:
        for entry in doc.get("items", []):
            doc_extra = item_fields.get(entry.get("id"))
            if doc_extra:
                entry.update(doc_extra)
    if doc_fields:
        doc.update(doc_fields)
    waiting = result.n_pending if pending is None else pending
    done = sum(1 for a in analysis.items if a.role == "calibration" and a.sampled and by_a_person(a.verified_by))
    status = None
    if write and set_status:
        status = (RunStatus.INCOMPLETE if not analysis.sampling_complete else
                  RunStatus.LABELLING if waiting else RunStatus.COMPLETE)
    out = RunResult.from_json(doc, core=result, analysis=analysis, labels_written=written, status=status)
    if write:
        # the results, the labelling counts and the new status in one manifest write (each atomic write costs a file
        # and a directory fsync)
        new = status if status is not None and prepared.store.run_status != status else None
        write_result(prepared.store, out, labelling={"done": done, "total": done + waiting},
                     **({} if new is None else {"status": new.value}))
    return out
