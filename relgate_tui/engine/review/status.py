"""``relgate review status`` and the adjudicator's queue (issue 21 §2, §4, §5): one document per session.

The document (``status --json``)::

    session, name, run_id, required_per_item (R), policy
    items          number of items in the session
    labels         number of labels committed
    per_item       item id → reviewers who labelled it (every reviewer may read this: it holds no verdict)
    reviewers      reviewer → {"labels": n, "agreement_with_final": {"value", "ci", "n"}} over the decided items
                   (agreed, adjudicated or settled by the majority policy; an undecided dispute counted as a miss
                   by the strict policy is not one)
    agreement      fleiss_kappa, krippendorff_alpha, pairs[{a, b, cohen_kappa}], each {"value", "ci", "n"}
    disputed       items whose R labels differ and that no adjudicator decided
    counted_as_misses  the disputed items the policy counts as misses (score ∞)
    adjudicated    items an adjudicator decided
    pending        items with fewer than R labels
    final          item id → final verdict ("1", "2", … | "none" | "skip")
    complete_view  false when this database role may not read every label of the items that have their R labels
                   (a reviewer on PostgreSQL): the figures then cover only what it may read
    left_out       labels whose stored verdict is not one (each line names the item and reviewer): counted missing

Agreement and finalisation are :mod:`relgate_tui.core.review`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from relgate_tui.core.review.agreement import Agreement, agreement, agreement_json
from relgate_tui.core.review.verdicts import Finalised, finalise
from relgate_tui.engine.review.db import ReviewDenied
from relgate_tui.engine.review.store import ReviewStore, SessionInfo

__all__ = ["SessionState", "session_state", "status_document", "disputed_queue"]


@dataclass(frozen=True)
class SessionState:
    info: SessionInfo
    item_ids: tuple[str, ...]
    labels: dict[str, dict[str, str]]
    labelled_by: dict[str, list[str]]
    adjudicated: dict[str, str]
    complete_view: bool
    finalised: Finalised
    agreement: Agreement
    left_out: tuple[str, ...] = ()


def session_state(store: ReviewStore, sid: str, policy: str = "strict", *, need_all: bool = False) -> SessionState:
    """Everything of the session this connection may read. ``need_all``: refuse (ReviewDenied) a role that may not
    read every label — pulling the final labels from a partial view would be wrong."""
    info = store.session(sid)
    ids = tuple(store.item_ids(info.id))
    problems: list[tuple[str, str, str]] = []
    labels = store.labels(info.id, problems)
    labelled_by = store.labelled_by(info.id)
    try:
        adjudicated = store.adjudications(info.id)
        complete = True
    except ReviewDenied:
        if need_all:
            raise
        adjudicated, complete = {}, False
    if complete:  # every label of every item with its R labels is read (or named as left out)
        bad = {(i, r) for i, r, _ in problems}
        complete = all(all(r in labels.get(i, {}) or (i, r) in bad for r in rs)
                       for i, rs in labelled_by.items() if len(rs) >= info.per_item)
    fin = finalise(ids, labels, info.per_item, adjudicated, policy)
    # agreement with the final label: an item the strict policy counts as a miss only because nobody settled it has
    # no decided label to agree with — it is left out, never counted as the "none" voters being right
    misses = set(fin.counted_as_misses)
    decided = {i: v for i, v in fin.final.items() if i not in misses}
    return SessionState(info, ids, labels, labelled_by, adjudicated, complete, fin,
                        agreement(labels, info.per_item, decided), tuple(m for _, _, m in problems))


def status_document(state: SessionState) -> dict[str, Any]:
    info, fin = state.info, state.finalised
    ag = agreement_json(state.agreement)
    with_final: dict[str, dict[str, Any]] = ag.pop("with_final")  # type: ignore[assignment]
    reviewers = sorted({r for rs in state.labelled_by.values() for r in rs})
    return {
        "session": info.id,
        "name": info.name,
        "run_id": info.run_id,
        "required_per_item": info.per_item,
        "policy": fin.policy,
        "items": len(state.item_ids),
        "labels": sum(len(v) for v in state.labelled_by.values()),
        "per_item": {i: list(state.labelled_by.get(i, [])) for i in state.item_ids},
        "reviewers": {r: {"labels": sum(r in v for v in state.labelled_by.values()),
                          "agreement_with_final": {k: v for k, v in with_final.get(r, {}).items()
                                                   if k != "labels"} or None}
                      for r in reviewers},
        "agreement": ag,
        "disputed": list(fin.disputed),
        "counted_as_misses": list(fin.counted_as_misses),
        "adjudicated": list(fin.adjudicated),
        "pending": list(fin.pending),
        "final": dict(fin.final),
        "complete_view": state.complete_view,
        "left_out": list(state.left_out),
    }


def disputed_queue(state: SessionState) -> list[tuple[str, dict[str, str]]]:
    """The adjudicator's queue: each disputed, undecided item with every reviewer's label."""
    return [(i, dict(state.labels.get(i, {}))) for i in state.finalised.disputed]
