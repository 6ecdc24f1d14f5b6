"""The Studies screen: pick a judge scores file (or a stored judge audit: ``ctrl+o`` opens the picker,
:mod:`.picker`), a criterion and a study, run it, open its view.

- **Intervals** (paper 001): one judge's conformal intervals (``relgate judge intervals``'s ``load_input`` and the
  core's ``run_study``), with α, the number of seeds and the methods (all nine, or the fast six: all but LVD and the
  two boosted methods); progress is reported per seed (then per seed of the calibration-size curve).
- **IRT diagnostics** (paper 002): every judge of the file under every prompt variant (``relgate judge irt``'s
  ``build_study``).
- **Jury-on-demand** (paper 003): the file's judges as a pool (``relgate judge jury``'s ``build_data`` and
  ``run_jury_study``); progress is reported per split.

The file is read in a thread worker; a loader error appears inline under the path (one line). The study runs in a
thread worker (CPU-bound core code); ``Escape`` while it runs asks, then cancels: the worker is marked cancelled at
once and its thread stops at the next split, where the progress callback raises :class:`StudyCancelled`. When the
study finishes its view is pushed on top of this screen (``Escape`` there comes back here). ``Escape`` when idle
dismisses with None.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Header, Input, Label, ProgressBar, Select
from textual.worker import Worker, WorkerState, get_current_worker

from relgate_tui.core.text import counted
from relgate_tui.tui.services import host
from relgate_tui.tui.studies.common import StudyCancelled, plain, safe
from relgate_tui.tui.widgets.footer import StockFooter

STUDIES = (("Intervals (paper 001)", "intervals"), ("IRT diagnostics (paper 002)", "irt"),
           ("Jury-on-demand (paper 003)", "jury"))
FAST_METHODS = ("cqr", "asym-cqr", "chr", "r2ccp", "ordinal-aps", "ordinal-rc")  # all but LVD and the boosted two
METHOD_SETS = (("all nine", "all"), ("fast six (no LVD, boosted)", "fast"))


def run_jury(data: Any, texts: Any, splits: int, n_search: int, progress: Callable[[int, int], None]) -> Any:
    """Paper 003's study (a module function so that tests can wrap it)."""
    from relgate_tui.core.jury.study import run_jury_study

    return run_jury_study(data, texts=texts, splits=splits, n_search=n_search, progress=progress)


def run_intervals(inp: Any, methods: tuple[str, ...], alpha: float, seeds: int, labels: dict[str, str],
                  progress: Callable[[int, int], None]) -> Any:
    """Paper 001's study on seeds 1…``seeds`` (a module function so that tests can wrap it)."""
    from relgate_tui.core.judge_intervals.study import run_study

    return run_study(inp, methods=methods, alpha=alpha, seeds=range(1, seeds + 1), labels=labels, progress=progress)


