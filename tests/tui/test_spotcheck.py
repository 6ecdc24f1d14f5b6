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
from tests.tui.test_flow import wait_until


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
        # disagree on purpose with the automatic verdict of the first audited item
        auto = screen.view.auto_score
        await pilot.press("x" if auto is not None and math.isfinite(auto) else "y")
        assert session.audit_counts() == (1, 1)
        assert "disagree" in screen.last_message or "≠" in screen.last_message
        session.close()


async def test_live_gate_is_anytime_valid_and_says_when_it_is_decided(services, run_path):
    """Issue 11 §4: the live bound is the confidence sequence (not the fixed-n Clopper-Pearson bound), at the
    confidence the user set, and the screen says whether the gate is decided or how many more labels it needs."""
    from relgate_tui.core.certification.gate import sequential_gate

    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        app.settings = type(app.settings)(**{**app.settings.__dict__, "confidence": 0.9, "gate": 0.5})
        session = await _open_spotcheck(app, pilot, run_path, [])
        for _ in range(6):
            await pilot.press("y")
        text = str(app.screen.query_one("#progress").render())
        p = session.spot_progress(confidence=0.9)
        live = sequential_gate(round(p.reliability_level * (p.n + 1)), p.n, 0.5, 0.9)
        assert f"≥ {100 * live.lower:.1f}%" in text and "with 90% confidence, at any stopping point" in text
        assert live.lower < p.fixed_n_lower_bound  # anytime validity is paid for in width
        # issue 24 §5: a decision names how many verified items it rests on and who verified them
        expected = live.summary() if live.decided is None else f"decided {live.decided} on {p.n} verified items"
        assert "gate 50%: " + expected in text
        assert ("decided PASS on" in text) == (live.decided == "PASS")
        assert f"{p.by_hand} by you, {p.automatic} by reference" in text
        assert (f"fixed-n Clopper–Pearson ≥ {100 * p.fixed_n_lower_bound:.1f}%: valid only if the number of labels "
                "was fixed before labelling") in text


async def test_live_gate_decided_by_references_alone_says_so(services):
    """Issue 24 §5: before any human label, a decision resting on reference verdicts is not "after n labels"."""
    path = stored_run(services.runs_dir, verification="audit")
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        app.settings = type(app.settings)(**{**app.settings.__dict__, "gate": 0.999})
        session = await _open_spotcheck(app, pilot, path, [])
        p = session.spot_progress()
        text = str(app.screen.query_one("#progress").render())
        assert p.by_hand == 0 and p.automatic == p.n > 0
        assert f"(n = {p.n}: 0 by you, {p.n} by reference)" in text
        assert f"gate 100%: decided FAIL on {p.n} verified items (from references alone)" in text
        assert "after" not in text
        session.close()


async def test_live_panel_never_promises_labels_that_cannot_clear_the_gate(services, run_path):
    """Issue 33 §6: with the level below the gate the panel says "more labels will not clear it" (it used to print
    "≈ 11550 more labels needed" on a 200-item task); any count it gives fits in the items left."""
    import re

    from relgate_tui.core.certification.gate import sequential_gate
    from relgate_tui.core.certification.watched import plan_labels

    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session = await _open_spotcheck(app, pilot, run_path, [])
        for key in "yxyxyx":
            await pilot.press(key)
        p = session.spot_progress(confidence=0.95)
        gate = min(0.99, p.successes / p.n + 0.02)
        assert sequential_gate(p.successes, p.n, gate, 0.95).decided is None
        app.settings = type(app.settings)(**{**app.settings.__dict__, "gate": gate})
        app.screen._render_progress()
        below = "the level is below the gate: more labels will not clear it"
        await wait_until(pilot, lambda: below in str(app.screen.query_one("#progress").render()), what="the new plan")
        text = str(app.screen.query_one("#progress").render())
        assert below in text
        assert plan_labels(p.successes, p.n, gate, 0.95, p.total - p.done).more is None
        for more in re.findall(r"≈ (\d+) more labels", text):
            assert int(more) <= p.total - p.done
        session.close()
