"""Pilot tests of the team-review screens (issue 21): Home → Review (team) → connect → label → "database
unreachable: N labels waiting" (PostgreSQL stopped for real) → back; the adjudicator's queue; Runs → Publish."""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from textual.widgets import DataTable, Input, Static  # noqa: E402

from relgate_tui.cli import main  # noqa: E402
from relgate_tui.engine.review.store import open_store  # noqa: E402
from relgate_tui.tui.app import make_app  # noqa: E402
from relgate_tui.tui.review.adjudicate import AdjudicateScreen  # noqa: E402
from relgate_tui.tui.review.connect import ReviewConnectScreen  # noqa: E402
from relgate_tui.tui.review.label import ReviewLabelScreen  # noqa: E402
from relgate_tui.tui.review.publish import PublishModal  # noqa: E402
from relgate_tui.tui.runs import RunsScreen  # noqa: E402
from relgate_tui.tui.services import AppServices  # noqa: E402
from tests.engine.review.conftest import Backend, import_run, review_open, write_labels  # noqa: E402


def _services(tmp_path: Path) -> AppServices:
    home = tmp_path / "home"
    return AppServices(runs_dir=home / "runs", cache_dir=home / "cache", settings_path=home / "settings.json",
                       discover=lambda: [], embedded_demo=False, demo_latency_ms=0.0, demo_port=0,
                       probe_latency=False)


def _publish(b: Backend, tmp_path: Path, run: str, *extra: str) -> str:
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, *b.args(None), "--json", str(out), *extra]) == 0
    return str(json.loads(out.read_text())["session"])


def _text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def _settle(pilot, app) -> None:
    """Every review-store call runs in a thread worker: wait for each (a failed one is the screen's to show, through
    its worker-state handler), then for the screen to redraw."""
    from textual.worker import WorkerFailed

    for worker in list(app.workers):
        try:
            await worker.wait()
        except WorkerFailed:
            pass
    await pilot.pause()


async def _keys(pilot, app, *keys: str) -> None:
    """Press each key once the previous one's database call is done (a key pressed while one is pending is
    answered with a notice — tested in test_review_workers.py)."""
    for k in keys:
        await pilot.press(k)
        await _settle(pilot, app)


async def _connect(pilot, app, url: str, as_name: str = "") -> ReviewConnectScreen:
    await pilot.press("v")
    screen = app.screen
    assert isinstance(screen, ReviewConnectScreen)
    screen.query_one("#connect-db", Input).value = url
    screen.query_one("#connect-as", Input).value = as_name
    screen.query_one("#connect-db", Input).focus()
    await pilot.press("enter")
    await _settle(pilot, app)
    assert screen.query_one("#connect-sessions", DataTable).row_count >= 1
    return screen


async def test_connect_label_unreachable_and_back(pg_backend: Backend, tmp_path: Path) -> None:
    b = pg_backend
    assert b.pg is not None
    run = import_run(tmp_path, 8)  # 4 calibration items
    sid = _publish(b, tmp_path, run, "--per-item", "1")
    url, _ = b.reviewer("alice")
    app = make_app(_services(tmp_path))
    async with app.run_test(size=(130, 40)) as pilot:
        connect = await _connect(pilot, app, url)
        await _keys(pilot, app, "enter")  # the highlighted session
        screen = app.screen
        assert isinstance(screen, ReviewLabelScreen) and screen.claim is not None
        assert "connected" in _text(screen, "#review-db")
        first = screen.claim.item_id
        await _keys(pilot, app, "y")
        assert screen.claim is not None and screen.claim.item_id != first
        held = screen.claim.item_id
        b.pg.stop()
        try:
            await _keys(pilot, app, "n", "x")  # the item in hand is labelled while the server is down
            assert "database unreachable: 1 label waiting" in _text(screen, "#review-db")
            assert screen.claim is None and screen.reviewer.waiting == 1
            await _keys(pilot, app, "r")
            assert "database unreachable: 1 label waiting" in _text(screen, "#review-db")
            assert b.passwords["alice"] not in _text(screen, "#review-db")
        finally:
            b.pg.start()
        await _keys(pilot, app, "r")
        assert "connected" in _text(screen, "#review-db")
        assert "database back" in _text(screen, "#review-last")
        assert screen.claim is not None and screen.claim.item_id not in (first, held)
        await _keys(pilot, app, "u")  # undo is the reviewer's own last label: the held item comes back
        assert screen.claim is not None and screen.claim.item_id == held
        await _keys(pilot, app, "x")
        await _keys(pilot, app, "escape")
        if screen.claim is not None:  # an item in hand: leaving asks first (issue 31 item 23)
            await _keys(pilot, app, "y")
        await _settle(pilot, app)
        assert app.screen is connect and "1 labels" not in _text(connect, "#connect-status")
    store = open_store(b.admin_url)
    try:
        labels = store.labels(sid)
        assert labels[first] == {"alice": "1"} and labels[held] == {"alice": "none"} and len(labels) == 2
    finally:
        store.close()


