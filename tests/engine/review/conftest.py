"""Fixtures of the team-review tests: one real PostgreSQL server for the session (:mod:`.pgserver`), and every
store test parametrised over it and the embedded SQLite store (issue 21 §6)."""

from __future__ import annotations

import contextlib
import itertools
import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.engine.runs.listing import list_runs
from tests.engine.review.pgserver import PgServer

_db_counter = itertools.count()


@pytest.fixture(scope="session")
def pg() -> Iterator[PgServer]:
    server = PgServer().start()
    try:
        yield server
    finally:
        server.destroy()


@dataclass
class Backend:
    """One review database for one test: ``admin_url`` (the owner: init, publish, pull) and ``reviewer(name)``
    (on PostgreSQL a login role in relgate_reviewer; on SQLite the same file with ``--as name``)."""

    kind: str
    admin_url: str
    pg: PgServer | None = None
    db: str = ""
    passwords: dict[str, str] = field(default_factory=dict)

    @property
    def is_pg(self) -> bool:
        return self.kind == "postgres"

    def reviewer(self, name: str, *, adjudicator: bool = False) -> tuple[str, str | None]:
        """(URL, --as name or None) of reviewer ``name``."""
        if not self.is_pg:
            return self.admin_url, name
        assert self.pg is not None
        if name not in self.passwords:
            pw = _ROLE_PASSWORDS.setdefault(name, secrets.token_hex(10))
            if not self.pg.psql(f"SELECT 1 FROM pg_roles WHERE rolname = '{name}'").strip():
                self.pg.create_login(name, pw)
            self.passwords[name] = pw
            args = ["review", "grant", name, "--db", self.admin_url] + (["--adjudicator"] if adjudicator else [])
            assert main(args) == 0
        return self.pg.url(name, self.passwords[name], self.db), None

    def sql(self, statement: str, params: dict | None = None) -> list:
        """``statement`` run by the store's owner (its rows, if any): what time passing, or a hand-made row, does."""
        import sqlalchemy as sa

        url = self.admin_url.replace("postgresql://", "postgresql+psycopg://")
        engine = sa.create_engine(url)
        try:
            with engine.begin() as c:
                res = c.execute(sa.text(statement), params or {})
                return list(res.all()) if res.returns_rows else []
        finally:
            engine.dispose()

    def expire_leases(self, sid: str, reviewer: str | None = None) -> None:
        """Every running claim of session ``sid`` (of ``reviewer`` only, if given) reaches its lease's end: the
        lease of PostgreSQL runs on the server's clock, so time is moved on the claims rather than the clock."""
        self.sql("UPDATE review_claims SET expires_at = 0 WHERE session_id = :s AND state = 'claimed'"
                 + (" AND reviewer = :r" if reviewer else ""), {"s": sid, "r": reviewer})

    def args(self, name: str | None) -> list[str]:
        """``--db URL [--as NAME]`` for reviewer ``name`` (None: the admin)."""
        if name is None:
            return ["--db", self.admin_url]
        url, as_name = self.reviewer(name)
        return ["--db", url] + (["--as", as_name] if as_name else [])


_ROLE_PASSWORDS: dict[str, str] = {}


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Backend:
    """The same test on the embedded store and on the PostgreSQL server."""
    return _make_backend(request.param, request, tmp_path, monkeypatch)


@pytest.fixture
def pg_backend(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Backend:
    """PostgreSQL only: roles, row-level security, a server to stop and restart."""
    return _make_backend("postgres", request, tmp_path, monkeypatch)


def _make_backend(kind: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                  ) -> Backend:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RELGATE_DB", raising=False)
    if kind == "sqlite":
        b = Backend("sqlite", f"sqlite:///{tmp_path / 'review.sqlite3'}")
    else:
        server: PgServer = request.getfixturevalue("pg")
        name = server.create_db(f"t{next(_db_counter)}_{secrets.token_hex(3)}")
        b = Backend("postgres", server.url("postgres", None, name), server, name)
    assert main(["review", "init", "--db", b.admin_url]) == 0
    return b


def import_run(tmp_path: Path, n: int = 20, name: str = "s", classes: int = 3) -> str:
    """A run of ``n`` items imported from a samples file (no server): item i's candidates are ``classes`` answers
    with distinct counts, so ranks 1..classes exist. Returns the run id."""
    p = tmp_path / f"{name}.jsonl"
    with p.open("w", encoding="utf-8") as f:
        for i in range(n):
            samples = [str(100 + i + 1000 * c) for c in range(classes) for _ in range(classes - c)]
            f.write(json.dumps({"id": f"q{i:03d}", "question": f"q{i}?", "model": "m", "samples": samples}) + "\n")
    runs = tmp_path / "home" / "runs"
    before = {r.run_id for r in list_runs(runs)}
    assert main(["import", "samples", str(p), "--run-dir", str(runs), "--quiet"]) == 0
    (new,) = {r.run_id for r in list_runs(runs)} - before
    return new


def write_labels(path: Path, verdicts: dict[str, str]) -> Path:
    """A labels file (the ``certify --labels`` format) from item → verdict code."""
    with path.open("w", encoding="utf-8") as f:
        for item, v in verdicts.items():
            obj = {"id": item, "none": True} if v == "none" else (
                {"id": item, "skip": True} if v == "skip" else {"id": item, "rank": int(v)})
            f.write(json.dumps(obj) + "\n")
    return path


@contextlib.contextmanager
def review_open(tmp_path: Path, monkeypatch, n_items: int, who: str = "carol") -> Iterator[tuple]:
    """``relgate review open`` as ``who``: a run of ``n_items`` (:func:`import_run`) published to an embedded SQLite
    review; yields (the ReviewApp, the store, the session id) and closes the reviewer and the store after."""
    from relgate_tui.engine.review.client import Reviewer
    from relgate_tui.engine.review.store import open_store
    from relgate_tui.tui.review.app import ReviewApp

    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    db = f"sqlite:///{tmp_path / 'team.sqlite3'}"
    run = import_run(tmp_path, n_items)
    out = tmp_path / "pub.json"
    assert main(["review", "publish", run, "--db", db, "--json", str(out)]) == 0
    store = open_store(db)
    sid = json.loads(out.read_text())["session"]
    reviewer = Reviewer(store, store.session(sid), who)
    try:
        yield ReviewApp(reviewer), store, sid
    finally:
        reviewer.close()
        store.close()
