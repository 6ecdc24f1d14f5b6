"""Exports of a certification result document (``relgate report``, the TUI's export; SPEC §5.4–5.5).

The input is a run's :class:`~relgate_tui.engine.certification.result.RunResult` (what
:func:`relgate_tui.engine.certification.finish.finish` returns and :func:`~relgate_tui.engine.certification.result.
read_result` reads back; a result document is read as one first); its ``gate`` is the one gate decision
(``decide_gate``) and its ``reliability_lower_bound`` the run's bound, the gate's. Formats:

* ``json`` — the document itself, pretty-printed;
* ``csv`` — one row per item (pandas): id, role, samples, invalid, classes, top answer, score ("inf" = no acceptable
  class), verified_by, prediction set and its size; text cells have control characters stripped and a cell starting
  with ``= + - @`` gets a leading apostrophe (a spreadsheet would run it as a formula, :func:`core.text.csv_cell`);
* ``md`` — a readable Markdown report: the verdict, reliability with its bound, M*, validation metrics, calls, and
  the per-item table; a run imported from another tool's log (issue 15) also gets its ``imported_from`` block (tool,
  version, model, files and hashes, K, temperature, seed) and its flags: why items carry no self-consistency signal,
  and which items (the ``json`` export carries both in full).
"""

from __future__ import annotations

import io
import math
import os
import sys
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relgate_tui.core import jsonsafe
from relgate_tui.core.redact import public_url
from relgate_tui.core.text import as_misses, counted, csv_cell, one_line, strip_controls
from relgate_tui.engine.certification.result import AssistedView, ImportInfo, ItemEntry, RunResult
from relgate_tui.engine.runs.listing import looks_simulated
from relgate_tui.engine.runs.outputs import check_output_path, write_display, write_output

if TYPE_CHECKING:  # a type only: the judge modules load when a run has a pairwise judge
    from relgate_tui.engine.certification.judge_section import JudgeSectionView

__all__ = ["FORMATS", "items_dataframe", "report_json", "report_csv", "report_markdown", "render_report",
           "write_report", "check_output_path"]

FORMATS = ("md", "json", "csv")


def _as_result(doc: RunResult | Mapping[str, Any]) -> RunResult:
    return doc if isinstance(doc, RunResult) else RunResult.from_json(doc)


def _score_text(item: ItemEntry) -> str:
    if item.score is None:
        return "skipped" if item.skipped else "unverified"
    return "inf" if math.isinf(item.score) else str(int(item.score))


def items_dataframe(doc: RunResult | Mapping[str, Any]):
    """The per-item table as a pandas DataFrame (one row per item, in the document's order)."""
    import pandas as pd

    r = _as_result(doc)
    verdicts = {} if r.assisted is None else r.assisted.p_yes
    rows = []
    for it in r.items:
        verdict = verdicts.get(it.id)
        rows.append(
            {
                "id": it.id,
                "role": it.role,
                "samples": it.samples,
                "invalid": it.invalid,
                "n_classes": len(it.classes),
                "top_answer": it.classes[0][0] if it.classes else "",
                "classes": "; ".join(f"{a}:{n}" for a, n in it.classes),
                "score": _score_text(it),
                "verified_by": it.verified_by or "",
                "prediction_set": " | ".join(it.prediction_set),
                "set_size": len(it.prediction_set),
                "incomplete": it.incomplete,
                "verify_judge": "" if verdict is None else verdict[0],
                "verify_judge_p_yes": "" if verdict is None or verdict[1] is None else verdict[1],
            }
        )
    columns = ["id", "role", "samples", "invalid", "n_classes", "top_answer", "classes", "score", "verified_by",
               "prediction_set", "set_size", "incomplete", "verify_judge", "verify_judge_p_yes"]
    return pd.DataFrame(rows, columns=columns)


def report_json(doc: Mapping[str, Any]) -> str:
    """The JSON text of a result document, through the one JSON policy (NaN/±∞ → null, :mod:`core.jsonsafe`)."""
    return jsonsafe.dumps(doc)


