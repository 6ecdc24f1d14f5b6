"""Spot-check screen: every key, persistence before the next item, undo, audit disagreements, leaving."""

from __future__ import annotations

import math

import pytest

from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.runs.store import RunStore
from relgate_tui.tui.app import make_app
from relgate_tui.tui.confirm import ConfirmModal
from relgate_tui.tui.help import HelpScreen
from relgate_tui.tui.itemsamples import ItemSamplesModal
from relgate_tui.tui.spotcheck import SpotCheckScreen
from tests.tui.runfixtures import stored_run


def on_disk(path):
    """The labels in effect, read back from disk by a fresh store (what survives the process)."""
    return RunStore(path).current_labels()


@pytest.fixture
def run_path(services):
    return stored_run(services.runs_dir)


async def _open_spotcheck(app, pilot, path, dismissed):
    session = Session.open(path, cache_dir=app.services.resolved_cache_dir())
    app.session = session
    app.push_screen(SpotCheckScreen(session), callback=dismissed.append)
    await pilot.pause()
    return session


async def test_every_key_is_persisted_before_the_next_item(services, run_path):
    app = make_app(services)
    dismissed: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_spotcheck(app, pilot, run_path, dismissed)
        screen = app.screen
        assert isinstance(screen, SpotCheckScreen)
        total = len(screen.queue)
        assert total == 20

        # y: accept the top candidate → rank 1 on disk, next item on screen
        first = screen.current
        await pilot.press("y")
        assert on_disk(run_path)[first].rank == 1
        assert screen.current != first

        # n then y on an item with at least two candidates → rank 2
        while len(screen.view.candidates) < 2:
            await pilot.press("s")
        item = screen.current
        await pilot.press("n")
        assert screen.current == item and screen.cursor == 1
        assert item not in on_disk(run_path)  # a rejection alone records nothing
        await pilot.press("y")
        assert on_disk(run_path)[item].rank == 2

        # u after n: steps back to the previous candidate, nothing written
        item = screen.current
        await pilot.press("n")
        if screen.current == item:  # (an item with one candidate would have recorded "none")
            await pilot.press("u")
            assert screen.cursor == 0 and item not in on_disk(run_path)

        # x: none acceptable → score ∞
        item = screen.current
        await pilot.press("x")
        assert on_disk(run_path)[item].none and math.isinf(on_disk(run_path)[item].score)

        # s: skip
        item = screen.current
        await pilot.press("s")
        assert on_disk(run_path)[item].skip

        # u: undo the skip → the item is back on screen and its label is gone from disk
        await pilot.press("u")
        assert screen.current == item
        assert item not in on_disk(run_path)

        # e: raw samples; ?: help with every spot-check key
        await pilot.press("e")
        assert isinstance(app.screen, ItemSamplesModal)
        assert len(app.screen.view.samples) == 10
        await pilot.press("escape")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = {k for k, _ in app.screen.screen_rows}
        assert {"y", "n", "x", "s", "u", "e", "Esc"} <= keys
        await pilot.press("escape")
        assert app.screen is screen

        # n on the last candidate records "none acceptable"
        item = screen.current
        for _ in range(len(screen.view.candidates)):
            await pilot.press("n")
        assert on_disk(run_path)[item].none

        # finish: accept everything left → dismissed with "done"
        while isinstance(app.screen, SpotCheckScreen) and screen.queue:
            await pilot.press("y" if screen.view.candidates else "x")
        await pilot.pause()
        assert dismissed == ["done"]
        labels = on_disk(run_path)
        assert len(labels) == total
        progress = session.spot_progress()
        assert progress.done == total and progress.total == total
        session.close()


async def test_live_reliability_follows_the_labels(services, run_path):
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_spotcheck(app, pilot, run_path, [])
        before = session.spot_progress()
        await pilot.press("x")
        after = session.spot_progress()
        assert after.n == before.n + 1  # "none" is counted, never dropped
        assert after.reliability_level < before.reliability_level
        assert "n = 21" in str(app.screen.query_one("#progress").content)
        session.close()


async def test_escape_asks_then_leaves_with_labels_saved(services, run_path):
    app = make_app(services)
    dismissed: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_spotcheck(app, pilot, run_path, dismissed)
        await pilot.press("y")
        await pilot.press("escape")
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")
        assert isinstance(app.screen, SpotCheckScreen)
        await pilot.press("escape")
        await pilot.press("y")
        await pilot.pause()
        assert dismissed == ["left"]
        assert len(on_disk(run_path)) == 1
        session.close()


