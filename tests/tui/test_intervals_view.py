"""The Intervals view of paper 001 (issue 12 item 6) and its Studies-screen path: the table's marks, the per-item
chart, width vs judge error, the point-score table, every key, the exports (JSON = the study's ``to_json``, CSV
with formula escaping, Markdown = the command's report), progress per seed, cancel, and hostile ids."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.text import Text
from textual.widgets import DataTable, Input, Label, Select, Static

from relgate_tui.core.jsonsafe import dumps
from relgate_tui.core.judge_intervals.report import render_markdown
from relgate_tui.tui.app import make_app
from relgate_tui.tui.confirm import ConfirmModal
from relgate_tui.tui.studies import open_study_view
from relgate_tui.tui.studies import setup as studies_setup
from relgate_tui.tui.studies.intervals import IntervalsView, coverage_cell
from relgate_tui.tui.studies.intervals_chart import (
    CSV_COLUMNS,
    covered,
    error_bins,
    interval_chart,
    intervals_csv,
    judge_scores,
)
from relgate_tui.tui.studies.setup import StudiesScreen
from tests.tui.studyfixtures import (
    FAST_TEST_METHODS,
    HOSTILE_IDS,
    HeldProgress,
    intervals_input,
    intervals_study,
    write_intervals_file,
)

SIZE = (120, 40)


async def _settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def _item(i: str, human: float, lo: float, up: float, alo: float | None = None, aup: float | None = None):
    return SimpleNamespace(id=i, human=human, lower=lo, upper=up, adj_lower=lo if alo is None else alo,
                           adj_upper=up if aup is None else aup)


# ---- pure pieces ---------------------------------------------------------------------------------------------------


def test_coverage_marks_follow_one_minus_alpha() -> None:
    assert str(coverage_cell(0.9, 0.02, 0.9)).endswith("✓")
    assert str(coverage_cell(0.8999, 0.02, 0.9)).endswith("✗")
    assert str(coverage_cell(math.nan, math.nan, 0.9)) == "— ± —"


def test_chart_draws_bars_and_marks_in_and_out() -> None:
    items = [_item("a", 2.0, 1.0, 3.0), _item("b", 5.0, 1.0, 3.0, 1.0, 5.0), _item("c", 4.0, 3.6, 4.4)]
    before = interval_chart(items, 40, 12, lo=1.0, hi=5.0, adjusted=False)
    after = interval_chart(items, 40, 12, lo=1.0, hi=5.0, adjusted=True)
    assert "in 2 · out 1" in before.plain and "in 3 · out 0" in after.plain
    lines = before.plain.splitlines()
    assert sum(line.count("●") for line in lines[:-2]) == 3  # one human label per item

    def red(text: Text) -> set[str]:  # the caption's "bold red" and plotext's red (ANSI colour 1)
        return {text.plain[s.start:s.end] for s in text.spans if str(s.style) in ("bold red", "color(1)")}

    assert red(before) == {"│", "out 1"}  # b's bar (its label 5 lies above [1, 3]) and the count
    assert red(after) == {"out 0"}
    assert len(lines) == 12 and all(len(line) <= 40 for line in lines)
    assert lines[1].startswith("5┤") and lines[9].startswith("1┤")  # the scale's ends: top and bottom rows


def test_chart_samples_evenly_when_items_outnumber_columns() -> None:
    items = [_item(f"i{k}", 1 + (k % 5), 1.0, 5.0) for k in range(300)]
    text = interval_chart(items, 60, 10, lo=1.0, hi=5.0, adjusted=True)
    assert "57 of 300 items" in text.plain and "out 0" in text.plain  # one per column: 60 less the y axis and frame


def test_error_bins_group_by_judge_error() -> None:
    items = [_item("a", 3.0, 2.0, 4.0), _item("b", 3.0, 2.5, 3.5), _item("c", 1.0, 2.0, 5.0), _item("d", 2.0, 1, 2)]
    scores = {"a": 3.0, "b": 3.4, "c": 3.2, "d": math.nan}
    bins = error_bins(items, scores, adjusted=True, step=0.5, bins=5)
    assert [b.n for b in bins] == [2, 0, 0, 0, 1]  # d has no score; c's error 2.2 is in the open last bin
    assert bins[0].width_mean == pytest.approx(1.5) and bins[0].coverage == 1.0
    assert bins[4].coverage == 0.0 and math.isinf(bins[4].high) and math.isnan(bins[1].width_mean)


def test_judge_scores_never_mix_raw_and_weighted() -> None:
    inp = intervals_input()
    scores, name = judge_scores(inp)
    assert name == "raw judge score" and scores[inp.ids[5]] == inp.raw[5]
    holed = SimpleNamespace(ids=inp.ids, raw=inp.raw.copy(), z=inp.z, scale=inp.scale)
    holed.raw[3] = math.nan
    scores, name = judge_scores(holed)
    assert name.startswith("weighted average") and scores[inp.ids[5]] != inp.raw[5]


def test_csv_has_every_method_and_escapes_formulas() -> None:
    study = intervals_study()
    rows = list(csv.reader(io.StringIO(intervals_csv(study))))
    assert tuple(rows[0]) == CSV_COLUMNS
    body = rows[1:]
    assert len(body) == sum(len(m.items) for m in study.methods)
    assert {r[-1] for r in body} == set(FAST_TEST_METHODS)
    by_key = {(r[-1], r[0]): r for r in body}
    for m in study.methods:
        for it in m.items:
            shown = "'" + it.id if it.id[:1] in "=+-@" else it.id
            r = by_key[(m.name, shown)]
            assert float(r[2]) == it.lower and float(r[5]) == it.adj_upper
            assert r[6:8] == [str(int(covered(it, False))), str(int(covered(it, True)))]
    assert any(r[0] == "'=HYPERLINK(\"x\")" for r in body)  # the formula id is neutralised


# ---- the view -----------------------------------------------------------------------------------------------------


async def test_view_keys_exports_and_hostile_ids(services, tmp_path: Path) -> None:
    study, inp = intervals_study(), intervals_input()
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        view = open_study_view(study, "[b]sim[/b] · coherence", source="sim.jsonl", export_dir=tmp_path, data=inp)
        app.push_screen(view)
        await pilot.pause()
        assert isinstance(view, IntervalsView)
        table = view.query_one("#iv-methods", DataTable)
        assert table.row_count == len(FAST_TEST_METHODS)
        target = 1 - study.alpha
        for m in study.methods:
            mark = "✓" if m.adjusted.coverage_mean >= target else "✗"
            assert str(table.get_cell(m.name, "acov")).endswith(mark)
            assert str(table.get_cell(m.name, "p")) == f"{m.adjusted.binom_p_median:.3f}"
        assert "[b]sim[/b]" in str(view.query_one("#iv-title", Label).render())  # shown, never parsed
        assert view.method.name == "cqr" and view.adjusted
        await pilot.press("n")
        assert view.method.name == "r2ccp" and table.cursor_row == 1
        await pilot.press("p", "p")
        assert view.method.name == "ordinal-rc"
        await pilot.press("up")  # moving in the table selects too
        assert view.method.name == "ordinal-aps"
        side = str(view.query_one("#iv-method", Static).render())
        assert "ordinal-aps" in side and "after adjustment" in side
        await pilot.press("a")
        assert not view.adjusted and "before adjustment" in str(view.query_one("#iv-method", Static).render())
        errors = str(view.query_one("#iv-errors", Static).render())
        assert "raw judge score" in errors
        bins = error_bins(view.method.items, judge_scores(inp)[0], adjusted=False, step=0.5)
        assert sum(b.n for b in bins) == len(view.method.items)  # every test item has a raw score
        rows = errors.splitlines()[3:]
        for b, row in zip(bins, rows, strict=False):
            assert row.split()[-3 if b.n else -2] == (f"{b.width_mean:.2f}" if b.n else "—")
        points = str(view.query_one("#iv-points", Static).render())
        m = view.method
        assert f"{m.midpoint_adjusted.mae:.2f}" in points and f"{study.weighted.kendall:.2f}" in points
        chart = view._chart(70, 20)
        inside = sum(covered(it, False) for it in m.items)
        assert f"in {inside} · out {len(m.items) - inside}" in chart.plain
        for hostile in HOSTILE_IDS:
            assert hostile not in chart.plain  # ids never drawn raw
        await pilot.press("j", "c", "m")
        assert [p.name for p in view.exported] == [f"b-sim-b-coherence.intervals.{e}" for e in ("json", "csv", "md")]
        assert json.loads(view.exported[0].read_text(encoding="utf-8")) == json.loads(dumps(study.to_json()))
        assert view.exported[1].read_text(encoding="utf-8") == intervals_csv(study)
        assert view.exported[2].read_text(encoding="utf-8") == render_markdown(study)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, IntervalsView)


async def test_view_without_scores_and_with_a_degenerate_method(services, tmp_path: Path) -> None:
    import dataclasses

    study = intervals_study()
    m0 = study.methods[0]
    full = dataclasses.replace(m0, reasons=("q̂ = ∞: too few calibration points; the interval is the full scale",))
    study = dataclasses.replace(study, methods=(full, *study.methods[1:]))
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        view = open_study_view(study, "sim", export_dir=tmp_path)
        app.push_screen(view)
        await pilot.pause()
        note = view.query_one("#iv-methods", DataTable).get_cell(m0.name, "note")
        assert isinstance(note, Text) and note.plain.startswith("q̂ = ∞")
        assert "full scale" in str(view.query_one("#iv-method", Static).render())
        assert "needs the judge's scores" in str(view.query_one("#iv-errors", Static).render())


# ---- the Studies screen -------------------------------------------------------------------------------------------


async def _intervals_screen(app, pilot, path: Path, seeds: str = "3") -> StudiesScreen:
    screen = StudiesScreen(str(path))
    app.push_screen(screen)
    await _settle(pilot)
    screen.query_one("#study", Select).value = "intervals"
    screen.query_one("#seeds", Input).value = seeds
    screen.query_one("#methods", Select).value = "fast"
    await pilot.pause()
    return screen


async def test_studies_runs_intervals_with_progress_per_seed(services, tmp_path: Path, monkeypatch) -> None:
    path = write_intervals_file(tmp_path / "iv.jsonl", judges=("j-one", "[red]j-two[/red]"))
    seen: list[tuple[int, int]] = []
    methods_used: list[tuple[str, ...]] = []
    real = studies_setup.run_intervals

    def recording(inp, methods, alpha, seeds, labels, progress):
        methods_used.append(methods)

        def wrapped(done: int, total: int) -> None:
            seen.append((done, total))
            progress(done, total)
        return real(inp, methods, alpha, seeds, labels, wrapped)

    monkeypatch.setattr(studies_setup, "run_intervals", recording)
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _intervals_screen(app, pilot, path)
        assert screen.query_one("#intervals-row").display and not screen.query_one("#splits-box").display
        judge = screen.query_one("#judge", Select)
        assert judge.value == "j-one"
        judge.value = "[red]j-two[/red]"
        await pilot.press("ctrl+s")
        await _settle(pilot)
        assert seen == [(k, 6) for k in range(1, 7)]  # 3 seeds, then 3 seeds of the calibration-size curve
        assert methods_used == [studies_setup.FAST_METHODS]
        view = app.screen
        assert isinstance(view, IntervalsView) and view.export_dir == tmp_path
        assert view.result.labels["judge"] == "[red]j-two[/red]" and view.result.seeds == (1, 2, 3)
        assert "[red]j-two[/red]" in str(view.query_one("#iv-title", Label).render())
        assert view.data is not None and set(HOSTILE_IDS) <= set(view.data.ids)
        await pilot.press("c")
        rows = list(csv.reader(io.StringIO(view.exported[0].read_text(encoding="utf-8"))))
        assert {r[0] for r in rows[1:]} & {"[/]", "'=HYPERLINK(\"x\")"}
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and "finished" in str(screen.query_one("#status", Label).render())


async def test_studies_intervals_field_and_file_errors_are_one_line(services, tmp_path: Path) -> None:
    path = write_intervals_file(tmp_path / "iv.jsonl")
    no_lp = tmp_path / "nolp.jsonl"
    no_lp.write_text("".join(json.dumps({"id": f"x{i}", "score": 3, "human": 1 + i % 5}) + "\n" for i in range(30)),
                     encoding="utf-8")
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _intervals_screen(app, pilot, path)
        for field, value, expected in (("#alpha", "1.5", "α must be"), ("#alpha", "x", "α must be"),
                                       ("#seeds", "0", "seeds must be")):
            screen.query_one("#alpha", Input).value = "0.1"
            screen.query_one(field, Input).value = value
            await pilot.press("ctrl+s")
            assert screen.state == "idle" and expected in str(screen.query_one("#run-error", Label).render())
        screen.query_one("#seeds", Input).value = "2"
        screen.query_one("#path", Input).value = str(no_lp)
        screen.load(str(no_lp))
        await _settle(pilot)
        await pilot.press("ctrl+s")
        await _settle(pilot)
        shown = str(screen.query_one("#run-error", Label).render())
        assert app.screen is screen and "no log-probabilities" in shown and "\n" not in shown


async def test_escape_cancels_the_intervals_at_the_next_seed(services, tmp_path: Path, monkeypatch) -> None:
    """The study thread is held in its first progress report until the question is answered: ask, cancel, then the
    report raises StudyCancelled and no view opens."""
    path = write_intervals_file(tmp_path / "iv.jsonl")
    hold = HeldProgress()
    started, release, raised = hold.started, hold.release, hold.raised
    real = studies_setup.run_intervals

    def held(inp, methods, alpha, seeds, labels, progress):
        return real(inp, methods, alpha, seeds, labels, hold.wrap(progress))

    monkeypatch.setattr(studies_setup, "run_intervals", held)
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _intervals_screen(app, pilot, path)
        await pilot.press("ctrl+s")
        for _ in range(2400):  # a bound, not a timing assumption: the study reaches its first report
            if started.is_set() or screen.state != "running":
                break
            await pilot.pause(0.05)
        assert started.is_set(), str(screen.query_one("#run-error", Label).render())
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        await pilot.pause()
        assert app.screen is screen and screen.state == "idle"
        release.set()
        await _settle(pilot)
        assert len(raised) == 1 and app.screen is screen
        assert "cancelled" in str(screen.query_one("#status", Label).render())
