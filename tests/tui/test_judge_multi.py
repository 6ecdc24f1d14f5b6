"""Several judges and prompt variants from the judge audit screen (issue 9 item 3 and its acceptance): three of the
demo's simulated judges × the original prompt and two perturbations run from the TUI over real loopback HTTP, with
progress per judge and the results cycling through judges × variants; Runs then lists the audit and reopens it with
no network at all, every number unchanged. Also the template-file variant (inline one-line error) and the
last-settings restore of the new fields."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Checkbox, DataTable, Input, SelectionList, Static

from relgate_tui.engine.judging import perturbed_variants
from relgate_tui.engine.judging.variants import DIRECT_TEMPLATE
from relgate_tui.tui.app import make_app
from relgate_tui.tui.home import HomeScreen
from relgate_tui.tui.judge import JudgeScreen
from relgate_tui.tui.runs import RunsScreen
from relgate_tui.tui.widgets.progress import ProgressPanel
from tests.tui.test_flow import focus_on, wait_until
from tests.tui.test_judge import SIZE, fill, open_judge, text_of
from tests.tui.test_runs import no_network  # noqa: F401  (fixture)

JUDGES = ["sim-judge", "sim-judge-long", "sim-judge-short"]
# 4 inputs × 4 candidates, k = 1, both protocols: (4·6·2 + 4·4) = 64 answers per judge and prompt variant
TINY = {"n-inputs": "4", "n-candidates": "4", "reps": "1", "seed": "3"}


async def pool_listed(screen: JudgeScreen, pilot) -> SelectionList:
    judges = screen.query_one("#judges", SelectionList)
    await wait_until(pilot, lambda: judges.option_count > 1, what="the demo's judge pool")
    return judges


def options(judges: SelectionList) -> list[str]:
    return [str(judges.get_option_at_index(i).value) for i in range(judges.option_count)]


async def test_three_judges_two_variants_run_and_reopen_offline(services, request):
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        judges = await pool_listed(screen, pilot)
        offered = options(judges)
        assert offered[0] == "sim-judge" and set(JUDGES) <= set(offered)
        assert all(m.startswith("sim-judge") for m in offered)  # the demo's answer models are not offered as judges
        assert screen._ticked_models() == ["sim-judge"]
        await fill(screen, pilot, "both", **TINY)
        assert "1 judge × 1 prompt variant" in text_of(screen, "#plan")
        # tick two more judges with the keyboard (space toggles the highlighted one) and both perturbations by mouse
        judges.focus()
        for name in JUDGES[1:]:
            judges.highlighted = offered.index(name)
            await pilot.press("space")
        for kind in ("typo", "newline"):
            await pilot.click(f"#var-{kind}")
        await pilot.pause()
        assert screen._ticked_models() == JUDGES
        assert all(screen.query_one(f"#var-{k}", Checkbox).value for k in ("typo", "newline"))
        plan = text_of(screen, "#plan")
        assert "3 judges × 3 prompt variants (original, typo, newline)" in plan
        # paper 000's protocol: k = 1 verdict per unordered pair (6 pairs of 4 candidates), in a seeded order
        assert f"{4 * 6 * 1 * 9:,} judge answers" in plan and f"{4 * 4 * 9:,} judge answers" in plan

        requests = len(app.demo.chat_requests)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.state in ("results", "setup"), what="the audit")
        assert screen.state == "results", text_of(screen, "#judge-error")
        cfg = screen.config
        assert [j.model for j in cfg.judges()] == JUDGES and {j.endpoint for j in cfg.judges()} == {app.demo.base_url}
        assert cfg.variants == tuple(perturbed_variants("typo,newline", seed=3, criterion="Coherence"))  # as the CLI
        # progress per judge: each judge's own count, all of them done
        assert sorted(screen.progress) == sorted(JUDGES)
        assert {(p.done, p.total) for p in screen.progress.values()} == {(40 * 3, 40 * 3)}
        phase = str(screen.query_one(ProgressPanel).query_one("#phase", Static).content)
        assert all(f"{name}" in phase for name in JUDGES) and "120 / 120" in phase
        assert len(app.demo.chat_requests) - requests == 40 * 9  # every answer asked once
        # the results: n cycles through judges × variants, each view showing that cell's own numbers
        live = screen.doc
        studies = live["studies"]
        assert [(c["judge"], c["variant"]) for c in studies] == [
            (j, v) for j in JUDGES for v in ("original", "typo", "newline")]
        for i in range(1, len(studies) + 1):
            await pilot.press("n")
            await pilot.pause()
            cell = studies[i % len(studies)]
            assert f"{cell['judge']} [{cell['variant']}] ({i % 9 + 1} of 9" in text_of(screen, "#res-heading")
            likert = screen.query_one("#likert", DataTable)
            shown = [str(likert.get_row_at(r)[2]) for r in range(likert.row_count)]
            assert shown == [f"{row['coverage']:.3f}" for row in cell["direct"]["likert_conformal"]]
        assert len({json.dumps([c["pairwise"], c["direct"]], sort_keys=True) for c in studies}) > 1  # not one cell shown 9 times

        await pilot.press("escape")  # results → setup
        await pilot.press("escape")  # setup → Home
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), what="home")
        (stored,) = list((Path(services.runs_dir).parent / "audits").iterdir())
        expected = json.loads((stored / "results.json").read_text())
        assert expected == live  # the stored result is the document the screen showed

        attempts = request.getfixturevalue("no_network")  # from here on, no network at all
        await pilot.press("o")
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await wait_until(pilot, lambda: bool(runs.audits), what="the audits")
        table = runs.query_one("#runs", DataTable)
        kinds = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert kinds == ["audit"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, JudgeScreen) and app.screen.state == "results",
                         what="the reopened audit")
        reopened = app.screen
        assert reopened is not screen and "offline" in text_of(reopened, "#res-heading")
        assert json.dumps(reopened.doc, sort_keys=True) == json.dumps(expected, sort_keys=True)  # every number
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen), what="back to Runs")
    assert not attempts


async def test_template_file_variant_has_an_inline_error_and_the_next_visit_restores_the_form(services, tmp_path):
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        judges = await pool_listed(screen, pilot)
        await fill(screen, pilot, "direct", **{"n-inputs": "2", "n-candidates": "2", "reps": "1", "seed": "0"})
        field = screen.query_one("#variant-file", Input)
        missing = tmp_path / "missing.txt"
        field.value = f"strict={missing}"
        await focus_on(pilot, field)
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(text_of(screen, "#variant-error")), what="the template's error")
        error = text_of(screen, "#variant-error")
        assert str(missing) in error and "cannot read" in error and "\n" not in error.strip()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert screen.state == "setup" and "template file" in text_of(screen, "#judge-error")
        bad = tmp_path / "bad.txt"
        bad.write_text("Rate it 1-5, no placeholder here.", encoding="utf-8")
        field.value = str(bad)
        await pilot.pause()
        assert text_of(screen, "#variant-error") == ""  # editing the field clears the old error
        await pilot.press("enter")
        await wait_until(pilot, lambda: "{{response}}" in text_of(screen, "#variant-error"), what="the error")

        template = tmp_path / "strict prompt.txt"  # a bare path: the variant is named after the file
        template.write_text(DIRECT_TEMPLATE.replace("{{definition}}", "{{definition}}Be strict.\n"), encoding="utf-8")
        field.value = str(template)
        await pilot.click("#var-newline")
        judges.select("sim-judge-hedges")
        await pilot.press("ctrl+s")  # not read yet: ctrl+s reads the file, then starts
        await wait_until(pilot, lambda: screen.state == "results", what="the audit")
        ran = screen.config
        assert [v.name for v in ran.to_spec().variants] == ["original", "newline", "strict-prompt"]
        assert ran.variants[-1].direct == template.read_text(encoding="utf-8")
        assert [j.model for j in ran.judges()] == ["sim-judge", "sim-judge-hedges"]
        assert len(screen.doc["studies"]) == 6
        await pilot.press("escape")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), what="home")

        await pilot.press("j")
        again = app.screen
        assert isinstance(again, JudgeScreen) and again is not screen
        await wait_until(pilot, lambda: again.audit_set is not None and again.variant_read != ""
                         and again.query_one("#judges", SelectionList).option_count > 1, what="the restored form")
        await pilot.pause()
        assert again._ticked_models() == ["sim-judge", "sim-judge-hedges"]
        assert [again.query_one(f"#var-{k}", Checkbox).value for k in ("typo", "newline")] == [False, True]
        assert again.query_one("#variant-file", Input).value == str(template)
        cfg, _ = again.collect()
        assert cfg == ran  # the same audit again: every answer comes from the store
