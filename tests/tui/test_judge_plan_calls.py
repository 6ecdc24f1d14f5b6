"""The judge audit's plan counts what it will ask: "900 judge answers … made + cached add up to this" was followed
by 700 calls made, because a direct request asks all its repetitions in one call (``n = reps``). The plan now gives
the calls beside the answers, and the finished audit's calls made + cached are that figure (the demo server returns
several answers per call, as OpenAI and vLLM do)."""

from __future__ import annotations

import re

from textual.widgets import Static

from relgate_tui.tui.app import make_app
from tests.tui.test_flow import wait_until
from tests.tui.test_judge import fill, open_judge


async def test_the_plan_counts_the_calls_the_audit_makes(services) -> None:
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_judge(app, pilot)
        await fill(screen, pilot, "both")  # 8 inputs × 6 candidates, 3 repetitions
        plan = " ".join(str(screen.query_one("#plan", Static).render()).split())
        pairwise, direct = 8 * 15 * 3, 8 * 6 * 3
        assert f"pairwise {pairwise:,} judge answers" in plan
        assert f"direct {direct:,} judge answers in {8 * 6:,} calls" in plan
        assert f"in all {pairwise + direct:,} judge answers in {pairwise + 8 * 6:,} calls" in plan
        promised = int(re.search(r"calls made \+ cached add up to ([\d,]+)", plan).group(1).replace(",", ""))
        assert promised == pairwise + 8 * 6
        assert f"one call per answer: {pairwise + direct:,}" in plan  # a server that ignores n, said
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.state in ("results", "setup"), what="the audit")
        assert screen.state == "results"
        calls = screen.result.total_calls
        assert calls["made"] + calls["cached"] == promised and calls["failed"] == 0
