"""Spot-check with a verification judge (issue 22 §4): the label stays blind (the judge's verdict on the item on
screen is never shown; ``j`` reveals it only for the item just labelled, and not after that label is undone), and
the live panel counts "≈ m more labels needed" with the judge-assisted bound. The run is made by the real pipeline
against the demo server (sim-mid answering a task without references, sim-judge verifying)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.core import ppi
from relgate_tui.demo.server import DemoServer
from relgate_tui.engine.certification.session import Session
from relgate_tui.tui.app import make_app
from relgate_tui.tui.spotcheck import SpotCheckScreen


@pytest.fixture
def judged_run(services, monkeypatch, tmp_path) -> Path:
    lines = Path(__file__).resolve().parents[2].joinpath("assets", "tasks", "gsm8k.jsonl").read_text().splitlines()
    items = [json.loads(line) for line in lines][:40]
    task = tmp_path / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n" for it in items))
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "cli-home"))
    with DemoServer() as server:
        rc = main(["certify", "--task", str(task), "--endpoint", server.base_url, "--model", "sim-mid", "--canon",
                   "numeric", "--k-max", "5", "--quiet", "--run-dir", str(services.runs_dir),
                   "--verify-judge-model", "sim-judge", "--min-reliability", "0.5"])
    assert rc == 3  # the run's gate (judge-assisted, 50%): no label yet, not decided
    (run,) = list(services.runs_dir.iterdir())
    return run


def _progress(app) -> str:
    return str(app.screen.query_one("#progress").render())


def _last(app) -> str:
    return str(app.screen.query_one("#last").render())


async def test_label_is_blind_and_j_reveals_only_the_item_just_labelled(services, judged_run):
    app = make_app(services)
    async with app.run_test(size=(130, 44)) as pilot:
        session = Session.open(judged_run, cache_dir=app.services.resolved_cache_dir())
        app.session = session
        app.push_screen(SpotCheckScreen(session))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SpotCheckScreen)
        on_screen = screen.current
        assert session.verify_verdict(on_screen) is not None  # the judge has a verdict ...
        await pilot.press("j")  # ... but nothing is revealed before a label
        assert "judge on" not in _last(app)
        await pilot.press("y")
        labelled, now_showing = on_screen, screen.current
        await pilot.press("j")
        revealed = _last(app)
        verdict = session.verify_verdict(labelled)
        assert f"judge on {labelled}: " in revealed
        assert ("correct" if verdict.f else "wrong") in revealed
        assert now_showing not in revealed
        # undo brings the item back on screen: its verdict is hidden again
        await pilot.press("u")
        assert screen.current == labelled
        await pilot.press("j")
        assert "judge on" not in _last(app)


async def test_live_panel_counts_more_labels_with_the_assisted_bound(services, judged_run):
    """Issue 37 §4: the run's gate is on the judge-assisted bound, so the panel shows that decision — the one
    Results shows — and one plan line, the assisted bound's "≈ m more labels" (never the human-only plan beside it)."""
    app = make_app(services)
    async with app.run_test(size=(130, 44)) as pilot:
        app.settings = type(app.settings)(**{**app.settings.__dict__, "gate": 0.9})  # Settings play no part
        session = Session.open(judged_run, cache_dir=app.services.resolved_cache_dir())
        app.session = session
        app.push_screen(SpotCheckScreen(session))
        await pilot.pause()
        for _ in range(5):
            await pilot.press("y")
        text = _progress(app)
        section = session.assisted(0.95, 0.5)
        decision = session.gate_decision(gate=0.5, gate_on="assisted")
        assert section is not None and section.n_labels == 5 and section.lower_bound is not None
        assert decision is not None and decision.gate_on == "assisted" and decision.passed is False
        assert f"≥ {100 * decision.value:.1f}% 95% judge-assisted lower bound" in text
        gates = [line for line in text.splitlines() if line.startswith("gate ")]
        assert gates == [f"gate 50%: {decision.summary()}"]
        more = section.more_labels
        assert more is not None and more > 0
        plans = [line for line in text.splitlines() if "more labels" in line or "will not clear" in line]
        assert plans == [section.more_labels_message] and f"≈ {more} more labels needed" in plans[0]
        # the count is the core's estimate on exactly the labels on disk
        from relgate_tui.engine.certification.assisted import labelled_arrays

        f_all, f_lab, y_lab = labelled_arrays(section.to_json()["verdicts"])  # the results file's rows
        assert all((a == b).all() for a, b in zip(section.arrays(), (f_all, f_lab, y_lab), strict=True))
        assert ppi.more_labels_needed(f_all, f_lab, y_lab, 0.5, 0.95) == more


