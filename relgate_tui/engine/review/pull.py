"""``relgate review pull``: a session's final labels into the local run (issue 21 §2, §5).

The final label of every final item (:func:`relgate_tui.core.review.verdicts.finalise` under the chosen policy)
is appended to the run's ``labels.jsonl`` with source ``review:<session>`` — only where it differs from the verdict
in effect, so pulling twice writes nothing the second time. Under the strict policy a disputed item nobody
adjudicated is labelled "none acceptable" (score ∞): a miss for M* and for the reliability level. The run's
``review.json`` then records the session, the policy, the counts and the agreement (Results, the report and the
TUI show them: "3 disputed items counted as misses"), and ``results.json`` is recomputed, so Results, ``certify``,
``report`` and ``compare`` work offline afterwards.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from relgate_tui.core.review.verdicts import parse_verdict
from relgate_tui.engine.review.status import SessionState, status_document
from relgate_tui.engine.review.summary import REVIEW_FILE

__all__ = ["pull_into_run"]


def _summary(state: SessionState) -> dict[str, Any]:
    doc = status_document(state)
    return {
        "session": doc["session"], "name": doc["name"], "policy": doc["policy"],
        "required_per_item": doc["required_per_item"], "items": doc["items"], "labels": doc["labels"],
        "final": len(doc["final"]), "disputed": len(doc["disputed"]),
        "counted_as_misses": doc["counted_as_misses"], "adjudicated": len(doc["adjudicated"]),
        "pending": len(doc["pending"]), "agreement": doc["agreement"], "reviewers": doc["reviewers"],
    }


def pull_into_run(state: SessionState, *, runs_root: str | None = None) -> tuple[Path, int, dict[str, Any]]:
    """Apply ``state``'s final labels to its run; returns (run path, labels written, the new results document)."""
    from relgate_tui.engine.certification.calls import CallCounts
    from relgate_tui.engine.certification.certify import open_prepared
    from relgate_tui.engine.certification.finish import finish
    from relgate_tui.engine.runs.files import atomic_write_bytes, atomic_write_json
    from relgate_tui.engine.runs.listing import open_run
    from relgate_tui.engine.runs.paths import runs_dir
    from relgate_tui.engine.runs.store import Label

    if not state.complete_view:
        from relgate_tui.engine.review.db import ReviewDenied

        raise ReviewDenied("pull needs every label of the session: connect as an adjudicator (or the owner)")
    store = open_run(state.info.run_id, runs_dir(runs_root))
    path = Path(store.path)
    store.close()
    prepared = open_prepared(path)
    try:
        source = f"review:{state.info.id}"
        known = {it.id for it in prepared.items}
        labels = []
        for item, code in state.finalised.final.items():
            if item not in known:
                continue
            rank, none, skip = parse_verdict(code)
            labels.append(Label(item, rank=rank, none=none, skip=skip, source=source))
        calls, _ = prepared.store.result_calls()
        made, cached, failed = (int(calls.get(k, 0) or 0) for k in ("made", "cached", "failed"))
        counts = CallCounts(made, cached, failed)
        review = path / REVIEW_FILE  # the document's review section: written first, put back when a label is refused
        before = review.read_bytes() if review.is_file() else None
        atomic_write_json(review, _summary(state))
        try:  # the one end of a run: the labels, both judge sections (judge_assisted too) and the run's own gate_on
            end = finish(prepared, calls=counts, labels=labels, labels_source=f"session {source}")
        except BaseException:
            if before is None:
                review.unlink(missing_ok=True)
            else:
                atomic_write_bytes(review, before)
            raise
        written, doc = end.labels_written, end.document
        return path, written, doc
    finally:
        prepared.close()
