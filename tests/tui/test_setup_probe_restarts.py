"""Setup's automatic latency probe is not restarted by every keystroke: typing a concurrency measures once the field
is left (not at "1" and again at "16"), leaving a field unchanged measures nothing, and a field the probe does not
read (k_max) never restarts it. The probe is replaced by a counter that answers at once (no server)."""

from __future__ import annotations

import dataclasses

from textual.widgets import Input

from relgate_tui.engine.certification.setup import Latency
from relgate_tui.tui.app import make_app
from relgate_tui.tui.setup import SetupScreen
from tests.tui.test_flow import focus_on, wait_until


async def test_the_probe_runs_once_per_change_that_matters(services, monkeypatch) -> None:
    import relgate_tui.tui.setup_probe as setup_probe

    started: list[int] = []

    async def counting(setup):  # what the probe was asked, answered at once
        started.append(setup.concurrency)
        return Latency(0.25, 20.0, 5.0, None, min(setup.concurrency, 16))

    monkeypatch.setattr(setup_probe, "probe_latency", counting)
    app = make_app(dataclasses.replace(services, probe_latency=True))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        await wait_until(pilot, lambda: screen.latency is not None, what="the first probe")
        first = list(started)
        assert first == [8]  # endpoint and model chosen on mount: one probe, not one per event
        concurrency = screen.query_one("#concurrency", Input)
        await focus_on(pilot, concurrency)
        concurrency.value = ""
        await pilot.press("1", "6")
        await pilot.pause()
        assert started == first and screen.latency is not None  # typing measures nothing, the figure stays
        await focus_on(pilot, screen.query_one("#k-max", Input))  # the field is left: measured at 16, once
        await wait_until(pilot, lambda: len(started) == 2 and screen.latency is not None, what="the new probe")
        assert started == [8, 16]
        await pilot.press("2")  # k_max: the probe does not read it
        await focus_on(pilot, concurrency)
        await focus_on(pilot, screen.query_one("#k-max", Input))  # left unchanged
        await pilot.pause()
        assert started == [8, 16] and screen.latency is not None and screen.latency.parallel == 16
        await app.workers.wait_for_complete()
