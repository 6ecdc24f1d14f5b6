"""Judge audit (SPEC §5.1, issues 4 and 9): how reliable is an LLM used as a judge?

One screen in three parts (a ``ContentSwitcher``):

* **setup** — :class:`~relgate_tui.tui.judge.setup.JudgeSetup` (endpoint, judge models, prompt variants, data set,
  criterion, protocol, repetitions k, inputs, candidates per input, α, seed). ``ctrl+s`` starts (after reading a
  template file typed but not read yet).
* **progress** — the engine's async audit (:func:`~relgate_tui.engine.judging.audit_run.audit_events`) is iterated in an
  ``@work`` async worker, as the Sampling screen does: each event updates the
  :class:`~relgate_tui.tui.widgets.progress.ProgressPanel` (answers per judge, calls made / cached / failed, an errors log).
  Escape asks, then cancels the worker: the requests in flight are cancelled, nothing more is sent. The audit is
  stored (``<data dir>/audits``), so starting the same audit again asks only for what is missing.
* **results** — :class:`~relgate_tui.tui.judge.views.AuditResultsView`; Enter on an input opens the cycle viewer,
  ``j`` / ``m`` export the JSON document / a Markdown report into ``<data dir>/judge-audits/``; ``i`` / ``r`` open
  paper 001's Intervals view / paper 002's IRT view of the stored audit (:mod:`.audit_studies`).

``JudgeScreen(previous)`` starts from the settings of the last audit (the App keeps them); the screen dismisses
with the configuration it last ran, or None when no audit was started.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import ContentSwitcher, DataTable, Header, Static
from textual.worker import Worker, WorkerState

from relgate_tui.tui.forms import first_line
from relgate_tui.tui.judge import audit_studies
from relgate_tui.tui.judge.setup import JudgeSetup
from relgate_tui.tui.judge.views import AuditResultsView
from relgate_tui.tui.services import host
from relgate_tui.tui.widgets.footer import StockFooter
from relgate_tui.tui.widgets.progress import ProgressPanel

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.certification.setup import EndpointChoice
    from relgate_tui.engine.judging import AuditResult, JudgeProgress, StudyCell
    from relgate_tui.engine.judging.audit_run import JudgeAuditConfig


class JudgeScreen(JudgeSetup):
    CSS_PATH = "judge.tcss"
    BINDINGS = [
        Binding("ctrl+s", "start", "Start audit", id="judge.start", tooltip="Start the audit with these settings"),
        Binding("v", "cycles", "Cycle viewer", id="judge.cycles",
                tooltip="Show the highlighted input's cycles and the verdicts behind them (also Enter)"),
        Binding("j", "export('json')", "JSON", id="judge.json",
                tooltip="Export the audit JSON (the document of relgate judge audit --json)"),
        Binding("m", "export('md')", "Report", id="judge.md", tooltip="Export a Markdown report of the audit"),
        Binding("n", "next_study", "Next judge/variant", id="judge.next",
                tooltip="Show the next judge × prompt variant of an audit with several"),
        Binding("i", "study_view('intervals')", "Intervals", id="judge.intervals",
                tooltip="Paper 001's conformal intervals of this judge × variant (needs log-probs)"),
        Binding("r", "study_view('irt')", "IRT", id="judge.irt",
                tooltip="Paper 002's IRT diagnostics of every judge (needs several prompt variants)"),
        Binding("y", "study_view('jury')", "Jury", id="judge.jury",
                tooltip="Paper 003's jury-on-demand of the audit's judges (needs several judges)"),
        Binding("t", "certificate", "Certificate", id="judge.certificate", show=False,
                tooltip="Judge certificate of the stored audit's pairwise preferences against the human scores"),
        Binding("escape", "back", "Back", id="judge.back",
                tooltip="Setup: back home · running: stop (asks first) · results: back to the setup"),
    ]
    HELP = (
        "Audits an LLM judge on a data set with human scores (paper 000): every pair of candidates is judged in both "
        "presentation orders, k times; directed 3-cycles of the majority tournament give ρ per input; rankings "
        "(repaired by an exact minimum feedback arc set) are compared with the human ranking by Kendall τ-b; direct "
        "1–5 scores get split-conformal Likert sets. Tab moves between fields (while typing, ? is a character: use "
        "F1). In the results, Enter on an input opens its cycle viewer."
    )
    HELP_TITLE = "Judge audit"

    def __init__(self, previous: JudgeAuditConfig | None = None, *, reopen: Path | None = None) -> None:
        super().__init__()
        self.previous = previous
        self.reopen = reopen  # a stored audit shown offline (from Runs): results only; Escape goes back
        self.state = "setup"  # setup | running | cancelling | results
        self.endpoints: list[EndpointChoice] = []
        self.audit_set = None
        self.data_error = ""
        self.file_variant, self.variant_read, self.variant_error, self.start_when_read = None, "", "", False
        self.pending_judges = {j.model for j in previous.judges()} if previous is not None else set()
        self.config: JudgeAuditConfig | None = None
        self.endpoint_label = ""
        self.result: AuditResult | None = None
        self.doc: dict[str, Any] | None = None
        self.exported: dict[str, Path] = {}
        self.progress: dict[str, JudgeProgress] = {}
        self.study = 0  # which judge × variant of a multi-judge audit the results show
        self._dirty = False
        self._worker: Worker | None = None
        self.audit_study: dict[str, Any] = {}  # the paper 001/002 view being built from this audit (audit_studies)

    # ---------------------------------------------------------------------------------------------- compose
    def compose(self) -> ComposeResult:
        yield Header()
        with ContentSwitcher(initial="judge-setup", id="judge-parts"):
            with Horizontal(id="judge-setup"):
                yield from self._compose_form()
            yield ProgressPanel(unit="judge answers", per_source=True, id="judge-run",
                                clock=getattr(self.app.services, "progress_clock", None))  # type: ignore[attr-defined]
            yield AuditResultsView(id="judge-results")
        yield StockFooter()

    def on_mount(self) -> None:
        self.sub_title = "judge audit"
        self._toggle_rows()
        if self.reopen is not None:
            self._reopen(self.reopen)
            return
        self.set_interval(0.25, self._refresh_progress, name="judge-refresh")
        self._discover()
        self._set_data_sets()
        self._variant_file_entered()  # the last audit's template file, read again

    @work(thread=True, exclusive=True, group="reopen", exit_on_error=False)
    def _reopen(self, path: Path) -> AuditResult:
        """The stored audit recomputed from its answers: files only, no endpoint."""
        from relgate_tui.engine.judging import reopen_result

        return reopen_result(path)

    def on_unmount(self) -> None:
        if self._worker is not None:
            self._worker.cancel()  # a running audit stops with the screen

    @property
    def answers(self) -> tuple[int, int]:
        """(done, planned) judge answers over every judge of the running or last audit."""
        return sum(p.done for p in self.progress.values()), sum(p.total for p in self.progress.values())

    @on(Worker.StateChanged)
    def _worker_done(self, event: Worker.StateChanged) -> None:
        group, state = event.worker.group, event.state
        if group == "reopen":
            if state == WorkerState.SUCCESS:
                self.endpoint_label = f"stored audit {Path(str(self.reopen)).name} (offline)"
                self._show_results(cast("AuditResult", event.worker.result))
            elif state == WorkerState.ERROR:
                self.notify(first_line(event.worker.error or "unreadable audit"), title="Cannot open the audit", severity="error")
                self.dismiss(None)
            return
        if group == "audit":
            self._audit_state(event.worker, state)
            return
        if group == audit_studies.GROUP:
            audit_studies.finished(self, event.worker, state)
            return
        if state not in (WorkerState.SUCCESS, WorkerState.ERROR):
            return
        ok = state == WorkerState.SUCCESS
        result: Any = event.worker.result
        if group == "discover":
            self._set_endpoints(result if ok else [])
        elif group == "models" and ok:
            self._listed(result)
        elif group == "variant":
            self._variant_read_done(ok, result, event.worker.error)
        elif group == "data":
            self.audit_set, self.data_error = (result, "") if ok else (None, first_line(event.worker.error or "unreadable audit"))
            self._set_criteria()
            self._render_data_info()
            self._update_plan()

    # ------------------------------------------------------------------------------------------- running
    def action_start(self) -> None:
        if self.state != "setup":
            return
        text = self._value("variant-file")
        if text and text != self.variant_read:  # typed but not read yet: read it, then start
            self.start_when_read = True
            self._read_variant(text)
            return
        try:
            cfg, label = self.collect()
        except ValueError as exc:
            self.query_one("#judge-error", Static).update(Text(first_line(exc), style="bold red"))
            self.notify(first_line(exc), title="Cannot start yet", severity="error")
            return
        self.config, self.endpoint_label = cfg, label
        self._start_progress_view(cfg, label)
        self._worker = self._run_audit(cfg)

    def _start_progress_view(self, cfg: JudgeAuditConfig, label: str) -> None:
        self.progress = {}
        names = ", ".join(j.label for j in cfg.judges())
        variants = ", ".join(v.name for v in cfg.to_spec().variants)
        self.query_one(ProgressPanel).reset(Text(
            f"{names} judging {Path(cfg.data).name} / {cfg.criterion} · {cfg.protocol}, k = {cfg.reps} · "
            f"prompts: {variants} · "
            f"{self._audit_size(cfg)} · seed {cfg.seed}\n{label}", style="dim"), planned=self._planned(cfg))
        self._set_state("running")
        self.query_one("#judge-parts", ContentSwitcher).current = "judge-run"

    def _planned(self, cfg: JudgeAuditConfig) -> int:
        """Judge answers the whole audit plans (every judge × variant × protocol): the progress bar's total from
        the start, so it never runs backwards as the judges start one after another (issue 24 §5)."""
        from relgate_tui.engine.judging import planned_answers, select

        if self.audit_set is None:
            return 0
        inputs = select(self.audit_set, cfg.inputs, cfg.candidates, cfg.seed)
        spec = cfg.to_spec()
        return len(spec.judges) * sum(planned_answers(inputs, cfg.protocol, cfg.reps, len(spec.variants)).values())

    def _audit_size(self, cfg: JudgeAuditConfig) -> str:
        """"N inputs × M candidates" as the audit will use them (the data set may have fewer than asked for)."""
        from relgate_tui.engine.judging import select

        if self.audit_set is None:
            return f"{cfg.inputs or 'all'} inputs × {cfg.candidates or 'all'} candidates"
        inputs = select(self.audit_set, cfg.inputs, cfg.candidates, cfg.seed)
        sizes = sorted({len(i.candidates) for i in inputs})
        return f"{len(inputs)} inputs × {'/'.join(map(str, sizes))} candidates"

    @work(exclusive=True, group="audit", exit_on_error=False, description="Judge audit")
    async def _run_audit(self, cfg: JudgeAuditConfig) -> AuditResult:
        """Iterate the engine's audit events on the app's loop (no thread); cancelling the worker stops it."""
        from relgate_tui.engine.judging import AuditFinished, AuditNote, JudgeProgress
        from relgate_tui.engine.judging.audit_run import audit_events

        panel = self.query_one(ProgressPanel)
        async for event in audit_events(cfg):
            if isinstance(event, JudgeProgress):
                self.progress[event.judge] = event  # drawn by the 4 Hz refresh: one event per answer is too many
                self._dirty = True
            elif isinstance(event, AuditNote):
                panel.note(f"{event.judge}: {event.message}")
            elif isinstance(event, AuditFinished):
                return event.result
        raise RuntimeError("the audit ended without a result")

    def _refresh_progress(self) -> None:
        """Draw the latest progress (4 Hz; only when it changed)."""
        if not self._dirty or self.state not in ("running", "cancelling"):
            return
        self._dirty = False
        done, total = self.answers
        self.query_one(ProgressPanel).show(
            self.progress, "computing cycles, MFAS rankings, Kendall τ and conformal sets…" if done >= total else None)

    def _audit_state(self, worker: Worker, state: WorkerState) -> None:
        if worker is not self._worker or state not in (WorkerState.SUCCESS, WorkerState.ERROR,
                                                       WorkerState.CANCELLED):
            return
        self._refresh_progress()
        if state == WorkerState.SUCCESS:
            self._show_results(cast("AuditResult", worker.result))
            return
        from relgate_tui.errors import RelgateError

        error = worker.error
        cancelled = state == WorkerState.CANCELLED
        if cancelled:
            message = "audit cancelled (the answers received so far are stored: start it again to go on)"
        elif isinstance(error, RelgateError):
            message = first_line(error or "")
        else:
            message = f"unexpected error ({type(error).__name__}: {first_line(error or '')}); please report it"
        self._back_to_setup(Text(message, style="bold yellow" if cancelled else "bold red"))
        self.notify(message, title="Audit cancelled" if cancelled else "Audit failed",
                    severity="warning" if cancelled else "error", timeout=10)

    def _show_results(self, result: AuditResult) -> None:
        self.result = result
        self.doc = result.to_json()
        self.exported = {}
        self.study = 0
        self._show_study()

    def _cell(self) -> tuple[StudyCell, str | None]:
        """The judge × variant shown (``n`` steps through them), and its label when the audit has several."""
        assert self.result is not None
        cells = self.result.cells
        i = self.study % len(cells)
        label = (f"{cells[i].judge} [{cells[i].variant}] ({i + 1} of {len(cells)}, n: next)" if len(cells) > 1
                 else None)
        return cells[i], label

    def _show_study(self) -> None:
        view = self.query_one("#judge-results", AuditResultsView)
        assert self.result is not None
        cell, label = self._cell()
        view.show(self.result, cell, self.endpoint_label, label)
        self._set_state("results")
        self.query_one("#judge-parts", ContentSwitcher).current = "judge-results"
        self.query_one("#inputs", DataTable).focus()

    def _back_to_setup(self, note: Text | str = "") -> None:
        self._set_state("setup")
        self.query_one("#judge-parts", ContentSwitcher).current = "judge-setup"
        self._update_plan()
        if note:
            self.query_one("#judge-error", Static).update(note)

    def _set_state(self, state: str) -> None:
        self.state = state
        texts = {
            "running": ("● auditing — Escape stops (asks first)", "bold cyan"),
            "cancelling": ("■ stopping… (answers received so far are stored)", "bold yellow"),
        }
        text, style = texts.get(state, ("", ""))
        self.query_one(ProgressPanel).set_state(text, style)
        self.sub_title = {"setup": "judge audit", "running": "judge audit · running",
                          "cancelling": "judge audit · stopping", "results": "judge audit · results"}[state]
        self.refresh_bindings()

    # ----------------------------------------------------------------------------------------------- actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("export", "cycles", "study_view"):
            return self.state == "results"
        if action == "next_study":
            return self.state == "results" and self.result is not None and len(self.result.cells) > 1
        if action == "start":
            return self.state == "setup"
        return True

    def action_back(self) -> None:
        if self.state == "results" and audit_studies.cancel(self):
            return
        if self.reopen is not None or self.state == "setup":
            self.dismiss(self.config)
        elif self.state == "results":
            self._back_to_setup()
        elif self.state == "running":
            host(self.app).confirm(
                "Stop the audit?", self._answer_stop,
                "The judge answers received so far are stored: running the same audit again asks only for the "
                "rest.", yes="Stop", no="Keep going")

    def _answer_stop(self, stop: bool | None) -> None:
        if stop and self.state == "running" and self._worker is not None:
            self._set_state("cancelling")
            self._worker.cancel()

    def action_next_study(self) -> None:
        if self.result is not None and len(self.result.cells) > 1:
            self.study += 1
            self._show_study()

    def action_study_view(self, kind: str) -> None:
        audit_studies.start(self, kind)

    def action_certificate(self) -> None:
        if self.state != "results":
            return
        try:
            path = audit_studies.stored_audit(self)
        except ValueError as exc:
            self.notify(str(exc), severity="warning")
            return
        host(self.app).open_screen("judge_certificate", "audit", str(path))

    def action_cycles(self) -> None:
        pw = self._cell()[0].pairwise if self.result is not None else None
        if pw is None:
            self.notify("the cycle viewer needs the pairwise protocol", severity="warning")
            return
        inp = self.query_one("#judge-results", AuditResultsView).input_at_cursor(pw)
        if inp is not None:
            host(self.app).open_screen("cycle_viewer", inp)

    @on(DataTable.RowSelected, "#inputs")
    def _input_selected(self) -> None:
        self.action_cycles()

    def export_folder(self) -> Path:
        """Judge audits are not runs: their exports go to ``judge-audits/`` beside the runs directory."""
        return self.app.services.resolved_runs_dir().parent / "judge-audits"  # type: ignore[attr-defined]

    def action_export(self, fmt: str) -> None:
        from relgate_tui.engine.judging.audit_run import export_audit

        if self.result is None:
            return
        try:
            path = export_audit(self.result, fmt, self.export_folder())
        except (ValueError, OSError) as exc:
            self.notify(first_line(exc), title="Export failed", severity="error")
            return
        self.exported[fmt] = path
        self.notify(str(path), title=f"Exported {'JSON' if fmt == 'json' else 'Markdown report'}")
