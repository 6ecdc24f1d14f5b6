"""Where the review store lives and how to reach it (issue 21 §1, §2, §7).

The URL comes from ``--db``, else ``$RELGATE_DB``, else the embedded SQLite file ``<data dir>/review.sqlite3``.
``postgresql://`` / ``postgres://`` URLs are driven by psycopg 3 (``postgresql+psycopg://``). The password comes
from the URL, ``$PGPASSWORD`` or ``~/.pgpass`` (libpq reads both); it is never shown: every message that leaves this
package goes through :func:`ReviewDB.clean` (the URL without its userinfo, the password itself replaced), and the
engine hides SQL parameters from its errors.

Errors become one line: :class:`ReviewUnreachable` (the server cannot be reached — the reviewer's journal keeps the
keypresses), :class:`ReviewLoginRefused` (the server answered and refused the login: a wrong password, an unknown
role or database — said at once, never retried as "unreachable"), :class:`ReviewDenied` (the database role may not
do this), :class:`ReviewError` (anything else the user must fix). A ``--db`` that is not a URL (a libpq
``key=value`` string, which may hold ``password=``) is refused without being echoed.
"""

from __future__ import annotations

import fcntl
import getpass
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event, exc
from sqlalchemy.engine import URL, Connection, Engine, make_url

from relgate_tui.core.redact import public_url, redact
from relgate_tui.core.text import one_line
from relgate_tui.errors import DataError, UserError

__all__ = ["DB_ENV", "ReviewError", "ReviewUnreachable", "ReviewLoginRefused", "ReviewDenied", "ReviewDB", "resolve_url", "connect"]

DB_ENV = "RELGATE_DB"
SERIALISATION_RETRIES = 20
EMBEDDED_NAME = "review.sqlite3"
T = TypeVar("T")


class ReviewError(DataError):
    """A review-store failure the user must act on (one line, no secret)."""


class ReviewUnreachable(ReviewError):
    """The database server cannot be reached (down, restarting, network)."""


class ReviewLoginRefused(ReviewError):
    """The server answered and refused the connection (authentication, unknown role or database): retrying will not
    help."""


# what a PostgreSQL server says when it answered but refused the login (libpq's wording; SQLSTATE 28P01, 28000,
# 3D000 when the driver has it)
_LOGIN_REFUSED = ("password authentication failed", "no password supplied", "authentication failed",
                  "does not exist", "no pg_hba.conf entry", "not permitted to log in")
_LOGIN_STATES = ("28P01", "28000", "3D000")


class ReviewDenied(ReviewError):
    """The database role lacks the privilege (or row-level policy) for this."""


def resolve_url(db: str | None = None) -> str:
    """``db``, else ``$RELGATE_DB``, else the embedded file in the data dir (created on first use)."""
    url = (db or os.environ.get(DB_ENV, "")).strip()
    if url:
        return url
    from relgate_tui.engine.runs.paths import data_dir

    return f"sqlite:///{data_dir() / EMBEDDED_NAME}"


def _sa_url(url: str) -> URL:
    if "://" not in url:  # a libpq "host=… password=…" string: never echoed, it may hold the password
        raise UserError("--db is not a database URL (not shown: it may hold a password): use "
                        "postgresql://USER@HOST:PORT/DB with the password in $PGPASSWORD or ~/.pgpass, or "
                        "sqlite:///FILE")
    try:
        u = make_url(url)
    except exc.ArgumentError:
        raise UserError(f"not a database URL: {public_url(url)!r} (use postgresql://… or sqlite:///FILE)") from None
    except ValueError:  # SQLAlchemy reads the port as a number
        raise UserError("--db is not a database URL (not shown: it may hold a password): its port is not a number "
                        "(use postgresql://USER@HOST:PORT/DB)") from None
    backend = u.get_backend_name()
    if backend in ("postgresql", "postgres"):
        return u.set(drivername="postgresql+psycopg")
    if backend == "sqlite":
        if u.drivername != "sqlite":
            u = u.set(drivername="sqlite")
        if not u.database or u.database == ":memory:":
            raise UserError("an embedded review store needs a file: sqlite:///PATH")
        return u
    raise UserError(f"unsupported database {backend!r}: use postgresql://… or sqlite:///FILE")


