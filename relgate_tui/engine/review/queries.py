"""The review store's per-keypress statements, built once (issue 21 §3 and its load target).

A reviewer pays for two transactions per item: the claim and the label. Their statements are SQLAlchemy Core
constructs with bound parameters, built here at import time and reused, so each execution costs one cached
compilation lookup instead of building and hashing an expression tree (about a third of a label's client time
before), and each does its work in as few round trips as the locking allows:

* :data:`SCAN` — the reviewer's own running claim first (an undo or a reopened screen resumes it), else the first
  item, in queue order, this reviewer has not labelled and whose slots held by others (labelled, or claimed under a
  running lease) are fewer than R. It locks nothing (reviewers may lock no row on PostgreSQL): "full" items are one
  hashed set per statement (a ``GROUP BY … HAVING`` over the session's claims), not a count per item.
* :func:`upsert_claim` — the claim. On PostgreSQL the function ``relgate_review_claim`` (the one way a reviewer
  writes a claim, :func:`.schema.security_statements`): it takes the reviewer's row of the session, then the item's
  row (``wait`` false: an item another transaction holds is reported busy, (item, NULL), and passed over), counts
  the slots under those locks and writes the claim only while others hold fewer than R (no row = full). On SQLite
  (``if_room=True``) the same count is the statement's own subquery (:data:`OTHERS_FILLED`), exact because SQLite's
  writers are serialised.
* :data:`LABEL_CHECK` — a label's session R and lease, the candidate count, whether the client key was committed
  before, whether this reviewer labelled the item and whether their claim on it still runs (else it is renewed
  first, while the item has room: the database takes a label only with a running claim); then
  :data:`INSERT_LABEL` inserts the label only while the slot is still there (on PostgreSQL the label's trigger
  counts again under the item's lock).

A claim is thus BEGIN, SCAN, claim, COMMIT and a label BEGIN, check, insert, claim "done", COMMIT.

**Clock.** Every "now" in these statements is :data:`NOW`: on PostgreSQL the server's ``clock_timestamp()`` (a
client whose clock is 700 s ahead neither takes a live claim nor sees its own lease outlast the session's setting,
and a transaction held open past its lease's end no longer holds it; the server's triggers hold the same line
against SQL sent by hand), on the embedded store the bound parameter ``now`` (one machine, one clock).

Parameter names: ``sid`` session id, ``me`` reviewer, ``now`` the clock on SQLite, ``per_item`` R, ``item``,
``skip`` (expanding: item ids passed over), ``key`` the label's client key, ``lease`` seconds from now a claim
lasts (0 for a "done" claim), ``wait`` (PostgreSQL) whether a claim waits for an item another transaction holds.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement

from relgate_tui.engine.review import schema as S

__all__ = ["NOW", "SCAN", "SCAN_SKIP", "SCAN_OPEN", "SCAN_OPEN_SKIP", "execute", "OTHERS_FILLED", "LABEL_CHECK", "INSERT_LABEL", "upsert_claim"]

_it, _cl, _lb, _se = S.items.c, S.claims.c, S.labels.c, S.sessions.c
_P = sa.bindparam


class _Now(ColumnElement[float]):
    """The clock of a statement: the server's ``clock_timestamp()`` in epoch seconds on PostgreSQL (the moment of
    the statement, not ``now()``, the transaction's start), the parameter ``now`` elsewhere."""

    type = sa.Float()
    inherit_cache = True


@compiles(_Now, "postgresql")
def _now_pg(element: _Now, compiler: Any, **kw: Any) -> str:
    return "extract(epoch from clock_timestamp())::float8"


@compiles(_Now)
def _now_bound(element: _Now, compiler: Any, **kw: Any) -> str:
    return str(compiler.process(_P("now", type_=sa.Float()), **kw))


NOW = _Now()


def _held_by_others(item: Any) -> Any:
    return (_cl.session_id == _P("sid"), _cl.item_id == item, _cl.reviewer != _P("me"),
            sa.or_(_cl.state == "done", _cl.expires_at > NOW))


_FULL = (sa.select(_cl.item_id)
         .where(_cl.session_id == _P("sid"), _cl.reviewer != _P("me"),
                sa.or_(_cl.state == "done", _cl.expires_at > NOW))
         .group_by(_cl.item_id).having(sa.func.count() >= _P("per_item")))
_DONE_BY_ME = sa.select(_cl.item_id).where(_cl.session_id == _P("sid"), _cl.reviewer == _P("me"),
                                           _cl.state == "done")
_MINE_RUNNING = sa.select(_cl.item_id).where(_cl.session_id == _P("sid"), _cl.reviewer == _P("me"),
                                             _cl.state == "claimed", _cl.expires_at > NOW)

def _scan(*, held_first: bool, skipping: bool) -> Any:
    q = sa.select(_it.item_id, _it.position, _it.payload).where(
        _it.session_id == _P("sid"), _it.item_id.not_in(_DONE_BY_ME),
        sa.or_(_it.item_id.in_(_MINE_RUNNING), _it.item_id.not_in(_FULL)))
    if skipping:
        q = q.where(_it.item_id.not_in(_P("skip", expanding=True)))
    order = (_it.item_id.in_(_MINE_RUNNING).desc(), _it.position) if held_first else (_it.position,)
    return q.order_by(*order).limit(1)


