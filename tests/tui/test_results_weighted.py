"""Weighted conformal (eq. 10.2) shown when the task file gives weights: the results document's
``weighted_conformal`` block and per-item fields, the Markdown section, and the Results screen's line."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from relgate_tui.core.certification.weighted_sets import weighted_summary
from relgate_tui.engine.certification.report import render_report
from relgate_tui.engine.certification.session import Session
from relgate_tui.tui.app import make_app
from relgate_tui.tui.results import ResultsScreen
from tests.tui.runfixtures import stored_run


def _weighted_task(path: Path, weights: bool = True) -> Path:
    rng = random.Random(3)
    rows = []
    for i in range(40):
        a, b = rng.randrange(100, 500), rng.randrange(100, 500)
        row = {"id": f"w{i:02d}", "question": f"What is {a} + {b}?", "answer": str(a + b)}
        if weights:
            row["weight"] = 0.5 if i % 2 else 2.0
        rows.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def weighted_run(services, tmp_path):
    return stored_run(services.runs_dir, task=str(_weighted_task(tmp_path / "shifted.jsonl")), verification="auto")


def test_document_and_markdown_show_weighted_conformal(weighted_run, services, tmp_path):
    session = Session.open(weighted_run)
    try:
        doc = session.document(0.2)
        wc = session.analysis().weighted(0.2)
    finally:
        session.close()
    assert wc is not None
    block = doc["weighted_conformal"]
    assert block["n_deployment"] == 20 and block["n_cal"] == wc.n_cal > 0
    assert block["share_infinite"] == wc.share_infinite and block["average_set_size"] == wc.average_set_size
    assert block["coverage"]["n"] == 20 and block["coverage"]["estimate"] == wc.coverage.estimate
    assert sum(block["m_star_frequencies"].values()) == 20
    deployment = [it for it in doc["items"] if it["role"] == "deployment"]
    by_id = {w.item_id: w for w in wc.items}
    for it in deployment:
        w = by_id[it["id"]]
        assert it["weight"] == w.weight and it["weighted_prediction_set"] == list(w.prediction_set)
        assert it["weighted_m_star"] == (None if w.m_star == float("inf") else int(w.m_star))
    assert all("weighted_m_star" not in it and it["weight"] in (0.5, 2.0) for it in doc["items"]
               if it["role"] == "calibration")
    md = render_report(doc, "md")
    assert "## Weighted conformal (covariate shift, eq. 10.2)" in md
    assert f"on {block['coverage']['n']} deployment items with references" in md
    assert "M*_w per deployment item: " in md and "Kish" in md

    plain = stored_run(services.runs_dir, task=str(_weighted_task(tmp_path / "plain.jsonl", weights=False)),
                       verification="auto")
    session = Session.open(plain)
    try:
        doc = session.document(0.2)
    finally:
        session.close()
    assert doc["weighted_conformal"] is None and all("weight" not in it for it in doc["items"])
    assert "Weighted conformal" not in render_report(doc, "md")


def _shown(screen: ResultsScreen) -> str:
    """The validation panel's text as the screen draws it (wide console: one line per row)."""
    console = Console(width=400, record=True, file=io.StringIO())
    console.print(screen.query_one("#validation", Static).content)
    return console.export_text()


async def test_results_screen_shows_the_weighted_line(services, weighted_run):
    app = make_app(services)
    async with app.run_test(size=(140, 50)) as pilot:
        session = Session.open(weighted_run)
        app.session = session
        app.push_screen(ResultsScreen(session, gate=0.5))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ResultsScreen)
        r = screen.view.result
        lines = [str(x) for x in screen._extra_lines(r)]
        expected = weighted_summary(session.analysis().weighted(r.alpha, r.confidence))
        assert expected in lines and expected.startswith("weighted conformal (eq. 10.2, covariate shift)")
        assert expected in _shown(screen)
        for _ in range(5):
            await pilot.press("plus")  # α changes: the line follows
        r2 = screen.view.result
        assert r2.alpha > r.alpha
        w2 = session.analysis().weighted(r2.alpha, r2.confidence)
        assert weighted_summary(w2) in _shown(screen) and w2.n_infinite < 20  # finite M*_w at the larger α
        session.close()