class StudiesScreen(Screen[None]):
    """Run a judge study on a scores file. ``path`` pre-fills the file; ``splits``/``n_search`` are the jury's."""

    CSS_PATH = "studies.tcss"
    BINDINGS = [
        Binding("ctrl+s", "run", "Run", id="studies.run", tooltip="Run the chosen study"),
        Binding("ctrl+o", "pick", "Open…", id="studies.open",
                tooltip="Pick a judge scores file (examples/ holds some) or a stored judge audit"),
        Binding("escape", "escape", "Back / cancel", id="studies.back", tooltip="Cancel a running study, or go back"),
    ]
    HELP = ("A judge scores file (JSONL or CSV, see the README): intervals need one judge's score-token log-probs and "
            "human ratings; IRT needs each judge's scores under several prompt variants; the jury needs several "
            "judges, human scores and the judged texts. Enter loads the file, ctrl+s runs the study.")
    HELP_TITLE = "Judge studies"

    def __init__(self, path: str = "", *, splits: int = 10, n_search: int = 3) -> None:
        super().__init__()
        self.initial_path = path
        self.splits = splits
        self.n_search = n_search
        self.table: Any = None
        self.loaded_path: str | None = None
        self.state = "idle"  # idle | loading | running
        self.worker: Worker[Any] | None = None
        self.running = ""  # the running study's kind
        self.running_seeds = 0
        self.last_view: Any = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="studies-box"):
            yield Label("Judge scores file", classes="field-label")
            yield Input(self.initial_path, placeholder="a .jsonl / .csv judge scores file or an audit folder · ctrl+o picks",
                        id="path")
            yield Label("", id="path-error")
            with Horizontal(classes="row"):
                with Vertical():
                    yield Label("Criterion", classes="field-label")
                    yield Select[str]([], prompt="load a file first", id="criterion")
                with Vertical():
                    yield Label("Study", classes="field-label")
                    yield Select[str](STUDIES, value="irt", allow_blank=False, id="study")
                with Vertical(id="splits-box"):
                    yield Label("Jury splits", classes="field-label")
                    yield Input(str(self.splits), id="splits", type="integer")
            with Horizontal(classes="row", id="intervals-row"):
                with Vertical():
                    yield Label("Judge", classes="field-label")
                    yield Select[str]([], prompt="load a file first", id="judge")
                with Vertical(classes="narrow"):
                    yield Label("α", classes="field-label")
                    yield Input("0.1", id="alpha", type="number")
                with Vertical(classes="narrow"):
                    yield Label("Seeds", classes="field-label")
                    yield Input("30", id="seeds", type="integer")
                with Vertical():
                    yield Label("Methods", classes="field-label")
                    yield Select[str](METHOD_SETS, value="all", allow_blank=False, id="methods")
            yield Button("Run (ctrl+s)", id="run", variant="primary")
            yield Label("", id="status")
            yield ProgressBar(id="progress", show_eta=False)
            yield Label("", id="run-error")
        yield StockFooter()

    def on_mount(self) -> None:
        self.sub_title = "judge studies (papers 001–003)"
        self.query_one("#progress", ProgressBar).display = False
        self._study_fields()
        if self.initial_path:
            self.load(self.initial_path)
        self.query_one("#path", Input).focus()

    @on(Select.Changed, "#study")
    def _study_fields(self) -> None:
        """Only the chosen study's own fields are shown."""
        study = self.query_one("#study", Select).value
        self.query_one("#splits-box").display = study == "jury"
        self.query_one("#intervals-row").display = study == "intervals"

    # ---------------------------------------------------------------------------------------------- loading
    @on(Input.Submitted, "#path")
    def _path_submitted(self, event: Input.Submitted) -> None:
        self.load(event.value)

    def load(self, path: str) -> None:
        path = path.strip()
        if not path:
            self._error("#path-error", "give the path of a judge scores file")
            return
        self.state = "loading"
        self._status("reading the file…")
        self._load(path)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load(self, path: str) -> tuple[str, Any]:
        """A judge scores file, or a stored audit's directory (its direct scores, as ``relgate audits --scores``)."""
        from relgate_tui.engine.judging.scores_file import load_scores

        target = Path(path).expanduser()
        if target.is_dir():
            from relgate_tui.engine.judging.as_scores import audit_scores

            return path, audit_scores(target).table
        return path, load_scores(target)

    def action_pick(self) -> None:
        """The file picker (issue 24 §6): a scores file from a tree, or a stored audit."""

        def chosen(path: str | None) -> None:
            if path:
                self.query_one("#path", Input).value = path
                self.load(path)

        host(self.app).open_screen("scores_picker", callback=chosen)

    def _loaded(self, path: str, table: Any) -> None:
        self.table, self.loaded_path = table, path
        self._error("#path-error", "")
        self._error("#run-error", "")
        criteria = table.criteria()
        select = self.query_one("#criterion", Select)
        select.set_options([(safe(c, 40), c) for c in criteria])
        select.value = criteria[0]
        judges = table.judges()
        judge = self.query_one("#judge", Select)
        judge.set_options([(safe(j, 40), j) for j in judges])
        judge.value = judges[0]
        self._status(Text.assemble(f"{len(table):,} rows · {len(table.ids()):,} items · ",
                                   f"{counted(len(table.judges()), 'judge')}: ",
                                   safe(", ".join(plain(j, 24) for j in table.judges()[:6]), 120),
                                   f" · variants: {', '.join(plain(v, 16) for v in table.variants()[:6])}",
                                   f" · {counted(table.unscored(), 'null score', grouped=True)} counted as no score"
                                   if table.unscored() else ""))

    # ---------------------------------------------------------------------------------------------- running
    def action_run(self) -> None:
        if self.state == "running":
            return
        path = self.query_one("#path", Input).value.strip()
        if self.table is None or path != self.loaded_path:
            self.load(path)
            self._error("#run-error", "press ctrl+s again once the file is loaded")
            return
        criterion = self.query_one("#criterion", Select).value
        study = self.query_one("#study", Select).value
        if not isinstance(criterion, str):
            self._error("#run-error", "choose a criterion")
            return
        try:
            splits = int(self.query_one("#splits", Input).value)
        except ValueError:
            splits = 0
        if study == "jury" and splits < 2:
            self._error("#run-error", "jury splits must be a whole number ≥ 2 (the Wilcoxon test compares splits)")
            return
        options: dict[str, Any] = {}
        if study == "intervals":
            try:
                options = self._intervals_options()
            except ValueError as exc:
                self._error("#run-error", str(exc))
                return
        self._error("#run-error", "")
        self.state = "running"
        self.running = str(study)
        self.running_seeds = int(options.get("seeds", 0))
        bar = self.query_one("#progress", ProgressBar)
        bar.display = True
        bar.update(total=splits if study == "jury" else None, progress=0)
        self._status({"jury": f"running the jury: split 0 of {splits}…", "irt": "fitting the IRT models…",
                      "intervals": "reading the judge's log-probs…"}[str(study)])
        self.worker = self._run_study(str(study), criterion, splits, options)

    def _intervals_options(self) -> dict[str, Any]:
        """Judge, α, seeds and methods of the Intervals study; ``ValueError`` with a one-line reason."""
        from relgate_tui.core.judge_intervals.methods import METHOD_NAMES

        judge = self.query_one("#judge", Select).value
        if not isinstance(judge, str):
            raise ValueError("choose a judge")
        try:
            alpha = float(self.query_one("#alpha", Input).value)
        except ValueError:
            alpha = -1.0
        if not 0.0 < alpha < 1.0:
            raise ValueError("α must be a number between 0 and 1 (0.1 = 90% coverage)")
        try:
            seeds = int(self.query_one("#seeds", Input).value)
        except ValueError:
            seeds = 0
        if not 1 <= seeds <= 1000:
            raise ValueError("seeds must be a whole number from 1 to 1000 (the paper uses 30)")
        methods = METHOD_NAMES if self.query_one("#methods", Select).value == "all" else FAST_METHODS
        return {"judge": judge, "alpha": alpha, "seeds": seeds, "methods": methods}

    @on(Button.Pressed, "#run")
    def _run_pressed(self) -> None:
        self.action_run()

    @work(thread=True, exclusive=True, group="study", exit_on_error=False)
    def _run_study(self, study: str, criterion: str, splits: int,
                   options: dict[str, Any] | None = None) -> tuple[str, str, Any, Any]:
        # The IRT fits are not interruptible: a cancelled IRT study runs to its end and its result is dropped.
        worker = get_current_worker()
        table = self.table
        if study == "irt":
            from relgate_tui.engine.judging.studies import build_study

            return study, criterion, build_study(table, judge=None, criterion=criterion, prior="mml",
                                                 original="original"), None

        def progress(done: int, total: int) -> None:
            if worker.is_cancelled:
                raise StudyCancelled
            self.app.call_from_thread(self._progress, done, total)

        if study == "intervals":
            from relgate_tui.engine.judging.studies import load_input

            opts = options or {}
            inp, labels = load_input(self.loaded_path or "", judge=opts["judge"], criterion=criterion, variant=None,
                                     grid="auto", alpha=opts["alpha"], table=table)
            self.app.call_from_thread(self._progress, 0, 2 * opts["seeds"])  # the seeds, then the curve's
            return study, criterion, run_intervals(inp, opts["methods"], opts["alpha"], opts["seeds"], labels,
                                                   progress), inp
        from relgate_tui.engine.judging.studies import build_data

        data, texts = build_data(table, criterion)
        return study, criterion, run_jury(data, texts, splits, self.n_search, progress), data

    def _progress(self, done: int, total: int) -> None:
        if self.state != "running":
            return
        self.query_one("#progress", ProgressBar).update(total=total, progress=done)
        if self.running == "intervals":
            seeds = self.running_seeds
            if done <= seeds:
                self._status(f"running the intervals: seed {done} of {seeds}…")
            else:
                self._status(f"calibration-size curve: seed {done - seeds} of {seeds}…")
        else:
            self._status(f"running the jury: split {done} of {total}…")

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        worker, state = event.worker, event.state
        if worker.group == "load" and state in (WorkerState.SUCCESS, WorkerState.ERROR):
            self.state = "idle" if self.state == "loading" else self.state
            if state == WorkerState.SUCCESS:
                path, table = worker.result  # type: ignore[misc]
                self._loaded(path, table)
            else:
                self.table = self.loaded_path = None
                self.query_one("#criterion", Select).set_options([])
                self._status("")
                self._error("#path-error", _one_line(worker.error))
        elif worker.group == "study" and worker is self.worker:
            if state == WorkerState.SUCCESS:
                self._finished(*worker.result)  # type: ignore[misc]
            elif state == WorkerState.ERROR:
                self._stopped("" if isinstance(worker.error, StudyCancelled) else _one_line(worker.error))
            elif state == WorkerState.CANCELLED:
                self._stopped("", "study cancelled")

    def _finished(self, study: str, criterion: str, result: Any, data: Any) -> None:
        self._stopped("", "study finished")
        path = self.loaded_path or ""
        title = f"{Path(path).stem} · {criterion}"
        self.last_view = host(self.app).open_screen("study_view", result, title, source=path,
                                                    export_dir=Path(path).expanduser().parent, data=data,
                                                    criterion=criterion if study == "jury" else "")

    def _stopped(self, error: str, status: str = "") -> None:
        self.state = "idle"
        self.worker = None
        self.query_one("#progress", ProgressBar).display = False
        self._status(status)
        self._error("#run-error", error)

    # ---------------------------------------------------------------------------------------------- escape
    def action_escape(self) -> None:
        if self.state != "running":
            self.workers.cancel_group(self, "load")
            self.dismiss(None)
            return

        def answer(yes: bool | None) -> None:
            if yes and self.worker is not None and self.state == "running":
                self.worker.cancel()

        host(self.app).confirm("Cancel the running study?", answer,
                               "It stops after the current split; nothing is kept.", yes="Cancel it",
                               no="Keep running")

    # ---------------------------------------------------------------------------------------------- helpers
    def _status(self, text: str | Text) -> None:
        self.query_one("#status", Label).update(text if isinstance(text, Text) else Text(text))

    def _error(self, selector: str, message: str) -> None:
        self.query_one(selector, Label).update(Text(plain(message, 300), style="bold red"))


def _one_line(error: BaseException | None) -> str:
    """A user error's own one-line message; anything else with its type (an unexpected error)."""
    from relgate_tui.errors import RelgateError

    if error is None:
        return "unknown error"
    text = " ".join(str(error).split())
    return text if isinstance(error, RelgateError) else f"unexpected error ({type(error).__name__}): {text}"
