"""``StudyView``: the common base of the study result screens (``open_study_view`` in the package picks one).

A view takes the study *result* object (``IntervalStudy`` of paper 001, ``IRTStudy`` of paper 002, ``JuryStudy`` of
paper 003) and a title, never a file: the Studies screen builds results from a judge scores file, the judge audit
screen from a stored audit, and both call :func:`open_study_view`. ``j`` writes the JSON document and ``m`` a
Markdown report into ``export_dir`` (default: the current directory); ``Escape`` goes back (dismisses with None).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.binding import Binding
from textual.screen import Screen

from relgate_tui.tui.studies.common import file_stem, plain, write_export

EXPORTS = {"json": ("json", "JSON"), "md": ("md", "Markdown"), "csv": ("csv", "CSV")}


class StudyView(Screen[None]):
    """Base of the study views: subclasses define ``KIND``, :meth:`document` and :meth:`markdown`."""

    KIND: ClassVar[str] = "study"
    BINDINGS = [
        Binding("j", "export('json')", "JSON", id="study.json", tooltip="Write the study's JSON document"),
        Binding("m", "export('md')", "Markdown", id="study.markdown", tooltip="Write a Markdown report"),
        Binding("escape", "back", "Back", id="study.back", tooltip="Back"),
    ]

    def __init__(self, result: Any, title: str, *, source: str = "", export_dir: Path | None = None) -> None:
        super().__init__()
        self.result = result
        self.title_text = plain(title, 100)
        self.source = source
        self.export_dir = Path(export_dir) if export_dir is not None else Path.cwd()
        self.exported: list[Path] = []

    def document(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def markdown(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def export_text(self, fmt: str) -> str:
        """The text of export ``fmt`` (``json``: :meth:`document` through ``core/jsonsafe``; ``md``: :meth:`markdown`;
        a subclass adds its own formats, e.g. ``csv``)."""
        from relgate_tui.core.jsonsafe import dumps

        return dumps(self.document()) if fmt == "json" else self.markdown()

    def action_export(self, fmt: str) -> None:
        ext, label = EXPORTS.get(fmt, ("md", "Markdown"))
        name = f"{file_stem(self.title_text)}.{self.KIND}.{ext}"
        try:
            path = write_export(self.export_dir, name, self.export_text(fmt))
        except OSError as exc:
            self.notify(plain(f"could not write {name}: {exc.strerror or exc}", 200), title="Export failed",
                        severity="error", markup=False)
            return
        self.exported.append(path)
        self.notify(plain(str(path), 200), title=f"Exported {label}", markup=False)

    def action_back(self) -> None:
        self.dismiss(None)
