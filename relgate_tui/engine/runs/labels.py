"""The labels of a run (SPEC §4.5): a verification verdict (a label event of ``labels.jsonl``), with the replay of
label/undo events. Stored by :mod:`.store`; the sample record is :class:`relgate_tui.engine.records.StoredSample`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["LABEL_SOURCES", "REVIEW_SOURCE_PREFIX", "is_label_source", "by_a_person", "Label", "replay_labels"]

LABEL_SOURCES = ("human", "reference", "file")
REVIEW_SOURCE_PREFIX = "review:"  # a team review's final label: "review:<session id>" (issue 21)


def is_label_source(source: object) -> bool:
    """One of :data:`LABEL_SOURCES`, or ``review:<session id>``."""
    return isinstance(source, str) and (source in LABEL_SOURCES or (
        source.startswith(REVIEW_SOURCE_PREFIX) and 0 < len(source) - len(REVIEW_SOURCE_PREFIX) <= 64))


def by_a_person(source: object) -> bool:
    """True for a verdict a person gave: the spot-check, a labels file or a team review."""
    return source in ("human", "file") or (isinstance(source, str) and source.startswith(REVIEW_SOURCE_PREFIX))


@dataclass(frozen=True)
class Label:
    """A verification verdict for one item: the accepted ``rank`` (1 = the top candidate), ``none`` (no candidate is
    acceptable: score ∞, always counted) or ``skip`` (excluded from n, counted in n_skipped). ``source`` says who
    decided: "human" (spot-check), "reference" (automatic, from the task's answers), "file" (``--labels``) or
    "review:<session>" (a team review's final label, ``relgate review pull``). ``overrides_reference``: a person's
    audit verdict that contradicts the item's reference verdict, kept after the spot-check asked (written as
    ``"overrides_reference": true``, only when set; give ``ts`` with it — the store rebuilds a label without one)."""

    item: str
    rank: int | None = None
    none: bool = False
    skip: bool = False
    source: str = "human"
    ts: float = 0.0
    overrides_reference: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.item, str) or not self.item:
            raise ValueError("a label needs a non-empty item id")
        chosen = (self.rank is not None) + bool(self.none) + bool(self.skip)
        if chosen != 1:
            raise ValueError(f"label for item {self.item!r}: give exactly one of rank, none, skip")
        if self.rank is not None and (isinstance(self.rank, bool) or not isinstance(self.rank, int) or self.rank < 1):
            raise ValueError(f"label for item {self.item!r}: rank must be an integer >= 1, got {self.rank!r}")
        if not is_label_source(self.source):
            raise ValueError(f"label source must be one of {', '.join(LABEL_SOURCES)} or review:<session>, "
                             f"got {str(self.source)[:80]!r}")

    @property
    def kind(self) -> str:
        """"rank", "none" or "skip"."""
        return "rank" if self.rank is not None else ("none" if self.none else "skip")

    @property
    def score(self) -> float | None:
        """The rank score this verdict gives (eq. 10.1): the rank, +∞ for "none", None for "skip"."""
        if self.rank is not None:
            return float(self.rank)
        return math.inf if self.none else None

    def same_verdict(self, other: Label) -> bool:
        """True when both labels say the same thing about the same item (source and time ignored)."""
        return (self.item, self.rank, self.none, self.skip) == (other.item, other.rank, other.none, other.skip)

    def to_event(self) -> dict[str, Any]:
        ev: dict[str, Any] = {"event": "label", "item": self.item}
        if self.rank is not None:
            ev["rank"] = self.rank
        elif self.none:
            ev["none"] = True
        else:
            ev["skip"] = True
        ev["source"] = self.source
        ev["ts"] = self.ts
        if self.overrides_reference:
            ev["overrides_reference"] = True
        return ev

    @classmethod
    def from_event(cls, ev: Mapping[str, Any]) -> Label:
        ts = ev.get("ts", 0.0)
        return cls(
            item=ev.get("item"),  # type: ignore[arg-type]
            rank=ev.get("rank"),
            none=ev.get("none") is True,
            skip=ev.get("skip") is True,
            source=ev.get("source", "human"),
            ts=float(ts) if isinstance(ts, (int, float)) and not isinstance(ts, bool) else 0.0,
            overrides_reference=ev.get("overrides_reference") is True,
        )


def replay_labels(events: Iterable[Mapping[str, Any] | Label | None]) -> dict[str, Label]:
    """Current verdict per item after replaying label events in order. An undo (``{"event": "undo"}`` or ``None``)
    cancels the most recent label event that is not already cancelled (so repeated undos walk back through history;
    an undo with nothing left to cancel does nothing). For each item the latest surviving label wins."""
    stack: list[Label] = []
    for ev in events:
        if ev is None or (isinstance(ev, Mapping) and ev.get("event") == "undo"):
            if stack:
                stack.pop()
        elif isinstance(ev, Label):
            stack.append(ev)
        else:
            stack.append(Label.from_event(ev))
    current: dict[str, Label] = {}
    for lab in stack:
        current[lab.item] = lab
    return current