SCAN = _scan(held_first=True, skipping=False)
SCAN_SKIP = _scan(held_first=True, skipping=True)

SCAN_OPEN = _scan(held_first=False, skipping=False)
SCAN_OPEN_SKIP = _scan(held_first=False, skipping=True)
"""The claim made with a label: the first item in queue order that is open or already claimed by the reviewer. The
item in hand was the one just labelled, so a running claim of theirs is rare (one left over by an undo); ordered by
position alone, the scan stops at the first such item instead of sorting the whole queue as :data:`SCAN` does."""

OTHERS_FILLED = sa.select(sa.func.count()).select_from(S.claims).where(*_held_by_others(_P("item")))

_DUP = sa.select(sa.func.count()).select_from(S.labels).where(_lb.client_key == _P("key")).scalar_subquery()
_MINE = (sa.select(sa.func.count()).select_from(S.labels)
         .where(_lb.session_id == _P("sid"), _lb.item_id == _P("item"), _lb.reviewer == _P("me")).scalar_subquery())
_LIVE = (sa.select(sa.func.count()).select_from(S.claims)
         .where(_cl.session_id == _P("sid"), _cl.item_id == _P("item"), _cl.reviewer == _P("me"),
                _cl.state == "claimed", _cl.expires_at > NOW).scalar_subquery())
LABEL_CHECK = (sa.select(_se.per_item, _se.lease_seconds, _it.n_candidates, _DUP.label("dup"), _MINE.label("mine"),
                         _LIVE.label("live"))
               .select_from(S.items.join(S.sessions, _se.id == _it.session_id))
               .where(_it.session_id == _P("sid"), _it.item_id == _P("item")))



def _room() -> Any:
    """The item (parameter ``item``) still has a slot for this reviewer: others hold fewer than ``per_item``."""
    return OTHERS_FILLED.scalar_subquery() < _P("per_item")


def _params(*names: str) -> list[Any]:
    return [_P(n, type_=sa.String()).label(n) for n in names]


def _expires() -> Any:
    return (NOW + _P("lease", type_=sa.Float())).label("expires")


INSERT_LABEL = sa.insert(S.labels).from_select(
    ["session_id", "item_id", "reviewer", "verdict", "client_key", "created_at"],
    sa.select(*_params("sid", "item", "me", "verdict", "key"), NOW.label("now")).where(_room())).returning(_lb.id)
"""The label, inserted only while the item has a slot for this reviewer (counted by the same statement, after the
item's row lock: exact); no row returned = the slot went to someone else (``RETURNING``, not the row count: psycopg
reports -1 for an ``INSERT … SELECT``)."""

_UPSERTS: dict[tuple[str, bool], Any] = {}


def upsert_claim(dialect: str, *, if_room: bool = False) -> Any:
    """``INSERT … ON CONFLICT (session, item, reviewer) DO UPDATE`` of the claim row (parameters ``sid``, ``item``,
    ``me``, ``state``, ``lease``; ``now`` on SQLite) for the dialect ``"postgresql"`` or ``"sqlite"``: the claim
    lasts ``lease`` seconds from :data:`NOW`. ``if_room``: only while the item has a slot for this reviewer (also
    ``per_item``; no row returned = full). Returns the item id and the lease's end."""
    stmt = _UPSERTS.get((dialect, if_room))
    if stmt is None and dialect == "postgresql":
        stmt = _UPSERTS[(dialect, if_room)] = sa.text(
            "SELECT item_id, expires_at FROM relgate_review_claim(:sid, :item, :state, :lease, :wait)")
    if stmt is None:
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        cols = ["session_id", "item_id", "reviewer", "state", "expires_at"]
        if if_room:
            ins = insert(S.claims).from_select(cols, sa.select(*_params("sid", "item", "me", "state"), _expires())
                                               .where(_room()))
        else:
            ins = insert(S.claims).values(session_id=_P("sid"), item_id=_P("item"), reviewer=_P("me"),
                                          state=_P("state"), expires_at=_expires())
        stmt = _UPSERTS[(dialect, if_room)] = ins.on_conflict_do_update(
            index_elements=[_cl.session_id, _cl.item_id, _cl.reviewer],
            set_={"state": ins.excluded.state, "expires_at": ins.excluded.expires_at}
        ).returning(_cl.item_id, _cl.expires_at)
    return stmt


_DRIVER_SQL: dict[tuple[str, int], tuple[str, Any, Any]] = {}


def execute(c: Any, stmt: Any, params: dict[str, Any]) -> Any:
    """Execute one of the statements above as its SQL text, compiled once per dialect: the parameters are bound by
    the driver (``exec_driver_sql``), skipping SQLAlchemy's per-call compilation-cache lookup and result setup for
    a statement object — a per-keypress path on a busy machine. Errors take SQLAlchemy's usual path (a dropped
    connection is still recognised as one). Not for a statement with an expanding parameter."""
    key = (c.dialect.name, id(stmt))
    hit = _DRIVER_SQL.get(key)
    if hit is None:
        comp = stmt.compile(dialect=c.dialect)
        hit = _DRIVER_SQL[key] = (str(comp), comp.positiontup, comp)
    sql, order, comp = hit
    full = comp.construct_params(params)  # with the statement's own literals (a state, the LIMIT)
    return c.exec_driver_sql(sql, tuple(full[k] for k in order) if order else full)
