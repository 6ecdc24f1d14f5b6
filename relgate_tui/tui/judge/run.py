"""The progress panel of a running judge audit (reusable: any long pass that reports per-source progress).

:class:`ProgressPanel` shows one line of context, an overall bar with its count, one line per judge (answers done /
planned), the call counters, a state line and an errors log that shows each distinct message once. It only
displays: the screen feeds it the engine's events (``JudgeProgress``, notes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, ProgressBar, RichLog, Static

from relgate_tui.core.text import one_line


class ProgressPanel(Vertical):
    DEFAULT_CSS = """
    ProgressPanel { padding: 0 1; }
    ProgressPanel #run-info { height: auto; margin-top: 1; }
    ProgressPanel #bar-row { height: 1; margin-top: 1; }
    ProgressPanel #bar { width: auto; }
    ProgressPanel #bar Bar { width: 60; }
    ProgressPanel #phase { height: auto; margin-top: 1; }
    ProgressPanel #counters { height: 1; margin-top: 1; }
    ProgressPanel #run-state { height: 1; margin: 1 0; }
    ProgressPanel .panel-title { text-style: bold; }
    ProgressPanel #errors { height: 1fr; border-left: vkey $error 40%; }
    """

    def __init__(self, *, unit: str = "judge answers", clock: Any = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.unit = unit
        self._clock = clock
        self._seen: set[str] = set()
        self._planned = 0  # the whole pass's planned total: the bar never runs backwards as sources start

    def compose(self) -> ComposeResult:
        yield Static("", id="run-info")
        with Horizontal(id="bar-row"):
            yield ProgressBar(total=1, id="bar", clock=self._clock)
            yield Label("", id="answers-count")
        yield Static("", id="phase")
        yield Static("", id="counters")
        yield Static("", id="run-state")
        yield Label("Errors", classes="panel-title")
        yield RichLog(id="errors", wrap=True, markup=False, max_lines=500, min_width=20)

    def reset(self, info: Text | str, planned: int = 0) -> None:
        """Start a pass; ``planned``: its total over every source (0 = unknown: the largest total seen so far)."""
        self._seen = set()
        self._planned = planned
        self.query_one("#errors", RichLog).clear()
        self.query_one("#bar", ProgressBar).update(total=1, progress=0)
        self.query_one("#answers-count", Label).update("")
        self.query_one("#counters", Static).update("")
        self.query_one("#run-info", Static).update(info)
        self.query_one("#phase", Static).update(Text("starting…", style="dim"))

    def show(self, per_source: Mapping[str, Any], phase: str | None = None) -> None:
        """``per_source``: name → an object with ``done``, ``total``, ``made``, ``cached``, ``failed``."""
        done = sum(p.done for p in per_source.values())
        total = self._planned = max(self._planned, sum(p.total for p in per_source.values()))
        self.query_one("#bar", ProgressBar).update(total=max(1, total), progress=done)
        self.query_one("#answers-count", Label).update(f" {done:,} / {total:,} {self.unit}")
        lines = Text()
        for name, p in per_source.items():
            lines.append(f"{name[:40]:<42}", style="bold")
            lines.append(f"{p.done:,} / {p.total:,}\n", style="green" if p.done >= p.total else "")
        if phase:
            lines.append(phase, style="dim")
        self.query_one("#phase", Static).update(lines)
        t = Text()
        for label, value, bad in (("calls made", sum(p.made for p in per_source.values()), False),
                                  ("cached", sum(p.cached for p in per_source.values()), False),
                                  ("failed", sum(p.failed for p in per_source.values()), True)):
            t.append(f"{label} ", style="dim")
            t.append(f"{value:,}", style="bold red" if bad and value else "bold")
            t.append("   ")
        self.query_one("#counters", Static).update(t)

    def note(self, message: str) -> None:
        """Log ``message`` once (untrusted text: never markup)."""
        message = one_line(message)  # server and id text: never markup, no controls
        if message not in self._seen:
            self._seen.add(message)
            self.query_one("#errors", RichLog).write(Text(message))

    def set_state(self, text: str, style: str = "") -> None:
        self.query_one("#run-state", Static).update(Text(text, style=style))
