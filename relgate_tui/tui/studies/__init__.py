"""TUI views of the judge studies of papers 001 (score intervals), 002 (IRT diagnostics) and 003 (jury-on-demand).

- :mod:`.setup` — the Studies screen (file, criterion, study; runs it in a worker with progress and cancel).
- :mod:`.base` — :class:`StudyView` and :func:`open_study_view` (a view from a study *result* and a title).
- :mod:`.intervals` (with the pure :mod:`.intervals_chart`), :mod:`.irt`, :mod:`.jury` — the three views.
"""

from relgate_tui.tui.studies.base import StudyView, open_study_view

__all__ = ["StudyView", "open_study_view"]
