"""A custom endpoint (issue 31 item 5): one model field (the listed-model select is hidden), and a server on a port
discovery does not scan is asked for its models once its URL is typed — the first fills the empty model name."""

from __future__ import annotations

from textual.widgets import Input, Select

from relgate_tui.demo.server import DemoServer
from relgate_tui.tui.app import make_app
from relgate_tui.tui.setup import CUSTOM, SetupScreen
from tests.tui.test_flow import open_screen


async def test_a_typed_url_is_asked_for_its_models_and_one_model_field_shows(services) -> None:
    from dataclasses import replace

    with DemoServer(port=0) as server:  # an unusual port: discovery (off here) would never find it
        app = make_app(replace(services, embedded_demo=False))
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await open_screen(app, pilot, "n", SetupScreen)
            screen.query_one("#endpoint", Select).value = CUSTOM
            await pilot.pause()
            assert not screen.query_one("#model", Select).display  # no second model field
            assert screen.query_one("#model-name", Input).display
            url = screen.query_one("#url", Input)
            url.focus()
            await pilot.pause()
            url.value = server.base_url
            await pilot.press("tab")  # leaving the field asks the server
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert app.focused is not None and app.focused.id == "model-name"
            assert screen.query_one("#model-name", Input).value == "sim-strong"
            setup = screen.collect()
            assert setup.base_url == server.base_url and setup.model == "sim-strong"
