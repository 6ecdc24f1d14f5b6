"""``relgate review publish``: a run's calibration items as a review session (issue 21 §2).

Each sampled calibration item goes in, in the run's seeded split order, with what the spot-check shows: the
question (and choices), its ranked candidate classes with counts and shares and one representative sample text per
class, the INVALID count, and the task's references when present. No verdict is published. An item whose id holds
a NUL character (which PostgreSQL's text cannot store) is left out and named, on either store: the rest of the run
is published.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from relgate_tui.engine.review.store import DEFAULT_LEASE, ReviewStore

__all__ = ["MAX_TEXT", "run_payloads", "publish_run"]

MAX_TEXT = 20_000  # characters kept of a question, answer or example (bounded rows)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def run_payloads(run_path: str | os.PathLike[str], only: Sequence[str] | None = None,
                 left_out: list[str] | None = None) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """(run info, [(item id, payload)]) of the run at ``run_path``, read only; ``only``: just these items (any role,
    in that order — a judge certificate's escalated items); the ids of items left out (a NUL in the id) are
    appended to ``left_out``."""
    from relgate_tui.engine.certification.session import Session

    session = Session.open(run_path)
    try:
        analysis = session.analysis()
        by_id = {a.item_id: a for a in analysis.items}
        out = []
        for item_id in session.prepared.calibration_ids if only is None else only:
            a = by_id.get(item_id)
            if a is None or not a.sampled:
                continue
            if "\x00" in item_id:
                if left_out is not None:
                    left_out.append(item_id)
                continue
            v = session.item_view(item_id)
            out.append((item_id, {
                "question": _cut(v.question),
                "choices": [_cut(c) for c in v.choices],
                "candidates": [{"rank": c.rank, "answer": _cut(c.answer), "count": c.count, "share": c.share,
                                "example": _cut(c.example)} for c in v.candidates],
                "n_samples": v.n_samples,
                "n_invalid": v.n_invalid,
                "tie_broken": v.tie_broken,
                "references": [_cut(r) for r in v.references],
            }))
        info = {"run_id": session.run_id, "task": session.task_name, "model": session.model,
                "calibration_items": len(session.prepared.calibration_ids)}
        return info, out
    finally:
        session.close()


def publish_run(store: ReviewStore, run: str, *, per_item: int = 2, name: str | None = None,
                created_by: str, runs_root: str | None = None, lease_seconds: float = DEFAULT_LEASE,
                only: Sequence[str] | None = None, left_out: list[str] | None = None) -> tuple[str, int]:
    """Publish run ``run`` (id, prefix or directory); returns (session id, number of items); ``left_out``: see
    :func:`run_payloads`."""
    from relgate_tui.engine.runs.listing import open_run
    from relgate_tui.engine.runs.paths import runs_dir

    run_store = open_run(run, runs_dir(runs_root))
    path = run_store.path
    run_store.close()
    info, payloads = run_payloads(path, only, left_out)
    sid = store.publish(name=name or f"{info['task']} · {info['model']}", run_id=str(info["run_id"]),
                        per_item=per_item, items=payloads, run_info=info, created_by=created_by,
                        lease_seconds=lease_seconds)
    return sid, len(payloads)
