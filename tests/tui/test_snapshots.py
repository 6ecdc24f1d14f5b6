"""SVG snapshots of the main screens (``pytest --snapshot-update`` after a deliberate UI change; the SVGs live in
``__snapshots__/test_snapshots/``). Everything shown is deterministic: fixed seeds, stored runs, a mock clock."""

from __future__ import annotations

import asyncio

import pytest
from textual.clock import MockClock

from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.certification.setup import RunSetup
from relgate_tui.engine.certification.views import ItemProgress, SamplingUpdate
from relgate_tui.tui.app import make_app
from relgate_tui.tui.results import ResultsScreen
from relgate_tui.tui.sampling import SamplingScreen
from relgate_tui.tui.setup import SetupScreen
from relgate_tui.tui.spotcheck import SpotCheckScreen
from tests.tui.runfixtures import UNREACHABLE, stored_run
from tests.tui.test_flow import wait_until

SIZE = (120, 40)


@pytest.fixture
def snap_app(services):
    return make_app(services)


def test_home(snap_app, snap_compare):
    assert snap_compare(snap_app, terminal_size=SIZE)


def test_setup(snap_app, snap_compare):
    async def run_before(pilot):
        await pilot.press("n")
        screen = pilot.app.screen
        assert isinstance(screen, SetupScreen)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.task_info is not None and screen.endpoints

    assert snap_compare(snap_app, run_before=run_before, terminal_size=SIZE)


def test_sampling_mid_run(services, snap_compare):
    """The sampling screen half-way through a run, fed a fixed script of progress updates."""
    session = Session.create(
        RunSetup(base_url=UNREACHABLE, model="fixture-model", task="bigbench-3digit-addition", limit=24, n_cal=12,
                 k_max=10),
        runs_dir=services.runs_dir,
    )
    ids = [item.id for item in session.prepared.items]

    async def scripted_sample():
        rows = []
        for i, item_id in enumerate(ids[:12]):
            n = 10 if i % 3 == 0 else 4 + i % 3
            rows.append(ItemProgress(item_id, session._roles[item_id], n, 10, str(300 + 7 * i), 0.6 + 0.03 * (i % 5),
                                     stopped=n < 10, done=True))
        rows.append(ItemProgress(ids[12], session._roles[ids[12]], 2, 10, "411", 0.5))
        rows.append(ItemProgress(ids[13], session._roles[ids[13]], 0, 10, None, 0.0, error="HTTP 400: bad request",
                                 done=True))
        yield SamplingUpdate(tuple(rows), items_done=12, items_total=24, calls_made=81, calls_cached=6,
                             calls_failed=2, samples_used=85, saved=0.35,
                             errors=("add3-0045: HTTP 400: bad request (not retried)",))
        await asyncio.Event().wait()  # mid-run: nothing more arrives

    session.sample = scripted_sample  # type: ignore[method-assign]
    app = make_app(services)

    async def run_before(pilot):
        pilot.app.session = session
        screen = SamplingScreen(session, clock=MockClock())
        pilot.app.push_screen(screen)
        # the scripted update is on screen (its 4 Hz flush ran): the event, not 0.3 s of a clock
        await wait_until(pilot, lambda: screen.is_mounted and not screen._pending and screen._latest is None
                         and len(screen._rows) >= 12, what="the scripted update on screen")

    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)
    session.close()


def test_spotcheck(services, snap_compare):
    path = stored_run(services.runs_dir, min_reliability=0.9)  # the run's own gate (the Settings default)
    app = make_app(services)

    async def run_before(pilot):
        session = Session.open(path)
        pilot.app.session = session
        pilot.app.push_screen(SpotCheckScreen(session))
        await pilot.pause()
        await pilot.press("y", "n")

    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)


def test_results(services, snap_compare):
    path = stored_run(services.runs_dir, min_reliability=0.9)
    session = Session.open(path)
    for item_id in session.pending_items():
        view = session.item_view(item_id)
        ranks = [c.rank for c in view.candidates if c.answer in view.references]
        session.label(item_id, rank=ranks[0]) if ranks else session.label(item_id, none=True)
    session.close()
    app = make_app(services)

    async def run_before(pilot):
        session = Session.open(path)
        pilot.app.session = session
        pilot.app.push_screen(ResultsScreen(session))
        await pilot.pause()
        await pilot.press("plus", "plus")

    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)
