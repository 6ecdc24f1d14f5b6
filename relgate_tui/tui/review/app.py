"""``relgate review open SESSION``: the team-review labelling screen on its own (no Home, no run store)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.screen import Screen

from relgate_tui.engine.review.client import Reviewer
from relgate_tui.engine.review.store import ReviewStore


class ReviewApp(App[None]):
    TITLE = "relgate"  # the screens say "team review · …" (issue 31 item 18)

    def __init__(self, reviewer: Reviewer) -> None:
        super().__init__()
        self.reviewer = reviewer

    def on_mount(self) -> None:
        self.open_screen("review_label", self.reviewer, callback=lambda _: self.exit())

    def open_screen(self, name: str, *args: Any, callback: Callable[[Any], Any] | None = None,
                    **kwargs: Any) -> Screen[Any]:
        """The TUI's screen registry (:mod:`relgate_tui.tui.registry`): the labelling screen opens the item samples
        by name, as in the full app."""
        from relgate_tui.tui.registry import open_screen

        return open_screen(self, name, *args, callback=callback, **kwargs)

    def confirm(self, question: str, callback: Callable[[bool | None], None], detail: str = "", **kw: str) -> None:
        """The yes/no modal, as in the full app (the labelling screen asks before it is left)."""
        self.open_screen("confirm", question, detail, callback=callback, **kw)


def run_review_app(store: ReviewStore, session: str, name: str, **kw: Any) -> int:
    reviewer = Reviewer(store, store.session(session), name)
    try:
        ReviewApp(reviewer).run(**kw)
    finally:
        reviewer.close()
    return 0
