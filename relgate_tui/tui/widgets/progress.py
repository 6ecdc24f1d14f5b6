"""The one progress panel of a long pass: the certification's sampling (and its pairwise-judge pass) and the judge
audit both show their progress here.

:class:`ProgressPanel` shows a line of context, an overall bar with its count, optionally one line per source
(answers done / planned per judge), the call counters, a state line, and an errors log that shows each distinct
message once. ``side`` is a widget shown beside the errors log (the sampling screen's live item table). It only
displays: the screen feeds it the engine's events (``SamplingUpdate``, ``JudgeProgress``, notes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Label, ProgressBar, RichLog, Static

from relgate_tui.tui.widgets.safetext import safe_line

__all__ = ["ProgressPanel", "counters_text"]


def counters_text(made: int, cached: int, failed: int) -> Text:
    """The call counters every pass shows: calls made, answered from the cache, failed (red when any)."""
    t = Text()
    for label, value, bad in (("calls made", made, False), ("cached", cached, False), ("failed", failed, True)):
        t.append(f"{label} ", style="dim")
        t.append(f"{value:,}", style="bold red" if bad and value else "bold")
        t.append("   ")
    return t


class ProgressPanel(Vertical):
    """Progress of a running pass (see the module docstring). ``per_source``: compose the per-source lines."""

    DEFAULT_CSS = """
    ProgressPanel { height: 1fr; }
    ProgressPanel #progress-top { height: auto; padding: 0 1; }
    ProgressPanel #run-info { height: auto; margin-top: 1; }
    ProgressPanel #bar-row { height: 1; margin-top: 1; }
    ProgressPanel #bar { width: auto; }
    ProgressPanel #bar Bar { width: 60; }
    ProgressPanel #phase { height: auto; margin-top: 1; }
    ProgressPanel #counters { height: 1; margin-top: 1; }
    ProgressPanel #state { height: 1; margin: 1 0; }
    ProgressPanel #progress-body { height: 1fr; }
    ProgressPanel #errors-box { width: 1fr; height: 1fr; padding: 0 1; border-left: vkey $error 40%; }
    ProgressPanel #errors { height: 1fr; }
    ProgressPanel .panel-title { text-style: bold; }
    """

    def __init__(self, *, total: int = 1, unit: str = "", per_source: bool = False, side: Widget | None = None,
                 clock: Any = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.unit = unit
        self._total = max(1, total)
        self._per_source = per_source
        self._side = side
        self._clock = clock
        self._seen: set[str] = set()
        self._planned = 0  # the whole pass's planned total (reset), so the bar never runs backwards

    def compose(self) -> ComposeResult:
        with Vertical(id="progress-top"):
            yield Static("", id="run-info")
            with Horizontal(id="bar-row"):
                yield ProgressBar(total=self._total, id="bar", clock=self._clock)
                yield Label("", id="count")
            if self._per_source:
                yield Static("", id="phase")
            yield Static("", id="counters")
            yield Static("", id="state")
        with Horizontal(id="progress-body"):
            if self._side is not None:
                yield self._side
            with Vertical(id="errors-box"):
                yield Label("Errors", classes="panel-title")
                yield RichLog(id="errors", wrap=True, markup=False, max_lines=500, min_width=20)

    # --------------------------------------------------------------------------------------------- updates
    def set_info(self, info: Text | str) -> None:
        self.query_one("#run-info", Static).update(info)

    def reset(self, info: Text | str, planned: int = 0) -> None:
        """A new pass: clear the bar, the counters and the errors; ``info`` is its line of context; ``planned`` its
        total over every source (0 = unknown: the largest total seen so far), so the bar never runs backwards as
        sources start one after another (issue 24 §5)."""
        self._seen = set()
        self._planned = planned
        self.query_one("#errors", RichLog).clear()
        self.query_one("#bar", ProgressBar).update(total=1, progress=0)
        self.query_one("#count", Label).update("")
        self.query_one("#counters", Static).update("")
        self.set_info(info)
        if self._per_source:
            self.query_one("#phase", Static).update(Text("starting…", style="dim"))

    def progress(self, done: int, total: int, count: str | Text) -> None:
        """The bar at ``done`` of ``total`` and its count label (``count``, e.g. " 12 / 24 items")."""
        self.query_one("#bar", ProgressBar).update(total=max(1, total), progress=done)
        self.query_one("#count", Label).update(count)

    def counters(self, text: Text) -> None:
        self.query_one("#counters", Static).update(text)

    def show(self, per_source: Mapping[str, Any], phase: str | None = None) -> None:
        """Per-source progress. ``per_source``: name → an object with ``done``, ``total``, ``made``, ``cached``,
        ``failed``; the bar shows their sums, the phase lines each source and then ``phase``."""
        done = sum(p.done for p in per_source.values())
        total = self._planned = max(self._planned, sum(p.total for p in per_source.values()))
        self.progress(done, total, f" {done:,} / {total:,} {self.unit}")
        lines = Text()
        for name, p in per_source.items():
            lines.append(f"{name[:40]:<42}", style="bold")
            lines.append(f"{p.done:,} / {p.total:,}\n", style="green" if p.done >= p.total else "")
        if phase:
            lines.append(phase, style="dim")
        if self._per_source:
            self.query_one("#phase", Static).update(lines)
        self.counters(counters_text(sum(p.made for p in per_source.values()),
                                    sum(p.cached for p in per_source.values()),
                                    sum(p.failed for p in per_source.values())))

    def note(self, message: str) -> None:
        """Log ``message`` once (untrusted server and id text: one plain line, never markup, no controls)."""
        line = safe_line(message)
        if line.plain not in self._seen:
            self._seen.add(line.plain)
            self.query_one("#errors", RichLog).write(line)

    def set_state(self, text: str | Text, style: str = "") -> None:
        self.query_one("#state", Static).update(text if isinstance(text, Text) else Text(text, style=style))
