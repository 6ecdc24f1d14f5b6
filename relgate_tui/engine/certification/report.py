"""Exports of a certification result document (``relgate report``, the TUI's export; SPEC §5.4–5.5).

The input is the JSON document built at the end of a run (:func:`relgate_tui.engine.certification.finish.finish`; the one
stored as the run's ``results.json``); its ``gate`` block is the one gate decision (``decide_gate``). Formats:

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
from typing import Any

from relgate_tui.core import jsonsafe
from relgate_tui.core.redact import public_url
from relgate_tui.core.text import csv_cell, one_line, strip_controls
from relgate_tui.engine.review.summary import review_markdown
from relgate_tui.engine.runs.outputs import check_output_path, write_display, write_output

__all__ = ["FORMATS", "items_dataframe", "report_json", "report_csv", "report_markdown", "render_report",
           "write_report", "check_output_path"]

FORMATS = ("md", "json", "csv")


def _score_text(item: Mapping[str, Any]) -> str:
    if "score" not in item:
        return "skipped" if item.get("skipped") else "unverified"
    return "inf" if item["score"] is None else str(item["score"])


def items_dataframe(doc: Mapping[str, Any]):
    """The per-item table as a pandas DataFrame (one row per item, in the document's order)."""
    import pandas as pd

    rows = []
    verdicts = {r["id"]: r for r in (doc.get("judge_assisted") or {}).get("verdicts") or []}
    for it in doc.get("items", []):
        classes = it.get("classes", [])
        verdict = verdicts.get(it.get("id"))
        rows.append(
            {
                "id": it.get("id"),
                "role": it.get("role"),
                "samples": it.get("samples"),
                "invalid": it.get("invalid"),
                "n_classes": len(classes),
                "top_answer": classes[0]["answer"] if classes else "",
                "classes": "; ".join(f"{c['answer']}:{c['count']}" for c in classes),
                "score": _score_text(it),
                "verified_by": it.get("verified_by") or "",
                "prediction_set": " | ".join(str(a) for a in it.get("prediction_set", [])),
                "set_size": len(it.get("prediction_set", [])),
                "incomplete": bool(it.get("incomplete", False)),
                "verify_judge": "" if verdict is None else verdict["judge"],
                "verify_judge_p_yes": "" if verdict is None or verdict["p_yes"] is None else verdict["p_yes"],
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


def report_csv(doc: Mapping[str, Any]) -> str:
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


def plain_sentence(lower_bound: float | None, confidence: float, n: int) -> str:
    """The result in plain words, first in Results and in the report (issue 24 §8): "Top answer right on ≥ 84.7% of
    such questions (95% confidence, n = 200)." — the one-sided Clopper–Pearson lower bound of the
    reliability level (paper Def. 2.4) over the ``n`` verified items."""
    if not n or lower_bound is None or (isinstance(lower_bound, float) and math.isnan(lower_bound)):
        return "No verified item yet: no reliability figure."
    return (f"Top answer right on ≥ {100 * float(lower_bound):.1f}% of such questions ({float(confidence):.0%} "
            f"confidence, n = {int(n)}).")


def _calibration_reason(message: Any) -> str:
    """The calibration message without its own leading "M* = ∞: " (the line already says M* = ∞)."""
    text = str(message)
    return text.split(": ", 1)[1] if text.startswith("M* = ∞: ") else text


def report_markdown(doc: Mapping[str, Any], *, simulated_models: Collection[str] = ()) -> str:
    """A human-readable report (no external table library needed); a loopback run of one of ``simulated_models``
    (the demo's names, given by the front end) is titled "(simulated model)"."""
    task = doc.get("task", {})
    conf = doc.get("confidence", 0.95)
    m_star = doc.get("m_star")
    passed = doc.get("passed")
    verdict = "no gate" if passed is None else ("PASS" if passed else "FAIL")
    gate = doc.get("min_reliability")
    calls = doc.get("calls", {})
    from relgate_tui.engine.certification.setup import looks_simulated

    sim = " (simulated model)" if looks_simulated(str(doc.get("endpoint", "")), str(doc.get("model", "")),
                                                simulated_models) else ""
    lines = [
        f"# relgate certification — {_md_cell(task.get('name', '?'))} on {_md_cell(doc.get('model', '?'))}{sim}",
        "",
        f"- Run: `{_md_cell(doc.get('run_id', '?'))}` (relgate {doc.get('relgate_version', '?')})",
        f"- Endpoint: {_md_cell(public_url(str(doc.get('endpoint', '?'))))}",
        f"- Task: {_md_cell(task.get('name', '?'))} ({task.get('items', '?')} items, sha256 `{str(task.get('sha256', ''))[:16]}…`)",
        "",
        "## Verdict",
        "",
        plain_sentence(doc.get("reliability_lower_bound"), float(conf), int(doc.get("reliability_n") or 0)),
        "",
        f"**Reliability level {_pct(doc.get('reliability_level'))}** "
        f"(at least {_pct(doc.get('reliability_lower_bound'))} top-answer coverage with {conf:.0%} confidence), "
        f"over {doc.get('reliability_n', doc.get('n_cal', '?'))} verified items.",
        "",
        f"- Gate: {verdict}" + (f" (min reliability {_pct(gate)})" if gate is not None else "")
        + (f" — {(doc.get('gate') or {}).get('summary')}" if doc.get("gate") else ""),
        f"- Conformal threshold at α = {doc.get('alpha')}: M* = {'∞' if m_star is None else m_star}"
        + (f" — {_calibration_reason(doc['calibration_message'])}" if doc.get("calibration_message") else ""),
        f"- Calibration items scored: {doc.get('n_cal')}; skipped: {doc.get('n_skipped')}; "
        f"not yet verified: {doc.get('n_pending', 0)}",
        *_readout_lines(doc),
        "",
        *_import_markdown(doc),
        *review_markdown(doc.get("review")),
    ]
    if doc.get("coverage") is not None:
        lines += [
            "## Validation on deployment items with references",
            "",
            "| metric | value |",
            "|---|---|",
            f"| coverage | {_pct(doc.get('coverage'))} |",
            f"| conditional coverage (solvable items) | {_pct(doc.get('conditional_coverage'))} |",
            f"| capability gap β | {_pct(doc.get('capability_gap'))} |",
            f"| average set size | {doc.get('avg_set_size'):.2f} |" if doc.get("avg_set_size") is not None else
            "| average set size | — |",
            "",
        ]
    elif doc.get("avg_set_size") is not None:
        lines += [f"- Average prediction-set size on deployment items: {doc['avg_set_size']:.2f}", ""]
    lines += _weighted_markdown(doc.get("weighted_conformal"), doc.get("m_star"))
    lines += [
        "## Sampling",
        "",
        f"- Stopping rule: {doc.get('stopping')} (δ = {doc.get('delta')}), K_max = {doc.get('k_max')}",
        f"- Calls this invocation: {calls.get('made', 0)} made, {calls.get('cached', 0)} cached, "
        f"{calls.get('failed', 0)} failed; saved vs K_max: {_pct(calls.get('saved_vs_kmax'))}",
        f"- Tie rate: {_pct(doc.get('tie_rate'))}",
    ]
    if doc.get("n_incomplete"):
        lines.append(f"- Items with incomplete sampling (failed requests): {doc['n_incomplete']}")
    usage = doc.get("usage") or {}
    if usage:
        cost = usage.get("cost")
        lines.append(
            f"- Tokens: {usage.get('prompt_tokens', 0)} in, {usage.get('completion_tokens', 0)} out"
            + (f"; cost {cost:.4f}" if isinstance(cost, (int, float)) else "")
        )
    lines += _judge_markdown(doc.get("pairwise_judge"))
    lines += _assisted_markdown(doc.get("judge_assisted"))
    lines += ["", "## Items", "", "| id | role | samples | invalid | top classes | score | set |", "|---|---|---|---|---|---|---|"]
    for it in doc.get("items", []):
        classes = it.get("classes", [])
        top = ", ".join(f"{c['answer']} ×{c['count']}" for c in classes[:4]) + (" …" if len(classes) > 4 else "")
        pset = ", ".join(str(a) for a in it.get("prediction_set", []))
        lines.append(
            f"| {_md_cell(it.get('id'))} | {it.get('role')} | {it.get('samples')} | {it.get('invalid')} | "
            f"{_md_cell(top)} | {_score_text(it)} | {_md_cell(pset)} |"
        )
    return "\n".join(lines) + "\n"


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


def _import_markdown(doc: Mapping[str, Any]) -> list[str]:
    """The ``imported_from`` block of an imported run, with its flags and (at most 20 per flag) the flagged items."""
    imp = doc.get("imported_from")
    if not isinstance(imp, Mapping):
        return []
    lines = [
        "## Imported from",
        "",
        f"- Tool: {_md_cell(imp.get('tool', '?'))} {_md_cell(imp.get('version') or '')}".rstrip()
        + f"; model {_md_cell(imp.get('model', '?'))}"
        + (f"; endpoint {_md_cell(public_url(str(imp['endpoint'])))}" if imp.get("endpoint") else ""),
        f"- K = {imp.get('k', '?')}, temperature {imp.get('temperature', '—')}, do_sample {imp.get('do_sample', '—')}, "
        f"seed {imp.get('seed', '—')}" + (f", filter {_md_cell(imp['filter'])}" if imp.get("filter") else ""),
    ]
    for f in imp.get("files") or []:
        if isinstance(f, Mapping):
            lines.append(f"- File: {_md_cell(f.get('path', '?'))} (sha256 `{_md_cell(str(f.get('sha256', ''))[:16])}…`)")
    flags = imp.get("flags") or {}
    n_items = (doc.get("task") or {}).get("items", "?")
    if flags:
        lines += ["", f"**{imp.get('n_flagged', '?')} of {n_items} items flagged: no self-consistency signal**", "",
                  "| flag | items | why | flagged items |", "|---|---|---|---|"]
        reasons = imp.get("flag_reasons") or {}
        for flag, count in flags.items():
            ids = [str(it.get("id")) for it in doc.get("items", []) if flag in (it.get("flags") or [])]
            shown = ", ".join(ids[:20]) + (f" … and {len(ids) - 20} more" if len(ids) > 20 else "")
            lines.append(f"| {_md_cell(flag)} | {count} | {_md_cell(reasons.get(flag, ''))} | {_md_cell(shown)} |")
        lines.append("")
    else:
        lines.append("- No items flagged")
    lines += [f"- Note: {_md_cell(n)}" for n in imp.get("notes") or []]
    return [*lines, ""]


def _assisted_markdown(block: Mapping[str, Any] | None) -> list[str]:
    """The ``judge_assisted`` block (issue 22): the assisted bound and the agreement table."""
    if not block:
        return []
    who = _md_cell((block.get("judge") or {}).get("model", "?"))
    if block.get("lower_bound") is None:
        return ["", f"## Judge-assisted certification ({who})", "", f"- {_md_cell(block.get('message', ''))}"]
    ag, conf = block["agreement"], block["confidence"]
    t, k, far = ag["table"], ag["kappa"], ag["false_accept"]
    kappa = "—" if k["estimate"] is None else f"{k['estimate']:.2f}" + (
        f" ({conf:.0%} interval {k['lower']:.2f} to {k['upper']:.2f})" if k["lower"] is not None
        else f" ({_md_cell(k['note'])})" if k.get("note") else "")
    extra = [f"- {_md_cell(block[key])}" for key in ("left_out_note", "more_labels_message") if block.get(key)]
    return [
        "", f"## Judge-assisted certification ({who})", "",
        f"**Reliability {_pct(block['estimate'])}, at least {_pct(block['lower_bound'])} with {conf:.0%} confidence** "
        f"({block['n_labels']} human labels, {block['n_judged']} items judged; {_md_cell(block['method'])}; "
        f"{_md_cell(block['population'])}; bound on the {_md_cell(block.get('bound_on', 'task'))}).", "",
        "| | human: correct | human: wrong |", "|---|---|---|",
        f"| judge: correct | {t['judge_yes_human_yes']} | {t['judge_yes_human_no']} |",
        f"| judge: wrong | {t['judge_no_human_yes']} | {t['judge_no_human_no']} |", "",
        f"- Agreement {_pct(ag['agreement_rate'])} on {ag['n']} labelled items; Cohen's κ {kappa}",
        f"- False accepts (judge says correct, human says wrong): {t['judge_yes_human_no']} of {far['n_human_no']} "
        f"wrong answers; rate ≤ {_pct(far['upper'])} with {conf:.0%} confidence", *extra,
    ]


def _judge_markdown(judge: Mapping[str, Any] | None) -> list[str]:
    """The pairwise judge's part of the report: both rankings side by side, cycles, the items with cycles."""
    if not judge:
        return []
    f, j = judge["rankings"]["frequency"], judge["rankings"]["judge"]
    who = judge.get("judge") or {}

    def m(x: Any) -> str:
        return "∞" if x is None else str(x)

    def cov(r: Mapping[str, Any]) -> str:
        return _pct((r.get("coverage") or {}).get("estimate"))

    c, b = judge["cycles"], judge["position_bias"]
    lines = [
        "",
        f"## Pairwise judge ({who.get('model', '?')}, {who.get('reps', '?')} verdicts per pair in seeded random orders)",
        "",
        f"| ranking | reliability level | {f.get('confidence', 0.95):.0%} lower bound | M* | coverage |",
        "|---|---|---|---|---|",
        f"| frequency | {_pct(f['reliability_level'])} | {_pct(f['reliability_lower_bound'])} | {m(f['m_star'])} | "
        f"{cov(f)} |",
        f"| judge | {_pct(j['reliability_level'])} | {_pct(j['reliability_lower_bound'])} | {m(j['m_star'])} | "
        f"{cov(j)} |",
        "",
        f"- Items with a preference cycle: {c['n_items_with_cycle']} of {c['n_items_with_triples']} with ≥ 3 compared "
        f"answers" + (f" (mean ρ {c['mean_rho']:.3f}, max ρ {c['max_rho']:.3f})" if c["mean_rho"] is not None else ""),
        f"- Judge reordered {judge['n_items_reordered']} of {judge['n_items_judged']} judged items; changed the top "
        f"answer on {judge['n_top_changed']}",
        f"- Position bias: first-shown answer wins {_pct(b['first_shown_share'])} of {b['n_valid_verdicts']} valid "
        f"verdicts; {b['pairs_flipped_by_order']} of {b['pairs_decisive_both_orders']} pairs flip with the order",
    ]
    cyclic = [it for it in judge.get("items", []) if it.get("n_cycles")]
    if cyclic:
        lines += ["", "| item | ρ | cyclic triples | judge order (MFAS) |", "|---|---|---|---|"]
        for it in sorted(cyclic, key=lambda x: -x["rho"]):
            triples = "; ".join(" → ".join([*t, t[0]]) for t in it["cyclic_triples"][:4])
            lines.append(f"| {_md_cell(it['id'])} | {it['rho']:.2f} | {_md_cell(triples)} | "
                         f"{_md_cell(' > '.join(it['judge_order']))} |")
    return lines


def render_report(doc: Mapping[str, Any], fmt: str, *, simulated_models: Collection[str] = ()) -> str:
    """The document in ``fmt`` ("md", "json" or "csv"); ``simulated_models`` as :func:`report_markdown`."""
    if fmt == "json":
        return report_json(doc)
    if fmt == "csv":
        return report_csv(doc)
    if fmt == "md":
        return report_markdown(doc, simulated_models=simulated_models)
    raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")


def write_report(doc: Mapping[str, Any], fmt: str, path: str | os.PathLike[str],
                 inputs: Iterable[str | os.PathLike[str] | None] = (), *,
                 simulated_models: Collection[str] = ()) -> Path:
    """Write the report to ``path`` through the one output write (:func:`~relgate_tui.engine.runs.outputs.write_output`:
    the output guard, then an atomic replace or an in-place write to a device or pipe) and return the path."""
    write = write_display if fmt == "md" else write_output
    return write(path, render_report(doc, fmt, simulated_models=simulated_models), inputs=inputs, mkdir=True)


def _readout_lines(doc: Mapping[str, Any]) -> list[str]:
    """Issue 11 §4 readouts (core/readouts.py's JSON block): worst case with skips, no-guarantee note, bootstrap
    intervals, split stability. Absent in documents written before them."""
    out = []
    worst = doc.get("worst_case") or {}
    if doc.get("n_skipped") and worst.get("level") is not None:
        out.append(f"- Worst case, skipped items counted as misses: level {_pct(worst['level'])} "
                   f"(≥ {_pct(worst.get('lower_bound'))})")
    message = (doc.get("prediction_sets") or {}).get("message")
    if message:
        out.append(f"- **{message}**")
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
