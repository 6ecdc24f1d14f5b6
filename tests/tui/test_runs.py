"""Runs and Compare screens, and opening stored runs with the network unreachable (no server, no connection)."""

from __future__ import annotations

import socket

import pytest
from textual.widgets import DataTable

from relgate_tui.tui.app import make_app
from relgate_tui.tui.compare import CompareScreen
from relgate_tui.tui.home import HomeScreen
from relgate_tui.tui.results import ResultsScreen
from relgate_tui.tui.runs import RunsScreen
from relgate_tui.tui.spotcheck import SpotCheckScreen
from tests.tui.runfixtures import stored_run


@pytest.fixture
def no_network(monkeypatch):
    """Every attempt to open an internet socket connection fails and is recorded."""
    attempts: list[object] = []
    real_connect = socket.socket.connect

    def connect(self, address):  # noqa: ANN001
        if self.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address)
            raise OSError("network is unreachable (test)")
        return real_connect(self, address)

    def create_connection(address, *args, **kwargs):  # noqa: ANN001
        attempts.append(address)
        raise OSError("network is unreachable (test)")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    return attempts


async def _runs_screen(app, pilot):
    await pilot.press("o")
    assert isinstance(app.screen, RunsScreen)
    await app.workers.wait_for_complete()
    await pilot.pause()
    return app.screen


async def test_open_compare_and_resume_offline(services, no_network):
    first = stored_run(services.runs_dir, model="model-a", seed=1)
    second = stored_run(services.runs_dir, model="model-b", seed=2)
    services.embedded_demo = False
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "2 stored runs" in str(app.screen.query_one("#status").content)
        runs = await _runs_screen(app, pilot)
        table = runs.query_one("#runs", DataTable)
        assert table.row_count == 2
        assert {s.model for s in runs.summaries.values()} == {"model-a", "model-b"}

        await pilot.press("enter")  # open → results, offline
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        opened = app.screen.session.path
        assert opened in (first, second)
        assert app.screen.view.result.n_deployment == 20
        await pilot.press("escape")
        await pilot.pause()
        runs = app.screen
        assert isinstance(runs, RunsScreen)  # back to the list the run was opened from
        await app.workers.wait_for_complete()
        await pilot.pause()

        await pilot.press("c")  # nothing marked yet: refused
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("space", "down", "space", "c")
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        compare = app.screen
        assert len(compare.sessions) == 2
        grid = compare.query_one("#compare", DataTable)
        models = [str(grid.get_cell("model", f"run{i}")) for i in range(2)]
        assert sorted(models) == ["model-a", "model-b"]
        before = str(grid.get_cell("lower bound", "run0"))
        await pilot.press("minus")
        assert compare.alpha == 0.09
        assert str(grid.get_cell("lower bound", "run0")) == before  # the bound does not depend on α
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()

        await pilot.press("r")  # resume: sampling is complete, calibration items wait for a human
        await pilot.pause()
        assert isinstance(app.screen, SpotCheckScreen)
        await pilot.press("escape", "y")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
    assert no_network == []  # not a single connection attempt


async def test_empty_runs_list(services):
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        runs = await _runs_screen(app, pilot)
        assert runs.query_one("#runs", DataTable).row_count == 0
        assert "No runs yet" in str(runs.query_one("#runs-title").content)
        await pilot.press("enter", "r")
        assert isinstance(app.screen, RunsScreen)


async def test_unreadable_run_is_listed_not_fatal(services):
    stored_run(services.runs_dir, model="good")
    bad = services.runs_dir / "broken-run"
    bad.mkdir(parents=True)
    (bad / "manifest.json").write_text("{nope")
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        runs = await _runs_screen(app, pilot)
        statuses = sorted(s.status for s in runs.summaries.values())
        assert statuses[0] == "sampled" and statuses[1].startswith("unreadable")
        # opening the broken one reports the problem in one line and stays on Runs
        table = runs.query_one("#runs", DataTable)
        row = [k for k, s in runs.summaries.items() if s.status.startswith("unreadable")][0]
        table.move_cursor(row=table.get_row_index(row))
        await pilot.press("o")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)


async def test_backup_copy_wrong_typed_manifest_and_renamed_run(services):
    """Issue 10 §5: a backup copy of a run (same run id) is its own row, not a DuplicateKey crash; a manifest with a
    wrong-typed field is one "unreadable" row; a renamed run opens as itself (no new empty run is created)."""
    import json
    import shutil

    original = stored_run(services.runs_dir, model="good")
    shutil.copytree(original, services.runs_dir / "backup-of-run")
    renamed = services.runs_dir / "renamed-run"
    shutil.copytree(original, renamed)
    typed = services.runs_dir / "typed-run"
    shutil.copytree(original, typed)
    manifest = json.loads((typed / "manifest.json").read_text())
    manifest["task"]["items"] = "forty"
    (typed / "manifest.json").write_text(json.dumps(manifest))
    app = make_app(services)
    async with app.run_test(size=(140, 40)) as pilot:
        runs = await _runs_screen(app, pilot)
        table = runs.query_one("#runs", DataTable)
        assert table.row_count == 4 and len(runs.summaries) == 4
        unreadable = [s for s in runs.summaries.values() if s.status.startswith("unreadable")]
        assert len(unreadable) == 1 and unreadable[0].path == typed and "items" in unreadable[0].status
        assert sum(s.run_id == runs.summaries[str(original)].run_id for s in runs.summaries.values()) == 3
        table.move_cursor(row=table.get_row_index(str(renamed)))
        await pilot.press("o")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        assert app.session is not None and app.session.path == renamed
    assert sorted(p.name for p in services.runs_dir.iterdir()) == sorted(
        [original.name, "backup-of-run", "renamed-run", "typed-run"])  # nothing new was created


async def test_a_corrupt_sample_line_is_one_line_and_the_app_stays_on_runs(services):
    path = stored_run(services.runs_dir)
    lines = (path / "samples.jsonl").read_bytes().split(b"\n")
    lines[5] = b'{"item": "broken'
    (path / "samples.jsonl").write_bytes(b"\n".join(lines))
    app = make_app(services)
    notes: list[str] = []
    app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
    async with app.run_test(size=(140, 40)) as pilot:
        await _runs_screen(app, pilot)
        await pilot.press("o")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
    assert any("samples.jsonl: line 6 is corrupt" in n and "--repair" in n and "\n" not in n for n in notes)
