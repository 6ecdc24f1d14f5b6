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


async def test_runs_whose_ids_differ_say_why_and_pair_by_question_text_on_t(services, tmp_path: Path) -> None:
    """Issue 24 §1: "0 paired items" never comes without a reason; t pairs the items by their question text."""
    def write(name: str, prefix: str) -> Path:
        p = tmp_path / f"{name}.jsonl"
        with p.open("w", encoding="utf-8") as f:
            for i in range(12):
                f.write(json.dumps({"id": f"{prefix}{i}", "question": f"What is {i} plus {i}?", "answer": str(2 * i),
                                    "model": name, "samples": [str(2 * i)] * 3}) + "\n")
        return import_log(load_log("samples", p), ImportOptions(run_dir=str(services.runs_dir))).run_path

    a, b = write("model-a", "doc-"), write("model-b", "")
    app = make_app(services)
    async with app.run_test(size=(140, 50)) as pilot:
        app.push_screen(CompareScreen([a, b]))
        await pilot.pause()
        screen = app.screen
        line = str(screen.query_one("#compare-paired", Label).render())
        assert screen.paired.no_pairs is not None and screen.paired.n == 0
        assert "share no item (matched by id; A's ids: doc-0, doc-1, doc-2 …; B's ids: 0, 1, 2 …)" in line
        assert "12 items pair by question text: press t" in line
        await pilot.press("t")
        line = str(screen.query_one("#compare-paired", Label).render())
        assert screen.paired.matched_by == "question" and screen.paired.n == 12
        assert "12 paired items (by question text)" in line and ("B not worse" in line or "undecided" in line)
