"""One item's samples while they are being asked (issue 32 §6): which indices are claimed, which answers have come
back, and which of them have been delivered — persisted, counted and reported — in index order.

With an adaptive stopping rule the next sample depends on the answers so far, so the item's owner (the worker that
took it from the queue) claims one index at a time, after the previous answer was delivered. With the ``none`` rule
every index up to ``k_max`` is asked whatever the answers say, so in a run's *tail* — the queue of items empty, fewer
items left than workers — idle workers help: each claims the item's next index and asks it beside the owner. Without
that, the last items of a run of ``n`` items at concurrency ``c`` keep ``n mod c`` workers busy for an item's whole
duration while the others wait: at 200 items × 24 samples and ``c = 16``, half the workers idled for the last ~0.5 s
of a 7 s run (``bench/throughput.py``).

Answers are delivered in index order whoever fetched them: an answer that comes back ahead of an earlier index waits
here for it, so the run store receives every item's samples in order (its resume rule: the contiguous prefix of
indices) and every item's events come in order. After a failed index nothing later is delivered or claimed (the item
ends with the samples before the gap); answers already fetched past the gap are in the request cache, so a rerun
reads them at no cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ItemWork"]


@dataclass(eq=False)
class ItemWork:
    """The state of one item being sampled: ``canonicals`` holds the classes delivered so far (indices ``0 …``),
    ``counts`` their non-INVALID class counts (first-appearance order); ``fixed``: the ``none`` rule (every index up
    to ``k_max`` is asked, so idle workers may help)."""

    item: Any
    messages: list[dict]
    canonicals: list[str]
    counts: dict[str, int]
    k_max: int
    fixed: bool  # the ``none`` rule: every index up to k_max is asked
    resumed: int = field(init=False)  # samples already stored: len(canonicals) at the start
    next_index: int = field(init=False)  # the next index nobody has claimed
    in_flight: int = 0  # claims whose answers have not come back
    failed: bool = False
    finished: bool = False
    ready: dict[int, Any] = field(default_factory=dict)  # answers come back ahead of an earlier index
    fingerprints: dict[int, str] = field(default_factory=dict)  # the unclaimed indices' request fingerprints, when
    cached: dict[int, Any] = field(default_factory=dict)  # they were looked up at once: the cache's answers among them

    def __post_init__(self) -> None:
        self.resumed = self.next_index = len(self.canonicals)

    def left(self) -> int:
        """Indices nobody has claimed yet (0 once the item failed)."""
        return 0 if self.failed else self.k_max - self.next_index

    def claim(self, count: int = 1) -> int:
        """Claim the next ``count`` indices (at most those left); returns the first."""
        start = self.next_index
        self.next_index = min(self.k_max, start + count)
        self.in_flight += 1
        return start

    def returned(self, start: int, claimed: int, answers: list[Any] | None) -> None:
        """The claim at ``start`` came back: ``answers`` for ``start, start+1, …`` (fewer than ``claimed`` when the
        server gives one choice whatever ``n`` says: the rest go back to the pool), or None when it failed."""
        self.in_flight -= 1
        if answers is None:
            self.failed = True
            return
        if len(answers) < claimed and self.next_index == start + claimed:
            self.next_index = start + len(answers)
        for i, answer in enumerate(answers):
            self.ready[start + i] = answer

    def deliverable(self) -> Any | None:
        """The answer for the next index to deliver when it has come back (removed from the waiting ones)."""
        return self.ready.pop(len(self.canonicals), None)

    def done(self) -> bool:
        """Nothing in flight and nothing left to claim (the owner's rule may end it earlier: see the sampler)."""
        return self.in_flight == 0 and self.left() == 0
