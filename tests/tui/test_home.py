"""Home, help panel, confirm modal, settings and the way into the judge audit."""

from __future__ import annotations

import json

from textual.widgets import Input, Select

from relgate_tui.tui.app import make_app
from relgate_tui.tui.confirm import ConfirmModal
from relgate_tui.tui.help import HelpScreen, key_display
from relgate_tui.tui.home import HomeScreen
from relgate_tui.tui.judge import JudgeScreen
from relgate_tui.tui.settings import SettingsScreen


async def test_home_is_first_screen_and_lists_the_four_entries(services):
    app = make_app(services)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        menu = app.screen.query_one("#menu")
        ids = [menu.get_option_at_index(i).id for i in range(menu.option_count)]
        assert ids == ["new", "runs", "review", "judge", "studies", "settings", "quit"]
        assert "0 stored runs" in str(app.screen.query_one("#status").content)


async def test_help_lists_every_key_of_the_screen_and_closes(services):
    app = make_app(services)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = dict(app.screen.screen_rows)
        assert set(keys) == {"n", "o", "v", "j", "t", "s", "q"}
        assert any(k == "? / f1" for k, _ in app.screen.app_rows)
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("f1")
        assert isinstance(app.screen, HomeScreen)


def test_key_display_names():
    assert key_display("question_mark") == "?"
    assert key_display("plus,equals_sign") == "+ / ="
    assert key_display("ctrl+s") == "^s"


async def test_confirm_modal_dismisses_with_the_answer(services):
    answers = []
    app = make_app(services)
    async with app.run_test(size=(100, 32)) as pilot:
        app.push_screen(ConfirmModal("Really?"), callback=answers.append)
        await pilot.pause()
        await pilot.press("y")
        app.push_screen(ConfirmModal("Really?"), callback=answers.append)
        await pilot.pause()
        await pilot.press("n")
        app.push_screen(ConfirmModal("Really?"), callback=answers.append)
        await pilot.pause()
        await pilot.press("escape")
        app.push_screen(ConfirmModal("Really?"), callback=answers.append)
        await pilot.pause()
        await pilot.click("#yes")
        await pilot.pause()
    assert answers == [True, False, False, True]


async def test_settings_are_validated_saved_and_reloaded(services):
    app = make_app(services)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("s")
        assert isinstance(app.screen, SettingsScreen)
        gate = app.screen.query_one("#gate", Input)
        gate.value = "1.5"
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, SettingsScreen)  # rejected: stays, says why
        assert "gate" in str(app.screen.query_one("#error").content)
        gate.value = "0.8"
        app.screen.query_one("#gate-on", Select).value = "level"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        assert app.settings.gate == 0.8
        saved = json.loads(services.settings_path.read_text())
        assert saved["gate"] == 0.8 and saved["gate_on"] == "level" and "gate_basis" not in saved
    app2 = make_app(services)
    async with app2.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert app2.settings.gate == 0.8


async def test_corrupt_settings_file_falls_back_to_defaults(services):
    services.settings_path.parent.mkdir(parents=True, exist_ok=True)
    services.settings_path.write_text("{not json")
    app = make_app(services)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        assert app.settings.gate == 0.9


async def test_judge_audit_opens_on_its_setup_and_escape_goes_back(services):
    app = make_app(services)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("j")
        assert isinstance(app.screen, JudgeScreen)
        assert app.screen.state == "setup"
        assert app.screen.query_one("#judge-parts").current == "judge-setup"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        assert len(app.screen_stack) == 2


async def test_quit_from_home(services):
    app = make_app(services)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0
