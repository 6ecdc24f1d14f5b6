"""The team-review TUI says what the CLI says about bad data (issue 29 N5, N14, as h29a left them to the TUI): the
labelling screen tells each malformed journal line it set aside (to ``<journal>.bad``), once; Review (team)'s status
names each stored label that is no verdict, left out of the figures. Both on the embedded store, whose file a
hand may edit."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from relgate_tui.cli import main
from relgate_tui.engine.review.client import Reviewer
from relgate_tui.engine.review.store import open_store
from relgate_tui.tui.app import make_app
from relgate_tui.tui.review.app import ReviewApp
from relgate_tui.tui.review.label import ReviewLabelScreen
from tests.engine.review.conftest import import_run, write_labels
from tests.engine.review.test_tui import _connect, _keys, _services, _settle, _text


def _session(tmp_path: Path, db: str) -> str:
    run = import_run(tmp_path, 4)
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, "--db", db, "--json", str(out)]) == 0
    return str(json.loads(out.read_text())["session"])


async def _open_label_screen(store, sid: str) -> list[str]:
    """The notices ``relgate review open`` shows once its labelling screen has claimed an item."""
    reviewer = Reviewer(store, store.session(sid), "carol")
    app = ReviewApp(reviewer)
    try:
        async with app.run_test(size=(130, 40)) as pilot:
            await _settle(pilot, app)
            assert isinstance(app.screen, ReviewLabelScreen) and app.screen.claim is not None
            return [str(n.message) for n in app._notifications]
    finally:
        reviewer.close()


async def test_the_labelling_screen_tells_the_journal_lines_it_set_aside(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    db = f"sqlite:///{tmp_path / 'team.sqlite3'}"
    sid = _session(tmp_path, db)
    store = open_store(db)
    try:
        r = Reviewer(store, store.session(sid), "carol")
        path = r.journal.path
        r.close()
        with path.open("a") as f:
            f.write("{not json\n")
            f.write(json.dumps({"op": "label", "key": "k1", "item": "q000"}) + "\n")  # no verdict
        notes = await _open_label_screen(store, sid)
        malformed = [n for n in notes if "is malformed" in n]
        assert len(malformed) == 2 and all("set aside in" in n and ".bad" in n for n in malformed), notes
        assert not [n for n in await _open_label_screen(store, sid) if "malformed" in n]  # told once
    finally:
        store.close()


async def test_the_status_names_a_stored_label_that_is_no_verdict(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    file = tmp_path / "team.sqlite3"
    db = f"sqlite:///{file}"
    sid = _session(tmp_path, db)
    for name in ("alice", "bob"):
        labels = write_labels(tmp_path / f"{name}.jsonl", {f"q{i:03d}": "1" for i in range(4)})
        assert main(["review", "label", sid, "--labels", str(labels), "--db", db, "--as", name]) == 0
    with sqlite3.connect(file) as c:
        item = c.execute("SELECT item_id FROM review_labels WHERE reviewer = 'bob' LIMIT 1").fetchone()[0]
        c.execute("UPDATE review_labels SET verdict = '0x1' WHERE reviewer = 'bob' AND item_id = ?", (item,))
    app = make_app(_services(tmp_path))
    async with app.run_test(size=(130, 40)) as pilot:
        connect = await _connect(pilot, app, db, "judy")
        await _keys(pilot, app, "t")
        assert f"label of item {item} by bob left out: not a verdict: '0x1'" in _text(connect, "#connect-status")
