"""The Results' verification-judge panel flags a constant judge (issue 31 item 7): sim-mid asked to verify answers
replies with numbers, never "yes" — every verdict is "no"."""

from __future__ import annotations

import json
from pathlib import Path

from relgate_tui.demo.server import DemoServer


async def test_the_results_panel_shows_the_warning(services, tmp_path: Path, monkeypatch) -> None:
    import asyncio

    from textual.widgets import TabbedContent

    from relgate_tui.cli import main
    from relgate_tui.engine.certification.session import Session
    from relgate_tui.tui.app import make_app
    from relgate_tui.tui.results import ResultsScreen

    task = tmp_path / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is {100 + i} plus {300 + 2 * i}?"}) + "\n"
                            for i in range(12)))
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "cli-home"))
    with DemoServer() as server:
        rc = await asyncio.to_thread(main, ["certify", "--task", str(task), "--endpoint", server.base_url, "--model",
                                            "sim-mid", "--k-max", "3", "--quiet", "--run-dir",
                                            str(services.runs_dir), "--verify-judge-model", "sim-mid"])
    assert rc in (0, 1, 3)
    (run,) = list(services.runs_dir.iterdir())
    app = make_app(services)
    async with app.run_test(size=(130, 44)) as pilot:
        session = Session.open(run)
        app.session = session
        app.push_screen(ResultsScreen(session))
        await pilot.pause()
        app.screen.query_one("#tabs", TabbedContent).active = "tab-assisted"
        await pilot.pause()
        text = str(app.screen.query_one("#assisted").render())
        assert 'said "no" to all 12 items' in text


async def test_a_key_opens_the_verification_judge_tab(services) -> None:
    """Issue 31 item 20: the Results' "Verification judge" tab has a key, `a` (and back to the items)."""
    from textual.widgets import TabbedContent

    from relgate_tui.engine.certification.session import Session
    from relgate_tui.tui.app import make_app
    from relgate_tui.tui.results import ResultsScreen
    from tests.tui.runfixtures import stored_run

    path = stored_run(services.runs_dir)
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = Session.open(path)
        app.session = session
        app.push_screen(ResultsScreen(session))
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        assert app.screen.query_one("#tabs", TabbedContent).active == "tab-assisted"
        await pilot.press("a")
        await pilot.pause()
        assert app.screen.query_one("#tabs", TabbedContent).active == "tab-items"
