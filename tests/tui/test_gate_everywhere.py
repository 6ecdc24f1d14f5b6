"""Issue 28 §2: one gate decision on every screen. A run certified with a verification judge and ``--gate-on assisted``,
opened from Runs and labelled in the spot-check: its live panel, Results' verdict, its "Verification judge" tab and
Compare all show the :class:`~relgate_tui.core.certification.gate.GateDecision` that ``decide_gate`` returned — the
one the run's ``results.json`` then holds (what ``relgate certify`` prints and ``relgate report`` shows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, TabbedContent

from relgate_tui.cli import main
from relgate_tui.demo.server import DemoServer
from relgate_tui.engine.certification.run_gate import RunGate
from relgate_tui.engine.certification.session import Session
from relgate_tui.tui.app import make_app
from relgate_tui.tui.compare import CompareScreen
from relgate_tui.tui.results import ResultsScreen
from relgate_tui.tui.spotcheck import SpotCheckScreen


@pytest.fixture
def assisted_run(services, monkeypatch, tmp_path) -> Path:
    lines = Path(__file__).resolve().parents[2].joinpath("assets", "tasks", "gsm8k.jsonl").read_text().splitlines()
    items = [json.loads(line) for line in lines][:30]
    task = tmp_path / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n" for it in items))
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "cli-home"))
    with DemoServer() as server:
        args = ["certify", "--task", str(task), "--endpoint", server.base_url, "--model", "sim-mid", "--canon",
                "numeric", "--k-max", "5", "--quiet", "--run-dir", str(services.runs_dir), "--verify-judge-model",
                "sim-judge", "--gate-on", "assisted", "--min-reliability", "0.5"]
        assert main(args) == 3  # no label yet: not decided (issue 33 §7)
    (run,) = list(services.runs_dir.iterdir())
    return run


async def test_every_screen_shows_the_gate_decision_of_the_results_file(services, assisted_run):
    run = assisted_run
    app = make_app(services)
    async with app.run_test(size=(140, 48)) as pilot:
        session = Session.open(run, cache_dir=app.services.resolved_cache_dir())
        app.session = session
        assert session.gate == RunGate(0.5, "assisted", 0.95)  # the run's own gate, whatever Settings say
        app.push_screen(SpotCheckScreen(session))
        await pilot.pause()
        for _ in range(6):
            await pilot.press("y")
        decision = session.gate_decision(gate=0.5, gate_on="assisted")
        assert decision is not None and decision.gate_on == "assisted" and decision.assisted_lower_bound > 0
        assert f"gate 50%: {decision.summary()}" in str(app.screen.query_one("#progress").render())

        app.show_results(session)
        await pilot.pause()
        results = app.screen
        assert isinstance(results, ResultsScreen)
        doc = json.loads((run / "results.json").read_text())  # written when Results opened (the run changed)
        gate = doc["gate"]
        assert gate == decision.to_json() and doc["judge_assisted"]["n_labels"] == 6
        assert results.view is not None and results.view.result.gate_decision == decision
        verdict = "PASS" if gate["passed"] else "FAIL"
        shown = str(results.query_one("#verdict").render())
        assert verdict in shown and gate["summary"].split(": ", 1)[1] in shown
        results.query_one("#tabs", TabbedContent).active = "tab-assisted"
        await pilot.pause()
        assert f"gate: {gate['summary']}" in str(results.query_one("#assisted").render())

        app.push_screen(CompareScreen([run]))
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        cells = [str(table.get_row_at(i)[1]) for i in range(table.row_count)
                 if str(table.get_row_at(i)[0]) == "gate"]
        assert cells == [verdict]
