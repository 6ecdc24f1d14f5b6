"""A complete run reopened on the Sampling screen (issue 31 item 15): the bar is full and says so, with the stored
calls — never "✓ sampling complete" under a bar at 0%."""

from __future__ import annotations

from textual.widgets import Label, ProgressBar

from relgate_tui.engine.certification.session import Session
from relgate_tui.tui.app import make_app
from relgate_tui.tui.sampling import SamplingScreen
from tests.tui.runfixtures import stored_run


async def test_a_complete_run_shows_a_full_bar(services) -> None:
    path = stored_run(services.runs_dir, limit=12, n_cal=6, k_max=3)
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = Session.open(path)
        assert session.sampling_complete
        app.push_screen(SamplingScreen(session))
        await pilot.pause()
        screen = app.screen
        bar = screen.query_one("#bar", ProgressBar)
        assert bar.percentage == 1.0
        assert "12 / 12 items" in str(screen.query_one("#count", Label).render())
        assert "sampling complete" in str(screen.query_one("#state").render())
