"""The Intervals computation from an audit shows where it is and ≈ how long is left (it ran 402 s with only
"computing…" in the title): the subtitle's estimate is the steps so far at their mean pace, and the real study
passes through it after each seed."""

from __future__ import annotations

from pathlib import Path

import pytest

from relgate_tui.tui.app import make_app
from relgate_tui.tui.judge import audit_studies
from relgate_tui.tui.judge.audit_studies import progress_title
from relgate_tui.tui.studies.intervals import IntervalsView
from tests.tui.test_audit_studies import _reopen, stored  # noqa: F401 - the stored audit fixture
from tests.tui.test_flow import wait_until


@pytest.mark.parametrize(("kind", "done", "total", "elapsed", "expected"), [
    ("intervals", 6, 60, 30.0, "intervals: seed 6 of 30 · 30 s so far, ≈ 4.5 min left (Escape cancels)"),
    ("intervals", 35, 60, 350.0,
     "intervals: calibration-size curve, seed 5 of 30 · 5.8 min so far, ≈ 4.2 min left (Escape cancels)"),
    ("intervals", 3, 30, 9.0, "intervals: seed 3 of 30 · 9 s so far, ≈ 81 s left (Escape cancels)"),
    ("intervals", 60, 60, 400.0, "intervals: calibration-size curve, seed 30 of 30 (Escape cancels)"),
    ("jury", 2, 10, 3600.0, "jury: split 2 of 10 · 60.0 min so far, ≈ 4.0 h left (Escape cancels)"),
    ("intervals", 1, 60, None, "intervals: seed 1 of 30 (Escape cancels)"),
])
def test_progress_title_says_where_and_how_long_is_left(kind, done, total, elapsed, expected) -> None:
    assert progress_title(kind, done, total, elapsed) == expected


async def test_the_audit_intervals_show_progress_and_an_estimate(services, stored: Path,  # noqa: F811
                                                                 monkeypatch) -> None:
    monkeypatch.setattr(audit_studies, "SEEDS", 3)
    monkeypatch.setattr(audit_studies, "METHODS", ("cqr", "r2ccp", "ordinal-aps"))
    titles: list[str] = []
    real = audit_studies._progress

    def recording(screen, done, total, kind="intervals"):
        real(screen, done, total, kind)
        titles.append(screen.sub_title)

    monkeypatch.setattr(audit_studies, "_progress", recording)
    services.embedded_demo = False
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        await _reopen(app, pilot, stored)
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, IntervalsView), what="the intervals view")
    assert len(titles) == 6  # after each seed of the comparison, then of the curve
    assert titles[0].startswith("judge audit · results · intervals: seed 1 of 3 · ")
    assert all("left (Escape cancels)" in t for t in titles[:-1])
    assert "calibration-size curve, seed 3 of 3" in titles[-1]
