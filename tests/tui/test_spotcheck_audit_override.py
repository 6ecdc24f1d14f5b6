"""Audit mode: a label that contradicts the reference verdict asks once before it is saved; the saved label keeps
that it overrode the reference, and Results names the item (not only "1 of 2 disagree").

The fixture's audit sample (seed 0, 20 calibration items, fraction 0.2) is, in queue order: add3-0002 (the reference
matches candidate 1 of 2), add3-0185 (candidate 2 of 3), add3-0224 (candidate 1 of 3), add3-0001 (candidate 2 of 3).
"""

from __future__ import annotations

import json

from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.runs.store import RunStore
from relgate_tui.tui.app import make_app
from relgate_tui.tui.results import ResultsScreen
from relgate_tui.tui.spotcheck import SpotCheckScreen
from tests.tui.runfixtures import stored_run


def on_disk(path):
    return RunStore(path).current_labels()


def raw_events(path) -> list[dict]:
    return [json.loads(line) for line in (path / "labels.jsonl").read_text().splitlines()]


async def _open(app, pilot, path):
    session = Session.open(path, cache_dir=app.services.resolved_cache_dir())
    app.session = session
    app.push_screen(SpotCheckScreen(session))
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, SpotCheckScreen)
    assert list(screen.queue) == ["add3-0002", "add3-0185", "add3-0224", "add3-0001"]
    return session, screen


def prompt(screen) -> str:
    return str(screen.query_one("#prompt").render())


async def test_y_against_the_reference_asks_once_then_is_saved_as_an_override(services):
    path = stored_run(services.runs_dir, verification="audit", model="audited")
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session, screen = await _open(app, pilot, path)
        await pilot.press("s")  # add3-0002 skipped: never a contradiction
        assert on_disk(path)["add3-0002"].skip
        assert screen.current == "add3-0185" and screen.view.auto_score == 2.0

        await pilot.press("y")  # rank 1, where the reference matches candidate 2: asked, nothing saved
        assert screen.current == "add3-0185" and "add3-0185" not in on_disk(path)
        text = prompt(screen)
        assert "this contradicts the reference: candidate 2 matches it" in text and "press y again" in text

        await pilot.press("y")  # the same key again keeps it
        label = on_disk(path)["add3-0185"]
        assert label.rank == 1 and label.overrides_reference
        assert raw_events(path)[-1]["overrides_reference"] is True
        assert screen.current == "add3-0224" and "override saved" in screen.last_message

        await pilot.press("y")  # agrees with the reference (candidate 1): saved at once, no override
        assert on_disk(path)["add3-0224"].rank == 1 and not on_disk(path)["add3-0224"].overrides_reference
        assert "overrides_reference" not in raw_events(path)[-1]

        assert session.audit_counts() == (2, 1)
        app.push_screen(ResultsScreen(session))
        await pilot.pause()
        message = str(app.screen.query_one("#message").render())
        assert ("audit: 1 of 2 disagree with the reference — add3-0185: you rank 1, reference: candidate 2 matches "
                "it; kept over the warning") in message
        assert "1 of 2 disagree" in str(app.screen.query_one("#calls").render())
        session.close()


async def test_n_on_the_matching_candidate_asks_once_and_escape_takes_it_back(services):
    path = stored_run(services.runs_dir, verification="audit", model="audited")
    app = make_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        session, screen = await _open(app, pilot, path)
        assert screen.current == "add3-0002" and screen.view.auto_score == 1.0

        await pilot.press("n")  # rejects candidate 1, the one the reference matches: asked
        assert screen.cursor == 0 and "press n again" in prompt(screen)
        await pilot.press("escape")  # takes it back — it does not offer to leave the spot-check
        assert app.screen is screen and screen.cursor == 0 and screen.confirming is None
        assert "contradicts" not in prompt(screen) and on_disk(path) == {}

        await pilot.press("n")
        await pilot.press("n")  # kept: the next candidate
        assert screen.cursor == 1 and on_disk(path) == {}
        await pilot.press("y")  # rank 2 also contradicts the reference, but this item was asked once already
        label = on_disk(path)["add3-0002"]
        assert label.rank == 2 and label.overrides_reference

        assert screen.current == "add3-0185"  # the reference matches candidate 2: x (none acceptable) asks
        await pilot.press("x")
        assert "add3-0185" not in on_disk(path) and "press x again" in prompt(screen)
        await pilot.press("y")  # another key instead: asked for itself (rank 1 ≠ candidate 2), x forgotten
        assert "press y again" in prompt(screen) and "add3-0185" not in on_disk(path)
        await pilot.press("u")  # u while asked takes the key back too
        assert screen.confirming is None and on_disk(path).keys() == {"add3-0002"}
        await pilot.press("n")  # rejecting candidate 1 agrees with the reference: no question
        await pilot.press("y")  # candidate 2, the reference's: saved, no override
        assert on_disk(path)["add3-0185"].rank == 2 and not on_disk(path)["add3-0185"].overrides_reference
        a = session.audit()
        assert [d.item_id for d in a.disagreements] == ["add3-0002"] and a.disagreements[0].overrode
        session.close()
