"""User errors end as one-line messages on screen, never as a traceback: an unreachable endpoint, a run that cannot
be created."""

from __future__ import annotations

from textual.widgets import Input, Select

from relgate_tui.tui.app import make_app
from relgate_tui.tui.home import HomeScreen
from relgate_tui.tui.sampling import SamplingScreen
from relgate_tui.tui.setup import CUSTOM, SetupScreen
from tests.tui.runfixtures import UNREACHABLE
from tests.tui.test_flow import wait_until


async def _custom_setup(app, pilot, url, n_cal=""):
    await pilot.press("n")
    setup = app.screen
    assert isinstance(setup, SetupScreen)
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert setup.task_info is not None
    setup.query_one("#endpoint", Select).value = CUSTOM
    await pilot.pause()
    setup.query_one("#url", Input).value = url
    setup.query_one("#model-name", Input).value = "some-model"
    setup.query_one("#limit", Input).value = "10"
    setup.query_one("#n-cal", Input).value = n_cal
    await pilot.pause()
    return setup


async def test_unreachable_endpoint_is_reported_and_the_app_stays_usable(services):
    services.embedded_demo = False
    app = make_app(services)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await _custom_setup(app, pilot, UNREACHABLE)
        await pilot.press("ctrl+s")
        await pilot.pause()
        sampling = app.screen
        assert isinstance(sampling, SamplingScreen)
        await wait_until(pilot, lambda: sampling.state == "error", timeout=30, what="the sampling error")
        errors = " ".join("".join(str(line.text) for line in sampling.query_one("#errors").lines).split())
        assert "cannot reach the endpoint" in errors and "Traceback" not in errors
        await pilot.press("enter")  # nothing sampled: refused, stays
        assert app.screen is sampling
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        assert app.history[-1] == ("sampling", "back")


async def test_a_run_that_cannot_be_created_returns_to_setup_with_the_values(services):
    app = make_app(services)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await _custom_setup(app, pilot, UNREACHABLE, n_cal="50")  # more calibration items than items
        setup = app.screen
        assert "more than the 10 items" in str(setup.query_one("#setup-error").content)
        await pilot.press("ctrl+s")  # the pipeline refuses it too: back on Setup, with a one-line notification
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen is not setup,
                         what="the refused run back on Setup")
        assert app.history[-1][0] == "setup" and app.history[-1][1].n_cal == 50
        assert isinstance(app.screen, SetupScreen) and app.screen is not setup
        notes = [n.message for n in app._notifications]
        assert any("larger than the number of items" in m and "\n" not in m for m in notes)
        setup = app.screen
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert setup.query_one("#n-cal", Input).value == "50"  # the values are kept
        setup.query_one("#n-cal", Input).value = "5"
        setup.query_one("#temperature", Input).value = "1.5"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SamplingScreen), what="the sampling screen")
        sampling = app.screen
        assert isinstance(sampling, SamplingScreen)
        await wait_until(pilot, lambda: sampling.state == "error", timeout=30, what="the sampling error")  # nothing listens there
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("n")  # the previous values come back
        setup = app.screen
        assert isinstance(setup, SetupScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert setup.query_one("#temperature", Input).value == "1.5"
        assert setup.query_one("#endpoint", Select).value == CUSTOM
