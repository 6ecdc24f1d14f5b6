"""Every screen at 80×24, the most common terminal size (issue 24 §4): one SVG snapshot per screen
(``pytest --snapshot-update`` after a deliberate UI change; the SVGs live in ``__snapshots__/test_snapshots_80x24/``).
Beside each snapshot the test checks what must stay visible at that size (the headline figures, inputs with room).
Everything shown is deterministic: fixed seeds, stored runs, fixed dates and paths, a mock clock."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from textual.widgets import Input

from relgate_tui.engine.certification.session import Session
from relgate_tui.tui.app import make_app
from relgate_tui.tui.compare import CompareScreen
from relgate_tui.tui.help import HelpScreen
from relgate_tui.tui.home import CHOICES, HomeScreen
from relgate_tui.tui.itemsamples import ItemSamplesModal
from relgate_tui.tui.results import ResultsScreen
from relgate_tui.tui.runs import RunsScreen
from relgate_tui.tui.settings import SettingsScreen
from relgate_tui.tui.setup import SetupScreen
from relgate_tui.tui.spotcheck import SpotCheckScreen
from relgate_tui.tui.studies import open_study_view
from tests.tui.runfixtures import stored_run
from tests.tui.studyfixtures import irt_study, jury_pool, jury_study
from tests.tui.test_flow import wait_until
from tests.tui.test_judge import run_audit

SIZE = (80, 24)
FIXED_CREATED = "2026-01-02T03:04:05+00:00"


def _labelled(runs_dir: Path, **kw) -> Path:
    path = stored_run(runs_dir, **kw)
    session = Session.open(path)
    for item_id in session.pending_items():
        view = session.item_view(item_id)
        ranks = [c.rank for c in view.candidates if c.answer in view.references]
        session.label(item_id, rank=ranks[0]) if ranks else session.label(item_id, none=True)
    session.save_results(gate=0.9)
    session.close()
    return path


def test_home(services, snap_compare):
    async def run_before(pilot):
        screen = pilot.app.screen
        assert isinstance(screen, HomeScreen)
        assert "-narrow" in screen.classes and "-short" in screen.classes
        menu = screen.query_one("#menu")
        assert menu.region.height == len(CHOICES) + 2  # one line per choice, inside the border

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_setup(services, snap_compare):
    async def run_before(pilot):
        await pilot.press("n")
        screen = pilot.app.screen
        assert isinstance(screen, SetupScreen)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        for field in screen.query(Input):  # no input squeezed to nothing
            if field.display and field.region.height:
                assert field.region.width >= 12, field.id

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_spotcheck(services, snap_compare):
    path = stored_run(services.runs_dir, min_reliability=0.9)  # the run's own gate (the Settings default)

    async def run_before(pilot):
        session = Session.open(path)
        pilot.app.session = session
        pilot.app.push_screen(SpotCheckScreen(session))
        await pilot.pause()
        await pilot.press("y", "n")

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_results(services, snap_compare):
    path = _labelled(services.runs_dir)

    async def run_before(pilot):
        session = Session.open(path)
        pilot.app.session = session
        pilot.app.push_screen(ResultsScreen(session, gate=0.9))
        await pilot.pause()
        screen = pilot.app.screen
        for widget in ("#level", "#bound", "#verdict", "#alpha-info", "#plain"):  # the headline is all on screen
            region = screen.query_one(widget).region
            assert region.width and region.height and region.right <= SIZE[0], widget
        assert "M* = " in str(screen.query_one("#alpha-info").render())
        assert screen.query_one("#items").region.height >= 6

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


async def _open_results(pilot, path) -> None:
    session = Session.open(path)
    pilot.app.session = session
    pilot.app.push_screen(ResultsScreen(session, gate=0.9))
    await pilot.pause()


def test_results_plots(services, snap_compare):
    """The Plots tab: every chart's ticks each have a row or column of their own (``widgets/plots.py``), so the
    snapshot is the same in every process (plotext's tick order follows the string hashing)."""
    path = _labelled(services.runs_dir)

    async def run_before(pilot):
        await _open_results(pilot, path)
        await pilot.press("p")
        await pilot.pause()

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_item_samples(services, snap_compare):
    path = _labelled(services.runs_dir)

    async def run_before(pilot):
        await _open_results(pilot, path)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ItemSamplesModal)

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


@pytest.fixture
def fixed_runs(services, monkeypatch):
    """Two labelled runs, listed with a fixed date and path (the list shows both)."""
    import relgate_tui.tui.runs as runs_module

    paths = [_labelled(services.runs_dir, model=m, seed=s) for m, s in (("model-a", 1), ("model-b", 2))]
    real = runs_module.list_runs

    def fixed(root):
        return [dataclasses.replace(s, created=FIXED_CREATED, path=Path("/data/runs") / s.run_id)
                for s in real(services.runs_dir)]

    monkeypatch.setattr(runs_module, "list_runs", fixed)
    return paths