async def test_verification_judge_from_setup_to_results(services, tmp_path):
    """Issue 22 end to end in the TUI: chosen in Setup (a task file without references, the demo endpoint), asked
    after sampling, blind in the spot-check, and shown in the results' "Verification judge" tab."""
    from textual.widgets import Input, Select, TabbedContent

    from relgate_tui.engine.certification.setup import RunSetup
    from relgate_tui.tui.results import ResultsScreen
    from relgate_tui.tui.sampling import SamplingScreen
    from relgate_tui.tui.setup import TASK_FILE
    from tests.tui.test_flow import fill_setup, focus_on, wait_until

    lines = Path(__file__).resolve().parents[2].joinpath("assets", "tasks", "gsm8k.jsonl").read_text().splitlines()
    task = tmp_path / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n"
                            for it in (json.loads(line) for line in lines[:16])))
    app = make_app(services)
    async with app.run_test(size=(130, 44)) as pilot:
        await pilot.pause()
        setup = await fill_setup(app, pilot, items="16", n_cal="8", k_max="4", verification="auto")
        setup.query_one("#task", Select).value = TASK_FILE
        await pilot.pause()
        path_input = setup.query_one("#task-path", Input)
        path_input.value = str(task)
        await focus_on(pilot, path_input)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        setup.query_one("#canon", Select).value = "numeric"
        verify = setup.query_one("#verify-judge-model", Select)
        await wait_until(pilot, lambda: any(v == "sim-judge" for _, v in verify._options), what="judge models")
        assert verify.value == "__none__"  # off by default
        verify.value = "sim-judge"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        chosen = app.history[-1][1]
        assert isinstance(chosen, RunSetup) and chosen.verify_judge_model == "sim-judge"
        sampling = app.screen
        assert isinstance(sampling, SamplingScreen)
        await wait_until(pilot, lambda: sampling.state == "finished", what="sampling and verifying")
        session = sampling.session
        stored = json.loads((session.path / "verify_verdicts.json").read_text())
        assert stored["judge"]["model"] == "sim-judge" and len(stored["items"]) == 16
        await pilot.press("enter")
        spot = app.screen
        assert isinstance(spot, SpotCheckScreen)
        while isinstance(app.screen, SpotCheckScreen) and spot.queue:
            await pilot.press("y" if spot.view.candidates else "x")
        await wait_until(pilot, lambda: isinstance(app.screen, ResultsScreen), what="results")
        results = app.screen
        results.query_one("#tabs", TabbedContent).active = "tab-assisted"
        await pilot.pause()
        text = str(results.query_one("#assisted").render())
        section = session.assisted(0.95, results.gate)
        assert section is not None and section.n_labels == 8 and section.n_judged == 16
        assert section.lower_bound is not None and section.agreement is not None
        assert f"≥ {100 * section.lower_bound:.1f}% with 95% confidence" in text
        assert f"false accepts {section.agreement.yes_no} of" in text
        assert section.to_json()["agreement"]["table"]["judge_yes_human_no"] == section.agreement.yes_no
        # issue 37 §3: the gate belongs to the run — made in Setup with the verification judge, it is on the
        # judge-assisted bound at the Settings threshold, and Results keeps it (today's code wrote "bound")
        manifest = json.loads((session.path / "manifest.json").read_text())
        assert (manifest["config"]["gate_on"], manifest["config"]["min_reliability"]) == ("assisted", 0.9)
        doc = json.loads((session.path / "results.json").read_text())
        assert doc["gate_on"] == doc["gate"]["gate_on"] == "assisted" and doc["min_reliability"] == 0.9
        assert results.view.result.gate_decision.to_json() == doc["gate"]
        before = (session.path / "results.json").read_bytes()
        await pilot.press("escape")
        app.show_results(session)  # opened again: shown against the run's gate, the file unchanged
        await wait_until(pilot, lambda: isinstance(app.screen, ResultsScreen) and app.screen is not results,
                         what="results again")
        assert app.screen.gate_on == "assisted" and not app.screen.what_if
        assert (session.path / "results.json").read_bytes() == before
