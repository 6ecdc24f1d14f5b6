"""``StudyView``: the common base of the study result screens, and ``open_study_view`` to pick one for a result.

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
        except (OSError, ValueError) as exc:  # ValueError: the output guard's refusal (a UserError)
            self.notify(plain(f"could not write {name}: {getattr(exc, 'strerror', None) or exc}", 200),
                        title="Export failed",
                        severity="error", markup=False)
            return
        self.exported.append(path)
        self.notify(plain(str(path), 200), title=f"Exported {label}", markup=False)

    def action_back(self) -> None:
        self.dismiss(None)


def open_study_view(result: Any, title: str, *, source: str = "", export_dir: Path | None = None,
                    data: Any = None, audit: Any = None) -> StudyView:
    """The view of ``result``: an :class:`IRTView` for an ``IRTStudy``, a :class:`JuryView` for a ``JuryStudy``
    (``data``, the study's ``JuryData``, adds every judge's score to the item detail), an :class:`IntervalsView` for
    an ``IntervalStudy`` (``data``, its ``StudyInput``, gives the judge's score per item for width vs error).
    ``audit`` (an ``AuditScores``) when the study comes from a stored audit: its JSON then names the audit as the
    commands' ``--audit`` does. Raises ``TypeError`` for anything else."""
    from relgate_tui.core.irt.study import IRTStudy
    from relgate_tui.core.judge_intervals.study import IntervalStudy
    from relgate_tui.core.jury.protocol import JuryStudy

    if isinstance(result, IRTStudy):
        from relgate_tui.tui.studies.irt import IRTView

        return IRTView(result, title, source=source, export_dir=export_dir, audit=audit)
    if isinstance(result, IntervalStudy):
        from relgate_tui.tui.studies.intervals import IntervalsView

        return IntervalsView(result, title, source=source, export_dir=export_dir, data=data, audit=audit)
    if isinstance(result, JuryStudy):
        from relgate_tui.tui.studies.jury import JuryView

        return JuryView(result, title, source=source, export_dir=export_dir, data=data)
    raise TypeError(f"no study view for {type(result).__name__}")
