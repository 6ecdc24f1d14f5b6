"""Home: New run, Open run, Review (team), Judge audit, Studies, Settings. Dismisses with the chosen action's name."""

from __future__ import annotations

from typing import Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from relgate_tui.tui.widgets.footer import StockFooter

HomeChoice = Literal["new", "runs", "review", "judge", "studies", "settings", "quit"]

CHOICES: tuple[tuple[HomeChoice, str, str], ...] = (
    # each description fits one line beside its key in an 80-column terminal (issue 24 §4)
    ("new", "New run", "sample, spot-check and certify a model on a task"),
    ("runs", "Open run", "review, resume or compare runs (works offline)"),
    ("review", "Review (team)", "several reviewers label one run, agreement"),
    ("judge", "Judge audit", "how reliable is an LLM judge? cycles, Likert sets"),
    ("studies", "Studies", "score intervals, IRT, jury-on-demand (scores files)"),
    ("settings", "Settings", "gate threshold, confidence, audit fraction, theme"),
    ("quit", "Quit", ""),
)

TAGLINE = (
    "How far can this language model be trusted on this task?\n"
    "relgate samples a model K times per question, groups equivalent answers, lets you verify the top answers "
    "with one key each, and turns that into a reliability level with a statistical guarantee."
)


class HomeScreen(Screen[HomeChoice]):
    """The first screen. ``status`` is a one-line note under the menu (e.g. how many runs are stored)."""

    CSS_PATH = "home.tcss"
    # the footer's words are short (the menu above has the full titles) and the footer compact below 110 columns:
    # every key fits 80 columns beside the palette (issue 31 item 17)
    BINDINGS = [
        Binding("n", "choose('new')", "New", id="home.new", tooltip="New run"),
        Binding("o", "choose('runs')", "Open", id="home.runs", tooltip="Open run"),
        Binding("v", "choose('review')", "Review", id="home.review", tooltip="Review (team)"),
        Binding("j", "choose('judge')", "Judge", id="home.judge", tooltip="Judge audit"),
        Binding("t", "choose('studies')", "Studies", id="home.studies"),
        Binding("s", "choose('settings')", "Settings", id="home.settings"),
        Binding("q", "choose('quit')", "Quit", id="home.quit"),
    ]
    HELP = "Pick what to do: arrows + Enter, or the letter keys."

    def __init__(self, status: str = "") -> None:
        super().__init__()
        self.status = status

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Center():
            with Vertical(id="home-box"):
                yield Static("relgate", id="logo")
                yield Static(TAGLINE, id="tagline")
                yield OptionList(
                    *(Option(self._label(key, title, desc), id=key) for key, title, desc in CHOICES),
                    id="menu",
                )
                yield Static(self.status, id="status")
        yield StockFooter()

    @staticmethod
    def _label(key: str, title: str, desc: str) -> str:
        letter = {"new": "n", "runs": "o", "review": "v", "judge": "j", "studies": "t", "settings": "s", "quit": "q"}[key]
        tail = f"  [dim]{desc}[/]" if desc else ""
        return f"[b]{title:<13}[/] [dim]({letter})[/]{tail}"

    def on_mount(self) -> None:
        self.query_one("#menu", OptionList).highlighted = 0
        self._fit_footer()

    def on_resize(self) -> None:
        self._fit_footer()

    def _fit_footer(self) -> None:
        self.query_one(Footer).compact = self.app.size.width < 110

    @on(OptionList.OptionSelected, "#menu")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.action_choose(event.option.id or "new")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)  # type: ignore[arg-type]

    def set_status(self, text: str) -> None:
        self.status = text
        self.query_one("#status", Static).update(text)
