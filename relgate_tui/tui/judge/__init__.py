"""The judge audit screen (issue 9 item 7): :mod:`.setup` (the form), :mod:`.run` (the progress panel), :mod:`.views`
(the results view per study and the cycle viewer), assembled by :mod:`.screen`."""

from relgate_tui.tui.judge.screen import JudgeScreen
from relgate_tui.tui.judge.views import AuditResultsView, CycleViewerModal

__all__ = ["AuditResultsView", "CycleViewerModal", "JudgeScreen"]
