"""Runs → Import… (issue 15): import a real lm-eval log through the modal (tree and path input), a bad file gives a
one-line error and leaves nothing in the run store, Escape cancels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Select, Static

from relgate_tui.tui.app import make_app
from relgate_tui.tui.importer import ImportScreen, LogTree, detect_kind, flags_summary
from relgate_tui.tui.results import ResultsScreen
from relgate_tui.tui.runs import RunsScreen

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"
SEEDED = FIXTURES / "lm_eval" / "addition_seeded"


def _only(folder: Path, pattern: str) -> Path:
    (path,) = sorted(folder.glob(pattern))
    return path


async def _settle(app, pilot) -> None:
    """Wait for every worker except the directory tree's loader, which runs as long as the tree exists."""
    await pilot.pause()
    busy = [w for w in app.workers if w.group != "_loader"]
    if busy:  # (an empty list would mean "all workers" to wait_for_complete)
        await app.workers.wait_for_complete(busy)
    await pilot.pause()


async def _import_modal(app, pilot) -> ImportScreen:
    await pilot.press("o")  # Home → Runs
    await _settle(app, pilot)
    assert isinstance(app.screen, RunsScreen)
    await pilot.press("i")
    await _settle(app, pilot)
    assert isinstance(app.screen, ImportScreen)
    return app.screen


def test_detect_kind_on_the_real_fixtures() -> None:
    assert detect_kind(_only(SEEDED, "samples_*.jsonl")) == "lm-eval"
    assert detect_kind(_only(FIXTURES / "lm_eval_array", "*.jsonl")) == "lm-eval"  # the 0.4.0–0.4.2 array form
    assert detect_kind(FIXTURES / "inspect" / "mmlu.json") == "inspect"
    assert detect_kind(FIXTURES / "inspect" / "addition_zstd.eval") == "inspect"
    assert detect_kind(_only(SEEDED, "results_*.json")) is None  # a results file is not a samples log
    assert detect_kind(FIXTURES / "does-not-exist.jsonl") is None


def test_flags_summary_wording() -> None:
    from relgate_tui.engine.certification.result import RunResult

    doc = {"run_id": "r", "task": {"items": 20}, "imported_from": {"tool": "lm-eval", "k": 5, "n_flagged": 12,
                                                                   "flags": {"fixed_seed": 12}}}
    assert flags_summary(RunResult.from_json(doc)) == "imported 20 items × K = 5 from lm-eval; 12 items flagged: fixed seed"
    doc["imported_from"].update(n_flagged=3, flags={"temperature_0": 3, "identical_repeats": 1})
    assert flags_summary(RunResult.from_json(doc)).endswith("3 items flagged: temperature 0 3, identical repeats 1")
    doc["imported_from"].update(n_flagged=0, flags={})
    assert flags_summary(RunResult.from_json(doc)).endswith("no items flagged")


