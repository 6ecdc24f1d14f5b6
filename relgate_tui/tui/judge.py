"""Judge audit — placeholder until the judge-audit engineer (issue 4) replaces this screen.

The screen keeps its public shape (``JudgeScreen()`` dismissing with None) so the App's flow does not change
when the real audit screen lands.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

TEXT = """[b]Judge audit[/b]

How reliable is an LLM used as a judge? This screen will run a pairwise-preference audit (both orders × k
repetitions) against a judge endpoint, count directed 3-cycles per input, repair rankings with an exact minimum
feedback arc set, and build conformal prediction sets over Likert scores (paper 000).

The headless command will be [b]relgate judge-audit[/b]. The interactive screen is not built yet.

Press Escape to go back."""


class JudgeScreen(Screen[None]):
    CSS_PATH = "judge.tcss"
    BINDINGS = [Binding("escape", "back", "Back", id="judge.back")]
    HELP = "Placeholder: the judge audit screen is being built (issue 4)."

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="judge-box"):
            yield Static(TEXT, id="judge-text")
        yield Footer()

    def action_back(self) -> None:
        self.dismiss(None)
