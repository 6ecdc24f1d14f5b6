"""The judge audit's results view on a direct study scored on 1–10 with the G-Eval prompt (issue 12 §1): paper 000's
Likert sets assume 1–5, so the view hides their table and says why (the typed result's ``note``)."""

from __future__ import annotations

import asyncio
import dataclasses

from textual.widgets import DataTable

from relgate_tui.engine.judging.audit_run import audit_result
from relgate_tui.tui.app import make_app
from relgate_tui.tui.judge.views import AuditResultsView
from tests.tui.test_judge import SIZE, run_audit, text_of


async def test_a_1_to_10_direct_study_shows_why_it_has_no_likert_sets(services):
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await run_audit(app, pilot, protocol="direct", **{"n-inputs": "3", "n-candidates": "4", "reps": "1"})
        assert screen.query_one("#likert", DataTable).row_count > 0  # 1–5: the sets are there
        cfg = dataclasses.replace(screen.config, prompt="geval", scale=10, max_tokens=400, store=False)
        result = await asyncio.to_thread(audit_result, cfg)
        doc = result.to_json()
        assert doc["direct"]["likert_conformal"] == [] and "1-10" in doc["direct"]["note"]
        screen.query_one(AuditResultsView).show(result, result.cells[0], "demo")
        await pilot.pause()
        assert not screen.query_one("#likert", DataTable).display
        note = text_of(screen, "#likert-note")
        assert "1-5" in note and "1-10" in note and "relgate judge intervals --audit" in note