async def test_adjudication_screen(backend: Backend, tmp_path: Path) -> None:
    run = import_run(tmp_path, 8)
    sid = _publish(backend, tmp_path, run)
    items = [f"q{i:03d}" for i in range(8)]
    for name, v in (("alice", "1"), ("bob", "2")):
        assert main(["review", "label", sid, "--labels", str(write_labels(tmp_path / f"{name}.jsonl",
                                                                             dict.fromkeys(items, v))),
                     *backend.args(name)]) == 0
    if backend.is_pg:
        url, as_name = backend.reviewer("judy", adjudicator=True)
    else:
        url, as_name = backend.admin_url, "judy"
    app = make_app(_services(tmp_path))
    async with app.run_test(size=(130, 40)) as pilot:
        connect = await _connect(pilot, app, url, as_name or "")
        await _keys(pilot, app, "t")
        assert "4 disputed items counted as misses" in _text(connect, "#connect-status")
        await _keys(pilot, app, "a")
        await _settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, AdjudicateScreen) and len(screen.queue) == 4
        first = screen.queue[0][0]
        assert screen.queue[0][1] == {"alice": "1", "bob": "2"}
        await _keys(pilot, app, "2")
        await _settle(pilot, app)
        assert len(screen.queue) == 3 and first not in [i for i, _ in screen.queue]
        await _keys(pilot, app, "x")
        await _settle(pilot, app)
        assert len(screen.queue) == 2
        await _keys(pilot, app, "escape")
        await _settle(pilot, app)
        assert app.screen is connect and "2 disputed items counted as misses" in _text(connect, "#connect-status")
    store = open_store(backend.admin_url)
    try:
        decided = store.adjudications(sid)
        assert decided[first] == "2" and sorted(decided.values()) == ["2", "none"]
    finally:
        store.close()


async def test_a_reviewer_is_refused_the_adjudicator_queue_on_screen(pg_backend: Backend, tmp_path: Path) -> None:
    run = import_run(tmp_path, 4)
    _publish(pg_backend, tmp_path, run)
    url, _ = pg_backend.reviewer("alice")
    app = make_app(_services(tmp_path))
    async with app.run_test(size=(130, 40)) as pilot:
        await _connect(pilot, app, url)
        await _keys(pilot, app, "a")
        await _settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, AdjudicateScreen) and screen.queue == []
        assert "relgate_adjudicator" in str(screen.query_one("#adjudicate-title").render())


async def test_publish_from_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    run = import_run(tmp_path, 6)
    db = f"sqlite:///{tmp_path / 'team.sqlite3'}"
    app = make_app(_services(tmp_path))
    async with app.run_test(size=(130, 40)) as pilot:
        await pilot.press("o")
        assert isinstance(app.screen, RunsScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, PublishModal)
        modal.query_one("#publish-db", Input).value = db
        await _keys(pilot, app, "enter")
        assert modal.session is not None and "3 items" in _text(modal, "#publish-result")
    store = open_store(db)
    try:
        info = store.session(modal.session)
        assert info.run_id == run and info.n_items == 3 and info.per_item == 2
    finally:
        store.close()


