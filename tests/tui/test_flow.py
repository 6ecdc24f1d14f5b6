"""The whole flow on the embedded demo endpoint (real HTTP on loopback): Home → Setup → Sampling → Spot-check with
every key → Results with α changes → export; the dismissed values and the persisted labels are checked."""

from __future__ import annotations

import asyncio
import json
import math
import time

from textual.widgets import Input, Select

from relgate_tui.engine.certification.setup import RunSetup
from relgate_tui.engine.runs.store import RunStore
from relgate_tui.tui.app import make_app
from relgate_tui.tui.home import HomeScreen
from relgate_tui.tui.results import ResultsScreen
from relgate_tui.tui.sampling import SamplingScreen
from relgate_tui.tui.setup import SetupScreen
from relgate_tui.tui.spotcheck import SpotCheckScreen


async def wait_until(pilot, condition, timeout=60.0, what=""):
    """Wait for ``condition`` (checked between turns of the event loop, every 10 ms), then for the screen to have
    processed what is pending. ``timeout`` only bounds a hang. The loop only yields: a ``pilot.pause()`` per check
    would post a message to every widget and force a repaint each time, which cost more CPU than the work waited for."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)
    await pilot.pause()


async def open_screen(app, pilot, key: str, screen_type: type):
    """Press ``key`` (Home's binding for a screen), let its workers finish, and return the screen it opened."""
    await pilot.press(key)
    await app.workers.wait_for_complete()
    await wait_until(pilot, lambda: isinstance(app.screen, screen_type), what=f"the {screen_type.__name__}")
    return app.screen


async def focus_on(pilot, widget) -> None:
    """Move the focus to ``widget`` and wait until it is there. ``Widget.focus()`` is applied by a later callback, so
    a key pressed right after it can reach the widget that still has the focus (seen under load: an Enter meant for a
    button reached the input focused before it)."""
    widget.focus()
    await wait_until(pilot, lambda: pilot.app.focused is widget, what=f"the focus on {widget.id}")


async def press_button(pilot, button) -> None:
    """Enter on ``button``, as a user would: once its press effect of the last press is over (Textual ignores a
    press while the button shows ``-active``, 0.2 s after the last one) and it has the focus."""
    await wait_until(pilot, lambda: not button.has_class("-active"), what=f"{button.id} ready for another press")
    await focus_on(pilot, button)
    await pilot.press("enter")


async def fill_setup(app, pilot, *, items="30", n_cal="15", k_max="10", verification="human", model="sim-mid"):
    await pilot.press("n")
    setup = app.screen
    assert isinstance(setup, SetupScreen)
    await wait_until(pilot, lambda: setup.task_info is not None and bool(setup.endpoints), what="setup")
    endpoint = setup.endpoints[0]
    assert endpoint.simulated and "simulated" in endpoint.label  # nothing discovered → embedded demo, labelled
    assert setup.query_one("#endpoint", Select).value == "ep0"  # … and pre-selected
    setup.query_one("#model", Select).value = model
    setup.query_one("#limit", Input).value = items
    setup.query_one("#n-cal", Input).value = n_cal
    setup.query_one("#k-max", Input).value = k_max
    setup.query_one("#verification", Select).value = verification
    await pilot.pause()
    return setup


async def test_whole_flow_on_the_demo_endpoint(services):
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        setup = await fill_setup(app, pilot)
        preflight = str(setup.query_one("#preflight").content)
        assert "300 calls" in preflight  # worst case: 30 items × K_max 10
        await pilot.press("ctrl+s")
        await pilot.pause()
        chosen = app.history[-1][1]
        assert isinstance(chosen, RunSetup)
        assert (chosen.model, chosen.task, chosen.limit, chosen.n_cal, chosen.k_max, chosen.verification) == (
            "sim-mid", "bigbench-3digit-addition", 30, 15, 10, "human")
        assert chosen.simulated and chosen.base_url == app.demo.base_url

        sampling = app.screen
        assert isinstance(sampling, SamplingScreen)
        await wait_until(pilot, lambda: sampling.state == "finished", what="sampling")
        await wait_until(pilot, lambda: "30 / 30" in str(sampling.query_one("#count").content)
                         and sampling.query_one("#live").row_count == 30, what="the finished run on screen")
        assert "30 / 30" in str(sampling.query_one("#count").content)
        assert sampling.query_one("#live").row_count == 30
        requests = len(app.demo.requests)
        assert requests > 0
        await pilot.press("enter")
        await pilot.pause()
        assert app.history[-1] == ("sampling", "done")

        spot = app.screen
        assert isinstance(spot, SpotCheckScreen)
        session = spot.session
        run = session.path
        assert len(spot.queue) == 15
        expected: dict[str, tuple] = {}

        async def press(key, record=None):
            item = spot.current
            await pilot.press(key)
            if record is not None:
                expected[item] = record

        await press("y", ("rank", 1))
        while len(spot.view.candidates) < 2:
            await press("y", ("rank", 1))
        item = spot.current
        await pilot.press("n")
        await pilot.press("u")  # undo a rejection
        assert spot.current == item and spot.cursor == 0
        await pilot.press("n")
        await press("y", ("rank", 2))
        await press("x", ("none",))
        skipped = spot.current
        await press("s", ("skip",))
        await pilot.press("u")  # undo a label: the skipped item comes back
        assert spot.current == skipped
        del expected[skipped]
        await press("s", ("skip",))
        await pilot.press("e")
        await pilot.press("escape")
        await pilot.press("question_mark")
        await pilot.press("escape")
        item = spot.current
        for _ in range(len(spot.view.candidates)):
            await pilot.press("n")  # reject every candidate = none acceptable
        expected[item] = ("none",)
        assert spot.current != item
        while isinstance(app.screen, SpotCheckScreen) and spot.queue:
            await press("y" if spot.view.candidates else "x", ("rank", 1) if spot.view.candidates else ("none",))
        await pilot.pause()
        assert app.history[-1] == ("spotcheck", "done")

        on_disk = RunStore(run).current_labels()
        assert {k: v.kind for k, v in on_disk.items()} == {k: v[0] for k, v in expected.items()}
        assert all(on_disk[k].rank == v[1] for k, v in expected.items() if v[0] == "rank")
        assert all(lab.source == "human" for lab in on_disk.values())

        results = app.screen
        assert isinstance(results, ResultsScreen)
        r = results.view.result
        n_none = sum(1 for v in expected.values() if v[0] == "none")
        assert r.n == 15 - 1 and r.n_skipped == 1  # one skip, counted and reported
        assert session.results(0.10).result.calibration_message == r.calibration_message
        ms = {}
        for key in ("plus", "plus", "minus", "minus", "minus"):
            await pilot.press(key)
            ms[results.alpha] = results.view.result.m_star
        assert results.alpha == 0.09
        for alpha, m in ms.items():
            assert m == session.results(alpha).result.m_star or (math.isinf(m) and math.isinf(
                session.results(alpha).result.m_star))
        for key in ("j", "c", "m"):
            await pilot.press(key)
        doc = json.loads(open(results.exported["json"]).read())
        assert doc["alpha"] == 0.09 and doc["n_cal"] == 14 and doc["n_skipped"] == 1
        assert sum(1 for it in doc["items"] if it.get("score", 0) is None) >= n_none  # "none" = ∞, kept
        assert results.exported["csv"].endswith(".csv") and results.exported["md"].endswith(".md")
        await pilot.press("escape")
        await pilot.pause()
        assert app.history[-1] == ("results", "back")
        assert isinstance(app.screen, HomeScreen)
        assert [h[0] for h in app.history] == ["home", "setup", "sampling", "spotcheck", "results"]
        # no further call was made after sampling (spot-check and results are offline)
        assert len(app.demo.requests) == requests


async def test_stop_sampling_keeps_a_usable_partial_run_that_resumes(services):
    services.demo_latency_ms = 60.0
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        setup = await fill_setup(app, pilot, items="20", n_cal="10", k_max="6", verification="auto")
        setup.query_one("#concurrency", Input).value = "2"
        await pilot.press("ctrl+s")
        sampling = app.screen
        assert isinstance(sampling, SamplingScreen)
        await wait_until(pilot, lambda: sampling.session.has_samples(), what="first samples")
        await pilot.press("p")  # pause, then resume
        assert sampling.state == "paused"
        await pilot.press("p")
        assert sampling.state == "running"
        await pilot.press("escape")  # asks first
        await pilot.press("n")
        assert sampling.state == "running"
        await pilot.press("escape", "y")
        await wait_until(pilot, lambda: sampling.state == "stopped", what="stop")
        app.demo.latency_ms = 0.0  # the latency made the stop land mid-run; the resume below needs none
        session = sampling.session
        stored = len(RunStore(session.path).samples())
        assert 0 < stored < 20 * 6
        await pilot.press("enter")
        await pilot.pause()
        assert app.history[-1] == ("sampling", "partial")
        screen = app.screen
        assert isinstance(screen, ResultsScreen)  # references verify everything: straight to results
        assert screen.view.n_unsampled > 0
        assert screen.view.result.samples_used <= stored
        await pilot.press("escape")
        await pilot.pause()

        # resume it from Runs: sampling picks up where it stopped, nothing stored is asked again
        made_before = len(app.demo.requests)
        await pilot.press("o")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        sampling = app.screen
        assert isinstance(sampling, SamplingScreen)
        await wait_until(pilot, lambda: sampling.state == "finished", timeout=90, what="resumed sampling")
        bodies = [r.body_sha256 for r in app.demo.requests if r.path.endswith("/chat/completions")]
        # nothing stored is asked again; only requests cut off in flight by the stop (≤ concurrency) are re-sent
        assert len(bodies) - len(set(bodies)) <= 2
        assert len(app.demo.requests) > made_before
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        assert app.screen.view.n_unsampled == 0