def emit_json(doc: Mapping[str, Any], json_path: str,
              inputs: Iterable[str | os.PathLike[str] | None] = ()) -> None:
    """Every command's ``--json PATH``: ``-`` writes the document to stdout, anything else goes through the output
    guard and the one output write (:func:`write_report`; never over one of ``inputs``)."""
    if json_path == "-":
        sys.stdout.write(report_json(doc))
        sys.stdout.flush()
    else:
        write_report(doc, "json", json_path, inputs=inputs)


_TEXT_COLUMNS = ("id", "role", "top_answer", "classes", "verified_by", "prediction_set")


def report_csv(doc: RunResult | Mapping[str, Any]) -> str:
    frame = items_dataframe(doc)
    for column in _TEXT_COLUMNS:
        frame[column] = frame[column].map(lambda v: csv_cell(strip_controls(v)) if isinstance(v, str) else v)
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue()


def _pct(x: Any) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * float(x):.1f}%"


def _md_cell(x: Any) -> str:
    return one_line(str(x)).replace("|", "\\|")


def plain_sentence(lower_bound: float | None, confidence: float, n: int, *, note: str | None = None) -> str:
    """The result in plain words, first in Results and in the report (issue 24 §8): "Top answer right on ≥ 84.7% of
    such questions (95% confidence, n = 200)." — the run's lower bound of the reliability level (paper Def. 2.4)
    over the ``n`` verified items: the one its gate decides on (:attr:`RunResult.reliability_lower_bound`).
    ``note``: why there is no bound although items are verified (a one-look before its planned labels)."""
    if n and note and lower_bound is None:
        return f"Reliability: {note} (n = {int(n)})."
    if not n or lower_bound is None or (isinstance(lower_bound, float) and math.isnan(lower_bound)):
        return "No verified item yet: no reliability figure."
    return (f"Top answer right on ≥ {100 * float(lower_bound):.1f}% of such questions ({float(confidence):.0%} "
            f"confidence, n = {int(n)}).")


def _calibration_reason(message: Any) -> str:
    """The calibration message without its own leading "M* = ∞: " (the line already says M* = ∞)."""
    text = str(message)
    return text.split(": ", 1)[1] if text.startswith("M* = ∞: ") else text


