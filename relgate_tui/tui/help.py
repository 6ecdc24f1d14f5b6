"""The ``?`` / F1 help panel: every key of the screen it was opened from, plus the app-wide keys.

The rows are read from the ``BINDINGS`` of the screen's relgate classes and of the App (hidden keys included), so
the panel can never drift from the real key map.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, Static

KeyRow = tuple[str, str]

_KEY_NAMES = {
    "question_mark": "?",
    "plus": "+",
    "minus": "-",
    "equals_sign": "=",
    "underscore": "_",
    "escape": "Esc",
    "enter": "Enter",
    "space": "Space",
    "slash": "/",
}


def key_display(key: str) -> str:
    """A human name for a Textual key ("question_mark" → "?", "ctrl+q" → "^q")."""
    parts = []
    for k in key.split(","):
        k = k.strip()
        if k.startswith("ctrl+"):
            parts.append("^" + _KEY_NAMES.get(k[5:], k[5:]))
        else:
            parts.append(_KEY_NAMES.get(k, k))
    return " / ".join(parts)


def _own_bindings(cls: type) -> Iterable[Binding]:
    """Bindings declared by relgate classes in ``cls``'s MRO (Textual's own base bindings are left out)."""
    for klass in reversed(cls.__mro__):
        if klass.__module__.startswith("relgate_tui"):
            yield from Binding.make_bindings(klass.__dict__.get("BINDINGS", []))


def key_rows(screen: Screen, app: App) -> tuple[list[KeyRow], list[KeyRow]]:
    """(screen rows, app rows): each row is (key, description), one per action, keys of one action joined."""

    def rows(bindings: Iterable[Binding]) -> list[KeyRow]:
        by_action: dict[str, tuple[list[str], str]] = {}
        for b in bindings:
            desc = b.tooltip or b.description or b.action
            keys, _ = by_action.setdefault(b.action, ([], desc))
            keys.append(key_display(b.key))
        return [(" / ".join(dict.fromkeys(keys)), desc) for keys, desc in by_action.values()]

    app_rows = rows(_own_bindings(type(app)))
    app_rows += [("^p", "Command palette: export, open run folder, theme, …"), ("^q", "Quit relgate")]
    return rows(_own_bindings(type(screen))), app_rows


def _table(rows: list[KeyRow]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True, min_width=10)
    table.add_column()
    for key, desc in rows:
        table.add_row(key, desc)
    return table


class HelpScreen(ModalScreen[None]):
    """Lists the keys of ``for_screen`` and of the App; any of Escape, ?, F1, q closes it."""

    CSS_PATH = "help.tcss"
    BINDINGS = [
        Binding("escape,question_mark,f1,q", "close", "Close", id="help.close"),
    ]

    def __init__(self, title: str, screen_rows: list[KeyRow], app_rows: list[KeyRow], text: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.screen_rows = screen_rows
        self.app_rows = app_rows
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="panel"):
            yield Label(f"Keys — {self.title_text}", id="title")
            if self.text:
                yield Static(Text(self.text), id="about")
            yield Static(_table(self.screen_rows), id="screen-keys")
            yield Label("Everywhere", classes="section")
            yield Static(_table(self.app_rows), id="app-keys")
            yield Label("Escape, ? or F1 closes this panel.", id="hint")

    def action_close(self) -> None:
        self.dismiss(None)
