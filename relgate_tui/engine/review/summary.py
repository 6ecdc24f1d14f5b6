"""A run's ``review.json``: what the last ``relgate review pull`` brought in (session, policy, counts, agreement).

Read by the result document (``review`` section), the report and the Results screen; written by :mod:`.pull`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from relgate_tui.core.text import counted

__all__ = ["REVIEW_FILE", "read_review_summary", "misses_line", "counted", "as_misses"]

REVIEW_FILE = "review.json"


def read_review_summary(run_path: str | Path) -> dict[str, Any] | None:
    """The run's ``review.json`` (None when the run was never pulled into, or the file is unreadable)."""
    try:
        doc = json.loads((Path(run_path) / REVIEW_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def as_misses(n: int) -> str:
    """"1 disputed item counted as a miss", "3 disputed items counted as misses"."""
    return f"{counted(n, 'disputed item')} counted as {'a miss' if n == 1 else 'misses'}"


def misses_line(summary: dict[str, Any]) -> str:
    """"Team review <session> (strict): 3 disputed items counted as misses · Fleiss κ 0.71 …" — one line."""
    misses = summary.get("counted_as_misses")
    n = len(misses) if isinstance(misses, list) else 0
    parts = [f"team review {summary.get('session', '?')} ({summary.get('policy', '?')})"]
    parts.append(as_misses(n))
    ag = summary.get("agreement")
    if isinstance(ag, dict):
        for key, name in (("fleiss_kappa", "Fleiss κ"), ("krippendorff_alpha", "Krippendorff α")):
            est = ag.get(key)
            if isinstance(est, dict) and isinstance(est.get("value"), (int, float)):
                ci = est.get("ci")
                span = (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if isinstance(ci, list) and len(ci) == 2
                        and all(isinstance(x, (int, float)) for x in ci) else "")
                parts.append(f"{name} {est['value']:.2f}{span}")
    return " · ".join(parts)


def review_markdown(summary: Any) -> list[str]:
    """The report's "Team review" block of a result document's ``review`` section (none without it)."""
    if not isinstance(summary, dict):
        return []
    from relgate_tui.core.text import one_line

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
        for name, r in reviewers.items():
            if isinstance(r, dict):
                lines.append(f"| {one_line(str(name)).replace('|', chr(92) + '|')} | {r.get('labels', 0)} | "
                             f"{est(r.get('agreement_with_final'))} |")
    return lines + [""]