def report_markdown(doc: RunResult | Mapping[str, Any], *, simulated_models: Collection[str] = ()) -> str:
    """A human-readable report (no external table library needed); a loopback run of one of ``simulated_models``
    (the demo's names, given by the front end) is titled "(simulated model)"."""
    r = _as_result(doc)
    conf, m_star, gate = r.confidence, r.m_star, r.min_reliability
    sim = " (simulated model)" if looks_simulated(r.endpoint, r.model, simulated_models) else ""
    lines = [
        f"# relgate certification — {_md_cell(r.task.name)} on {_md_cell(r.model)}{sim}",
        "",
        f"- Run: `{_md_cell(r.run_id)}` (relgate {_md_cell(r.version)})",
        f"- Endpoint: {_md_cell(public_url(r.endpoint))}",
        f"- Task: {_md_cell(r.task.name)} ({r.task.items} items, sha256 `{r.task.sha256[:16]}…`)",
        "",
        "## Verdict",
        "",
        plain_sentence(r.reliability_lower_bound, conf, r.reliability_n, note=r.bound_note),
        "",
        f"**Reliability level {_pct(r.reliability_level)}** "
        f"(at least {_pct(r.reliability_lower_bound)} top-answer coverage with {conf:.0%} confidence, the "
        f"{r.bound_name}), over {r.reliability_n} verified items.",
        "",
        *([f"- {r.fixed_n_line[0].upper()}{r.fixed_n_line[1:]}"] if r.fixed_n_line else []),
        f"- Gate: {r.verdict}" + (f" (min reliability {_pct(gate)})" if gate is not None else "")
        + (f" — {_md_cell(r.gate.summary())}" if r.gate is not None else ""),
        *([f"- {r.judge_cost[0].upper()}{r.judge_cost[1:]}"] if r.judge_cost else []),
        f"- Conformal threshold at α = {r.alpha}: M* = {'∞' if m_star is None else m_star}"
        + (f" — {_calibration_reason(r.calibration_message)}" if r.calibration_message else ""),
        f"- Calibration items scored: {r.n_cal}; skipped: {r.n_skipped}; not yet verified: {r.n_pending}",
        *_readout_lines(r),
        "",
        *_import_markdown(r.imported, r),
        *_review_markdown(r.review),
    ]
    if r.coverage is not None:
        lines += [
            "## Validation on deployment items with references",
            "",
            "| metric | value |",
            "|---|---|",
            f"| coverage | {_pct(r.coverage)} |",
            f"| conditional coverage (solvable items) | {_pct(r.conditional_coverage)} |",
            f"| capability gap β | {_pct(r.capability_gap)} |",
            f"| average set size | {r.avg_set_size:.2f} |" if r.avg_set_size is not None else
            "| average set size | — |",
            "",
        ]
    elif r.avg_set_size is not None:
        lines += [f"- Average prediction-set size on deployment items: {r.avg_set_size:.2f}", ""]
    lines += _weighted_markdown(r.document.get("weighted_conformal"), m_star)
    calls = r.calls
    lines += [
        "## Sampling",
        "",
        f"- Stopping rule: {r.stopping} (δ = {r.delta}), K_max = {r.k_max}",
        f"- Calls this invocation: {calls.made} made, {calls.cached} cached, "
        f"{calls.failed} failed; saved vs K_max: {_pct(calls.saved_vs_kmax)}",
        f"- Tie rate: {_pct(r.tie_rate)}",
    ]
    if r.n_incomplete:
        lines.append(f"- Items with incomplete sampling (failed requests): {r.n_incomplete}")
    if r.usage.present:
        cost = r.usage.cost
        lines.append(
            f"- Tokens: {r.usage.prompt_tokens} in, {r.usage.completion_tokens} out"
            + (f"; cost {cost:.4f}" if cost is not None else "")
        )
    lines += _judge_markdown(r.judge)
    lines += _assisted_markdown(r.assisted)
    lines += ["", "## Items", "", "| id | role | samples | invalid | top classes | score | set |", "|---|---|---|---|---|---|---|"]
    for it in r.items:
        top = ", ".join(f"{a} ×{n}" for a, n in it.classes[:4]) + (" …" if len(it.classes) > 4 else "")
        pset = ", ".join(it.prediction_set)
        lines.append(
            f"| {_md_cell(it.id)} | {_md_cell(it.role)} | {it.samples} | {it.invalid} | "
            f"{_md_cell(top)} | {_score_text(it)} | {_md_cell(pset)} |"
        )
    return "\n".join(lines) + "\n"


def _review_markdown(summary: Mapping[str, Any] | None) -> list[str]:
    """The report's "Team review" block of the result's ``review`` section (none without it)."""
    if not isinstance(summary, Mapping):
        return []

    def est(e: Any) -> str:
        if not isinstance(e, dict) or not isinstance(e.get("value"), (int, float)):
            return "—"
        ci = e.get("ci")
        span = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if isinstance(ci, list) and len(ci) == 2 else ""
        return f"{e['value']:.3f}{span} (n = {e.get('n', '?')})"

    ag: dict[str, Any] = summary["agreement"] if isinstance(summary.get("agreement"), dict) else {}
    misses = summary.get("counted_as_misses") or []
    lines = [
        "## Team review",
        "",
        f"- Session `{one_line(str(summary.get('session', '?')))}`, policy {summary.get('policy', '?')}, "
        f"{summary.get('required_per_item', '?')} reviewers per item: {counted(int(summary.get('labels') or 0), 'label')} "
        f"on {counted(int(summary.get('items') or 0), 'item')}; {summary.get('final', 0)} final, {summary.get('adjudicated', 0)} "
        f"adjudicated, {summary.get('pending', 0)} still pending",
        f"- **{as_misses(len(misses))}** (score ∞)"
        if summary.get("policy") == "strict" or misses else f"- {summary.get('disputed', 0)} disputed items",
        f"- Fleiss κ {est(ag.get('fleiss_kappa'))}; Krippendorff α (nominal) {est(ag.get('krippendorff_alpha'))}; "
        "95% bootstrap intervals over items",
    ]
    pairs = ag.get("pairs") or []
    if pairs:
        lines += ["", "| reviewers | Cohen κ |", "|---|---|"]
        for p in pairs:
            a, b = one_line(str(p.get("a", "?"))).replace("|", "\\|"), one_line(str(p.get("b", "?"))).replace("|", "\\|")
            lines.append(f"| {a} · {b} | {est(p.get('cohen_kappa'))} |")
    reviewers = summary.get("reviewers") or {}
    if isinstance(reviewers, dict) and reviewers:
        lines += ["", "| reviewer | labels | agreement with the final labels |", "|---|---|---|"]
        for name, rv in reviewers.items():
            if isinstance(rv, dict):
                lines.append(f"| {one_line(str(name)).replace('|', chr(92) + '|')} | {rv.get('labels', 0)} | "
                             f"{est(rv.get('agreement_with_final'))} |")
    return lines + [""]


