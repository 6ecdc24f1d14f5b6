"""A run whose calibration items wait for labels is listed as waiting for them — "labelling: 0 of 25", never
"complete" — by ``relgate runs`` and the TUI's Runs screen alike, and the count follows the labels; ``relgate runs``
into a pipe prints every cell whole (tab-separated), not a 200-column table with cut cells."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable

from relgate_tui.cli import main
from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.runs.listing import list_runs
from relgate_tui.tui.app import make_app
from relgate_tui.tui.runs import RunsScreen

COLUMNS = ["run", "task", "model", "created", "status", "samples", "labels", "reliability", "bound", "M*", "gate"]


def _reference_less(path: Path, n: int = 50) -> Path:
    """A samples log of ``n`` questions without a reference answer: a person must verify the 25 calibration items."""
    path.write_text("".join(json.dumps({"id": f"q{i:02d}", "question": f"What is {i} + {i}?",
                                        "samples": [str(2 * i), str(2 * i), str(2 * i + 1)]}) + "\n"
                            for i in range(n)))
    return path


def _piped_rows(runs_dir: Path, capsys) -> list[dict[str, str]]:
    capsys.readouterr()
    assert main(["runs", "--run-dir", str(runs_dir)]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    assert header.split("\t") == COLUMNS
    return [dict(zip(COLUMNS, line.split("\t"), strict=True)) for line in lines]


async def test_a_run_waiting_for_labels_says_so_on_both_surfaces(services, tmp_path: Path, capsys) -> None:
    log = _reference_less(tmp_path / "model-with-a-rather-long-name-for-the-columns.jsonl")
    assert main(["import", "samples", str(log), "--run-dir", str(services.runs_dir), "--quiet"]) == 0
    (summary,) = list_runs(services.runs_dir)
    assert summary.status == "labelling" and summary.n_labels == 0 and summary.labelling == (0, 25)

    (row,) = _piped_rows(services.runs_dir, capsys)
    assert row["status"] == "labelling: 0 of 25"
    assert row["run"] == summary.run_id and row["model"] == summary.model  # every cell whole, nothing cut

    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("o")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        cell = str(screen.query_one("#runs", DataTable).get_cell(str(summary.path), "status"))
        assert cell == "labelling"  # the column's width; the counts are in the line under the table
        assert "labelling: 0 of 25" in str(screen.query_one("#runs-hint").render())

    session = Session.open(summary.path)
    for item in session.pending_items()[:3]:
        session.label(item, rank=1)
    session.save_results()
    (row,) = _piped_rows(services.runs_dir, capsys)
    assert row["status"] == "labelling: 3 of 25" and row["labels"] == "3"
    for item in session.pending_items():
        session.label(item, skip=True)
    session.save_results()
    session.close()
    (row,) = _piped_rows(services.runs_dir, capsys)
    assert row["status"] == "complete"
