"""Studies you can reach (issue 24 §6): the example scores files in ``examples/`` open in Studies through the picker
(ctrl+o) and run; a stored judge audit opens the same way (its direct scores)."""

from __future__ import annotations

from pathlib import Path

from relgate_tui.engine.judging.as_scores import audit_scores
from relgate_tui.engine.judging.scores_file import load_scores
from relgate_tui.tui.app import make_app
from relgate_tui.tui.studies.irt import IRTView
from relgate_tui.tui.studies.picker import ScoresPicker, ScoresTree, examples_dir
from relgate_tui.tui.studies.setup import StudiesScreen
from tests.tui.test_flow import wait_until

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SIZE = (120, 40)


def test_the_examples_are_valid_scores_files_for_each_study():
    assert examples_dir() == EXAMPLES
    judges = load_scores(EXAMPLES / "hanna-coherence-sim-judges.jsonl")
    assert len(judges.judges()) == 3 and set(judges.variants()) == {"original", "typo", "newline"}
    one = load_scores(EXAMPLES / "hanna-coherence-sim-judge.jsonl")
    assert one.judges() == ["sim-judge"] and one.variants() == ["original"]
    jury = load_scores(EXAMPLES / "hanna-coherence-jury.jsonl")
    assert len(jury.judges()) == 3 and len(jury.ids()) >= 50  # the jury's 60/20/20 protocol needs 50 items


async def _open_picker(app, pilot) -> ScoresPicker:
    await pilot.press("t")
    await pilot.pause()
    assert isinstance(app.screen, StudiesScreen)
    await pilot.press("ctrl+o")
    await pilot.pause()
    picker = app.screen
    assert isinstance(picker, ScoresPicker)
    tree = picker.query_one(ScoresTree)
    await wait_until(pilot, lambda: len(tree.root.children) > 0, what="the examples folder")
    return picker


async def test_an_example_opens_in_studies_with_the_picker_and_runs(services):
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        picker = await _open_picker(app, pilot)
        tree = picker.query_one(ScoresTree)
        assert Path(tree.path) == EXAMPLES
        names = [str(n.label) for n in tree.root.children]
        assert "hanna-coherence-sim-judges.jsonl" in names and "make_examples.py" not in names
        node = next(n for n in tree.root.children if str(n.label) == "hanna-coherence-sim-judges.jsonl")
        tree.move_cursor(node)
        await pilot.press("enter")
        await pilot.pause()
        studies = app.screen
        assert isinstance(studies, StudiesScreen)
        await wait_until(pilot, lambda: studies.table is not None, what="the example file")
        assert studies.loaded_path == str(EXAMPLES / "hanna-coherence-sim-judges.jsonl")
        assert studies.query_one("#study").value == "irt"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, IRTView), timeout=120, what="the IRT view")
        await pilot.pause()
        assert [j.judge for j in app.screen.result.judges] == ["sim-judge", "sim-judge-long", "sim-judge-sensitive"]


async def test_a_stored_audit_opens_in_studies_from_the_picker(services, tmp_path: Path):
    import asyncio

    from relgate_tui.cli import main
    from relgate_tui.demo import DemoServer
    from relgate_tui.engine.judging import list_audits

    def build() -> None:
        with DemoServer() as demo:
            assert main(["judge-audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", demo.base_url,
                         "--model", "sim-judge", "--protocol", "direct", "--reps", "1", "--inputs", "4",
                         "--candidates", "5", "--json", str(tmp_path / "a.json")]) == 0

    await asyncio.to_thread(build)  # RELGATE_HOME is the test's data dir (conftest): the audit is stored there
    (summary,) = list_audits()
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        picker = await _open_picker(app, pilot)
        audits = picker.query_one("#picker-audit-list")
        assert audits.option_count == 1
        audits.focus()
        audits.highlighted = 0
        await pilot.press("enter")
        await pilot.pause()
        studies = app.screen
        assert isinstance(studies, StudiesScreen)
        await wait_until(pilot, lambda: studies.table is not None, what="the audit's scores")
        assert len(studies.table) == len(audit_scores(summary.path).table) == 20
