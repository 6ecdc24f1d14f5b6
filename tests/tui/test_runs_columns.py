"""Runs at 80×24 and 120×40 (issue 31 items 10 and 17): every column fits whole — no header or date cut, the status
on screen — and two runs of one model and task tell their endpoints apart."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.certification.setup import RunSetup
from relgate_tui.tui.app import make_app
from relgate_tui.tui.runs import RunsScreen
from tests.tui.runfixtures import stored_run


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_runs_columns_fit_and_endpoints_differ(services, size) -> None:
    stored_run(services.runs_dir, model="qwen2.5-coder-0.5b-instruct-q4_k_m")
    for port in (47820, 39001):  # the embedded demo and a demo-server: one model, one task, two endpoints
        Session.create(RunSetup(base_url=f"http://127.0.0.1:{port}/v1", model="sim-mid",
                                task="bigbench-3digit-addition", limit=6),
                       runs_dir=services.runs_dir).close()
    app = make_app(services)
    async with app.run_test(size=size) as pilot:
        await pilot.press("o")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        table = screen.query_one("#runs", DataTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width  # nothing cut or scrolled away
        keys = [c.key.value for c in table.ordered_columns]
        assert "status" in keys and "created" in keys
        for column in table.ordered_columns:  # every header whole
            assert column.get_render_width(table) >= len(column.label.plain) + 2
        created = {str(table.get_cell(str(s.path), "created")) for s in screen.summaries.values()}
        assert all(len(c) in (5, 11) for c in created)  # "MM-DD" or "MM-DD hh:mm", never cut mid-time
        models = {str(table.get_cell(str(s.path), "model")) for s in screen.summaries.values() if s.model == "sim-mid"}
        assert models == {"sim-mid (simulated)" if size[0] >= 110 else "sim-mid (sim)"}
        width = next(c.width for c in table.ordered_columns if c.key.value == "model")
        assert all(len(m) <= width for m in models)  # whole on screen, never "sim-mid (si…"
        if size[0] >= 110:
            endpoints = {str(table.get_cell(str(s.path), "endpoint")) for s in screen.summaries.values()
                         if s.model == "sim-mid"}
            assert endpoints == {":47820", ":39001"}
        else:  # 80 columns: the highlighted run's endpoint is in the line below the table
            hint = str(screen.query_one("#runs-hint").render())
            assert "127.0.0.1:" in hint
