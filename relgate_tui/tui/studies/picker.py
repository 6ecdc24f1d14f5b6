"""The Studies screen's file picker (issue 24 §6): a judge scores file from a directory tree (only ``.jsonl`` /
``.csv`` files and folders), or a stored judge audit (its direct scores, as ``relgate audits ID --scores``) from the
list of audits in the data dir. Dismisses with the chosen path (a file, or an audit's directory) or None."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Label, OptionList
from textual.widgets.option_list import Option

from relgate_tui.tui.studies.common import plain
from relgate_tui.tui.widgets.filetree import SuffixTree
from relgate_tui.tui.widgets.footer import StockFooter

__all__ = ["ScoresPicker", "ScoresTree", "examples_dir"]

SUFFIXES = (".jsonl", ".csv")


def examples_dir() -> Path | None:
    """The checkout's ``examples/`` folder (example judge scores files), when relgate runs from one."""
    path = Path(__file__).resolve().parents[3] / "examples"
    return path if path.is_dir() else None


class ScoresTree(SuffixTree):
    """Folders and judge scores files (hidden entries left out)."""

    suffixes = SUFFIXES


class ScoresPicker(ModalScreen["str | None"]):
    """Pick a judge scores file (tree) or a stored audit (list)."""

    DEFAULT_CSS = """
    ScoresPicker { align: center middle; background: $background 60%; }
    ScoresPicker #picker-box { width: 90%; height: 90%; padding: 0 1; border: thick $primary; background: $surface; }
    ScoresPicker #picker-body { height: 1fr; }
    ScoresPicker #picker-tree { width: 1fr; height: 1fr; }
    ScoresPicker #picker-audits { width: 1fr; height: 1fr; }
    ScoresPicker .picker-title { text-style: bold; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="picker.cancel", tooltip="Close without choosing")]

    def __init__(self, start_dir: Path | None = None, audits_root: Path | None = None) -> None:
        super().__init__()
        self.start_dir = start_dir if start_dir is not None else (examples_dir() or Path.cwd())
        self.audits_root = audits_root

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-box"):
            yield Label("Open a judge scores file (Enter on a file) or a stored audit", classes="picker-title")
            with Horizontal(id="picker-body"):
                yield ScoresTree(self.start_dir, id="picker-tree")
                with Vertical(id="picker-audits"):
                    yield Label("Stored audits (direct scores)", classes="picker-title")
                    yield OptionList(id="picker-audit-list")
            yield StockFooter()

    def on_mount(self) -> None:
        from relgate_tui.engine.judging import list_audits

        options = self.query_one("#picker-audit-list", OptionList)
        try:
            audits = list_audits(self.audits_root)
        except (OSError, ValueError):
            audits = []
        for a in audits:
            if a.protocol in ("direct", "both"):
                label = Text(f"{plain(a.id, 60)}  {plain(', '.join(a.judges), 40)} · {plain(', '.join(a.variants), 30)}")
                options.add_option(Option(label, id=str(a.path)))
        if not options.option_count:
            options.add_option(Option(Text("no stored audit with direct scores", style="dim"), disabled=True))
        self.query_one("#picker-tree", ScoresTree).focus()

    @on(DirectoryTree.FileSelected, "#picker-tree")
    def _file(self, event: DirectoryTree.FileSelected) -> None:
        self.dismiss(str(event.path))

    @on(OptionList.OptionSelected, "#picker-audit-list")
    def _audit(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
