"""Team review (issue 21), the pure part: verdict codes, finalisation under a policy, inter-reviewer agreement.

No IO: the store (:mod:`relgate_tui.engine.review`) hands these functions plain mappings.

Module: :mod:`.verdicts` (verdict codes, finalisation, agreement).
"""
