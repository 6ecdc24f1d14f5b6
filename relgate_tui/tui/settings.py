"""Settings: the default gate threshold, basis and confidence of new runs (Setup prefills them; a run keeps its own),
audit fraction, theme. Dismisses with the new
:class:`~relgate_tui.tui.settings_file.UISettings` (Ctrl+S / Save) or None (Escape)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.validation import Number
from textual.widgets import Button, Header, Input, Label, Select, Static

from relgate_tui.core.text import one_line
from relgate_tui.tui.settings_file import UISettings
from relgate_tui.tui.widgets.footer import StockFooter


class SettingsScreen(Screen["UISettings | None"]):
    CSS_PATH = "settings.tcss"
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="settings.save", tooltip="Save the settings and go back"),
        Binding("escape", "cancel", "Back", id="settings.back", tooltip="Go back without saving"),
    ]
    HELP = ("Tab moves between fields. The gate here is the default for new runs (Setup prefills it); a run keeps "
            "the gate it was made with.")

    def __init__(self, settings: UISettings | None, themes: Iterable[str]) -> None:
        super().__init__()
        self.settings = settings or UISettings()
        self.themes = sorted(themes)

    def compose(self) -> ComposeResult:
        s = self.settings
        yield Header()
        with VerticalScroll(id="form"):
            yield Label("Gate threshold (reliability needed to PASS; empty = no gate)")
            yield Input(
                "" if s.gate is None else f"{s.gate:g}",
                id="gate",
                validators=[Number(minimum=0, maximum=1)],
                valid_empty=True,
            )
            yield Label("Gate on")
            yield Select(
                [("reliability level 1−α* (paper)", "level"), ("its lower confidence bound", "bound")],
                value=s.gate_on,
                allow_blank=False,
                id="gate-on",
            )
            yield Label("Confidence of the lower bound")
            yield Input(f"{s.confidence:g}", id="confidence", validators=[Number(minimum=0.5, maximum=0.999)])
            yield Label("Audit fraction (share of automatic verdicts shown for confirmation in audit mode)")
            yield Input(f"{s.audit_fraction:g}", id="audit", validators=[Number(minimum=0.01, maximum=1)])
            yield Label("Theme")
            yield Select([(t, t) for t in self.themes], value=s.theme if s.theme in self.themes else Select.NULL,
                         id="theme")
            yield Static("", id="error")
            with Horizontal(id="buttons"):
                yield Button("Save (^s)", id="save", variant="primary")
                yield Button("Back (Esc)", id="back")
        yield StockFooter()

    def _collect(self) -> UISettings:
        gate_text = self.query_one("#gate", Input).value.strip()
        theme = self.query_one("#theme", Select).value
        try:
            return UISettings(
                gate=float(gate_text) if gate_text else None,
                gate_on=self.query_one("#gate-on", Select).value,  # type: ignore[arg-type]
                confidence=float(self.query_one("#confidence", Input).value),
                audit_fraction=float(self.query_one("#audit", Input).value),
                theme=theme if isinstance(theme, str) else self.settings.theme,
            )
        except ValueError as exc:
            msg = str(exc)
            raise ValueError(msg if msg.startswith("settings") else f"settings: not a number ({msg})") from None

    def action_save(self) -> None:
        try:
            settings = self._collect()
        except ValueError as exc:
            self.query_one("#error", Static).update(Text(one_line(str(exc)), style="bold red"))  # never markup
            return
        self.dismiss(settings)

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#save")
    def _save(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#back")
    def _back(self) -> None:
        self.action_cancel()
