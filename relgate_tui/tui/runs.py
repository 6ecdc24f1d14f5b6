"""Runs: every stored run (model, task, date, reliability, status) and judge audit (kind "audit"). Open one fully
offline, resume an unfinished run, or mark two or more runs and compare them side by side. The marks are numbered in
marking order: ``t`` certifies the marked runs' verification judges as one judge cascade, cheapest first = first
marked (the judge certificate screen, :mod:`relgate_tui.tui.judge.certificate`, kind "runs"). ``i`` imports another
tool's log (lm-eval, Inspect, samples JSONL) as a new run (:mod:`relgate_tui.tui.importer`); the list then reloads
with the new run selected and its import flags summarised below the table.

Dismisses with ``(action, [run paths])`` where action is "open", "resume" or "compare", or None (Escape).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Label, Static
from textual.worker import Worker, WorkerState

from relgate_tui.core.redact import public_url
from relgate_tui.core.text import counted, one_line
from relgate_tui.engine.runs.listing import RunSummary, list_runs
from relgate_tui.tui.demo_endpoint import SIMULATED_MODELS
from relgate_tui.tui.services import host
from relgate_tui.tui.widgets.footer import StockFooter
from relgate_tui.tui.widgets.safetext import safe_line

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.judging import AuditSummary
    from relgate_tui.tui.importer import ImportDone

RunsChoice = tuple[str, list[Path]]


def _fmt_level(s: RunSummary) -> Text:
    if s.reliability_level is None:
        return Text("—", style="dim")
    t = Text(f"{s.reliability_level:.3f}")
    if s.reliability_lower_bound is not None:
        t.append(f" ≥{s.reliability_lower_bound:.3f}", style="dim")
    return t


def _model_label(model: str, simulated: bool, width: int) -> str:
    """The model cell: a simulated model says so — "(simulated)", or "(sim)" where the whole word does not fit."""
    if not simulated:
        return model
    full = f"{model} (simulated)"
    return full if len(full) <= width else f"{model} (sim)"


def _created(created: str, narrow: bool) -> str:
    """"MM-DD hh:mm" (narrow: "MM-DD"; the time is in the line below the table)."""
    text = created.replace("T", " ")[5:16]
    return text[:5] if narrow else text


def _endpoint(endpoint: str) -> str:
    """The endpoint as a short cell: ":port" on loopback (the embedded demo, demo-server, a local server), else the
    host[:port] — what tells two runs of one model and task apart (issue 31 item 10)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(public_url(str(endpoint)))
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return one_line(str(endpoint))
    if host in ("127.0.0.1", "localhost", "::1"):
        return f"{'local' if port is None else ''}:{port or ''}".rstrip(":") or "local"
    return f"{host}:{port}" if port else host


