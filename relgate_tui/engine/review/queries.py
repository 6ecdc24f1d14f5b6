"""The review store's per-keypress statements, built once (issue 21 §3 and its load target).

A reviewer pays for two transactions per item: the claim and the label. Their statements are SQLAlchemy Core
constructs with bound parameters, built here at import time and reused, so each execution costs one cached
compilation lookup instead of building and hashing an expression tree (about a third of a label's client time
before), and each does its work in as few round trips as the locking allows:

* :data:`HELD` — the reviewer's own running claims (an undo or a reopened screen resumes them first).
* :data:`SCAN` — the first item, in queue order, this reviewer has not labelled and whose slots held by others
  (labelled, or claimed under a running lease) are fewer than R, locked with ``FOR UPDATE SKIP LOCKED`` (dropped on
  SQLite, whose writers are serialised). "Full" items are one hashed set per statement (a ``GROUP BY … HAVING`` over
  the session's claims), not a count per item: the scan stays cheap when most of the queue is done.
* :data:`OTHERS_FILLED` — the same count for one item, re-read by a fresh statement once its row lock is held (a
  claimer committed after the scan's snapshot is seen: in READ COMMITTED each statement takes a new snapshot).
* :data:`LABEL_CHECK` — a label's item row locked (waiting for a claimer holding it), with the session's R, the
  candidate count, whether the client key was committed before and whether this reviewer labelled the item.
* :func:`upsert_claim` — the reviewer's claim row set to "claimed" until a lease end, or "done": one
  ``INSERT … ON CONFLICT DO UPDATE`` (both dialects spell it the same way in SQLAlchemy).

Parameter names: ``sid`` session id, ``me`` reviewer, ``now`` the client's clock, ``per_item`` R, ``item``,
``skip`` (expanding: item ids passed over), ``key`` the label's client key.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from relgate_tui.engine.review import schema as S

__all__ = ["HELD", "SCAN", "OTHERS_FILLED", "LABEL_CHECK", "INSERT_LABEL", "upsert_claim"]

_it, _cl, _lb, _se = S.items.c, S.claims.c, S.labels.c, S.sessions.c
_P = sa.bindparam


def _held_by_others(item: Any) -> Any:
    return (_cl.session_id == _P("sid"), _cl.item_id == item, _cl.reviewer != _P("me"),
            sa.or_(_cl.state == "done", _cl.expires_at > _P("now")))


HELD = (sa.select(_it.item_id, _it.position, _it.payload)
        .where(_it.session_id == _P("sid"), _it.item_id.not_in(_P("skip", expanding=True)),
               _it.item_id.in_(sa.select(_cl.item_id).where(_cl.session_id == _P("sid"), _cl.reviewer == _P("me"),
                                                            _cl.state == "claimed", _cl.expires_at > _P("now"))))
        .order_by(_it.position).limit(1).with_for_update(skip_locked=True, of=S.items))

_FULL = (sa.select(_cl.item_id)
         .where(_cl.session_id == _P("sid"), _cl.reviewer != _P("me"),
                sa.or_(_cl.state == "done", _cl.expires_at > _P("now")))
         .group_by(_cl.item_id).having(sa.func.count() >= _P("per_item")))
_DONE_BY_ME = sa.select(_cl.item_id).where(_cl.session_id == _P("sid"), _cl.reviewer == _P("me"),
                                           _cl.state == "done")

SCAN = (sa.select(_it.item_id, _it.position, _it.payload)
        .where(_it.session_id == _P("sid"), _it.item_id.not_in(_P("skip", expanding=True)),
               _it.item_id.not_in(_DONE_BY_ME), _it.item_id.not_in(_FULL))
        .order_by(_it.position).limit(1).with_for_update(skip_locked=True, of=S.items))

OTHERS_FILLED = sa.select(sa.func.count()).select_from(S.claims).where(*_held_by_others(_P("item")))

_DUP = sa.select(sa.func.count()).select_from(S.labels).where(_lb.client_key == _P("key")).scalar_subquery()
_MINE = (sa.select(sa.func.count()).select_from(S.labels)
         .where(_lb.session_id == _P("sid"), _lb.item_id == _P("item"), _lb.reviewer == _P("me")).scalar_subquery())
LABEL_CHECK = (sa.select(_se.per_item, _it.n_candidates, _DUP.label("dup"), _MINE.label("mine"))
               .select_from(S.items.join(S.sessions, _se.id == _it.session_id))
               .where(_it.session_id == _P("sid"), _it.item_id == _P("item")).with_for_update(of=S.items))

INSERT_LABEL = sa.insert(S.labels).values(session_id=_P("sid"), item_id=_P("item"), reviewer=_P("me"),
                                          verdict=_P("verdict"), client_key=_P("key"), created_at=_P("now"))

_UPSERTS: dict[str, Any] = {}


def upsert_claim(dialect: str) -> Any:
    """``INSERT … ON CONFLICT (session, item, reviewer) DO UPDATE`` of the claim row (parameters ``sid``, ``item``,
    ``me``, ``state``, ``expires``) for the dialect ``"postgresql"`` or ``"sqlite"``."""
    stmt = _UPSERTS.get(dialect)
    if stmt is None:
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        ins = insert(S.claims).values(session_id=_P("sid"), item_id=_P("item"), reviewer=_P("me"),
                                      state=_P("state"), expires_at=_P("expires"))
        stmt = _UPSERTS[dialect] = ins.on_conflict_do_update(
            index_elements=[_cl.session_id, _cl.item_id, _cl.reviewer],
            set_={"state": ins.excluded.state, "expires_at": ins.excluded.expires_at})
    return stmt
