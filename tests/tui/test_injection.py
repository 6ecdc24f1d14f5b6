"""Terminal and markup injection (issue 10 §3): model answers, item ids and model names are untrusted text. A stored
run whose ids, answers and model name carry Rich/Textual markup (``[/]``, ``[link=…]``, ``[@click=app.quit]``) and
ANSI/OSC sequences opens on every screen without a MarkupError, shows the text literally, runs no action and lets no
control character through; ``relgate runs`` and the CSV export do the same."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text
from textual.widgets import DataTable, Label, Static

from relgate_tui.engine.certification.report import render_report
from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.certification.setup import RunSetup
from relgate_tui.engine.records import StoredSample
from relgate_tui.tui.app import make_app
from relgate_tui.tui.itemsamples import ItemSamplesModal
from relgate_tui.tui.results import ResultsScreen
from relgate_tui.tui.runs import RunsScreen
from tests.tui.runfixtures import UNREACHABLE

OSC_TITLE = "\x1b]0;pwned\x07"
OSC52 = "\x1b]52;c;ZXZpbA==\x07"
HOSTILE_IDS = ["[/]", "[@click=app.quit]x", "[link=https://evil.example]y[/link]", f"{OSC_TITLE}z\u202e"]
HOSTILE_ANSWERS = [
    "[/] 42",
    "[@click=app.quit]42[/]",
    '[@click=app.screenshot("x.svg","/tmp")]42[/]',
    "[link=https://evil.example]42[/link]",
    f"\x1b[2J\x1b[?1049l{OSC52}{OSC_TITLE}42\x1b[0m",
    "[bold red]43[/bold red] \u202etxet",
]
MODEL = "[/][@click=app.quit]model\x1b[31m"
CONTROL_CHARS = ("\x1b", "\x07", "\x9b", "\u202e")


def hostile_run(tmp_path: Path, runs_dir: Path) -> Path:
    task = tmp_path / "hostile.jsonl"
    task.write_text("".join(json.dumps({"id": item_id, "question": f"What is 40 + 2? {item_id}", "answer": "42"}) + "\n"
                            for item_id in HOSTILE_IDS))
    setup = RunSetup(base_url=UNREACHABLE, model=MODEL, task=str(task), n_cal=2, k_max=len(HOSTILE_ANSWERS),
                     stopping="none", verification="auto", seed=0, canon="numeric")  # type: ignore[arg-type]
    session = Session.create(setup, runs_dir=runs_dir)
    prepared = session.prepared
    for item in prepared.items:
        prepared.store.append_samples([
            StoredSample(item.id, i, text, prepared.canonicalizer(text, item.choices), {})
            for i, text in enumerate(HOSTILE_ANSWERS)
        ])
    prepared.store.set_status("sampled")
    path = Path(prepared.store.path)
    session.close()
    return path


def rendered(widget) -> str:  # noqa: ANN001
    """What a Static/Label shows (a Rich renderable or a string), as the plain text a terminal would get."""
    content = widget.content
    if isinstance(content, str):  # a string given to a widget is markup: render it the way Textual does
        content = Text.from_markup(content)
    console = Console(width=300, file=io.StringIO(), record=True, color_system=None)
    console.print(content)
    return console.export_text()


def no_controls(text: str) -> bool:
    return not any(c in text for c in CONTROL_CHARS)


async def test_results_samples_and_runs_show_hostile_text_literally(services, tmp_path: Path) -> None:
    path = hostile_run(tmp_path, services.runs_dir)
    services.embedded_demo = False
    app = make_app(services)
    actions: list[str] = []  # an action link in an answer would call these
    app.action_quit = lambda: actions.append("quit")  # type: ignore[method-assign]
    app.action_screenshot = lambda *a: actions.append("screenshot")  # type: ignore[method-assign]
    async with app.run_test(size=(140, 45)) as pilot:
        session = Session.open(path)
        app.session = session
        app.push_screen(ResultsScreen(session, gate=None))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ResultsScreen)
        table = screen.query_one("#items", DataTable)
        assert table.row_count == len(HOSTILE_IDS)
        shown_ids = {str(table.get_row_at(i)[0]) for i in range(table.row_count)}
        assert "[/]" in shown_ids and "[@click=app.quit]x" in shown_ids  # literal, not parsed
        assert all(no_controls(i) for i in shown_ids) and "z" in shown_ids
        for row in range(table.row_count):  # every item's samples open (a `[/]` answer crashed the modal)
            table.move_cursor(row=row)
            await pilot.press("enter")
            await pilot.pause()
            modal = app.screen
            assert isinstance(modal, ItemSamplesModal)
            samples = rendered(modal.query_one("#samples-list", Static))
            title = rendered(modal.query_one("#samples-title", Label))
            assert no_controls(samples) and no_controls(title)
            assert '[@click=app.screenshot("x.svg","/tmp")]42[/]' in samples.replace("\n", "")
            assert "[link=https://evil.example]42[/link]" in samples
            await pilot.click("#samples-list")  # a click on the answers runs no action
            await pilot.press("escape")
            await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("o")  # the Runs screen lists the run by its hostile model name
        await app.workers.wait_for_complete()
        await pilot.pause()
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        cells = [str(c) for c in runs.query_one("#runs", DataTable).get_row_at(0)]
        assert "[/][@click=app.quit]model" in cells and all(no_controls(c) for c in cells)
        session.close()
    assert actions == []


def test_relgate_runs_prints_hostile_names_as_text(services, tmp_path: Path) -> None:
    hostile_run(tmp_path, services.runs_dir)
    env = {**os.environ, "RELGATE_HOME": str(services.runs_dir.parent), "PYTHONPATH": os.getcwd()}
    proc = subprocess.run([sys.executable, "-m", "relgate_tui.cli", "runs", "--run-dir", str(services.runs_dir)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "[/][@click=app.quit]model" in proc.stdout and no_controls(proc.stdout)


FORMULAS = ["=HYPERLINK(\"http://evil\")", "+1+1", "-2+3", "@SUM(A1)", "\t=1"]


@pytest.mark.parametrize("cell", FORMULAS)
def test_csv_export_cells_cannot_start_a_formula(cell: str) -> None:
    doc = {"items": [{"id": cell, "role": "deployment", "samples": 1, "invalid": 0,
                      "classes": [{"answer": cell + "\x1b[31m", "count": 1}], "prediction_set": [cell]}]}
    (row,) = list(csv.DictReader(io.StringIO(render_report(doc, "csv"))))
    assert row["id"] == "'" + cell and row["top_answer"] == "'" + cell and row["prediction_set"] == "'" + cell
    assert row["classes"] == "'" + cell + ":1"  # the escape sequence is gone
    assert row["samples"] == "1"  # numbers are data, untouched


def test_markdown_export_strips_controls_and_credentials() -> None:
    doc = {"endpoint": "https://user:pw@api.example/v1?api_key=SECRET", "model": MODEL,
           "task": {"name": OSC_TITLE + "t"}, "items": [{"id": HOSTILE_IDS[3], "classes": []}]}
    text = render_report(doc, "md")
    assert no_controls(text) and "SECRET" not in text and "pw@" not in text
