"""The judge audit screen (issue 9 item 7): :mod:`.setup` (the form), :mod:`.views` (the results view per study and
the cycle viewer), assembled by :mod:`.screen` with the shared progress panel
(:class:`~relgate_tui.tui.widgets.progress.ProgressPanel`).

Also :mod:`.direct_fields` (the direct study's request settings), :mod:`.paraphrase` (the paraphrase variant) and
:mod:`.audit_studies` (papers 001/002 on the audit), and :mod:`.certificate` (the judge certificate's screen).
"""

from relgate_tui.tui.judge.screen import JudgeScreen
from relgate_tui.tui.judge.views import AuditResultsView, CycleViewerModal

__all__ = ["AuditResultsView", "CycleViewerModal", "JudgeScreen"]
