"""One reviewer working through one session (issue 21 §3, §8): the queue, the journal, undo, reconnection.

:class:`Reviewer` is what both ``relgate review label`` and the TUI's review screen drive:

* :meth:`Reviewer.next_item` claims the next item (``None`` when the queue holds nothing more for this reviewer).
* :meth:`Reviewer.label` writes the keypress to the journal and then tries to send every waiting entry in
  order (with ``claim_next`` the last label and the claim of the next item go in one transaction, and
  :meth:`Reviewer.next_item` hands that claim out without asking again); when the database is unreachable the entry stays in the journal and :attr:`Reviewer.waiting` says how many
  wait ("database unreachable: N labels waiting"); :meth:`Reviewer.flush` sends them once it is back.
* :meth:`Reviewer.undo` cancels the reviewer's own last label (a waiting one by key, else the last committed one).

``on_commit`` (optional) is called with the seconds from the keypress to its commit, for the benchmark.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from relgate_tui.core.review.verdicts import parse_verdict
from relgate_tui.engine.review.db import ReviewError, ReviewUnreachable
from relgate_tui.engine.review.journal import Journal, journal_path
from relgate_tui.engine.review.store import Claim, ReviewStore, SessionInfo

__all__ = ["Reviewer", "Sent"]


@dataclass(frozen=True)
class Sent:
    """What one flush did: entries committed, rejected (with the reasons), still waiting; ``unreachable`` holds the
    one-line reason when the database could not be reached."""

    committed: int
    rejected: tuple[str, ...]
    waiting: int
    unreachable: str = ""


class Reviewer:
    """See the module docstring."""

    def __init__(self, store: ReviewStore, session: SessionInfo, name: str, *, journal: Journal | None = None,
                 on_commit: Callable[[float], None] | None = None) -> None:
        self.store = store
        self.session = session
        self.name = name
        self.journal = journal or Journal(journal_path(store.db.public, session.id, name), session.id, name)
        self.on_commit = on_commit
        self.current: Claim | None = None
        self._prefetched = False  # ``current`` was claimed with the last label (``label(claim_next=True)``)
        self._undone_item: str | None = None

    @property
    def waiting(self) -> int:
        """Journal entries not yet in the database."""
        return len(self.journal.waiting())

    def next_item(self, exclude: set[str] | frozenset[str] = frozenset()) -> Claim | None:
        if self._prefetched:
            self._prefetched = False
            if self.current is not None and self.current.item_id not in exclude:
                return self.current
            # none claimed with the label: the queue is asked again by a claim that waits for an item another
            # reviewer's transaction holds, instead of taking it for the end of the queue
        self.current = self.store.claim(self.session.id, self.name, exclude=exclude)
        return self.current

    def label(self, item_id: str, verdict: str, *, claim_next: bool = False,
              exclude: set[str] | frozenset[str] = frozenset()) -> Sent:
        """Journal the verdict (fsync), then send every waiting entry; ``claim_next``: claim the next item (not in
        ``exclude``) in the label's transaction."""
        parse_verdict(verdict)
        self.journal.append({"op": "label", "key": uuid.uuid4().hex, "item": item_id, "verdict": verdict,
                             "ts": time.time()}, sync=False)  # fsync'd by flush unless committed at once
        if self.current is not None and self.current.item_id == item_id:
            self.current = None
        self._prefetched = False
        return self.flush(claim_next=set(exclude) if claim_next else None)

    def undo(self) -> tuple[str | None, Sent]:
        """Cancel the reviewer's last label; returns (its item id or None, the flush — None with the reason in
        ``rejected`` when the store refused: another reviewer labelled the item, or it was adjudicated or pulled). The next
        :meth:`next_item` asks the queue again (the undone item, claimed again, comes first)."""
        self._prefetched = False
        pending = self.journal.last_unsent_label()
        target: str | None
        if pending is not None:
            target, item = pending["key"], str(pending["item"])
        else:
            target = self.store.last_label_key(self.session.id, self.name)
            if target is None:
                return None, self.flush()
            item = None
        self.journal.append({"op": "undo", "key": uuid.uuid4().hex, "target": target, "ts": time.time()},
                            sync=False)
        self._undone_item = None
        sent = self.flush()
        if self._undone_item is None and not sent.unreachable:  # refused (the label is part of the record)
            return None, sent
        return item or self._undone_item, sent

    def flush(self, claim_next: set[str] | None = None) -> Sent:
        """Send the waiting entries in order (exactly once each, see :mod:`.journal`); ``claim_next`` (the items to
        pass over): claim the next item with the last label."""
        committed = 0
        rejected: list[str] = []
        entries = self.journal.waiting()
        for n, e in enumerate(entries, 1):
            try:
                if e["op"] == "label":
                    t0 = float(e.get("ts") or time.time())
                    args = (self.session.id, str(e["item"]), self.name, str(e["verdict"]), e["key"])
                    if claim_next is not None and n == len(entries):
                        outcome, self.current = self.store.commit_label_and_claim(*args, exclude=claim_next)
                        self._prefetched = True
                    else:
                        outcome = self.store.commit_label(*args)
                    if outcome == "committed" and self.on_commit is not None:
                        self.on_commit(time.time() - t0)
                    committed += 1
                    self.journal.mark_sent(e["key"], outcome)
                else:
                    item = self.store.undo(self.session.id, self.name, key=e.get("target"))
                    self._undone_item = item
                    self.journal.mark_sent(e["key"], "undone" if item else "nothing")
            except ReviewUnreachable as exc:
                self.journal.sync()  # what waits is on disk before the screen says so
                return Sent(committed, tuple(rejected), self.waiting, str(exc))
            except ReviewError as exc:  # refused (slot taken, …): told once, never resent
                rejected.append(str(exc))
                self.journal.mark_sent(e["key"], "rejected", str(exc))
        return Sent(committed, tuple(rejected), 0)

    def close(self) -> None:
        self.journal.close()
