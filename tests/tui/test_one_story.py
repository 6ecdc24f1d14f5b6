"""One story per figure (issue 24 §5): a run's headline figures — reliability level, its bound, M* and the gate —
read the same in Runs (the TUI list and ``relgate runs``), Results (opened from Runs), Compare, ``relgate report``
and the JSON, for an imported run without a gate, an imported run with one and a run labelled here."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from textual.widgets import DataTable, Digits

from relgate_tui.cli import main
from relgate_tui.engine.certification.report import render_report
from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.runs.listing import list_runs
from relgate_tui.tui.app import make_app
from relgate_tui.tui.compare import CompareScreen
from relgate_tui.tui.results import ResultsScreen
from relgate_tui.tui.runs import RunsScreen
from relgate_tui.tui.widgets.progress import ProgressPanel
from tests.tui.runfixtures import stored_run
from tests.tui.test_flow import open_screen

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


def _label_all(path: Path, gate: float) -> None:
    """Every calibration item verified by hand (the reference's rank), saved with ``gate`` as a TUI run is."""
    session = Session.open(path)
    for item_id in session.pending_items():
        view = session.item_view(item_id)
        ranks = [c.rank for c in view.candidates if c.answer in view.references]
        session.label(item_id, rank=ranks[0]) if ranks else session.label(item_id, none=True)
    session.save_results(gate=gate)
    session.close()


@pytest.fixture
def three_runs(services, capsys) -> dict[str, Path]:
    """An lm-eval import (no gate), an Inspect import gated at 0.5 and a run labelled here gated at 0.95."""
    assert main(["import", "lm-eval", str(FIXTURES / "lm_eval" / "addition")]) == 0
    assert main(["import", "inspect", str(FIXTURES / "inspect" / "addition_zstd.eval"), "--min-reliability",
                 "0.5"]) == 0
    labelled = stored_run(services.runs_dir, model="labelled-here", alpha=0.25)
    _label_all(labelled, 0.95)
    capsys.readouterr()
    runs = {s.model: s.path for s in list_runs(services.runs_dir)}
    return {"lm-eval": runs["sim-mid"], "inspect": runs["openai-api/relgate/sim-mid"], "here": labelled}


def _gate_word(text: str) -> str:
    """PASS / FAIL / "no gate" from any screen's wording."""
    low = text.lower()
    for word in ("pass", "fail"):
        if re.search(rf"\b{word}\b", low):
            return word.upper()
    assert "no gate" in low, text
    return "no gate"


def _report_figures(doc: dict) -> dict:
    md = render_report(doc, "md")
    level = re.search(r"\*\*Reliability level ([\d.]+)%\*\* \(at least ([\d.]+)%", md)
    m_star = re.search(r"M\* = (∞|\d+)", md)
    gate = re.search(r"- Gate: (.*)", md)
    assert level and m_star and gate, md
    assert "M* = ∞ — M* = ∞" not in md
    return {"level": float(level.group(1)) / 100, "bound": float(level.group(2)) / 100, "m_star": m_star.group(1),
            "gate": _gate_word(gate.group(1))}


def _json_figures(doc: dict) -> dict:
    gate = "no gate" if doc["min_reliability"] is None else ("PASS" if doc["passed"] else "FAIL")
    return {"level": doc["reliability_level"], "bound": doc["reliability_lower_bound"],
            "m_star": "∞" if doc["m_star"] is None else str(doc["m_star"]), "gate": gate}


def _same(a: dict, b: dict, where: str, tol: float) -> None:
    assert a["m_star"] == b["m_star"] and a["gate"] == b["gate"], (where, a, b)
    assert math.isclose(a["level"], b["level"], abs_tol=tol) and math.isclose(a["bound"], b["bound"], abs_tol=tol), \
        (where, a, b)


async def test_a_runs_headline_figures_agree_across_every_screen(services, three_runs, capsys):
    services.embedded_demo = False
    truth = {name: _json_figures(json.loads((path / "results.json").read_text())) for name, path in three_runs.items()}
    assert truth["inspect"]["gate"] in ("PASS", "FAIL") and truth["here"]["gate"] in ("PASS", "FAIL")
    assert truth["lm-eval"]["gate"] == "no gate" and truth["lm-eval"]["m_star"] == "∞"
    assert truth["here"]["m_star"] != "∞"  # a finite M* is compared too

    # relgate report (Markdown) and relgate runs (the CLI list)
    for name, path in three_runs.items():
        _same(_report_figures(json.loads((path / "results.json").read_text())), truth[name], f"report {name}", 5e-4)
    by_path = {s.path: s for s in list_runs(services.runs_dir)}
    for name, path in three_runs.items():
        s = by_path[path]
        _same({"level": s.reliability_level, "bound": s.reliability_lower_bound, "m_star": s.m_star_text,
               "gate": s.gate_text}, truth[name], f"relgate runs {name}", 1e-12)
    assert main(["runs"]) == 0
    listing = capsys.readouterr().out
    assert "no gate" in listing and "∞" in listing, listing

    app = make_app(services)
    async with app.run_test(size=(160, 50)) as pilot:
        runs = await open_screen(app, pilot, "o", RunsScreen)
        table = runs.query_one("#runs", DataTable)
        for name, path in three_runs.items():  # the Runs screen
            level_cell = str(table.get_cell(str(path), "level"))
            level, bound = (float(x) for x in re.findall(r"[\d.]+", level_cell))
            _same({"level": level, "bound": bound, "m_star": str(table.get_cell(str(path), "mstar")),
                   "gate": _gate_word(str(table.get_cell(str(path), "gate")))}, truth[name], f"Runs {name}", 5e-4)

        for name, path in three_runs.items():  # Results, opened from Runs
            table.move_cursor(row=table.get_row_index(str(path)))
            await pilot.press("enter")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ResultsScreen)
            r = screen.view.result
            shown_level = float(str(screen.query_one("#level", Digits).value))
            shown_bound = float(re.search(r"≥ ([\d.]+)", str(screen.query_one("#bound").render())).group(1))
            alpha_info = str(screen.query_one("#alpha-info").render())
            m_star = re.search(r"M\* = (∞|\d+)", alpha_info).group(1)
            _same({"level": shown_level, "bound": shown_bound, "m_star": m_star,
                   "gate": _gate_word(str(screen.query_one("#verdict").render()))}, truth[name], f"Results {name}",
                  5e-4)
            assert math.isclose(r.reliability_level, truth[name]["level"])
            await pilot.press("escape")
            await app.workers.wait_for_complete()
            await pilot.pause()
            runs = app.screen
            assert isinstance(runs, RunsScreen)
            table = runs.query_one("#runs", DataTable)

        # Compare, every run marked
        for path in three_runs.values():
            table.move_cursor(row=table.get_row_index(str(path)))
            await pilot.press("space")
        await pilot.press("c")
        await pilot.pause()
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        grid = compare.query_one("#compare", DataTable)
        for i, s in enumerate(compare.sessions):
            name = next(n for n, p in three_runs.items() if p == s.path)
            col = f"run{i}"
            if s.alpha != 0.10:
                continue  # Compare recomputes every run at one α; the run labelled here is stored at α = 0.25
            _same({"level": float(str(grid.get_cell("reliability 1−α*", col))),
                   "bound": float(str(grid.get_cell("lower bound", col))),
                   "m_star": str(grid.get_cell("M* at α = 0.10", col)),
                   "gate": _gate_word(str(grid.get_cell("gate", col)))}, truth[name], f"Compare {name}", 5e-4)
            doc = json.loads((s.path / "results.json").read_text())
            assert str(grid.get_cell("verified: top right", col)) == \
                f"{round(doc['reliability_level'] * (doc['reliability_n'] + 1))} of {doc['reliability_n']}"