def test_runs(services, snap_compare, fixed_runs):
    async def run_before(pilot):
        pilot.app.push_screen(RunsScreen(Path("/data/runs")))
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        table = pilot.app.screen.query_one("#runs")
        assert table.row_count == 2
        level = table.get_column_index("level")
        gate = table.get_column_index("gate")
        # the headline columns come before the counts: at 80 columns the gate is on screen
        assert sum(c.get_render_width(table) for c in table.ordered_columns[: gate + 1]) <= SIZE[0]
        assert level < gate

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_compare(services, snap_compare, fixed_runs):
    async def run_before(pilot):
        pilot.app.push_screen(CompareScreen(fixed_runs))
        await pilot.pause()
        grid = pilot.app.screen.query_one("#compare")
        assert sum(c.get_render_width(grid) for c in grid.ordered_columns) <= SIZE[0]  # both runs on screen

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_settings(services, snap_compare):
    async def run_before(pilot):
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(pilot.app.screen, SettingsScreen)

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_help(services, snap_compare):
    async def run_before(pilot):
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(pilot.app.screen, HelpScreen)

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_judge_setup(services, snap_compare):
    async def run_before(pilot):
        await pilot.press("j")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        for field in pilot.app.screen.query(Input):
            if field.display and field.region.height:
                assert field.region.width >= 10, field.id

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_judge_results(services, snap_compare):
    async def run_before(pilot):
        await run_audit(pilot.app, pilot)
        await pilot.pause()
        assert "mean τ-b (MFAS)" in str(pilot.app.screen.query_one("#inputs-title").render())

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_studies_setup(services, snap_compare):
    async def run_before(pilot):
        await pilot.press("t")
        await pilot.pause()

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_irt_view(services, snap_compare, tmp_path: Path):
    async def run_before(pilot):
        pilot.app.push_screen(open_study_view(irt_study(), "simulated · coherence", source="sim.jsonl",
                                              export_dir=tmp_path))
        await pilot.pause()

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_jury_view(services, snap_compare, tmp_path: Path):
    async def run_before(pilot):
        pilot.app.push_screen(open_study_view(jury_study(), "simulated pool · quality", source="pool.jsonl",
                                              export_dir=tmp_path, data=jury_pool()[0]))
        await pilot.pause()

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_intervals_view(services, snap_compare, tmp_path: Path):
    from tests.tui.studyfixtures import intervals_input, intervals_study

    study = intervals_study()  # seconds per run are wall-clock: fixed so that only deterministic numbers show
    study = dataclasses.replace(study, methods=tuple(dataclasses.replace(m, seconds_mean=0.01) for m in study.methods))

    async def run_before(pilot):
        pilot.app.push_screen(open_study_view(study, "simulated · coherence", source="sim.jsonl",
                                              export_dir=tmp_path, data=intervals_input()))
        await pilot.pause()

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_import_modal(services, snap_compare):
    from relgate_tui.tui.importer import ImportScreen

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "imports" / "lm_eval_array"

    async def run_before(pilot):
        pilot.app.push_screen(ImportScreen(services.runs_dir, start_dir=fixtures))
        await pilot.pause()

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)


def test_sampling_mid_run(services, snap_compare):
    """The sampling screen half-way through a run, fed a fixed script of progress updates."""
    import asyncio

    from textual.clock import MockClock

    from relgate_tui.engine.certification.setup import RunSetup
    from relgate_tui.engine.certification.views import ItemProgress, SamplingUpdate
    from relgate_tui.tui.sampling import SamplingScreen
    from tests.tui.runfixtures import UNREACHABLE

    session = Session.create(RunSetup(base_url=UNREACHABLE, model="fixture-model", task="bigbench-3digit-addition",
                                      limit=24, n_cal=12, k_max=10), runs_dir=services.runs_dir)
    ids = [item.id for item in session.prepared.items]

    async def scripted_sample():
        rows = [ItemProgress(item_id, session._roles[item_id], 10 if i % 3 == 0 else 4 + i % 3, 10, str(300 + 7 * i),
                             0.6 + 0.03 * (i % 5), stopped=i % 3 != 0, done=True) for i, item_id in enumerate(ids[:12])]
        yield SamplingUpdate(tuple(rows), items_done=12, items_total=24, calls_made=81, calls_cached=6,
                             calls_failed=2, samples_used=85, saved=0.35,
                             errors=("add3-0045: HTTP 400: bad request (not retried)",))
        await asyncio.Event().wait()

    session.sample = scripted_sample  # type: ignore[method-assign]

    async def run_before(pilot):
        pilot.app.session = session
        screen = SamplingScreen(session, clock=MockClock())
        pilot.app.push_screen(screen)
        # the scripted update is on screen (its 4 Hz flush ran): the event, not 0.3 s of a clock
        await wait_until(pilot, lambda: screen.is_mounted and not screen._pending and screen._latest is None
                         and len(screen._rows) >= 12, what="the scripted update on screen")

    assert snap_compare(make_app(services), run_before=run_before, terminal_size=SIZE)
    session.close()
