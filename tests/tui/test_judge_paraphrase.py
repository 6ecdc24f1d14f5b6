"""The paraphrase variant in the judge setup (issue 13 §1): the ``paraphrase`` tick opens the paraphraser panel;
"Write paraphrase" asks the demo's sim-paraphraser over loopback (once: a second write is served by the cache) and
shows the text in an editable TextArea; a broken edit is an inline one-line error that keeps the audit from
starting; the edited text is what is asked and stored; the next visit restores it."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Checkbox, Input, TextArea

from relgate_tui.engine.judging.variants import DIRECT_TEMPLATE
from relgate_tui.tui.app import make_app
from relgate_tui.tui.judge import JudgeScreen
from relgate_tui.tui.judge.paraphrase import ParaphrasePanel
from tests.tui.test_flow import focus_on, press_button, wait_until
from tests.tui.test_judge import SIZE, fill, open_judge, text_of

TINY = {"n-inputs": "3", "n-candidates": "3", "reps": "1", "seed": "2"}



def _paraphraser_calls(app) -> int:
    return sum(1 for r in app.demo.chat_requests if r.model == "sim-paraphraser")


async def test_write_edit_and_run_the_paraphrase_variant(services):
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        await fill(screen, pilot, "direct", **TINY)
        panel = screen.query_one(ParaphrasePanel)
        assert not panel.display  # hidden until the tick
        tick = screen.query_one("#var-paraphrase", Checkbox)
        await focus_on(pilot, tick)
        await pilot.press("space")
        await pilot.pause()
        assert tick.value and panel.display
        assert "Write paraphrase" in text_of(screen, "#judge-error")  # the plan waits for the paraphrase
        assert not screen.query_one("#para-direct", TextArea).display

        await press_button(pilot, screen.query_one("#para-generate"))
        await wait_until(pilot, lambda: panel.written is not None, what="the paraphrase")
        assert _paraphraser_calls(app) == 1
        area = screen.query_one("#para-direct", TextArea)
        assert area.display and not screen.query_one("#para-pairwise", TextArea).display  # direct protocol only
        written = area.text
        assert written == panel.written.direct and written != DIRECT_TEMPLATE and "{{response}}" in written
        assert "written by sim-paraphraser, seed 2" in text_of(screen, "#para-status")
        assert "1 call, 0 cached" in text_of(screen, "#para-status")
        assert "2 prompt variants (original, paraphrase)" in text_of(screen, "#plan")

        # a broken edit: the {{input}} placeholder deleted → inline one-line error, the audit cannot start
        row = next(i for i, line in enumerate(written.split("\n")) if "{{input}}" in line)
        col = written.split("\n")[row].index("{{input}}")
        area.replace("", (row, col), (row, col + len("{{input}}")))
        await pilot.pause()
        assert text_of(screen, "#para-error") == "paraphrase: the direct paraphrase changed the placeholders"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert screen.state == "setup" and "changed the placeholders" in text_of(screen, "#judge-error")

        # undo, then a valid edit typed at the start of the text: the error clears
        area.replace("{{input}}", (row, col), (row, col))
        await focus_on(pilot, area)
        area.move_cursor((0, 0))
        await pilot.press(*"Please ")
        await pilot.pause()
        assert text_of(screen, "#para-error") == ""
        edited = area.text
        assert edited == "Please " + written

        # writing again is served by the request cache (and replaces the edit with the model's text)
        await press_button(pilot, screen.query_one("#para-generate"))
        await wait_until(pilot, lambda: "1 cached" in text_of(screen, "#para-status"), what="the cached write")
        assert _paraphraser_calls(app) == 1 and area.text == written
        await focus_on(pilot, area)
        area.move_cursor((0, 0))
        await pilot.press(*"Please ")
        await pilot.pause()

        judged = len(app.demo.chat_requests)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.state in ("results", "setup"), what="the audit")
        assert screen.state == "results", text_of(screen, "#judge-error")
        assert [v.name for v in screen.config.to_spec().variants] == ["original", "paraphrase"]
        asked = [r for r in app.demo.chat_requests[judged:]]
        assert len(asked) == 2 * 3 * 3 and _paraphraser_calls(app) == 1
        (stored,) = list((Path(services.runs_dir).parent / "audits").iterdir())
        manifest = json.loads((stored / "manifest.json").read_text())
        (variant,) = [v for v in manifest["spec"]["variants"] if v["name"] == "paraphrase"]
        assert variant["direct"] == edited and variant["pairwise"] is None
        assert variant["origin"]["model"] == "sim-paraphraser" and variant["origin"]["edited"] is True
        assert variant["origin"]["seed"] == 2

        await pilot.press("escape")  # results → setup
        await pilot.press("escape")  # setup → Home (the App keeps the settings)
        await pilot.pause()
        again = await open_judge(app, pilot)
        assert again.query_one("#var-paraphrase", Checkbox).value
        restored = again.query_one(ParaphrasePanel)
        assert restored.display and again.query_one("#para-direct", TextArea).text == edited
        assert "(edited)" in text_of(again, "#para-status")


async def test_the_paraphraser_field_and_a_failed_write(services):
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        await fill(screen, pilot, "both", **TINY)
        screen.query_one("#var-paraphrase", Checkbox).value = True
        await pilot.pause()
        field = screen.query_one("#paraphraser", Input)
        await focus_on(pilot, field)
        await pilot.press(*"sim-judge")  # a judge is no paraphraser: its answers fail the check
        await press_button(pilot, screen.query_one("#para-generate"))
        await wait_until(pilot, lambda: bool(text_of(screen, "#para-error")), what="the error")
        error = text_of(screen, "#para-error")
        assert error.startswith("paraphraser sim-judge wrote no usable paraphrase in 3 attempts") and "\n" not in error
        assert _paraphraser_calls(app) == 0 and not screen.query_one("#para-direct", TextArea).display
        field.value = ""
        await press_button(pilot, screen.query_one("#para-generate"))  # empty field on the demo: sim-paraphraser, both templates
        await wait_until(pilot, lambda: screen.query_one(ParaphrasePanel).written is not None, what="the paraphrase")
        assert _paraphraser_calls(app) == 2 and text_of(screen, "#para-error") == ""
        assert all(screen.query_one(f"#para-{k}", TextArea).display for k in ("pairwise", "direct"))
        assert isinstance(app.screen, JudgeScreen)
        assert "2 prompt variants (original, paraphrase)" in text_of(screen, "#plan")


async def test_a_cancelled_audit_releases_its_write_lock_so_it_can_be_resumed(services):
    """The stored audit's write lock is held by the running audit only: cancelling releases it (the engine closes the
    store as the cancellation unwinds), so starting the same audit again resumes it instead of a lock error."""
    app = make_app(services, demo_latency_ms=40.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        await fill(screen, pilot, "pairwise", **{"n-inputs": "20", "n-candidates": "6", "reps": "1"})
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.answers[0] >= 8, what="the first answers")
        screen._answer_stop(True)
        await wait_until(pilot, lambda: screen.state == "setup", timeout=10, what="the audit to stop")
        app.demo.latency_ms = 0.0  # the latency made the cancel land mid-run; the resume below needs none
        (stored,) = list((Path(services.runs_dir).parent / "audits").iterdir())
        kept = len((stored / "answers.jsonl").read_text().splitlines())
        assert 8 <= kept < 20 * 15
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.state in ("results", "setup"), what="the resumed audit")
        assert screen.state == "results", text_of(screen, "#judge-error")
        assert len((stored / "answers.jsonl").read_text().splitlines()) == 20 * 15