class RunsScreen(Screen["RunsChoice | None"]):
    CSS_PATH = "runs.tcss"
    BINDINGS = [
        Binding("o", "open", "Open", id="runs.open", tooltip="Open the highlighted run (offline)"),
        Binding("r", "resume", "Resume", id="runs.resume", tooltip="Resume sampling / spot-check of the run"),
        Binding("space", "mark", "Mark", key_display="␣", id="runs.mark",
                tooltip="Mark or unmark the run for comparison or a judge cascade (numbered in order)"),
        Binding("c", "compare", "Compare", id="runs.compare", tooltip="Compare the marked runs (two or more)"),
        Binding("t", "cascade", "Cascade", id="runs.cascade", show=False,  # no room at 80 columns: the hint and ?
                tooltip="Judge cascade: certify the marked runs' verification judges as one, cheapest first = the "
                        "marking order"),
        Binding("p", "publish", "Publish", id="runs.publish",
                tooltip="Publish for review: put the run's calibration items into a team-review session"),
        Binding("i", "import_log", "Import", id="runs.import",
                tooltip="Import an lm-eval / Inspect / samples log as a run (no model calls)"),
        Binding("escape", "back", "Back", id="runs.back", tooltip="Back to home"),
    ]
    HELP = "Runs are read from disk only: opening one makes no network call. Enter also opens."
    HELP_TITLE = "Runs"

    def __init__(self, runs_dir: Path) -> None:
        super().__init__()
        self.runs_dir = Path(runs_dir)
        self.summaries: dict[str, RunSummary] = {}
        self.audits: dict[str, AuditSummary] = {}
        self.marked: list[str] = []
        self.imported: ImportDone | None = None  # the run the last Import… made: selected, flags in the hint

    def compose(self) -> ComposeResult:
        yield Header()
        yield Label("", id="runs-title")
        yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        yield Static("", id="runs-hint")
        yield Static("", id="runs-keys")  # its own line: a long run description never pushes the keys off
        yield StockFooter()

    # (key, header, content width or None = the flexible model/task columns); a column is its width + 2 (padding)
    _HEAD = (("mark", " ", 1), ("kind", "kind", 5))
    _FIGURES = (("level", "level ≥ bound", 13), ("mstar", "M*", 2), ("gate", "gate", 7))
    _STORY = (("created", "created", 11), ("status", "status", 9))
    _COUNTS = (("items", "items", 5), ("samples", "samples", 7), ("labels", "labels", 6))
    ENDPOINT_WIDTH = 15
    MODEL_TASK_ROOM = 37  # kept for the model and task before a count column is added

    def on_mount(self) -> None:
        self.sub_title = "runs"
        self.query_one(Footer).compact = self.app.size.width < 110  # every key on screen at 80 columns
        self.columns = self._columns(self.app.size.width)
        table = self.query_one("#runs", DataTable)
        for key, label, width in self.columns:
            table.add_column(label, key=key, width=width)
        self.query_one("#runs-title", Label).update(safe_line(f"Loading runs from {self.runs_dir} …"))
        self._load()

    @classmethod
    def _columns(cls, width: int) -> list[tuple[str, str, int]]:
        """The columns that fit ``width`` whole (issue 31 item 17: no header or cell cut at 80 or 120 columns): the
        headline (level ≥ bound, M*, gate), when and how the run stands, then the endpoint (issue 31 item 10: two
        runs of one model and task differ by it) and the counts as far as they fit; the model and task share what is
        left. From 80 columns the date is "MM-DD" (the time, endpoint and counts are in the line below the table)."""
        room = width - 4  # the vertical scrollbar and the table's border
        narrow = width < 110
        head = cls._HEAD[:1] if narrow else cls._HEAD
        story = ((("created", "date", 5),) if narrow else cls._STORY[:1]) + cls._STORY[1:]
        fixed = [*head, *cls._FIGURES, *story]
        used = sum(w + 2 for _, _, w in fixed)
        extra: list[tuple[str, str, int]] = []
        for col in (("endpoint", "endpoint", cls.ENDPOINT_WIDTH), *cls._COUNTS):
            if not narrow and used + col[2] + 2 + cls.MODEL_TASK_ROOM <= room:
                extra.append(col)
                used += col[2] + 2
        flexible = max(16, room - used - 4)
        model = max(8, flexible * 3 // 5)  # "sim-mid (simulated)" whole at 120 columns (the model says most)
        task = max(8, flexible - model)
        return [*head, ("model", "model", model), ("task", "task", task), *cls._FIGURES, *story, *extra]

    def _add(self, table: DataTable, key: str, cells: dict[str, object]) -> None:
        table.add_row(*(cells.get(k, "—") for k, _, _ in self.columns), key=key)

    # judge audits (issue 9) are listed beside the runs: "audit" in the kind column; Enter reopens one offline
    @work(thread=True, exclusive=True, group="audits-load", exit_on_error=False)
    def _load_audits(self) -> list[AuditSummary]:
        from relgate_tui.engine.judging import list_audits

        return list_audits(self.runs_dir.parent / "audits")

    def _add_audits(self, audits: list[AuditSummary]) -> None:
        table = self.query_one("#runs", DataTable)
        self.audits = {a.id: a for a in audits}
        narrow = not any(k == "kind" for k, _, _ in self.columns)
        for a in audits:
            judges = ("audit: " if narrow else "") + ", ".join(map(str, a.judges))
            self._add(table, a.id, {
                "mark": "", "kind": "audit", "model": safe_line(judges, 40, overflow="ellipsis"),
                "task": safe_line(f"{a.data} / {a.criterion}", 26, overflow="ellipsis"),
                "created": safe_line(_created(str(a.created), narrow)),
                "status": "finished" if a.finished else "unfinished", "samples": f"{a.answers}/{a.planned}"})

    @work(thread=True, exclusive=True, group="runs-load", exit_on_error=False)
    def _load(self) -> list[RunSummary]:
        return list_runs(self.runs_dir)

    @on(Worker.StateChanged)
    def _loaded(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "audits-load" and event.state == WorkerState.SUCCESS:
            self._add_audits(event.worker.result or [])
        if event.worker.group != "runs-load":
            return
        if event.state == WorkerState.SUCCESS:
            self._fill(event.worker.result or [])
            self._load_audits()
        elif event.state == WorkerState.ERROR:
            self.query_one("#runs-title", Label).update(safe_line(event.worker.error, style="bold red"))

    def _fill(self, summaries: list[RunSummary]) -> None:
        table = self.query_one("#runs", DataTable)
        table.clear()
        # keyed by directory: a backup copy of a run holds the same run id (issue 10 §5)
        self.summaries = {str(s.path): s for s in summaries}
        narrow = not any(k == "kind" for k, _, _ in self.columns)
        model_width = next(w for k, _, w in self.columns if k == "model")
        status_width = next(w for k, _, w in self.columns if k == "status")
        for s in summaries:
            # "labelling: 0 of 50" where it fits whole, else "labelling" (the line under the table has the counts)
            status = s.status_text if len(s.status_text) <= status_width else s.status
            self._add(table, str(s.path), {
                "mark": "", "kind": "run",
                "model": safe_line(_model_label(s.model, s.is_simulated(SIMULATED_MODELS), model_width),
                                   overflow="ellipsis", no_wrap=True),
                "task": safe_line(s.task, 26, overflow="ellipsis", no_wrap=True),
                "level": _fmt_level(s), "mstar": s.m_star_text,
                "gate": Text(s.gate_text, style="green" if s.passed else ("red" if s.passed is False else "dim")),
                "created": _created(s.created, narrow),
                "status": safe_line(status, style="red" if s.status.startswith("unreadable") else "",
                                    overflow="ellipsis", no_wrap=True),
                "endpoint": safe_line(_endpoint(s.endpoint), overflow="ellipsis", no_wrap=True),
                "items": str(s.n_items), "samples": str(s.n_samples), "labels": str(s.n_labels)})
        n = len(summaries)
        self.query_one("#runs-title", Label).update(safe_line(
            f"{n} run{'s' if n != 1 else ''} in {self.runs_dir}" if n else
            f"No runs yet in {self.runs_dir} — start one from Home → New run."
        ))
        self._select_imported(table)
        self._hint()
        table.focus()

    def _select_imported(self, table: DataTable) -> None:
        if self.imported is None:
            return
        want = self.imported.path.resolve()
        for row, s in enumerate(self.summaries.values()):
            if s.path.resolve() == want:
                table.move_cursor(row=row)
                return

    def _hint(self) -> None:
        marked = len(self.marked)
        current = self._current()
        t = Text()
        if current is not None:
            t.append(one_line(f"{current.run_id}  "), style="bold")
            if self.imported is not None and current.path.resolve() == self.imported.path.resolve():
                t.append(one_line(self.imported.summary), style="yellow")
            else:
                if current.status_text != current.status:  # the labels it waits for (the cell may say "labelling")
                    t.append(one_line(current.status_text) + " · ", style="yellow")
                t.append(one_line(f"{current.created.replace('T', ' ')[:16]} · {public_url(str(current.endpoint))} · "
                                  f"{counted(current.n_items, 'item')}, {counted(current.n_samples, 'sample')}, "
                                  f"{counted(current.n_labels, 'label')} · "
                                  + (f"judge {current.verify_judge} · " if current.verify_judge else "")
                                  + f"{current.path}"), style="dim")
        self.query_one("#runs-hint", Static).update(t)
        self.query_one("#runs-keys", Static).update(Text(
            f"{marked} marked, in order — c compares them · t certifies their judges as a cascade" if marked else
            "Enter/o open · r resume · i import · Space mark: c compare, t judge cascade",  # whole at 80 columns
            style="dim",
        ))

    @on(DataTable.RowHighlighted, "#runs")
    def _highlighted(self) -> None:
        self._hint()

    def _current(self) -> RunSummary | None:
        table = self.query_one("#runs", DataTable)
        if not self.summaries or table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.summaries.get(str(key))

    def action_open(self) -> None:
        table = self.query_one("#runs", DataTable)
        if table.row_count and (audit := self.audits.get(
                str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))) is not None:
            self.dismiss(("audit", [Path(audit.path)]))
            return
        s = self._current()
        if s is not None:
            self.dismiss(("open", [s.path]))

    @on(DataTable.RowSelected, "#runs")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_resume(self) -> None:
        s = self._current()
        if s is not None:
            self.dismiss(("resume", [s.path]))

    def action_mark(self) -> None:
        s = self._current()
        if s is None:
            return
        table = self.query_one("#runs", DataTable)
        key = str(s.path)
        if key in self.marked:
            self.marked.remove(key)
            table.update_cell(key, "mark", "")
        else:
            self.marked.append(key)
        for position, marked in enumerate(self.marked, start=1):  # the cascade order (1 = the cheapest judge)
            table.update_cell(marked, "mark", Text(str(position) if position < 10 else "●", style="bold yellow"))
        self._hint()

    def action_compare(self) -> None:
        if len(self.marked) < 2:
            self.notify("mark two or more runs with Space first", severity="warning")
            return
        self.dismiss(("compare", [self.summaries[r].path for r in self.marked]))

    def action_cascade(self) -> None:
        """The judge certificate of the marked runs' verification judges as one cascade, in marking order."""
        import os

        if len(self.marked) < 2:
            self.notify("a judge cascade: mark the runs of two or more judges with Space, the cheapest first, "
                        "then t", severity="warning")
            return
        host(self.app).open_screen("judge_certificate", "runs",
                                   os.pathsep.join(str(self.summaries[r].path) for r in self.marked))

    def action_publish(self) -> None:
        s = self._current()
        if s is None:
            self.notify("no run to publish", severity="warning")
            return
        host(self.app).open_screen("review_publish", Path(s.path))

    def action_import_log(self) -> None:
        host(self.app).open_screen("import", self.runs_dir, callback=self._imported)

    def _imported(self, done: ImportDone | None) -> None:
        if done is None:
            return
        self.imported = done
        self.marked.clear()
        self.query_one("#runs-title", Label).update(safe_line(f"Imported run {done.run_id} — reloading …"))
        self._load()

    def action_back(self) -> None:
        self.dismiss(None)