def _weighted_markdown(wc: Mapping[str, Any] | None, m_star: Any) -> list[str]:
    """The ``weighted_conformal`` block (eq. 10.2; only when the task file gives weights)."""
    if not wc:
        return []
    freq = ", ".join(f"{'∞' if k == 'inf' else k}: {v}" for k, v in (wc.get("m_star_frequencies") or {}).items())
    size = wc.get("average_set_size")
    out = [
        "## Weighted conformal (covariate shift, eq. 10.2)",
        "",
        "Each deployment item's threshold M*_w is the weighted (1 − α) quantile of the calibration scores, weighted by "
        "the task file's likelihood ratios p_test(x)/p_cal(x), with the item's own weight on +∞ (Tibshirani et al. "
        "2019): coverage ≥ 1 − α under the shifted distribution when the weights are the true ratios.",
        "",
        f"- Unweighted M* = {'∞' if m_star is None else m_star}; M*_w per deployment item: {freq or '—'}",
        f"- M*_w = ∞ (the set is every observed answer: no coverage guarantee) for {_pct(wc.get('share_infinite'))} of "
        f"{wc.get('n_deployment')} deployment items",
        f"- Average weighted set size: {'—' if size is None else f'{size:.2f}'}",
        f"- Calibration: {wc.get('n_cal')} scored items, effective size {wc.get('effective_n_cal') or 0:.1f} "
        "(Kish, (Σw)²/Σw²)",
    ]
    cov = wc.get("coverage")
    if cov:
        out.append(f"- Coverage of the weighted sets: {_pct(cov['estimate'])} [{_pct(cov['lower'])}, "
                   f"{_pct(cov['upper'])}] on {cov['n']} deployment items with references")
    return out + [""]


def _import_markdown(imp: ImportInfo | None, r: RunResult) -> list[str]:
    """The ``imported_from`` block of an imported run, with its flags and (at most 20 per flag) the flagged items."""
    if imp is None:
        return []

    def opt(x: Any) -> str:
        return "—" if x is None else str(x)

    lines = [
        "## Imported from",
        "",
        f"- Tool: {_md_cell(imp.tool)} {_md_cell(imp.version)}".rstrip()
        + f"; model {_md_cell(imp.model)}"
        + (f"; endpoint {_md_cell(public_url(imp.endpoint))}" if imp.endpoint else ""),
        f"- K = {opt(imp.k) if imp.k is not None else '?'}, temperature {opt(imp.temperature)}, do_sample "
        f"{opt(imp.do_sample)}, seed {opt(imp.seed)}" + (f", filter {_md_cell(imp.filter)}" if imp.filter else ""),
    ]
    for path, sha in imp.files:
        lines.append(f"- File: {_md_cell(path)} (sha256 `{_md_cell(sha[:16])}…`)")
    if imp.flags:
        lines += ["", f"**{imp.n_flagged} of {r.task.items} items flagged: no self-consistency signal**", "",
                  "| flag | items | why | flagged items |", "|---|---|---|---|"]
        for flag, count in imp.flags:
            ids = [it.id for it in r.items if flag in it.flags]
            shown = ", ".join(ids[:20]) + (f" … and {len(ids) - 20} more" if len(ids) > 20 else "")
            lines.append(f"| {_md_cell(flag)} | {count} | {_md_cell(imp.flag_reasons.get(flag, ''))} | "
                         f"{_md_cell(shown)} |")
        lines.append("")
    else:
        lines.append("- No items flagged")
    lines += [f"- Note: {_md_cell(n)}" for n in imp.notes]
    return [*lines, ""]


