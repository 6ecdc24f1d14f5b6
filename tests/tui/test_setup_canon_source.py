"""Setup says which canonicalizer a task file gets and why (issue 31 item 4): a file without reference answers whose
questions ask for numbers is suggested "numeric" from its questions, and the task panel says so."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, Select, Static

from relgate_tui.tui.app import make_app
from relgate_tui.tui.setup import TASK_FILE, SetupScreen
from tests.tui.test_flow import open_screen


async def test_a_task_file_without_references_is_suggested_numeric_from_its_questions(services, tmp_path: Path) -> None:
    task = tmp_path / "sums.jsonl"
    task.write_text("".join(json.dumps({"id": i, "question": f"What is {100 + i} plus {200 + i}?"}) + "\n"
                            for i in range(10)))
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_screen(app, pilot, "n", SetupScreen)
        screen.query_one("#task", Select).value = TASK_FILE
        await pilot.pause()
        screen.query_one("#task-path", Input).value = str(task)
        screen.query_one("#task-path", Input).post_message(Input.Submitted(screen.query_one("#task-path", Input),
                                                                           str(task)))
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        info = str(screen.query_one("#task-info", Static).render())
        assert "no references" in info and "suggested from the questions" in info
        assert screen.query_one("#canon", Select).value == "numeric"
