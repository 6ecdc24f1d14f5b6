"""TUI views of the judge studies of papers 001 (score intervals), 002 (IRT diagnostics) and 003 (jury-on-demand).

- :mod:`.setup` — the Studies screen (file, criterion, study; runs it in a worker with progress and cancel).
- :mod:`.base` — :class:`StudyView`, the common base of the three views (it imports none of them).
- :mod:`.intervals` (with the pure :mod:`.intervals_chart`), :mod:`.irt`, :mod:`.jury` — the three views.
- :func:`open_study_view` (here) — the view for a study *result* and a title; it imports the view it needs.

Also :mod:`.picker` (the scores-file picker) and :mod:`.screenshots` (the README's screenshots of the views).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from relgate_tui.tui.studies.base import StudyView

__all__ = ["StudyView", "open_study_view"]


def open_study_view(result: Any, title: str, *, source: str = "", export_dir: Path | None = None,
                    data: Any = None, audit: Any = None, criterion: str = "") -> StudyView:
    """The view of ``result``: an :class:`IRTView` for an ``IRTStudy``, a :class:`JuryView` for a ``JuryStudy``
    (``data``, the study's ``JuryData``, adds every judge's score to the item detail), an :class:`IntervalsView` for
    an ``IntervalStudy`` (``data``, its ``StudyInput``, gives the judge's score per item for width vs error).
    ``audit`` (an ``AuditScores``) when the study comes from a stored audit: its JSON then names the audit as the
    commands' ``--audit`` does; ``criterion``, a jury study's criterion, is named in its JSON. Raises ``TypeError`` for anything else."""
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

        return JuryView(result, title, source=source, export_dir=export_dir, data=data, criterion=criterion)
    raise TypeError(f"no study view for {type(result).__name__}")
