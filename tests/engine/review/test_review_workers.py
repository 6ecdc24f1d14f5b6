"""The team-review screens keep answering while the database does not (issue 28 §6), and the small team-review items
of issue 31: ``review pull`` as a reviewer names pulling (11), ``review adjudicate`` shows the question and the
candidates (12), Review (team) says what Enter does and shows its keys (13), ``review open`` asks before Escape
leaves an item in hand (23).

The unreachable database is a real socket on loopback that accepts a connection and never answers (PostgreSQL's
client then waits for its connect timeout): the test waits for the server to have accepted the connection — an event,
never a sleep — presses keys while the connect is pending, then closes the socket so the connect fails at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from textual.widgets import Input, Label  # noqa: E402

from relgate_tui.cli import main  # noqa: E402
from relgate_tui.engine.review.client import Reviewer  # noqa: E402
from relgate_tui.engine.review.store import open_store  # noqa: E402
from relgate_tui.tui.app import make_app  # noqa: E402
from relgate_tui.tui.confirm import ConfirmModal  # noqa: E402
from relgate_tui.tui.review.app import ReviewApp  # noqa: E402
from relgate_tui.tui.review.connect import ReviewConnectScreen  # noqa: E402
from relgate_tui.tui.review.label import ReviewLabelScreen  # noqa: E402
from tests.engine.review.conftest import Backend, import_run, review_open, write_labels  # noqa: E402
from tests.engine.review.test_tui import _keys, _services, _settle, _text  # noqa: E402


class SilentServer:
    """Accepts TCP connections on loopback and never sends a byte; ``accepted`` is set at the first one."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = threading.Event()
        self.conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def _serve(self) -> None:
        try:
            while True:
                conn, _ = self.sock.accept()
                self.conns.append(conn)
                self.accepted.set()
        except OSError:
            return  # closed

    def close(self) -> None:
        self.sock.close()
        for c in self.conns:
            c.close()

    def __exit__(self, *exc: object) -> None:
        self.close()


