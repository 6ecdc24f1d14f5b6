"""``relgate review open SESSION``: the team-review labelling screen on its own (no Home, no run store)."""

from __future__ import annotations

from typing import Any

from textual.app import App

from relgate_tui.engine.review.client import Reviewer
from relgate_tui.engine.review.store import ReviewStore


class ReviewApp(App[None]):
    TITLE = "relgate · team review"

    def __init__(self, reviewer: Reviewer) -> None:
        super().__init__()
        self.reviewer = reviewer

    def on_mount(self) -> None:
        from relgate_tui.tui.review.label import ReviewLabelScreen

        self.push_screen(ReviewLabelScreen(self.reviewer), callback=lambda _: self.exit())


def run_review_app(store: ReviewStore, session: str, name: str, **kw: Any) -> int:
    reviewer = Reviewer(store, store.session(session), name)
    try:
        ReviewApp(reviewer).run(**kw)
    finally:
        reviewer.close()
    return 0
