"""Compare screen with two runs: the paired gate line and the per-item diff (issue 15 §2), keys + / - / m / Esc."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable, Label

from relgate_tui.engine.importers import load_log
from relgate_tui.engine.importers.run import ImportOptions, import_log
from relgate_tui.tui.app import make_app
from relgate_tui.tui.compare import CompareScreen


def _imported(services, tmp_path: Path, name: str, wrong: set[int]) -> Path:
    p = tmp_path / f"{name}.jsonl"
    with p.open("w", encoding="utf-8") as f:
        for i in range(40):
            given = "7" if i in wrong else str(100 + i)
            f.write(json.dumps({"id": f"q{i}", "question": f"q{i}?", "answer": str(100 + i), "model": name,
                                "samples": [given, given, "5"]}) + "\n")
    return import_log(load_log("samples", p), ImportOptions(run_dir=str(services.runs_dir))).run_path


async def test_two_runs_show_the_paired_gate_and_diff(services, tmp_path: Path) -> None:
    a = _imported(services, tmp_path, "model-a", set())
    b = _imported(services, tmp_path, "model-b", {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26})
    app = make_app(services)
    async with app.run_test(size=(140, 50)) as pilot:
        app.push_screen(CompareScreen([a, b]))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.paired is not None
        assert screen.paired.decision == "worse" and screen.paired.b_lost == 14
        line = str(screen.query_one("#compare-paired", Label).render())
        assert "B worse" in line and "lost 14" in line
        diff = screen.query_one("#compare-diff", DataTable)
        assert diff.row_count == 14 and str(diff.get_cell("lost:q0", "b")) == "7"
        await pilot.press("m")
        assert screen.margin == 0.10 and screen.paired.margin == 0.10
        await pilot.press("minus")
        assert screen.alpha == 0.09 and diff.row_count == 14
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CompareScreen)


async def test_one_run_hides_the_paired_gate(services, tmp_path: Path) -> None:
    a = _imported(services, tmp_path, "model-a", set())
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(CompareScreen([a]))
        await pilot.pause()
        assert app.screen.paired is None
        assert not app.screen.query_one("#compare-diff", DataTable).display
        await pilot.press("m")  # nothing to compare: no error
        assert app.screen.paired is None
