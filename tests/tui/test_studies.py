"""The Studies screen and the IRT / Jury views (issues 13 and 14, TUI items): every key, inline loader errors,
progress per split, cancel, exports, and untrusted names shown as plain text."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from textual.widgets import DataTable, Input, Label, Select, Static

from relgate_tui.core.jsonsafe import dumps
from relgate_tui.core.text import strip_controls
from relgate_tui.engine.judging.studies import document as irt_document
from relgate_tui.tui.app import make_app
from relgate_tui.tui.confirm import ConfirmModal
from relgate_tui.tui.home import HomeScreen
from relgate_tui.tui.studies import open_study_view
from relgate_tui.tui.studies import setup as studies_setup
from relgate_tui.tui.studies.common import plain
from relgate_tui.tui.studies.irt import IRTView, category_curves
from relgate_tui.tui.studies.jury import JuryView
from relgate_tui.tui.studies.setup import StudiesScreen
from tests.tui.studyfixtures import (
    EVIL,
    HeldProgress,
    irt_study,
    jury_pool,
    jury_study,
    write_irt_file,
    write_jury_file,
)
from tests.tui.test_flow import focus_on

SIZE = (120, 40)


async def _settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_category_curves_are_probabilities() -> None:
    theta = np.linspace(-4, 4, 41)
    p = category_curves(1.7, [-1.0, 0.2, 1.5], theta)
    assert p.shape == (4, 41)
    assert np.all(p >= -1e-12) and np.allclose(p.sum(axis=0), 1.0)
    assert np.all(np.diff(p[0]) < 0) and np.all(np.diff(p[-1]) > 0)  # lowest falls, highest rises with θ
    # P(Y ≥ c_1 | θ = β_1) = ½: the lowest category has probability ½ at the first threshold
    assert category_curves(1.7, [-1.0, 0.2, 1.5], np.array([-1.0]))[0, 0] == pytest.approx(0.5)


def test_plain_strips_control_and_bidi() -> None:
    assert plain(EVIL) == "[bold red]evil[/]judge"  # the escape sequence goes whole
    assert plain("a\u200bb\nc\td") == "ab c d"
    assert plain("x" * 100, 10) == "x" * 9 + "…"


async def test_home_t_opens_studies_and_escape_returns(services) -> None:
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.pause()
        assert isinstance(app.screen, StudiesScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)


async def test_loader_errors_are_inline_one_line(services, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "score": 3}\n{"id": "b", "score": "high"}\n', encoding="utf-8")
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = StudiesScreen()
        app.push_screen(screen)
        await pilot.pause()
        await pilot.press("ctrl+s")  # no path yet
        assert "give the path" in str(screen.query_one("#path-error", Label).render())
        for path, expected in ((tmp_path / "missing.jsonl", "file not found"), (bad, ":2:")):
            screen.query_one("#path", Input).value = str(path)
            await focus_on(pilot, screen.query_one("#path", Input))
            await pilot.press("enter")
            await _settle(pilot)
            shown = str(screen.query_one("#path-error", Label).render())
            assert expected in shown and "\n" not in shown
            assert screen.table is None


async def test_irt_study_runs_and_opens_its_view(services, tmp_path: Path) -> None:
    path = write_irt_file(tmp_path / "irt.jsonl")
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = StudiesScreen(str(path))
        app.push_screen(screen)
        await _settle(pilot)
        assert screen.table is not None and screen.query_one("#criterion", Select).value == "coherence"
        assert "1 judge: steady-judge" in str(screen.query_one("#status", Label).render())
        await pilot.press("ctrl+s")
        await _settle(pilot)
        view = app.screen
        assert isinstance(view, IRTView) and view.export_dir == tmp_path
        assert [j.judge for j in view.result.judges] == ["steady-judge"]
        table = view.query_one("#irt-table", DataTable)
        assert str(table.get_cell("Phase 1", "j0")) in ("PASS", "FAIL")
        assert view.curve_key == ("steady-judge", "original")
        await pilot.press("v")
        assert view.curve_key == ("steady-judge", "typo")
        await pilot.press("g")  # one judge: back to it, first variant
        assert view.curve_key == ("steady-judge", "original")
        await pilot.press("j", "m")
        assert [p.name for p in view.exported] == ["irt-coherence.irt.json", "irt-coherence.irt.md"]
        doc = json.loads(view.exported[0].read_text(encoding="utf-8"))
        assert doc["judge"] == "steady-judge" and doc["ratings_file"] == str(path)
        assert doc["c_v"] == pytest.approx(view.result.judges[0].c_v)
        assert "| steady-judge | 120 |" in view.exported[1].read_text(encoding="utf-8")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and "finished" in str(screen.query_one("#status", Label).render())


async def test_irt_study_error_is_one_line(services, tmp_path: Path) -> None:
    path = tmp_path / "flat.jsonl"
    path.write_text("".join(json.dumps({"id": f"s{i}", "variant": v, "score": 3}) + "\n"
                            for i in range(20) for v in ("original", "typo")), encoding="utf-8")
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = StudiesScreen(str(path))
        app.push_screen(screen)
        await _settle(pilot)
        await pilot.press("ctrl+s")
        await _settle(pilot)
        assert app.screen is screen and screen.state == "idle"
        assert "same rating" in str(screen.query_one("#run-error", Label).render())


async def test_jury_study_reports_progress_per_split(services, tmp_path: Path, monkeypatch) -> None:
    path = write_jury_file(tmp_path / "pool.jsonl")
    seen: list[tuple[int, int]] = []
    real = studies_setup.run_jury

    def recording(data, texts, splits, n_search, progress):
        def wrapped(done: int, total: int) -> None:
            seen.append((done, total))
            progress(done, total)
        return real(data, texts, splits, n_search, wrapped)

    monkeypatch.setattr(studies_setup, "run_jury", recording)
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = StudiesScreen(str(path), splits=2, n_search=1)
        app.push_screen(screen)
        await _settle(pilot)
        screen.query_one("#study", Select).value = "jury"
        await pilot.press("ctrl+s")
        await _settle(pilot)
        assert seen == [(1, 2), (2, 2)]
        view = app.screen
        assert isinstance(view, JuryView) and view.criterion == "quality"
        assert view.result.n_items == 150 and view.result.splits == 2
        assert view.data is not None and view.data.judges == jury_pool()[0].judges


async def test_jury_splits_must_be_two_or_more(services, tmp_path: Path) -> None:
    path = write_jury_file(tmp_path / "pool.jsonl")
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = StudiesScreen(str(path))
        app.push_screen(screen)
        await _settle(pilot)
        screen.query_one("#study", Select).value = "jury"
        screen.query_one("#splits", Input).value = "1"
        await pilot.press("ctrl+s")
        assert screen.state == "idle" and "≥ 2" in str(screen.query_one("#run-error", Label).render())


async def test_escape_asks_then_cancels_the_jury(services, tmp_path: Path, monkeypatch) -> None:
    """The study thread is held inside its first progress report until the test has answered the question, so the
    order of events is fixed: ask (n keeps running), ask again (y cancels), then the thread stops at that report."""
    path = write_jury_file(tmp_path / "pool.jsonl")
    hold = HeldProgress()
    started, release, raised = hold.started, hold.release, hold.raised
    real = studies_setup.run_jury

    def held(data, texts, splits, n_search, progress):
        return real(data, texts, splits, n_search, hold.wrap(progress))

    monkeypatch.setattr(studies_setup, "run_jury", held)
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = StudiesScreen(str(path), splits=3, n_search=1)
        app.push_screen(screen)
        await _settle(pilot)
        screen.query_one("#study", Select).value = "jury"
        await pilot.press("ctrl+s")
        for _ in range(2400):  # a bound, not a timing assumption: the study reaches its first report
            if started.is_set() or screen.state != "running":
                break
            await pilot.pause(0.05)
        assert started.is_set(), str(screen.query_one("#run-error", Label).render())
        assert screen.state == "running"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen and screen.state == "running"
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert app.screen is screen and screen.state == "idle"
        assert "cancelled" in str(screen.query_one("#status", Label).render())
        release.set()
        await _settle(pilot)
        assert len(raised) == 1 and app.screen is screen  # no view was opened
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)


async def test_irt_view_keys_and_untrusted_names(services, tmp_path: Path) -> None:
    study = irt_study()
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        view = open_study_view(study, "sim · coherence", source="sim.jsonl", export_dir=tmp_path / "out")
        app.push_screen(view)
        await pilot.pause()
        assert isinstance(view, IRTView)
        table = view.query_one("#irt-table", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[1:] == ["steady-judge", "[bold red]evil[/]judge"]  # no markup parsed, no controls
        diagnosis = str(view.query_one("#irt-diagnosis", Static).render())
        assert "[bold red]evil[/]judge" in diagnosis and "\u202e" not in diagnosis and "\x1b" not in diagnosis
        assert str(table.get_cell("samples", "j1")) == "150"
        assert view.curve_key == ("steady-judge", "original")
        await pilot.press("v", "v", "v", "v")
        assert view.curve_key == ("steady-judge", "original")
        await pilot.press("v", "g")
        assert view.curve_key == (EVIL, "original")
        await pilot.press("j", "m")
        doc = json.loads(view.exported[0].read_text(encoding="utf-8"))
        assert doc == json.loads(dumps(irt_document(study, "sim.jsonl")))
        assert set(doc["judges"]) == {"steady-judge", EVIL}
        md = view.exported[1].read_text(encoding="utf-8")  # issue 23 §6: Markdown exports through the sanitiser
        assert md == strip_controls(study.to_markdown()) and "\u202e" not in md and "\x1b" not in md
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, IRTView)


async def test_jury_view_keys(services, tmp_path: Path) -> None:
    study = jury_study()
    data, _ = jury_pool()
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        view = open_study_view(study, "sim pool", source="pool.jsonl", export_dir=tmp_path, data=data)
        app.push_screen(view)
        await pilot.pause()
        assert isinstance(view, JuryView)
        methods = view.query_one("#jury-methods", DataTable)
        assert methods.row_count == 5 + len(study.judges)
        assert str(methods.get_cell("jury", "p")) == "—"
        assert view.query_one("#jury-judges", DataTable).row_count == len(study.judges)
        assert view.best_baseline() in study.methods and view.best_baseline() != "jury"
        items = view.query_one("#jury-items", DataTable)
        assert items.row_count == len(study.example_items)
        await pilot.press("down", "enter")
        item = study.example_items[1]
        assert view.selected is item
        detail = str(view.query_one("#jury-detail", Static).render())
        assert plain(item["id"]) in detail
        for member in item["jury"]:
            assert member["judge"] in detail
        assert detail.count("not on jury") == len(study.judges) - len(item["jury"])
        view.set_focus(None)  # Enter outside the items table shows the item under its cursor
        await pilot.press("enter")
        assert view.selected is item and view.focused is None
        view.query_one("#jury-items", DataTable).move_cursor(row=0)
        await pilot.press("enter")
        assert view.selected is study.example_items[0]
        await pilot.press("j", "m")
        doc = json.loads(view.exported[0].read_text(encoding="utf-8"))
        assert doc["scores_file"] == "pool.jsonl" and doc["methods"]["jury"]["k_per_split"] == list(study.k_per_split)
        md = view.exported[1].read_text(encoding="utf-8")  # issue 23 §6: Markdown exports through the sanitiser
        assert md == strip_controls(study.to_markdown()) and "\u202e" not in md and "\x1b" not in md
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, JuryView)


def test_open_study_view_refuses_other_results() -> None:
    with pytest.raises(TypeError):
        open_study_view(object(), "x")


async def test_export_failure_is_reported_not_raised(services, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        view = open_study_view(irt_study(), "sim", export_dir=blocker / "sub")
        app.push_screen(view)
        await pilot.pause()
        await pilot.press("j", "m")
        assert view.exported == [] and isinstance(app.screen, IRTView)