async def test_import_a_real_lm_eval_log_from_the_tree(services, monkeypatch: pytest.MonkeyPatch) -> None:
    from relgate_tui.engine.importers import load_log
    from relgate_tui.engine.importers.run import ImportOptions, import_log

    monkeypatch.chdir(SEEDED)  # the tree starts in the working directory
    samples = _only(SEEDED, "samples_*.jsonl")
    app = make_app(services)
    async with app.run_test(size=(140, 44)) as pilot:
        modal = await _import_modal(app, pilot)
        tree = modal.query_one("#import-tree", LogTree)
        shown = sorted(str(n.data.path.name) for n in tree.root.children if n.data is not None)
        assert shown == sorted(p.name for p in SEEDED.iterdir() if p.suffix in (".json", ".jsonl"))
        # pick the samples file with the keyboard: focus the tree, walk to it, Enter
        tree.focus()
        await pilot.pause()
        for _ in range(len(shown) + 1):
            node = tree.cursor_node
            if node is not None and node.data is not None and node.data.path == samples:
                break
            await pilot.press("down")
        await pilot.press("enter")
        await _settle(app, pilot)
        assert modal.query_one("#import-path", Input).value == str(samples)
        assert modal.query_one("#import-kind", Select).value == "lm-eval"  # auto-detected
        assert "detected: lm-eval" in str(modal.query_one("#import-status", Static).content)
        await pilot.press("ctrl+s")
        await _settle(app, pilot)
        await _settle(app, pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        assert runs.imported is not None
        table = runs.query_one("#runs", DataTable)
        assert table.row_count == 1
        current = runs._current()
        assert current is not None and current.path.resolve() == runs.imported.path.resolve()
        hint = str(runs.query_one("#runs-hint", Static).content)
        doc = json.loads((runs.imported.path / "results.json").read_text())
        n = doc["imported_from"]["n_flagged"]
        assert n > 0 and f"{n} items flagged: fixed seed" in hint
        assert doc["calls"]["made"] == 0

        # the same function as `relgate import`: same run id and results from the same log
        cli = import_log(load_log("lm-eval", samples), ImportOptions(run_dir=str(services.runs_dir.parent / "cli")))
        assert cli.document["run_id"] == doc["run_id"]
        assert cli.document["reliability_level"] == doc["reliability_level"]
        assert cli.document["imported_from"]["flags"] == doc["imported_from"]["flags"]

        await pilot.press("o")  # opens offline as usual
        await _settle(app, pilot)
        assert isinstance(app.screen, ResultsScreen)
        assert app.screen.session.path.resolve() == runs.imported.path.resolve()


async def test_bad_file_is_one_line_and_nothing_is_written(services, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SEEDED)
    results = _only(SEEDED, "results_*.json")  # a results JSON given instead of the samples file
    app = make_app(services)
    async with app.run_test(size=(140, 44)) as pilot:
        modal = await _import_modal(app, pilot)
        await pilot.press("ctrl+s")  # no path yet: refused inline
        await _settle(app, pilot)
        assert "choose a log file" in str(modal.query_one("#import-error", Static).content)
        modal.query_one("#import-path", Input).value = str(results)
        await pilot.pause()
        modal.query_one("#import-kind", Select).value = "lm-eval"  # the user overrides: it is not a samples log
        await pilot.press("ctrl+s")
        await _settle(app, pilot)
        assert app.screen is modal  # still open, error shown
        error = str(modal.query_one("#import-error", Static).content)
        assert error and "\n" not in error and results.name in error
    runs_dir = services.runs_dir
    assert not runs_dir.exists() or list(runs_dir.iterdir()) == []  # no run, no hidden temporary directory


async def test_escape_cancels(services, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SEEDED)
    app = make_app(services)
    async with app.run_test(size=(140, 44)) as pilot:
        modal = await _import_modal(app, pilot)
        modal.query_one("#import-path", Input).value = str(_only(SEEDED, "samples_*.jsonl"))
        await pilot.pause()
        await pilot.press("escape")
        await _settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        assert app.screen.imported is None
        assert app.screen.query_one("#runs", DataTable).row_count == 0
    assert not services.runs_dir.exists() or list(services.runs_dir.iterdir()) == []


async def test_an_lm_eval_output_root_imports_as_the_cli_takes_it(services, monkeypatch, tmp_path: Path) -> None:
    """Issue 24 §6: the output root lm-eval writes (one folder per model) is accepted, detected as lm-eval."""
    import shutil

    root = tmp_path / "out"
    shutil.copytree(FIXTURES / "lm_eval" / "addition", root / "sim-mid")
    assert detect_kind(root) == "lm-eval" and detect_kind(root / "sim-mid") == "lm-eval"
    assert detect_kind(tmp_path) is None  # samples two folders down: not an output root
    monkeypatch.chdir(tmp_path)
    app = make_app(services)
    async with app.run_test(size=(140, 44)) as pilot:
        modal = await _import_modal(app, pilot)
        modal.query_one("#import-path", Input).value = str(root)
        await pilot.pause()
        assert modal.query_one("#import-kind", Select).value == "lm-eval"
        await pilot.press("ctrl+s")
        await _settle(app, pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen) and runs.imported is not None
        assert runs.imported.run_id.startswith("relgate-addition-sim-mid")