async def test_resume_shows_only_unlabelled_items_and_undo_reaches_earlier_sessions(services, run_path):
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_spotcheck(app, pilot, run_path, [])
        done = [app.screen.current, None]
        await pilot.press("y")
        done[1] = app.screen.current
        await pilot.press("y")
        app.pop_screen()
        session.close()
        session = await _open_spotcheck(app, pilot, run_path, [])
        screen = app.screen
        assert len(screen.queue) == 18 and not set(done) & set(screen.queue)
        await pilot.press("u")  # the last label of the previous session comes back
        assert screen.current == done[1]
        assert done[1] not in on_disk(run_path) and done[0] in on_disk(run_path)
        session.close()


async def test_audit_mode_counts_disagreements(services):
    path = stored_run(services.runs_dir, verification="audit", model="audited")
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_spotcheck(app, pilot, path, [])
        screen = app.screen
        assert session.audit_ids and list(screen.queue) == list(session.audit_ids)
        assert screen.view.audit
        # disagree on purpose with the automatic verdict of the first audited item: asked once, then kept
        auto = screen.view.auto_score
        key = "x" if auto is not None and math.isfinite(auto) else "y"
        await pilot.press(key)
        assert session.audit_counts() == (0, 0)
        await pilot.press(key)
        assert session.audit_counts() == (1, 1)
        assert "disagree" in screen.last_message or "≠" in screen.last_message
        session.close()


def _gate_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("gate ")]


PLANS = ("more labels needed", "will not clear it", "no more labels needed", "to the one-look plan")


def _plan_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(p in line for p in PLANS)]


async def test_live_gate_is_the_run_s_anytime_decision(services):
    """Issue 11 §4 / issue 37 §4: the live panel shows the run's own gate (made with it: 50% at 90% confidence; the
    Settings gate plays no part) decided by the one gate rule — the anytime bound once a person labels, the number
    Results shows — in one decision line and one plan line."""
    path = stored_run(services.runs_dir, min_reliability=0.5, confidence=0.9)
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        app.settings = type(app.settings)(**{**app.settings.__dict__, "confidence": 0.8, "gate": 0.99})
        session = await _open_spotcheck(app, pilot, path, [])
        for _ in range(6):
            await pilot.press("y")
        text = str(app.screen.query_one("#progress").render())
        p = session.spot_progress(confidence=0.9)
        d = session.gate_decision(gate=0.5, gate_on="bound", confidence=0.9)
        assert d is not None and d.watch == "anytime" and d.passed is not None
        assert f"≥ {100 * d.value:.1f}% 90% anytime lower bound" in text
        assert d.value < p.fixed_n_lower_bound  # anytime validity is paid for in width; the fixed-n one is not shown
        assert f"{100 * p.fixed_n_lower_bound:.1f}%" not in text
        assert _gate_lines(text) == [f"gate 50%: {d.summary()}"]
        assert len(_plan_lines(text)) == 1
        assert f"{p.by_hand} by you, {p.automatic} by reference" in text
        assert session.results(session.alpha, gate=0.5, gate_on="bound", confidence=0.9).result.gate_decision == d


async def test_live_gate_decided_by_references_alone_says_so(services):
    """Issue 24 §5: before any human label, a decision resting on reference verdicts is decided once (Clopper–Pearson,
    every verdict from a reference) and says so."""
    path = stored_run(services.runs_dir, verification="audit", min_reliability=0.999)
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_spotcheck(app, pilot, path, [])
        p = session.spot_progress()
        text = str(app.screen.query_one("#progress").render())
        d = session.gate_decision(gate=0.999, gate_on="bound")
        assert p.by_hand == 0 and p.automatic == p.n > 0
        assert f"(n = {p.n}: 0 by you, {p.n} by reference)" in text
        assert d is not None and d.watch == "once" and d.passed is False
        assert _gate_lines(text) == [f"gate 100%: {d.summary()}"] and "95% lower bound" in text
        session.close()


async def test_live_panel_never_promises_labels_that_cannot_clear_the_gate(services):
    """Issue 33 §6: with the level below the gate the panel says "more labels will not clear it" (it used to print
    "≈ 11550 more labels needed" on a 200-item task) — and only that: one plan line."""
    path = stored_run(services.runs_dir, min_reliability=0.9)
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_spotcheck(app, pilot, path, [])
        for key in "yxyxyx":
            await pilot.press(key)
        p = session.spot_progress(confidence=0.95)
        assert p.successes / p.n < 0.9
        text = str(app.screen.query_one("#progress").render())
        assert _plan_lines(text) == ["the level is below the gate: more labels will not clear it"]
        assert "≈" not in text
        session.close()
