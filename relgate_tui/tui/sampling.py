"""Sampling (SPEC §5.2): live progress of the sampling pass, in an async worker so the UI stays responsive.

The worker iterates ``session.sample()`` (the engine's sampler with sequential stopping; every completed sample is
stored as it arrives) and keeps the latest state per item; a 4 Hz timer copies it into the widgets, so a flood of
events never floods the UI. ``p`` pauses (the worker is cancelled — nothing completed is lost) and resumes (the
sampler resumes from the stored samples). Escape asks to stop; a stopped run stays usable: Enter continues with
the samples so far, ``r`` resumes, Escape leaves (the run is saved; resume it from Runs).

Dismisses with "done" (complete), "partial" (continue with an incomplete run) or "back".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.clock import Clock
from textual.screen import Screen
from textual.widgets import DataTable, Header
from textual.worker import Worker, WorkerState

from relgate_tui.tui.services import host
from relgate_tui.tui.widgets.footer import StockFooter
from relgate_tui.tui.widgets.progress import ProgressPanel, counters_text
from relgate_tui.tui.widgets.safetext import safe_line

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.certification.session import Session
    from relgate_tui.engine.certification.views import ItemProgress, SamplingUpdate


class SamplingScreen(Screen[str]):
    CSS_PATH = "sampling.tcss"
    BINDINGS = [
        Binding("p", "pause", "Pause/resume", id="sampling.pause", tooltip="Pause or resume sampling"),
        Binding("escape", "cancel", "Stop", id="sampling.cancel", tooltip="Stop sampling (asks first)"),
        Binding("enter,c", "continue", "Continue", id="sampling.continue", priority=True,
                tooltip="When finished or stopped: go on with the samples so far"),
        Binding("r", "resume", "Resume", id="sampling.resume", show=False, tooltip="Resume a stopped run"),
    ]
    HELP = (
        "Each item is sampled until the stopping rule certifies its top answer or K_max is reached. Completed "
        "samples are saved as they arrive: pausing, stopping or even killing relgate loses nothing."
    )
    HELP_TITLE = "Sampling"

    def __init__(self, session: Session, *, clock: Clock | None = None, autostart: bool = True) -> None:
        super().__init__()
        self.session = session
        self.clock = clock
        self.autostart = autostart
        self.state = "idle"  # idle | running | paused | stopped | finished | error
        self._pending: dict[str, ItemProgress] = {}
        self._latest: SamplingUpdate | None = None
        self._rows: set[str] = set()
        self._worker: Worker | None = None
        self._shown_pause: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield ProgressPanel(total=self.session.n_items, clock=self.clock, id="progress",
                            side=DataTable(id="live", cursor_type="row", zebra_stripes=True))
        yield StockFooter()

    def on_mount(self) -> None:
        s = self.session
        self.sub_title = f"sampling · {s.title}"
        self.query_one(ProgressPanel).set_info(Text(s.describe(), style="dim"))
        table = self.query_one("#live", DataTable)
        for key, label, width in (  # fixed widths: live updates never re-measure the table
            ("id", "item", 12),
            ("role", "role", 4),
            ("samples", "samples", 7),
            ("leader", "leader", 14),
            ("consensus", "consensus", 9),
            ("stopped", "stopped", 20),
        ):
            table.add_column(label, key=key, width=width)
        for row in s.item_progress():
            self._pending[row.item_id] = row
        self._flush()
        self.set_interval(0.25, self._flush, name="sampling-refresh")
        if self.autostart and not s.sampling_complete:
            self.start()
        elif s.sampling_complete:  # a complete run reopened: the bar full, the stored calls (issue 31 item 15)
            panel = self.query_one(ProgressPanel)
            panel.progress(s.n_items, s.n_items, f" {s.n_items} / {s.n_items} items")
            calls = s.call_counts()
            panel.counters(counters_text(calls.made, calls.cached, calls.failed))
            self._set_state("finished")

    # ------------------------------------------------------------------------------------------------ worker
    def start(self) -> None:
        self._set_state("running")
        self._worker = self._sample()

    @work(exclusive=True, group="sampling", exit_on_error=False, description="Sampling")
    async def _sample(self) -> str:
        async for update in self.session.sample():
            for row in update.items:
                self._pending[row.item_id] = row
            self._latest = update
        return "finished"

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._worker:
            return
        state = event.state
        if state == WorkerState.SUCCESS:
            self._flush()
            self._set_state("finished" if self.session.sampling_complete else "stopped")
        elif state == WorkerState.ERROR:
            self._flush()
            err = event.worker.error
            self.query_one(ProgressPanel).note(f"sampling stopped: {err}")
            self._set_state("error")
            self.notify(str(err), title="Sampling stopped", severity="error", timeout=10)
        elif state == WorkerState.CANCELLED:
            self._flush()

    # ------------------------------------------------------------------------------------------------ render
    def _flush(self) -> None:
        """Copy the worker's latest state into the widgets (4 Hz)."""
        table = self.query_one("#live", DataTable)
        if self._pending:
            for item_id, row in self._pending.items():
                cells = self._cells(row)
                if item_id in self._rows:
                    for key, value in zip(("id", "role", "samples", "leader", "consensus", "stopped"), cells, strict=True):
                        table.update_cell(item_id, key, value)
                else:
                    table.add_row(*cells, key=item_id)
                    self._rows.add(item_id)
            self._pending.clear()
        update = self._latest
        if update is not None:
            self._latest = None
            panel = self.query_one(ProgressPanel)
            if update.judge_total:  # a judge's pass (pairwise or verification), after sampling
                panel.progress(update.judge_done, update.judge_total,
                               f" {update.judge_name} judge: {update.judge_done} / {update.judge_total} verdicts")
            else:
                count: str | Text = f" {update.items_done} / {update.items_total} items"
                if update.batch:  # --batch: the round's line (issue 32; the status is the server's text: no markup)
                    count = safe_line(f"{count} · {update.batch}")
                panel.progress(update.items_done, update.items_total, count)
            panel.counters(self._counters(update))
            for err in update.errors:
                panel.note(err)
            if update.paused != self._shown_pause:
                self._shown_pause = update.paused
                if update.paused:
                    panel.set_state(
                        safe_line(f"⏸ waiting: {update.paused} — retrying; Escape stops", style="bold yellow")
                    )
                elif self.state == "running":
                    self._set_state("running")

    @staticmethod
    def _cells(row: ItemProgress) -> tuple:
        if row.error:
            stopped = safe_line("✗ " + row.error[:18], style="red")
        elif row.stopped:
            stopped = Text("✓ early", style="green")
        elif row.done:
            stopped = Text("K_max", style="dim")
        else:
            stopped = Text("…", style="dim")
        return (
            safe_line(row.item_id),
            row.role[:3],
            f"{row.n_samples}/{row.k_max}",
            safe_line(row.leader or "—", 14),
            f"{row.consensus:.0%}" if row.n_samples else "—",
            stopped,
        )

    @staticmethod
    def _counters(u: SamplingUpdate) -> Text:
        t = counters_text(u.calls_made, u.calls_cached, u.calls_failed)
        t.append("saved by stopping ", style="dim")
        t.append(f"{u.saved:.0%}", style="bold green" if u.saved > 0 else "bold")
        t.append(f"   samples {u.samples_used}", style="dim")
        return t

    def _set_state(self, state: str) -> None:
        self.state = state
        texts = {
            "running": ("● sampling — p pauses, Escape stops", "bold cyan"),
            "paused": ("⏸ paused (requests in flight finish) — p resumes, Enter continues with the samples so far, "
                       "Escape stops", "bold yellow"),
            "stopped": ("■ stopped — Enter continues with the samples so far, r resumes, Escape leaves (saved)",
                        "bold yellow"),
            "finished": ("✓ sampling complete — Enter continues", "bold green"),
            "error": ("✗ sampling failed — r retries, Enter continues with the samples so far", "bold red"),
            "idle": ("", ""),
        }
        text, style = texts[state]
        self.query_one(ProgressPanel).set_state(text, style)
        self.refresh_bindings()

    # ----------------------------------------------------------------------------------------------- actions
    def _cancel_worker(self) -> None:
        if self._worker is not None and self._worker.state in (WorkerState.PENDING, WorkerState.RUNNING):
            self._worker.cancel()

    def action_pause(self) -> None:
        if self.state == "running":
            if not self.session.pause_sampling():  # no live pass to pause: stop the worker instead
                self._cancel_worker()
            self._set_state("paused")
        elif self.state == "paused" and self.session.resume_sampling():
            self._set_state("running")
        elif self.state in ("paused", "stopped", "error"):
            self.start()

    def action_resume(self) -> None:
        if self.state == "paused" and self.session.resume_sampling():
            self._set_state("running")
        elif self.state in ("paused", "stopped", "error"):
            self.start()

    def action_cancel(self) -> None:
        if self.state in ("running", "paused"):
            def answer(ok: bool | None) -> None:
                if ok:
                    self._cancel_worker()
                    self._set_state("stopped")

            host(self.app).confirm(
                "Stop sampling?",
                answer,
                "Every completed sample is saved. You can continue with the partial run now, or resume it "
                "later from Runs.",
                yes="Stop",
                no="Keep sampling",
            )
        else:
            self._cancel_worker()
            self.dismiss("back")

    def action_continue(self) -> None:
        if self.state == "finished":
            self.dismiss("done")
        elif self.state in ("paused", "stopped", "error"):
            if not self.session.has_samples():
                self.notify("nothing has been sampled yet", severity="warning")
                return
            self._cancel_worker()
            self.dismiss("partial")