async def test_results_say_how_many_disputed_items_count_as_misses(tmp_path: Path, monkeypatch) -> None:
    from relgate_tui.engine.certification.session import Session
    from relgate_tui.tui.results import ResultsScreen

    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    db = ["--db", f"sqlite:///{tmp_path / 'team.sqlite3'}"]
    run = import_run(tmp_path, 12)
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, *db, "--json", str(out)]) == 0
    sid = json.loads(out.read_text())["session"]
    items = [f"q{i:03d}" for i in range(12)]
    assert main(["review", "label", sid, "--labels", str(write_labels(tmp_path / "a.jsonl", dict.fromkeys(items, "1"))),
                 *db, "--as", "alice"]) == 0
    bob = {i: ("2" if n < 6 else "1") for n, i in enumerate(items)}
    assert main(["review", "label", sid, "--labels", str(write_labels(tmp_path / "b.jsonl", bob)), *db,
                 "--as", "bob"]) == 0
    assert main(["review", "pull", sid, *db]) == 0
    review = json.loads((tmp_path / "home" / "runs" / run / "review.json").read_text())
    n = len(review["counted_as_misses"])
    assert n > 0
    app = make_app(_services(tmp_path))
    async with app.run_test(size=(130, 40)) as pilot:
        session = Session.open(tmp_path / "home" / "runs" / run)
        app.session = session
        app.show_results(session)
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        assert f"{n} disputed item{'s counted as misses' if n != 1 else ' counted as a miss'}" in _text(app.screen, "#message")


async def test_the_connect_field_never_leaves_a_password_on_screen(pg_backend: Backend, tmp_path: Path) -> None:
    run = import_run(tmp_path, 4)
    _publish(pg_backend, tmp_path, run)
    url, _ = pg_backend.reviewer("alice")
    app = make_app(_services(tmp_path))
    async with app.run_test(size=(130, 40)) as pilot:
        screen = await _connect(pilot, app, url)
        field = screen.query_one("#connect-db", Input)
        assert pg_backend.passwords["alice"] not in field.value and "alice" not in field.value
        await _keys(pilot, app, "t")  # a second use of the field reconnects with the URL as typed
        screen.query_one("#connect-db", Input).focus()
        await _keys(pilot, app, "enter")
        assert screen.query_one("#connect-sessions", DataTable).row_count == 1
        assert pg_backend.passwords["alice"] not in app.export_screenshot()


async def test_review_open_is_the_labelling_screen_alone(tmp_path: Path, monkeypatch) -> None:
    with review_open(tmp_path, monkeypatch, 4) as (app, store, sid):
        async with app.run_test(size=(130, 40)) as pilot:
            await _settle(pilot, app)
            screen = app.screen
            assert isinstance(screen, ReviewLabelScreen) and screen.claim is not None
            await _keys(pilot, app, "y", "y")
            assert "nothing left for you" in _text(screen, "#review-question")
            await _keys(pilot, app, "escape")
        assert sorted(store.labels(sid)) == sorted(store.item_ids(sid)) and len(store.item_ids(sid)) == 2


async def test_a_refused_connection_says_its_reason_at_120_columns(tmp_path: Path) -> None:
    """The line under the field wraps: the reason after the URL is on screen, not cut at the screen's edge."""
    from tests.engine.review.pgserver import _free_port

    url = f"postgresql://nobody@127.0.0.1:{_free_port()}/relgate"  # nothing listens there
    app = make_app(_services(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("v")
        screen = app.screen
        assert isinstance(screen, ReviewConnectScreen)
        screen.query_one("#connect-db", Input).value = url
        screen.query_one("#connect-db", Input).focus()
        await pilot.press("enter")
        await _settle(pilot, app)
        await pilot.pause()
        where = screen.query_one("#connect-where", Static)
        text = str(where.render())
        assert "unreachable" in text and "refused" in text.lower() and len(text) > where.size.width
        # every character of the line has a cell on screen: it wraps within the screen's width
        assert where.region.right <= 120 and where.size.width * where.size.height >= len(text)