async def test_the_audit_progress_bar_never_runs_backwards(services):
    """Issue 24 §5: the bar's total is the audit's planned total from the start, not the judges started so far."""
    from types import SimpleNamespace

    from textual.app import App
    from textual.widgets import ProgressBar

    class Host(App[None]):
        def compose(self):
            yield ProgressPanel(per_source=True, id="panel")

    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(ProgressPanel)
        panel.reset("audit", planned=200)
        bar = panel.query_one("#bar", ProgressBar)
        seen = []
        for progress in (
            {"a": SimpleNamespace(done=50, total=100, made=0, cached=0, failed=0)},
            {"a": SimpleNamespace(done=100, total=100, made=0, cached=0, failed=0),
             "b": SimpleNamespace(done=0, total=100, made=0, cached=0, failed=0)},
            {"a": SimpleNamespace(done=100, total=100, made=0, cached=0, failed=0),
             "b": SimpleNamespace(done=60, total=100, made=0, cached=0, failed=0)},
        ):
            panel.show(progress)
            await pilot.pause()
            seen.append(bar.percentage)
        assert seen == sorted(seen) and bar.total == 200
        panel.reset("unknown plan")  # no plan: the largest total seen so far, still monotone
        panel.show({"a": SimpleNamespace(done=10, total=100, made=0, cached=0, failed=0)})
        panel.show({"a": SimpleNamespace(done=10, total=100, made=0, cached=0, failed=0),
                    "b": SimpleNamespace(done=0, total=50, made=0, cached=0, failed=0)})
        assert bar.total == 150
