"""Compare says it is working before it reads the runs (issue 31 item 16): the title reads "Opening 2 runs …" when
the (slow, disk-bound) opening starts, and the table replaces it."""

from __future__ import annotations

from textual.widgets import Label

from relgate_tui.tui.app import make_app
from relgate_tui.tui.compare import CompareScreen
from tests.tui.runfixtures import stored_run


async def test_compare_shows_that_it_is_opening_the_runs(services, monkeypatch) -> None:
    a = stored_run(services.runs_dir, model="model-a")
    b = stored_run(services.runs_dir, model="model-b", seed=1)
    seen: list[str] = []
    original = CompareScreen._open_runs

    def spy(self: CompareScreen) -> None:
        seen.append(str(self.query_one("#compare-title", Label).render()))
        original(self)

    monkeypatch.setattr(CompareScreen, "_open_runs", spy)
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(CompareScreen([a, b]))
        await pilot.pause()
        await pilot.pause()
        assert seen and seen[0].startswith("Opening 2 runs")
        assert "2 runs at α" in str(app.screen.query_one("#compare-title", Label).render())
