"""Stored judge audits in Runs (issue 9 item 4): listed with kind "audit" and reopened fully offline."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from textual.widgets import DataTable

from relgate_tui.demo import DemoServer
from relgate_tui.engine.judging import Judge, PromptVariant
from relgate_tui.engine.judging.audit_run import JudgeAuditConfig, audit_result
from relgate_tui.engine.judging.variants import DIRECT_TEMPLATE
from relgate_tui.tui.app import make_app
from relgate_tui.tui.judge import JudgeScreen
from relgate_tui.tui.runs import RunsScreen
from tests.tui.runfixtures import stored_run
from tests.tui.test_flow import wait_until
from tests.tui.test_runs import no_network  # noqa: F401  (fixture)


async def test_an_audit_is_listed_in_runs_and_reopens_offline(services, tmp_path, request):
    audits = Path(services.runs_dir).parent / "audits"
    with DemoServer() as demo:
        cfg = JudgeAuditConfig(data="hanna", criterion="Coherence", endpoint=demo.base_url, model="sim-judge",
                               protocol="both", reps=1, inputs=4, candidates=4, cache_dir=str(tmp_path / "c"),
                               store=True, store_dir=str(audits),
                               more_judges=(Judge(demo.base_url, "sim-judge-long"),),
                               variants=(PromptVariant("strict", direct=DIRECT_TEMPLATE.replace(
                                   "{{definition}}", "Definition of {{criterion}}: {{description}} Be strict.\n")),))
        await asyncio.to_thread(audit_result, cfg)
    (stored,) = list(audits.iterdir())
    expected = json.loads((stored / "results.json").read_text())
    stored_run(services.runs_dir, model="model-a", seed=1)
    attempts = request.getfixturevalue("no_network")  # from here on, no network at all
    services.embedded_demo = False
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("o")
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await wait_until(pilot, lambda: bool(runs.audits), what="the audits")
        table = runs.query_one("#runs", DataTable)
        kinds = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert sorted(kinds) == ["audit", "run"]
        table.move_cursor(row=kinds.index("audit"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, JudgeScreen) and app.screen.state == "results",
                         what="the reopened audit")
        screen = app.screen
        assert screen.doc == expected  # every number unchanged, with no network at all
        assert "offline" in str(screen.query_one("#res-heading").content)
        # several judges × variants: n steps through them; each view shows that study's own numbers
        studies = expected["studies"]
        assert [(c["judge"], c["variant"]) for c in studies] == [
            ("sim-judge", "original"), ("sim-judge", "strict"), ("sim-judge-long", "original"), ("sim-judge-long", "strict")]
        for i in range(1, 5):
            await pilot.press("n")
            await pilot.pause()
            cell = studies[i % 4]
            assert f"{cell['judge']} [{cell['variant']}]" in str(screen.query_one("#res-heading").content)
            likert = screen.query_one("#likert", DataTable)
            shown = [str(likert.get_row_at(r)[2]) for r in range(likert.row_count)]
            assert shown == [f"{row['coverage']:.3f}" for row in cell["direct"]["likert_conformal"]]
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen), what="back to Runs")
    assert not attempts