async def test_an_unreachable_database_keeps_the_connect_screen_responsive(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    app = make_app(_services(tmp_path))
    with SilentServer() as server:
        async with app.run_test(size=(130, 40)) as pilot:
            await pilot.press("v")
            screen = app.screen
            assert isinstance(screen, ReviewConnectScreen)
            screen.query_one("#connect-db", Input).value = f"postgresql://alice@127.0.0.1:{server.port}/team"
            screen.query_one("#connect-db", Input).focus()
            await pilot.press("enter")
            assert await asyncio.to_thread(server.accepted.wait, 30), "the connect never reached the server"
            # the connect is pending in its worker: the screen says so and still takes keys
            assert screen.busy == "connecting…"
            assert "connecting…" in str(screen.query_one("#connect-where", Label).render())
            await pilot.press("tab", "b", "o", "b")  # handled at once: the UI thread is not waiting on the database
            assert screen.query_one("#connect-as", Input).value == "bob"
            assert screen.busy == "connecting…" and screen.store is None
            server.close()  # the server goes away: the connect fails now, in the worker
            await _settle(pilot, app)
            assert screen.busy == "" and screen.store is None
            where = str(screen.query_one("#connect-where", Label).render())
            assert "connecting" not in where and where.strip()  # the error, one line


async def test_the_connect_screen_says_what_enter_does_and_shows_its_keys(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("RELGATE_HOME", str(home))
    monkeypatch.delenv("RELGATE_DB", raising=False)
    app = make_app(_services(tmp_path))
    async with app.run_test(size=(130, 40)) as pilot:
        await pilot.press("v")
        screen = app.screen
        assert isinstance(screen, ReviewConnectScreen)
        hint = _text(screen, "#connect-hint")
        assert "Enter in a field connects to the embedded file" in hint and "review.sqlite3" in hint
        for key in ("l label", "t status", "a adjudicate", "Esc back"):
            assert key in hint, key
        screen.query_one("#connect-db", Input).value = "postgresql://carol:s3cret@db.example/team"
        await pilot.pause()
        hint = _text(screen, "#connect-hint")
        assert "db.example" in hint and "s3cret" not in hint
        monkeypatch.setenv("RELGATE_DB", f"sqlite:///{tmp_path / 'team.sqlite3'}")
        screen.query_one("#connect-db", Input).value = ""
        await pilot.pause()
        assert "$RELGATE_DB" in _text(screen, "#connect-hint")
        await _keys(pilot, app, "enter")  # and Enter does connect there
        assert "team.sqlite3" in str(screen.query_one("#connect-where", Label).render())


async def test_review_open_asks_before_escape_leaves_an_item_in_hand(tmp_path: Path, monkeypatch) -> None:
    with review_open(tmp_path, monkeypatch, 4) as (app, _store, _sid):
        async with app.run_test(size=(130, 40)) as pilot:
            await _settle(pilot, app)
            screen = app.screen
            assert isinstance(screen, ReviewLabelScreen) and screen.claim is not None
            await _keys(pilot, app, "escape")
            assert isinstance(app.screen, ConfirmModal)  # today's code quits here
            await _keys(pilot, app, "n")  # stay
            assert app.screen is screen and app.is_running and screen.claim is not None
            await _keys(pilot, app, "escape")
            assert isinstance(app.screen, ConfirmModal)
            await _keys(pilot, app, "y")
        assert app.return_code in (None, 0)


def test_review_pull_as_a_reviewer_names_pulling(pg_backend: Backend, tmp_path: Path, capsys) -> None:
    b = pg_backend
    run = import_run(tmp_path, 4)
    pub = tmp_path / "pub.json"
    assert main(["review", "publish", run, *b.args(None), "--json", str(pub)]) == 0
    sid = json.loads(pub.read_text())["session"]
    capsys.readouterr()
    assert main(["review", "pull", sid, *b.args("alice")]) == 2
    err = capsys.readouterr().err
    assert "pulling the final labels" in err and "relgate_adjudicator" in err
    assert "adjudicator queue" not in err  # today's message named the wrong action


def test_review_adjudicate_shows_the_question_and_the_candidates(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    db = ["--db", f"sqlite:///{tmp_path / 'team.sqlite3'}"]
    run = import_run(tmp_path, 4)
    pub = tmp_path / "pub.json"
    assert main(["review", "publish", run, *db, "--json", str(pub)]) == 0
    sid = json.loads(pub.read_text())["session"]
    items = [f"q{i:03d}" for i in range(4)]
    for name, v in (("alice", "1"), ("bob", "none")):
        labels = write_labels(tmp_path / f"{name}.jsonl", dict.fromkeys(items, v))
        assert main(["review", "label", sid, "--labels", str(labels), *db, "--as", name]) == 0
    capsys.readouterr()
    assert main(["review", "adjudicate", sid, *db]) == 0
    err = capsys.readouterr().err
    first = next(line for line in err.splitlines() if line.strip().startswith("q0"))
    item = first.split(":")[0].strip()
    n = int(item[1:])
    assert f"{item}: q{n}?" in err  # the question
    assert f"1. {100 + n}  (3/6 samples)" in err and f"2. {1100 + n}  (2/6 samples)" in err  # the candidates
    assert f"alice 1 ({100 + n})" in err and "bob none" in err  # each label beside the answer it names


async def test_review_open_names_team_review_once_in_the_window_title(tmp_path: Path, monkeypatch) -> None:
    with review_open(tmp_path, monkeypatch, 2) as (app, _store, _sid):
        async with app.run_test(size=(130, 40)) as pilot:
            await _settle(pilot, app)
            assert isinstance(app.screen, ReviewLabelScreen)
            header = f"{app.title} — {app.screen.sub_title}"  # what Textual's Header shows
            assert header.count("team review") == 1 and header.startswith("relgate — team review · "), header


class HoldingProxy:
    """A TCP relay on loopback to the real PostgreSQL server that, once ``hold`` is set, keeps what the client sends
    (``held`` is set when the first such bytes arrive) until ``release`` is set: a database call pending for as
    long as the test wants, with nothing timed."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream = upstream_port
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.hold, self.held, self.release = threading.Event(), threading.Event(), threading.Event()
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        try:
            while True:
                client, _ = self.sock.accept()
                server = socket.create_connection(("127.0.0.1", self.upstream))
                self.conns += [client, server]
                threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
                threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()
        except OSError:
            return  # closed

    def _pump(self, src: socket.socket, dst: socket.socket, from_client: bool) -> None:
        try:
            while data := src.recv(65536):
                if from_client and self.hold.is_set() and not self.release.is_set():
                    self.held.set()
                    self.release.wait()
                dst.sendall(data)
        except OSError:
            pass

    def close(self) -> None:
        self.release.set()
        self.sock.close()
        for c in self.conns:
            c.close()


async def test_the_label_screen_says_saving_while_the_database_call_is_pending(pg_backend: Backend,
                                                                                tmp_path: Path) -> None:
    b = pg_backend
    run = import_run(tmp_path, 4)
    pub = tmp_path / "pub.json"
    assert main(["review", "publish", run, *b.args(None), "--per-item", "1", "--json", str(pub)]) == 0
    sid = json.loads(pub.read_text())["session"]
    url, _ = b.reviewer("alice")
    assert b.pg is not None
    proxy = HoldingProxy(b.pg.port)
    store = open_store(url.replace(f":{b.pg.port}/", f":{proxy.port}/"))
    reviewer = Reviewer(store, store.session(sid), "alice")
    app = ReviewApp(reviewer)
    try:
        async with app.run_test(size=(130, 40)) as pilot:
            await _settle(pilot, app)
            screen = app.screen
            assert isinstance(screen, ReviewLabelScreen) and screen.claim is not None
            first = screen.claim.item_id
            proxy.hold.set()
            await pilot.press("y")  # accept rank 1: the label's transaction goes to the database and waits there
            assert await asyncio.to_thread(proxy.held.wait, 30), "the label never reached the database"
            assert screen.busy == "saving…" and "saving…" in _text(screen, "#review-db")
            assert f"saving: {first} → rank 1" in _text(screen, "#review-last")
            await pilot.press("y")  # handled at once (a notice), not queued behind the pending call
            assert screen.labelled == 1 and screen.busy == "saving…"
            assert b.sql("SELECT count(*) FROM review_labels") == [(0,)]  # nothing committed yet
            proxy.release.set()
            await _settle(pilot, app)
            assert screen.busy == "" and "connected" in _text(screen, "#review-db")
            assert f"saved: {first} → rank 1" in _text(screen, "#review-last")
            assert screen.claim is not None and screen.claim.item_id != first
        assert b.sql("SELECT item_id, verdict FROM review_labels") == [(first, "1")]
    finally:
        reviewer.close()
        store.close()
        proxy.close()
