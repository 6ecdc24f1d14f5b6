"""Judge-assisted certification is never a silent dead end (issue 31 item 1): before sampling, Setup says when the
verification judge has nothing to verify (every item has a reference) and offers to verify the calibration items by
hand even where references exist; the demo's task without references needs no such detour."""

from __future__ import annotations

import asyncio

from textual.widgets import Button, Select, Static

from relgate_tui.tui.app import make_app
from relgate_tui.tui.setup import SetupScreen
from tests.tui.test_flow import open_screen


def _text(screen: SetupScreen, wid: str) -> str:
    return str(screen.query_one(wid, Static).render())


async def test_setup_says_the_judge_has_nothing_to_verify_and_offers_verifying_by_hand(services) -> None:
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_screen(app, pilot, "n", SetupScreen)
        assert screen.query_one("#task", Select).value == "bigbench-3digit-addition"
        assert "nothing to verify" not in _text(screen, "#judge-note")  # no judge chosen: nothing said
        screen.query_one("#verify-judge-model", Select).value = "sim-judge"
        await pilot.pause()
        assert "nothing to verify" in _text(screen, "#judge-note")
        button = screen.query_one("#by-hand", Button)
        assert button.display
        button.press()
        await pilot.pause()
        assert screen.query_one("#verification", Select).value == "human"
        assert screen.collect().verification == "human"
        assert "nothing to verify" not in _text(screen, "#judge-note") and not button.display

        screen.query_one("#task", Select).value = "arithmetic-unreferenced"
        screen.query_one("#verification", Select).value = "auto"
        await pilot.pause()
        assert "no references" in _text(screen, "#task-info")
        assert "nothing to verify" not in _text(screen, "#judge-note")  # this task's items are all for the judge


async def test_j_says_why_the_judge_has_no_verdict_on_a_referenced_item(services, tmp_path, monkeypatch) -> None:
    """On a referenced task in "audit" mode the person re-checks reference-verified items the judge was never asked
    about: ``j`` says so and how to have the judge check them, instead of a bare "no verdict"."""
    from relgate_tui.cli import main
    from relgate_tui.demo.server import DemoServer
    from relgate_tui.engine.certification.session import Session
    from relgate_tui.tui.spotcheck import SpotCheckScreen

    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "cli-home"))
    with DemoServer() as server:
        rc = await asyncio.to_thread(main, ["certify", "--task", "bigbench-3digit-addition", "--endpoint", server.base_url, "--model",
                   "sim-mid", "--limit", "20", "--k-max", "3", "--quiet", "--run-dir", str(services.runs_dir),
                   "--verification", "audit", "--audit-fraction", "0.5", "--verify-judge-model", "sim-judge"])
    assert rc in (0, 1)
    (run,) = list(services.runs_dir.iterdir())
    app = make_app(services)
    async with app.run_test(size=(130, 44)) as pilot:
        session = Session.open(run, cache_dir=app.services.resolved_cache_dir())
        app.session = session
        app.push_screen(SpotCheckScreen(session))
        await pilot.pause()
        await pilot.press("y")
        await pilot.press("j")
        await pilot.pause()
        notes = [str(n.message) for n in app._notifications]
        assert any("verifies items without a reference answer only" in n and "by hand" in n for n in notes), notes


async def test_the_preflight_counts_the_verification_judges_calls(services) -> None:
    """Issue 31 item 8: the judge's calls are calls — the pre-flight box counts them (and the calls' easy…hard
    range)."""
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_screen(app, pilot, "n", SetupScreen)
        screen.query_one("#task", Select).value = "arithmetic-unreferenced"
        screen.query_one("#verify-judge-model", Select).value = "sim-judge"
        await pilot.pause()
        box = _text(screen, "#preflight")
        assert "judge calls 100" in box and "calls (" in box
