"""Command palette (export, open run folder; the theme picker is Textual's own) and the help panel on every
screen."""

from __future__ import annotations

import json
from pathlib import Path

from textual.command import CommandList, CommandPalette
from textual.widgets import Input
from textual.worker import WorkerState

from relgate_tui.engine.certification.session import Session
from relgate_tui.tui.app import make_app
from relgate_tui.tui.compare import CompareScreen
from relgate_tui.tui.help import HelpScreen
from relgate_tui.tui.itemsamples import ItemSamplesModal
from relgate_tui.tui.results import ResultsScreen
from relgate_tui.tui.runs import RunsScreen
from relgate_tui.tui.sampling import SamplingScreen
from relgate_tui.tui.settings import SettingsScreen
from relgate_tui.tui.setup import SetupScreen
from relgate_tui.tui.spotcheck import SpotCheckScreen
from tests.tui.runfixtures import stored_run
from tests.tui.test_flow import wait_until


async def run_palette_command(pilot, text: str) -> None:
    """Type ``text`` into the command palette, wait for its search (a worker) to list the hits, Enter on the first."""
    await pilot.press("ctrl+p")
    palette = pilot.app.screen
    assert isinstance(palette, CommandPalette)
    await pilot.press(*text)
    hits = palette.query_one(CommandList)

    def searched() -> bool:
        searching = any(w.node is palette and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
                        for w in pilot.app.workers)
        return not searching and palette.query_one(Input).value == text and hits.option_count > 0

    await wait_until(pilot, searched, what=f"the palette's hits for {text!r}")
    await pilot.press("enter")
    await wait_until(pilot, lambda: pilot.app.screen is not palette, what="the palette to run the command")


async def test_palette_exports_and_opens_the_run_folder(services):
    path = stored_run(services.runs_dir)
    app = make_app(services)
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        session = Session.open(path)
        app.session = session
        app.push_screen(ResultsScreen(session, gate=0.9))
        await pilot.pause()
        await run_palette_command(pilot, "json")
        assert isinstance(app.screen, ResultsScreen)
        exported = sorted((path / "exports").glob("*.json"))
        assert len(exported) == 1
        assert json.loads(exported[0].read_text())["run_id"] == path.name
        await run_palette_command(pilot, "markdown")
        assert sorted((path / "exports").glob("*.md"))
        await run_palette_command(pilot, "folder")
        assert copied == [str(path)]
        session.close()


async def test_help_panel_on_every_screen(services):
    path = stored_run(services.runs_dir)
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:

        async def help_lists(*keys: str, key: str = "question_mark") -> None:
            await pilot.pause()
            screen = app.screen
            await pilot.press(key)
            assert isinstance(app.screen, HelpScreen), type(screen).__name__
            listed = {k for k, _ in app.screen.screen_rows}
            assert set(keys) <= listed, (type(screen).__name__, listed)
            await pilot.press("escape")
            assert app.screen is screen

        await help_lists("n", "o", "j", "s", "q")  # home
        await pilot.press("s")
        assert isinstance(app.screen, SettingsScreen)
        await help_lists("^s", "Esc", key="f1")  # an Input has focus: F1
        await pilot.press("escape")
        await pilot.press("n")
        assert isinstance(app.screen, SetupScreen)
        await app.workers.wait_for_complete()
        await help_lists("^s", "^l", "Esc", key="f1")
        await pilot.press("escape")
        await pilot.press("o")
        assert isinstance(app.screen, RunsScreen)
        await app.workers.wait_for_complete()
        await help_lists("o", "r", "Space", "c", "Esc")
        await pilot.press("escape")

        session = Session.open(path)
        app.session = session
        app.push_screen(SamplingScreen(session, autostart=False))
        await help_lists("p", "Esc", "Enter / c")
        app.pop_screen()
        app.push_screen(SpotCheckScreen(session))
        await help_lists("y", "n", "x", "s", "u", "e", "Esc")
        await pilot.press("e")
        assert isinstance(app.screen, ItemSamplesModal)
        await help_lists("Esc / e / q")
        await pilot.press("escape")
        app.pop_screen()
        app.push_screen(ResultsScreen(session))
        await help_lists("+ / =", "- / _", "f", "p", "j", "c", "m", "l", "Esc")
        app.pop_screen()
        session.close()
        app.push_screen(CompareScreen([Path(path)]))
        await help_lists("+ / =", "- / _", "Esc")
