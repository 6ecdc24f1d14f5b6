"""A yes/no confirmation modal: ``ConfirmModal(question, ...)`` dismisses with True (confirmed) or False."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class ConfirmModal(ModalScreen[bool]):
    """Ask one question. ``y``/Enter on the confirm button → True; ``n``/Escape → False."""

    CSS_PATH = "confirm.tcss"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes", tooltip="Confirm"),
        Binding("n", "answer(False)", "No", id="confirm.no", tooltip="Cancel"),
        Binding("escape", "answer(False)", "Back", id="confirm.back", show=False),
    ]
    HELP = "Answer the question: y confirms, n or Escape goes back."

    def __init__(self, question: str, detail: str = "", *, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes_label = yes
        self.no_label = no

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, id="question")
            if self.detail:
                yield Static(self.detail, id="detail")
            with Horizontal(id="buttons"):
                yield Button(f"{self.yes_label} (y)", id="yes", variant="warning")
                yield Button(f"{self.no_label} (n)", id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    @on(Button.Pressed, "#yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.dismiss(False)
