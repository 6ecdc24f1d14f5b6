"""A published item as the reviewers see it, typed: the payload stored with each item of a review session
(question, choices, references, the ranked candidate answers with their counts) read once into the spot-check's
:class:`~relgate_tui.engine.certification.views.ItemView`, so the labelling screen, the adjudicator's queue and
``relgate review adjudicate`` read typed values, never the payload's dictionary. A malformed candidate is dropped
(counted nowhere): the payload is untrusted text from the database."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from relgate_tui.engine.certification.views import Candidate, ItemView

__all__ = ["review_item"]


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def review_item(item_id: str, payload: Mapping[str, Any]) -> ItemView:
    """The item's :class:`ItemView` (role "calibration") from its stored payload."""
    p = payload if isinstance(payload, Mapping) else {}
    cands = []
    for c in p.get("candidates") or []:
        try:
            cands.append(Candidate(int(c["rank"]), str(c["answer"]), int(c["count"]), float(c["share"]),
                                   str(c.get("example", ""))))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return ItemView(item_id=item_id, role="calibration", question=str(p.get("question", "")),
                    choices=tuple(str(c) for c in p.get("choices") or ()), candidates=tuple(cands),
                    n_invalid=_int(p.get("n_invalid")), n_samples=_int(p.get("n_samples")),
                    references=tuple(str(r) for r in p.get("references") or ()),
                    samples=tuple((c.example, c.answer) for c in cands), tie_broken=bool(p.get("tie_broken")))
