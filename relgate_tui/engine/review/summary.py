"""A run's ``review.json``: what the last ``relgate review pull`` brought in (session, policy, counts, agreement).

The file is read by :func:`relgate_tui.engine.runs.files.read_review_summary` (the result document's ``review``
section, which the report renders) and the Results screen; written by :mod:`.pull`.
"""

from __future__ import annotations

from typing import Any

from relgate_tui.core.text import as_misses, counted
from relgate_tui.engine.runs.files import REVIEW_FILE, read_review_summary

__all__ = ["REVIEW_FILE", "read_review_summary", "misses_line", "counted", "as_misses"]


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
