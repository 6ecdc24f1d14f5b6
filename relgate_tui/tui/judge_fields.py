"""The Setup screen's optional judges (issue 4 item 3, issue 22): the pairwise judge (a second ranking of each item's
answers) and the verification judge (checks every item's top answer; the judge-assisted bound needs fewer human
labels when it is good). Both are picked from the endpoint's judge models ("none" = no judge)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.app import ComposeResult
from textual.containers import Grid
from textual.widgets import Input, Label, Select

NO_JUDGE = "__none__"
JUDGE_SELECTS = ("judge-model", "verify-judge-model")
JUDGE_FIELDS = ("judge-model", "judge-reps", "verify-judge-model")


def judge_fields(pairwise_reps: int) -> ComposeResult:
    """The "Judges" section of the Setup form."""
    # labels fit the 16-column label cell at 80 columns (issue 31 item 17): "repetitions" belongs to the pairwise
    # judge beside it; "verify judge" is the verification judge (the section title says what each does)
    yield Label("Judges (optional)", classes="section")
    with Grid(classes="fields numbers"):
        yield Label("pairwise judge")
        yield Select([("none", NO_JUDGE)], value=NO_JUDGE, allow_blank=False, id="judge-model", compact=True)
        yield Label("repetitions")
        yield Input(str(pairwise_reps), id="judge-reps", type="integer", compact=True)
        yield Label("verify judge")
        yield Select([("none", NO_JUDGE)], value=NO_JUDGE, allow_blank=False, id="verify-judge-model", compact=True)


def set_judge_options(screen: Any, judges: Sequence[str], previous: Any) -> None:
    """Offer ``judges`` in both selects, keeping the previous run's choices when still offered."""
    for select_id, attr in zip(JUDGE_SELECTS, ("pairwise_judge_model", "verify_judge_model"), strict=True):
        select = screen.query_one(f"#{select_id}", Select)
        select.set_options([("none", NO_JUDGE)] + [(m, m) for m in judges])
        prev = getattr(previous, attr, None) if previous is not None else None
        select.value = prev if prev in judges else NO_JUDGE


def chosen_judge(screen: Any, select_id: str) -> str | None:
    """The model picked in a judge select, None for "none"."""
    value = screen.query_one(f"#{select_id}", Select).value
    return value if isinstance(value, str) and value != NO_JUDGE else None
