"""The import dialog (issue 31 items 24 and 14): the path field has the focus and Tab goes on to the task name (the
kind select comes last, so typed text never lands in it); a run imported by the CLI with a gate keeps it when the
TUI imports the same log again — its FAIL never turns into "no gate"."""

from __future__ import annotations

import json

from textual.widgets import Input

from relgate_tui.cli import main
from relgate_tui.engine.runs.listing import list_runs
from relgate_tui.tui.app import make_app
from relgate_tui.tui.importer import ImportScreen
from tests.tui.test_import_screen import SEEDED, _import_modal, _settle


async def test_the_path_has_the_focus_and_tab_goes_to_the_task_name(services) -> None:
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        modal = await _import_modal(app, pilot)
        assert app.focused is modal.query_one("#import-path", Input)
        await pilot.press("x")
        await pilot.press("tab")
        assert app.focused is modal.query_one("#import-task", Input)
        await pilot.press("a", "b")
        assert modal.query_one("#import-task", Input).value == "ab"
        assert modal.query_one("#import-path", Input).value == "x"


async def test_a_tui_reimport_keeps_the_cli_gate(services) -> None:
    assert main(["import", "lm-eval", str(SEEDED), "--run-dir", str(services.runs_dir), "--min-reliability", "0.99",
                 "--quiet"]) == 1  # FAIL
    (before,) = list_runs(services.runs_dir)
    assert before.gate_text == "FAIL"
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        modal = await _import_modal(app, pilot)
        assert isinstance(modal, ImportScreen)
        modal.query_one("#import-path", Input).value = str(SEEDED)
        await _settle(app, pilot)
        await pilot.press("ctrl+s")
        await _settle(app, pilot)
        await _settle(app, pilot)
    (after,) = list_runs(services.runs_dir)
    assert after.run_id == before.run_id
    doc = json.loads((after.path / "results.json").read_text())
    assert doc["min_reliability"] == 0.99 and doc["passed"] is False
    assert after.gate_text == "FAIL"