def _assisted_markdown(a: AssistedView | None) -> list[str]:
    """The ``judge_assisted`` block (issue 22): the assisted bound and the agreement table."""
    if a is None:
        return []
    who = _md_cell(a.judge_model or "?")
    if a.lower_bound is None:
        return ["", f"## Judge-assisted certification ({who})", "", f"- {_md_cell(a.message)}"]
    conf = a.confidence
    kappa = "—" if a.kappa is None else f"{a.kappa:.2f}" + (
        f" ({conf:.0%} interval {a.kappa_interval[0]:.2f} to {a.kappa_interval[1]:.2f})" if a.kappa_interval
        else f" ({_md_cell(a.kappa_note)})" if a.kappa_note else "")
    extra = [f"- {_md_cell(text)}" for text in (a.left_out_note, a.more_labels_message) if text]
    yy, yn, ny, nn = a.table
    return [
        "", f"## Judge-assisted certification ({who})", "",
        f"**Reliability {_pct(a.estimate)}, at least {_pct(a.lower_bound)} with {conf:.0%} confidence** "
        f"({a.n_labels} human labels, {a.n_judged} items judged; {_md_cell(a.method)}; "
        f"{_md_cell(a.population)}; bound on the {_md_cell(a.bound_on)}).", "",
        "| | human: correct | human: wrong |", "|---|---|---|",
        f"| judge: correct | {yy} | {yn} |",
        f"| judge: wrong | {ny} | {nn} |", "",
        f"- Agreement {_pct(a.agreement_rate)} on {a.n_agreement} labelled items; Cohen's κ {kappa}",
        f"- False accepts (judge says correct, human says wrong): {a.false_accepts} of {a.n_human_no} "
        f"wrong answers; rate ≤ {_pct(a.false_accept_upper)} with {conf:.0%} confidence", *extra,
    ]


def _judge_markdown(judge: JudgeSectionView | None) -> list[str]:
    """The pairwise judge's part of the report: both rankings side by side, cycles, the items with cycles."""
    if judge is None:
        return []
    f, j = judge.frequency, judge.judge

    def m(x: Any) -> str:
        return "∞" if x is None else str(x)

    lines = [
        "",
        f"## Pairwise judge ({judge.judge_model or '?'}, {judge.judge_reps or '?'} verdicts per pair in seeded random "
        "orders)",
        "",
        f"| ranking | reliability level | {f.confidence:.0%} lower bound | M* | coverage |",
        "|---|---|---|---|---|",
        f"| frequency | {_pct(f.reliability_level)} | {_pct(f.reliability_lower_bound)} | {m(f.m_star)} | "
        f"{_pct(f.coverage)} |",
        f"| judge | {_pct(j.reliability_level)} | {_pct(j.reliability_lower_bound)} | {m(j.m_star)} | "
        f"{_pct(j.coverage)} |",
        "",
        f"- Items with a preference cycle: {judge.n_items_with_cycle} of {judge.n_items_with_triples} with ≥ 3 "
        "compared answers" + (f" (mean ρ {judge.mean_rho:.3f}, max ρ {judge.max_rho or 0:.3f})"
                              if judge.mean_rho is not None else ""),
        f"- Judge reordered {judge.n_items_reordered} of {judge.n_items_judged} judged items; changed the top "
        f"answer on {judge.n_top_changed}",
        f"- Position bias: first-shown answer wins {_pct(judge.first_shown_share)} of {judge.n_valid_verdicts} valid "
        f"verdicts; {judge.pairs_flipped_by_order} of {judge.pairs_decisive_both_orders} pairs flip with the order",
    ]
    cyclic = [it for it in judge.items if it.n_cycles]
    if cyclic:
        lines += ["", "| item | ρ | cyclic triples | judge order (MFAS) |", "|---|---|---|---|"]
        for it in sorted(cyclic, key=lambda x: -(x.rho or 0.0)):
            triples = "; ".join(" → ".join([*t, t[0]]) for t in it.cyclic_triples[:4])
            lines.append(f"| {_md_cell(it.id)} | {it.rho or 0.0:.2f} | {_md_cell(triples)} | "
                         f"{_md_cell(' > '.join(it.judge_order))} |")
    return lines