@dataclass
class ReviewDB:
    """An open review store: the SQLAlchemy engine, which dialect, and how to name it without a secret."""

    engine: Engine
    public: str
    secret: str | None
    user: str | None = None
    lock_path: Path | None = None
    _lock_fd: int | None = field(default=None, repr=False)
    _thread_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def is_postgres(self) -> bool:
        return self.engine.dialect.name == "postgresql"

    def clean(self, text: str) -> str:
        """``text`` as one line with the URL's password (and any token-looking value) removed."""
        return one_line(redact(str(text), (self.secret,)), 300)

    def error(self, e: BaseException, doing: str) -> ReviewError:
        """The one-line error for a database exception raised while ``doing`` something."""
        orig = getattr(e, "orig", None)
        lines = str(orig if orig is not None else e).strip().splitlines()
        detail = self.clean(lines[0] if lines else e.__class__.__name__)
        sqlstate = getattr(orig, "sqlstate", None)
        if sqlstate == "42501" or "permission denied" in detail or "row-level security" in detail:
            return ReviewDenied(f"{doing}: permission denied for this database role ({detail})")
        if sqlstate == "55P03":  # lock_timeout: another transaction holds what this one waits for
            return ReviewError(f"{doing}: another transaction has held the item too long ({detail}); try again")
        if self.is_postgres and isinstance(e, exc.OperationalError) and (
                sqlstate in _LOGIN_STATES or any(m in detail for m in _LOGIN_REFUSED)):
            return ReviewLoginRefused(f"{self.public} refused the login ({detail})")
        if isinstance(e, (exc.OperationalError, exc.InterfaceError)) or (
                isinstance(e, exc.DBAPIError) and e.connection_invalidated):
            if not self.is_postgres and "locked" in detail:
                return ReviewError(f"{doing}: the review file {self.public} is busy ({detail})")
            return ReviewUnreachable(f"database unreachable at {self.public} ({detail})")
        return ReviewError(f"{doing}: {detail}")

    @contextmanager
    def _writer_turn(self) -> Iterator[None]:
        """SQLite: one writer at a time across processes, woken the moment the previous one commits (an exclusive
        ``flock`` on ``<file>.lock``) — SQLite's own busy handler polls with sleeps of up to 100 ms instead."""
        if self.lock_path is None:
            yield
            return
        with self._thread_lock:
            if self._lock_fd is None:
                self._lock_fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def run(self, doing: str, fn: Callable[[Connection], T]) -> T:
        """``fn`` in one transaction (SQLite: ``BEGIN IMMEDIATE`` in its writer turn); every database error leaves
        as a one-line :class:`ReviewError`. A connection the server dropped (a restart) is retried once on a fresh one,
        a transaction the server could not serialise (``40001`` under REPEATABLE READ or SERIALIZABLE: another
        writer of the item committed after its snapshot; ``40P01`` a deadlock) up to :data:`SERIALISATION_RETRIES`
        times: every operation of the store is safe to repeat (labels carry their key, undo names its label)."""
        dropped = conflicts = 0
        while True:
            try:
                with self._writer_turn(), self.engine.begin() as conn:
                    return fn(conn)
            except ReviewError:
                raise
            except exc.DBAPIError as e:
                if e.connection_invalidated and dropped == 0:
                    dropped += 1
                    continue
                if getattr(e.orig, "sqlstate", None) in ("40001", "40P01") and conflicts < SERIALISATION_RETRIES:
                    conflicts += 1
                    time.sleep(random.uniform(0.0, 0.002 * conflicts))  # apart, so the writers do not meet again
                    continue
                raise self.error(e, doing) from None
            except exc.SQLAlchemyError as e:
                raise self.error(e, doing) from None

    def identity(self, as_name: str | None) -> str:
        """Who labels: on PostgreSQL the role that logged in (``session_user``: what the database's rules check;
        ``--as`` is refused), on the embedded
        store ``--as NAME`` or the system user."""
        if self.is_postgres:
            if as_name:
                raise UserError("--as works only with the embedded store: on PostgreSQL a reviewer is their "
                                "database role (connect as that role)")
            return str(self.run("who am I", lambda c: c.execute(sa.text("SELECT session_user")).scalar_one()))
        name = (as_name or "").strip()
        if as_name is not None and not name:
            raise UserError("--as needs a reviewer name")
        name = name or getpass.getuser()
        if len(name) > 64 or one_line(name) != name:
            raise UserError("a reviewer name is at most 64 printable characters")
        return name

    def expected_identity(self, as_name: str | None) -> str:
        """Who the reviewer will be, without a connection (for naming the journal while the server is down): on
        PostgreSQL the URL's user, else ``$PGUSER``, else the system user — libpq's own order."""
        if not self.is_postgres:
            return self.identity(as_name)
        return self.user or os.environ.get("PGUSER") or getpass.getuser()

    def close(self) -> None:
        self.engine.dispose()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def connect(db: str | None = None, *, connect_timeout: float = 5.0) -> ReviewDB:
    """Open (not yet touch) the review store named by ``db`` / ``$RELGATE_DB`` / the embedded default."""
    raw = resolve_url(db)
    u = _sa_url(raw)
    secret = u.password if isinstance(u.password, str) else None
    shown = public_url(raw) if "://" in raw else raw
    if u.get_backend_name() == "sqlite":
        path = Path(str(u.database)).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(u.set(database=str(path)), hide_parameters=True,
                                  connect_args={"timeout": 60.0, "isolation_level": None})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        shown = f"sqlite:///{path}"
        return ReviewDB(engine, shown, None, None, path.with_name(path.name + ".lock"))
    else:
        engine = sa.create_engine(u, hide_parameters=True, pool_size=2, max_overflow=2,
                                  connect_args={"connect_timeout": max(1, int(connect_timeout)),
                                                "application_name": "relgate-review"})
    return ReviewDB(engine, shown, secret, u.username if isinstance(u.username, str) else None)
