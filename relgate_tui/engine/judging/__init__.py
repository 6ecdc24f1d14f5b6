"""The judging platform (issue 9): one way to ask judges, studies with typed results, stored audits.

Public API (what papers 001–003 build on):

* asking — :class:`Judge`, :class:`Request` (keyed by a tuple), :class:`Answer` (text + per-token log-probs),
  :func:`ask` (async; faults, retries, endpoint-down pause and the cache as in sampling; cancel to stop);
* prompt variants — :class:`PromptVariant`, :data:`ORIGINAL`, :func:`load_variant`, :func:`perturbed_variants`; the
  model-written paraphrase with its :class:`VariantOrigin`: :mod:`.paraphrase`;
* studies — :mod:`.pairwise` (tournaments, cycles, exact MFAS, rankings) and :mod:`.direct` (Likert scores,
  conformal sets, score-token log-probs), each ``requests(...)`` → ``analyse(...)`` → a frozen result with
  ``to_json()``;
* audits — :class:`AuditSpec`, :func:`plan_audit`, :func:`run_audit` (async events, per judge),
  :class:`AuditResult` (``to_json()``, :func:`markdown_report`, :func:`export_result`);
* stored audits — :class:`AuditStore`, :func:`reopen_result` (offline), :func:`list_audits`;
* judge scores files — :func:`audit_from_scores` (an audit's answers from a file, zero model calls).

Modules beside those: :mod:`.prompts` (judge prompts and strict parsers), :mod:`.geval` (the direct study's built-in
prompts), :mod:`.store` (stored audits), :mod:`.scores_file` (its columns in :mod:`.scores_table`) / :mod:`.imported` / :mod:`.as_scores` (judge scores
files, and a stored audit as one), :mod:`.audit_run` (an audit's settings and runner, for both front ends),
:mod:`.studies` (the inputs of the studies of papers 001–003), :mod:`.certify_judge` (the pairwise judge inside a
certification), :mod:`.verify_judge` (the verification judge of a certification), :mod:`.certificate` (a judge certificate's
verdicts, fingerprint and store), :mod:`.certificate_audit` (a stored pairwise audit's verdicts for a certificate),
:mod:`.certificate_doc` (a certificate's JSON and Markdown), :mod:`.cascade` (a judge cascade's verdicts, document and
application).

The public names are imported on first use (PEP 562): importing one module of the package (``relgate certify`` takes
:mod:`.verify_judge` to check its options) does not import the audits, studies and stores (~45 ms; issue 32 §6).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# eager: light, and its function ``ask`` shares its module's name (a lazy name would lose to the submodule)
from relgate_tui.engine.judging.ask import Answer, AskCalls, AskFailed, EndpointState, Judge, Key, Request, ask

if TYPE_CHECKING:
    from relgate_tui.engine.judging.audit import (
        AuditEvent,
        AuditFinished,
        AuditNote,
        AuditPlan,
        AuditSpec,
        JudgeProgress,
        analyse,
        plan_audit,
        planned_answers,
        run_audit,
        select,
    )
    from relgate_tui.engine.judging.imported import audit_from_scores
    from relgate_tui.engine.judging.results import (
        AuditResult,
        StudyCell,
        audit_json,
        export_name,
        export_result,
        markdown_report,
        summary_lines,
    )
    from relgate_tui.engine.judging.store import AuditStore, AuditSummary, audit_id, list_audits, reopen_result
    from relgate_tui.engine.judging.variants import (
        ORIGINAL,
        PromptVariant,
        VariantOrigin,
        load_variant,
        perturbed_variants,
    )

_HOME: dict[str, str] = {
    **dict.fromkeys(("AuditEvent", "AuditFinished", "AuditNote", "AuditPlan", "AuditSpec", "JudgeProgress", "analyse",
                     "plan_audit", "planned_answers", "run_audit", "select"), "audit"),
    **dict.fromkeys(("audit_from_scores",), "imported"),
    **dict.fromkeys(("AuditResult", "StudyCell", "audit_json", "export_name", "export_result", "markdown_report",
                     "summary_lines"), "results"),
    **dict.fromkeys(("AuditStore", "AuditSummary", "audit_id", "list_audits", "reopen_result"), "store"),
    **dict.fromkeys(("ORIGINAL", "PromptVariant", "VariantOrigin", "load_variant", "perturbed_variants"), "variants"),
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ORIGINAL", "Answer", "AskCalls", "AskFailed", "AuditEvent", "AuditFinished", "AuditNote", "AuditPlan",
    "AuditResult", "AuditSpec", "AuditStore", "AuditSummary", "EndpointState", "Judge", "JudgeProgress", "Key",
    "PromptVariant", "Request", "StudyCell", "VariantOrigin", "analyse", "ask", "audit_from_scores", "audit_id", "audit_json",
    "export_name", "export_result", "list_audits", "load_variant",
    "perturbed_variants", "markdown_report", "plan_audit",
    "planned_answers", "reopen_result", "run_audit", "select", "summary_lines",
]
