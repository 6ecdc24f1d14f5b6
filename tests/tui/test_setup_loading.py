"""Setup says it is working while discovery and the task list load (issue 31 item 16): "loading… looking for local
model servers" stays on screen while discovery is still running — here held on an event the test sets itself, no
sleep — and goes once it answers; nothing says "choose an endpoint" in the meantime."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

from textual.widgets import Select, Static

from relgate_tui.tui.app import make_app
from relgate_tui.tui.setup import SetupScreen
from tests.tui.test_flow import wait_until


async def test_setup_shows_loading_until_discovery_answers(services) -> None:
    asked, answer = threading.Event(), threading.Event()

    def discover() -> list:
        asked.set()
        answer.wait(60)
        return []

    app = make_app(replace(services, discover=discover, embedded_demo=False))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        assert await asyncio.to_thread(asked.wait, 30), "discovery never started"
        await wait_until(pilot, lambda: "tasks" not in screen.still_loading, what="the task list")
        status = str(screen.query_one("#setup-error", Static).render())
        assert status == "loading… looking for local model servers", status
        answer.set()  # discovery answers: nothing found
        await wait_until(pilot, lambda: not screen.still_loading, what="discovery")
        await pilot.pause()
        assert "loading" not in str(screen.query_one("#setup-error", Static).render())
        assert screen.query_one("#endpoint", Select).prompt == "choose an endpoint"  # the endpoints are listed now