def render_report(doc: RunResult | Mapping[str, Any], fmt: str, *, simulated_models: Collection[str] = ()) -> str:
    """The result in ``fmt`` ("md", "json" or "csv"); ``simulated_models`` as :func:`report_markdown`."""
    if fmt == "json":
        return report_json(doc.to_json() if isinstance(doc, RunResult) else doc)
    if fmt == "csv":
        return report_csv(doc)
    if fmt == "md":
        return report_markdown(doc, simulated_models=simulated_models)
    raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")


def write_report(doc: RunResult | Mapping[str, Any], fmt: str, path: str | os.PathLike[str],
                 inputs: Iterable[str | os.PathLike[str] | None] = (), *,
                 simulated_models: Collection[str] = ()) -> Path:
    """Write the report to ``path`` through the one output write (:func:`~relgate_tui.engine.runs.outputs.write_output`:
    the output guard, then an atomic replace or an in-place write to a device or pipe) and return the path."""
    write = write_display if fmt == "md" else write_output
    return write(path, render_report(doc, fmt, simulated_models=simulated_models), inputs=inputs, mkdir=True)


def _readout_lines(r: RunResult) -> list[str]:
    """Issue 11 §4 readouts (core/readouts.py's JSON block): worst case with skips, no-guarantee note, bootstrap
    intervals, split stability. Absent in documents written before them."""
    out = []
    doc = r.document
    if r.n_skipped and r.worst_level is not None:
        out.append(f"- Worst case, skipped items counted as misses: level {_pct(r.worst_level)} "
                   f"(≥ {_pct(r.worst_lower_bound)})")
    if r.sets_message:
        out.append(f"- **{r.sets_message}**")
    boot = doc.get("bootstrap") or {}
    for key, label in (("set_size", "Average set size"), ("samples_used", "Samples used per item")):
        iv = boot.get(key)
        if iv and iv.get("estimate") is not None:
            out.append(f"- {label}: {iv['estimate']:.2f} [{iv['lower']:.2f}, {iv['upper']:.2f}] "
                       f"({iv['confidence']:.0%} percentile bootstrap, B = {boot.get('n_boot')})")
    ad = doc.get("adaptive_sets")
    if ad:
        q = "∞" if ad.get("threshold") is None else f"{ad['threshold']:.3f}"
        cov = ad.get("coverage")
        out.append(f"- Adaptive sets (eq. 6.7): q̂ = {q}, average size {ad['average_set_size']:.2f}"
                   + (f", coverage {_pct(cov['estimate'])} on {cov['n']} items" if cov else ""))
    st = doc.get("split_stability")
    if st:
        m = "∞" if st.get("m_star_mean") is None else f"{st['m_star_mean']:.2f} ± {st['m_star_sd'] or 0:.2f}"
        out.append(f"- Stability over {st['n_splits']} random splits ({st['n_cal']}/{st['n_test']}): M* {m}, "
                   f"coverage {_pct(st.get('coverage_mean'))} ± {_pct(st.get('coverage_sd'))}")
    return out
