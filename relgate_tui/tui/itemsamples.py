"""Item samples modal: the question, the ranked classes and every raw sample of one item (``e`` on the spot-check
screen, Enter on a results row). Escape / e / q closes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, Static

from relgate_tui.core.text import counted, one_line
from relgate_tui.core.types import INVALID
from relgate_tui.tui.widgets.safetext import clean, safe, safe_line

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.certification.views import ItemView


class ItemSamplesModal(ModalScreen[None]):
    CSS_PATH = "itemsamples.tcss"
    BINDINGS = [
        Binding("escape,e,q", "close", "Close", id="samples.close"),
        Binding("question_mark,f1", "app.help", "Help", key_display="?", id="samples.help",
                tooltip="Show every key"),
    ]
    HELP = "The raw answers the model gave for this item, with the class each one was canonicalized to."
    HELP_TITLE = "Item samples"

    def __init__(self, view: ItemView) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        v = self.view
        with VerticalScroll(id="samples-panel"):
            title = Text()
            title.append(one_line(v.item_id), style="bold")
            title.append("  ").append(f"{v.role} · {counted(v.n_samples, 'sample')} · {v.n_invalid} invalid",
                                      style="dim")
            yield Label(title, id="samples-title")
            q = safe(v.question)
            for i, choice in enumerate(v.choices):
                q.append(f"\n{chr(65 + i)}. {clean(choice)}")
            if v.references:
                q.append("\nreference: ", style="dim")
                q.append(clean(" | ".join(v.references)), style="italic")
            yield Static(q, id="samples-question")
            yield Static(self._classes_table(), id="samples-classes")
            yield Static(self._samples_table(), id="samples-list")
            yield Label("Escape closes", classes="muted")

    def _classes_table(self) -> Table:
        t = Table(title="classes", title_justify="left", expand=True, box=None)
        t.add_column("rank", justify="right", width=4)
        t.add_column("answer", ratio=1, overflow="fold")
        t.add_column("count", justify="right")
        for c in self.view.candidates:
            t.add_row(str(c.rank), safe(c.answer), str(c.count))
        return t

    def _samples_table(self) -> Table:
        t = Table(title="samples", title_justify="left", expand=True, box=None, show_lines=False)
        t.add_column("#", justify="right", width=3)
        t.add_column("class", width=14, overflow="ellipsis", no_wrap=True)
        t.add_column("raw answer", ratio=1, overflow="fold")
        for i, (text, canonical) in enumerate(self.view.samples, start=1):
            cls = Text("INVALID", style="red") if canonical == INVALID else safe_line(canonical)
            t.add_row(str(i), cls, safe(text.strip()))
        return t

    def action_close(self) -> None:
        self.dismiss(None)


def item_view_or_notice(screen: Screen[Any], session: Any, item_id: str) -> ItemView | None:
    """``session.item_view(item_id)``, or None after a one-line error notice when the run's files cannot give it (a
    samples file rewritten or damaged while the run is open: :class:`~relgate_tui.errors.DataError`) — never a
    crash of the screen."""
    from relgate_tui.errors import DataError

    try:
        return session.item_view(item_id)
    except DataError as exc:
        screen.notify(one_line(str(exc), 300), title="Cannot show this item", severity="error", markup=False,
                      timeout=10)
        return None
