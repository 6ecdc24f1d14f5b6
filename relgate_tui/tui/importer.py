"""Import… (issue 15): a modal that turns another tool's log into a run, from the Runs screen.

A file picker (a ``DirectoryTree`` showing only ``.jsonl`` / ``.json`` / ``.eval`` files, plus a path input), the
source kind (auto-detected from the file, overridable: lm-eval / inspect / samples), an optional task name and
canonicalizer. ``ctrl+s`` imports in a thread worker through the very functions ``relgate import`` uses
(:func:`~relgate_tui.engine.importers.load_log` then :func:`~relgate_tui.engine.importers.run.import_log`), so the
run is built in a hidden temporary directory and renamed into place only when complete: a bad file leaves a
one-line error here and nothing in the run store.

Dismisses with an :class:`ImportDone` (the new run's directory, id and a one-line summary of its import flags), or
None (Escape). Escape during an import closes the modal at once; the import thread cannot be interrupted, so it
finishes (or fails) on its own and, being atomic, either adds a complete run or nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Input, Label, Select, Static
from textual.worker import Worker, WorkerState

from relgate_tui.tui.widgets.filetree import SuffixTree
from relgate_tui.tui.widgets.footer import StockFooter
from relgate_tui.tui.widgets.safetext import safe_line

if TYPE_CHECKING:
    from relgate_tui.engine.certification.result import RunResult

__all__ = ["ImportDone", "ImportScreen", "LogTree", "detect_kind", "flags_summary"]

SUFFIXES = (".jsonl", ".json", ".eval")
KIND_OPTIONS = [("lm-eval (--log_samples)", "lm-eval"), ("Inspect log (.json / .eval)", "inspect"),
                ("samples JSONL", "samples")]
_SNIFF_BYTES = 64 * 1024


@dataclass(frozen=True)
class ImportDone:
    """What the modal hands back: the run directory, its id and a one-line summary (items, flags)."""

    path: Path
    run_id: str
    summary: str


def detect_kind(path: Path) -> str | None:
    """The importer a file most likely needs, from its name and first bytes (at most 64 KiB read), or None.

    ``.eval`` is an Inspect ZIP; a document starting with ``[`` is lm-eval's 0.4.0–0.4.2 array form; an object
    with ``eval`` and ``samples`` is an Inspect ``.json`` log; a JSONL line with ``resps`` or ``doc_id`` is lm-eval,
    one with ``samples`` the generic samples file. A guess only: the user can override it, and the importer itself
    rejects a file that is not what it expects with a one-line error.
    """
    if path.suffix.lower() == ".eval":
        return "inspect"
    if path.is_dir():  # an lm-eval output folder, or its root (one folder per model), as `relgate import` takes it
        try:
            found = any(path.glob("samples_*.json*")) or any(path.glob("*/samples_*.json*"))
        except OSError:
            return None
        return "lm-eval" if found else None
    try:
        with path.open("rb") as f:
            head = f.read(_SNIFF_BYTES).decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    except OSError:
        return None
    if head.startswith("["):
        return "lm-eval"
    first = head.split("\n", 1)[0]
    if head.startswith("{") and path.suffix.lower() == ".json":
        if '"eval"' in head and '"samples"' in head or '"eval":' in first:
            return "inspect"
        return None
    if '"resps"' in first or '"doc_id"' in first:
        return "lm-eval"
    if '"samples"' in first:
        return "samples"
    return None


def flags_summary(r: RunResult) -> str:
    """One line: items, K, source tool and the import flags, e.g. ``12 items flagged: fixed seed``."""
    imp = r.imported
    k = "?" if imp is None or imp.k is None else imp.k
    head = f"imported {r.task.items} items × K = {k} from {'?' if imp is None else imp.tool}"
    if imp is None or not imp.n_flagged:
        return head + "; no items flagged"
    named = [(f.replace("_", " "), c) for f, c in imp.flags]
    detail = named[0][0] if len(named) == 1 else ", ".join(f"{n} {c}" for n, c in named)
    return f"{head}; {imp.n_flagged} item{'s' if imp.n_flagged != 1 else ''} flagged: {detail}"


class LogTree(SuffixTree):
    """A directory tree listing folders and the files an importer can read (hidden entries left out)."""

    suffixes = SUFFIXES


def _one_line(error: BaseException | None) -> str:
    from relgate_tui.errors import RelgateError

    if isinstance(error, RelgateError):
        text = str(error)
    else:
        text = f"{type(error).__name__}: {error}"
    return " ".join(text.split())[:300]


class ImportScreen(ModalScreen["ImportDone | None"]):
    CSS_PATH = "importer.tcss"
    BINDINGS = [
        Binding("ctrl+s", "run_import", "Import", id="import.run", priority=True,
                tooltip="Import the chosen log into a new run (no model calls)"),
        Binding("escape", "cancel", "Cancel", id="import.cancel", tooltip="Close without importing"),
    ]
    HELP = ("Import a log another tool wrote (lm-evaluation-harness --log_samples, Inspect .json/.eval, samples "
            "JSONL) into a run, certified with zero model calls. Pick a file in the tree or type its path.")
    HELP_TITLE = "Import…"

    AUTO_FOCUS = "#import-path"  # typing a path works at once (issue 31 item 24); the tree is one Shift+Tab away

    def __init__(self, runs_dir: Path, start_dir: Path | None = None) -> None:
        super().__init__()
        self.runs_dir = Path(runs_dir)
        self.start_dir = Path(start_dir) if start_dir is not None else Path.cwd()

    def compose(self) -> ComposeResult:
        with Vertical(id="import-box"):
            yield Label("Import a log (lm-eval · Inspect · samples) — zero model calls", id="import-title")
            yield LogTree(self.start_dir, id="import-tree")
            yield Input(placeholder="path of the log file (or an lm-eval output folder)", id="import-path")
            with Horizontal(id="import-row"):  # Tab from the path goes to the text fields first, the kind last
                yield Input(placeholder="task (optional)", id="import-task")
                yield Input(placeholder="canon (suggested)", id="import-canon",
                            tooltip="numeric | mcq | text | regex:PATTERN; empty: suggested from the log")
                yield Select(KIND_OPTIONS, prompt="source kind", id="import-kind")
            yield Static("", id="import-error")
            yield Static("", id="import-status")
            yield StockFooter()

    def on_mount(self) -> None:
        self.query_one("#import-path", Input).focus()

    # choosing a file ---------------------------------------------------------------------------------------------

    @on(DirectoryTree.FileSelected, "#import-tree")
    @on(DirectoryTree.DirectorySelected, "#import-tree")
    def _file_chosen(self, event: DirectoryTree.FileSelected | DirectoryTree.DirectorySelected) -> None:
        self.query_one("#import-path", Input).value = str(event.path)  # a folder: an lm-eval output (root)

    @on(Input.Changed, "#import-path")
    def _path_changed(self, event: Input.Changed) -> None:
        self.query_one("#import-error", Static).update("")
        path = Path(event.value.strip()).expanduser()
        kind = detect_kind(path) if event.value.strip() and path.exists() else None
        status = self.query_one("#import-status", Static)
        if kind is not None:
            self.query_one("#import-kind", Select).value = kind
            status.update(safe_line(f"detected: {kind} (change it above if wrong)", style="dim"))
        else:
            status.update("")

    # importing ---------------------------------------------------------------------------------------------------

    def action_run_import(self) -> None:
        raw = self.query_one("#import-path", Input).value.strip()
        kind = self.query_one("#import-kind", Select).value
        error = self.query_one("#import-error", Static)
        if not raw:
            error.update(safe_line("choose a log file in the tree or type its path", style="bold red"))
            return
        path = Path(raw).expanduser()
        if kind == Select.NULL or not isinstance(kind, str):
            detected = detect_kind(path) if path.exists() else None
            if detected is None:
                error.update(safe_line(f"{path}: choose the source kind (lm-eval, inspect or samples)",
                                       style="bold red"))
                return
            kind = detected
        task = self.query_one("#import-task", Input).value.strip() or None
        canon = self.query_one("#import-canon", Input).value.strip() or None
        error.update("")
        self.query_one("#import-status", Static).update(safe_line(f"importing {path} as {kind} …", style="dim"))
        self._import(kind, path, task, canon)

    @work(thread=True, exclusive=True, group="import", exit_on_error=False)
    def _import(self, kind: str, path: Path, task: str | None, canon: str | None) -> ImportDone:
        from relgate_tui.engine.importers import load_log
        from relgate_tui.engine.importers.run import ImportOptions, import_log, level_counts

        log = load_log(kind, path, task)
        outcome = import_log(log, ImportOptions(canon=canon, run_dir=str(self.runs_dir)))
        result = outcome.result
        summary = flags_summary(result) + ("; run already existed, results recomputed" if outcome.reused else "")
        counts = level_counts(result)
        if counts is not None:  # issue 31 item 26: the tool's k/n, from the integer counts
            k, n = counts
            summary += f"; level {k}/{n + 1} (an accuracy of {k}/{n})"
        return ImportDone(outcome.run_path, result.run_id, summary)

    @on(Worker.StateChanged)
    def _import_state(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "import":
            return
        if event.state == WorkerState.SUCCESS and isinstance(event.worker.result, ImportDone):
            self.dismiss(event.worker.result)
        elif event.state == WorkerState.ERROR:
            self.query_one("#import-status", Static).update("")
            self.query_one("#import-error", Static).update(safe_line(_one_line(event.worker.error),
                                                                     style="bold red"))

    def action_cancel(self) -> None:
        self.workers.cancel_group(self, "import")
        self.dismiss(None)
