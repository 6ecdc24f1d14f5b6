"""The screen registry (issue 19): every screen is opened by name through ``RelgateApp.open_screen``; no screen
module pushes a screen it built itself, and every registered name resolves to a factory."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from textual.screen import Screen

from relgate_tui.tui.app import make_app
from relgate_tui.tui.confirm import ConfirmModal
from relgate_tui.tui.registry import SCREEN_FACTORIES, screen_factory

TUI = Path(__file__).resolve().parents[2] / "relgate_tui" / "tui"
#: the registry, the apps (relgate's and the stand-alone review app) and the screenshot drivers (test tooling) are
#: the only modules that may push
PUSHERS = {"registry.py", "app.py", "screenshots.py"}


def test_every_registered_name_resolves_to_a_factory():
    for name in SCREEN_FACTORIES:
        factory = screen_factory(name)
        assert callable(factory), name
        if isinstance(factory, type):
            assert issubclass(factory, Screen), name
    with pytest.raises(KeyError):
        screen_factory("no-such-screen")


def test_no_screen_module_pushes_a_screen_itself():
    offenders = []
    for path in sorted(TUI.rglob("*.py")):
        if path.name in PUSHERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("push_screen", "switch_screen", "install_screen"):
                offenders.append(f"{path.relative_to(TUI)}:{node.lineno}")
    assert not offenders, offenders


async def test_open_screen_builds_pushes_and_calls_back(services):
    app = make_app(services)
    answers: list[bool | None] = []
    async with app.run_test() as pilot:
        await pilot.pause()
        app.confirm("Really?", answers.append, "details", yes="Do it", no="Keep")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        await pilot.pause()
        assert answers == [True]
        assert not isinstance(app.screen, ConfirmModal)
