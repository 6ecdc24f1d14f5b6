"""The review store (issue 21 §1, §3): sessions, the claim queue with leases, blind labels, undo, adjudication.

One code path for SQLite and PostgreSQL (SQLAlchemy 2 Core over :mod:`.schema`):

* **Claims.** :meth:`ReviewStore.claim` hands a reviewer the first item (queue order) that still needs labels and
  that they have not labelled (their own running claim first). The claim is written only while others hold fewer
  than R slots, counted under the item's lock: on PostgreSQL by ``relgate_review_claim`` (which reports an item
  another transaction holds as busy: it is passed over, and waited for only when nothing else is free), on SQLite by
  the statement itself (``BEGIN IMMEDIATE`` serialises writers). A full item is passed over. A claim lasts for the
  session's lease (default 10 minutes); an expired claim no longer holds a slot, so an abandoned item returns to the
  queue.
* **Labels.** :meth:`ReviewStore.commit_label` checks that the item still has a slot for this reviewer (a lease
  that expired and was taken over is refused with :class:`LabelRejected`: "one gets it, the other is told and moves
  on"), inserts the verdict and marks the claim done, in one transaction. The client's key makes a resend of a
  committed label a no-op ("duplicate"), so the journal's replay is exactly once.
* **The record.** :meth:`ReviewStore.undo` is refused once another reviewer labelled the item, it was adjudicated or
  the session was pulled (:meth:`ReviewStore.mark_pulled`); a replaced adjudication goes into the history.
* **Blindness.** Nothing here returns another reviewer's verdict of an item to a reviewer who has not labelled it:
  PostgreSQL enforces it (verdicts are read through ``relgate_review_labels`` only, see :mod:`.schema`), and the
  item payload never holds a verdict.

**Clock.** On PostgreSQL every lease is computed and compared on the server's clock (``clock_timestamp()``, see
:data:`.queries.NOW`), never a client's; the embedded store uses the machine's clock. The database's own triggers
(:func:`.schema.security_statements`) enforce the same rules against SQL sent by hand.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from relgate_tui.core.review.verdicts import parse_verdict
from relgate_tui.core.text import one_line
from relgate_tui.engine.certification.views import ItemView
from relgate_tui.engine.review import queries as Q
from relgate_tui.engine.review import schema as S
from relgate_tui.engine.review.db import ReviewDB, ReviewDenied, ReviewError, connect
from relgate_tui.engine.review.item import review_item
from relgate_tui.errors import UserError

__all__ = ["DEFAULT_LEASE", "SessionInfo", "Claim", "LabelRejected", "ReviewStore", "open_store"]

DEFAULT_LEASE = 600.0


class LabelRejected(ReviewError):
    """The label cannot be taken: the item's slots were filled meanwhile, or this reviewer already labelled it."""


@dataclass(frozen=True)
class SessionInfo:
    id: str
    name: str
    run_id: str
    per_item: int
    lease_seconds: float
    created_by: str
    created_at: float
    n_items: int
    run_info: Mapping[str, Any]


@dataclass(frozen=True)
class Claim:
    """An item handed to a reviewer: its queue position, the item as the reviewer sees it (question, candidates…,
    typed: :func:`.item.review_item` read the stored payload once) and lease end."""

    session_id: str
    item_id: str
    position: int
    item: ItemView
    expires_at: float


def _check_rank(item_id: str, verdict: str, n_candidates: int) -> None:
    rank, _, _ = parse_verdict(verdict)
    if rank is not None and rank > n_candidates:
        raise ReviewError(f"item {item_id} has {n_candidates} candidate answer{'s' if n_candidates != 1 else ''}, "
                          f"so rank {rank} does not exist (use none if no candidate is acceptable)")


def _loads(text: str) -> dict[str, Any]:
    try:
        obj = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


class ReviewStore:
    """Operations on one review database (see the module docstring). Every method is one transaction."""

    def __init__(self, db: ReviewDB) -> None:
        self.db = db
        self._infos: dict[str, SessionInfo] = {}

    # ---------------------------------------------------------------------------------------------- schema
    def _version(self, c: Connection) -> str | None:
        if not sa.inspect(c).has_table(S.meta.name):
            return None
        return c.execute(sa.select(S.meta.c.value).where(S.meta.c.key == "schema_version")).scalar_one_or_none()

    def check(self) -> None:
        """Refuse a missing or newer schema (one line); the embedded store creates (or migrates) its schema on first
        use, a PostgreSQL store of an older version is refused until its owner runs ``review init``."""
        found = self.db.run("open the review store", self._version)
        if found is None and not self.db.is_postgres:
            self.init()
            return
        if S.check_version(found, self.db.public) < S.SCHEMA_VERSION:
            if not self.db.is_postgres:
                self.init()
                return
            raise ReviewError(f"{self.db.public} holds review schema version {found}: its owner runs `relgate "
                              f"review init --db URL` once to migrate it to version {S.SCHEMA_VERSION}")

    def init(self) -> list[str]:
        """Create the schema (and on PostgreSQL the roles, grants and policies); idempotent. Returns what it did."""

        def go(c: Connection) -> list[str]:
            done = []
            found = self._version(c)
            version = S.check_version(found, self.db.public) if found is not None else None
            S.metadata.create_all(c)
            if version is None:
                c.execute(sa.insert(S.meta).values(key="schema_version", value=str(S.SCHEMA_VERSION)))
                done.append(f"created the review schema (version {S.SCHEMA_VERSION})")
            elif version < S.SCHEMA_VERSION:
                if not self.db.is_postgres:  # PostgreSQL: security_statements adds them
                    have = {(t, col["name"]) for t in (S.labels.name, S.sessions.name)
                            for col in sa.inspect(c).get_columns(t)}
                    if (S.labels.name, "written_in") not in have:
                        c.exec_driver_sql("ALTER TABLE review_labels ADD COLUMN written_in BIGINT")
                    if (S.sessions.name, "pulled_at") not in have:
                        c.exec_driver_sql("ALTER TABLE review_sessions ADD COLUMN pulled_at FLOAT")
                c.execute(sa.update(S.meta).where(S.meta.c.key == "schema_version")
                          .values(value=str(S.SCHEMA_VERSION)))
                done.append(f"migrated the review schema from version {version} to {S.SCHEMA_VERSION}")
            else:
                done.append(f"the review schema (version {found}) is in place")
            if self.db.is_postgres:
                schema = c.execute(sa.text("SELECT current_schema()")).scalar_one()
                try:
                    for stmt in S.security_statements(str(schema)):
                        c.exec_driver_sql(stmt.replace("%", "%%"))  # the driver formats even without parameters
                except sa.exc.IntegrityError as e:  # a row of an older store breaks a rule: say which
                    raise ReviewError(f"{self.db.public} cannot be migrated: a row breaks the database's rules ("
                                      + self.db.clean(str(e.orig).splitlines()[0]) + ")") from None
                done.append(f"roles {S.REVIEWER_ROLE} and {S.ADJUDICATOR_ROLE}, their grants, row-level policies "
                            "and the database's rules (triggers) are in place")
            return done

        return self.db.run("create the review schema", go)

    def grant(self, role: str, *, adjudicator: bool) -> str:
        """Put an existing database role in the reviewer (or adjudicator) group (PostgreSQL only), with the
        reviewer's timeouts (:data:`.schema.REVIEWER_TIMEOUTS`) as the role's settings."""
        if not self.db.is_postgres:
            raise UserError("roles exist only on PostgreSQL: the embedded store names reviewers with --as")
        group = S.ADJUDICATOR_ROLE if adjudicator else S.REVIEWER_ROLE

        if role in (S.REVIEWER_ROLE, S.ADJUDICATOR_ROLE):
            raise UserError(f"{role} is a group role: grant it to a person's login role instead")

        def go(c: Connection) -> str:
            found = c.execute(sa.text("SELECT rolcanlogin FROM pg_roles WHERE rolname = :r"), {"r": role}).first()
            if found is None:
                raise ReviewError(f"no database role {role!r}: create it first (createuser, or CREATE ROLE … LOGIN)")
            if not found[0]:
                raise ReviewError(f"database role {role!r} cannot log in (NOLOGIN): a reviewer is one person's "
                                  "login role, never a group")
            quoted = c.dialect.identifier_preparer.quote(role)
            c.exec_driver_sql(f"GRANT {group} TO {quoted}")
            # a transaction of theirs left open neither holds others up for long nor lives on idle
            for setting, value in S.REVIEWER_TIMEOUTS:
                c.exec_driver_sql(f"ALTER ROLE {quoted} SET {setting} = '{value}'")
            return group

        return self.db.run(f"grant {group}", go)

    # ---------------------------------------------------------------------------------------------- sessions
    def publish(self, *, name: str, run_id: str, per_item: int, items: Sequence[tuple[str, Mapping[str, Any]]],
                run_info: Mapping[str, Any], created_by: str, lease_seconds: float = DEFAULT_LEASE) -> str:
        """A new session of ``items`` (id, payload) in queue order; returns its id."""
        if not 1 <= per_item <= S.MAX_PER_ITEM:
            raise UserError(f"--per-item must be between 1 and {S.MAX_PER_ITEM}, got {per_item}")
        if not 0 < lease_seconds <= S.MAX_LEASE:
            raise UserError(f"--lease must be between 0 and {S.MAX_LEASE:g} seconds (7 days), got {lease_seconds:g}")
        if not items:
            raise UserError(f"run {run_id} has no calibration item with samples to review")
        sid = uuid.uuid4().hex[:12]

        def go(c: Connection) -> str:
            c.execute(sa.insert(S.sessions).values(
                id=sid, name=name, run_id=run_id, per_item=per_item, lease_seconds=float(lease_seconds),
                created_by=created_by, created_at=time.time(), run_info=json.dumps(dict(run_info))))
            c.execute(sa.insert(S.items), [
                {"session_id": sid, "item_id": item_id, "position": pos, "payload": json.dumps(dict(payload)),
                 "n_candidates": len(payload.get("candidates") or ()), "touched": 0}
                for pos, (item_id, payload) in enumerate(items)])
            return sid

        return self.db.run("publish the session", go)

    def _session_row(self, c: Connection, sid: str, *, count: bool = True) -> SessionInfo:
        rows = c.execute(sa.select(S.sessions).where(S.sessions.c.id.startswith(sid, autoescape=True))).all()
        exact = [r for r in rows if r.id == sid]
        if exact:
            rows = exact
        if not rows:
            raise ReviewError(f"no review session {sid!r} in {self.db.public}")
        if len(rows) > 1:
            raise ReviewError(f"review session {sid!r} is ambiguous: {', '.join(r.id for r in rows[:5])}")
        r = rows[0]
        if not S.session_id_ok(r.id):  # a row written by hand: never a path, never shown raw
            raise ReviewError(f"review session {one_line(str(r.id), 40)!r} has an unsafe id (the database should "
                              "allow only [A-Za-z0-9_-]): ask the store's owner to remove it")
        n = c.execute(sa.select(sa.func.count()).select_from(S.items).where(S.items.c.session_id == r.id)
                      ).scalar() if count else 0
        return SessionInfo(r.id, r.name, r.run_id, int(r.per_item), float(r.lease_seconds), r.created_by,
                           float(r.created_at), int(n or 0), _loads(r.run_info))

    def session(self, sid: str) -> SessionInfo:
        """The session with id (or unique id prefix) ``sid``."""
        return self.db.run("read the session", lambda c: self._session_row(c, sid))

    def sessions(self) -> list[SessionInfo]:
        def go(c: Connection) -> list[SessionInfo]:
            ids = c.execute(sa.select(S.sessions.c.id).order_by(S.sessions.c.created_at.desc())).scalars().all()
            return [self._session_row(c, i) for i in ids if S.session_id_ok(i)]

        return self.db.run("list the sessions", go)

    def item_ids(self, sid: str) -> list[str]:
        return list(self.db.run("read the items", lambda c: c.execute(
            sa.select(S.items.c.item_id).where(S.items.c.session_id == sid).order_by(S.items.c.position)
        ).scalars().all()))

    def item(self, sid: str, item_id: str) -> ItemView:
        """One item of the session, typed (the adjudicator's view of a disputed item)."""
        text = self.db.run("read the item", lambda c: c.execute(sa.select(S.items.c.payload).where(
            S.items.c.session_id == sid, S.items.c.item_id == item_id)).scalar_one_or_none())
        if text is None:
            raise ReviewError(f"item {item_id!r} is not in session {sid}")
        return review_item(item_id, _loads(text))

    # ---------------------------------------------------------------------------------------------- queue
    def _info(self, c: Connection, sid: str) -> SessionInfo:
        """The session's fixed settings (id, R, lease — never changed after publishing), read once per store."""
        info = self._infos.get(sid)
        if info is None:
            info = self._session_row(c, sid, count=False)
            self._infos[sid] = self._infos[info.id] = info
        return info

    def _put_claim(self, c: Connection, sid: str, item: str, reviewer: str, state: str, lease: float) -> None:
        Q.execute(c, Q.upsert_claim(c.dialect.name),
                  {"sid": sid, "item": item, "me": reviewer, "state": state, "lease": lease, "now": time.time(),
                   "wait": True})

    def _claim_in(self, c: Connection, sid: str, reviewer: str, skip: set[str], *,
                  resume: bool = True) -> Claim | None:
        """The claim (see :meth:`claim`); ``resume`` False: by queue order alone (:data:`.queries.SCAN_OPEN`), and
        an item another transaction holds is passed over, never waited for (this transaction holds the labelled
        item's lock: waiting could deadlock)."""
        info = self._info(c, sid)
        params: dict[str, Any] = {"sid": info.id, "me": reviewer, "now": time.time(), "per_item": info.per_item,
                                  "state": "claimed", "lease": info.lease_seconds, "wait": False}
        tried: set[str] = set()
        busy: list[Any] = []  # PostgreSQL: items another transaction held when asked, in queue order
        upsert = Q.upsert_claim(c.dialect.name, if_room=True)
        while True:
            passed = skip | tried
            if passed:
                row = c.execute(Q.SCAN_SKIP if resume else Q.SCAN_OPEN_SKIP, {**params, "skip": sorted(passed)}).first()
            else:
                row = Q.execute(c, Q.SCAN if resume else Q.SCAN_OPEN, params).first()
            if row is None:
                break
            got = Q.execute(c, upsert, {**params, "item": row.item_id}).first()
            if got is not None and got.expires_at is not None:
                return Claim(info.id, row.item_id, int(row.position), review_item(row.item_id, _loads(row.payload)),
                             float(got.expires_at))
            if got is not None:
                busy.append(row)
            tried.add(row.item_id)  # full (filled meanwhile), or held by another transaction
        # nothing free was unlocked: wait for an item another reviewer's transaction holds rather than end the queue
        # early — only a claim of its own (``resume``), which holds no other item's lock, so it cannot deadlock
        for row in busy if resume else ():
            got = Q.execute(c, upsert, {**params, "item": row.item_id, "wait": True}).first()
            if got is not None and got.expires_at is not None:
                return Claim(info.id, row.item_id, int(row.position), review_item(row.item_id, _loads(row.payload)),
                             float(got.expires_at))
        return None

    def claim(self, sid: str, reviewer: str, *, exclude: Iterable[str] = ()) -> Claim | None:
        """The next item for ``reviewer`` (their own running claim first), claimed for the lease; None when the
        queue holds nothing more for them."""
        skip = set(exclude)
        return self.db.run("claim an item", lambda c: self._claim_in(c, sid, reviewer, skip))

    def release(self, sid: str, item_id: str, reviewer: str) -> None:
        """Give a claimed item back at once (its lease ends now)."""
        cl = S.claims.c

        def go(c: Connection) -> None:
            if self.db.is_postgres:  # reviewers write claims through the database's function only
                Q.execute(c, Q.upsert_claim(c.dialect.name), {"sid": sid, "item": item_id, "state": "claimed",
                                                              "lease": 0.0, "wait": True})
            else:
                c.execute(sa.update(S.claims).where(cl.session_id == sid, cl.item_id == item_id,
                                                    cl.reviewer == reviewer, cl.state == "claimed")
                          .values(expires_at=0.0))

        self.db.run("release the claim", go)

    # ---------------------------------------------------------------------------------------------- labels
    def _label_in(self, c: Connection, sid: str, item_id: str, reviewer: str, verdict: str, key: str) -> str:
        params = {"sid": sid, "item": item_id, "me": reviewer, "key": key, "now": time.time()}
        # one round trip: the item row locked (waiting for a claimer holding it), the session's R and lease,
        # whether this key was committed before, whether this reviewer already labelled the item
        row = Q.execute(c, Q.LABEL_CHECK, params).first()
        if row is not None and row.dup:
            return "duplicate"
        if row is None:
            if c.execute(sa.select(S.labels.c.id).where(S.labels.c.client_key == key)).first() is not None:
                return "duplicate"
            raise ReviewError(f"item {item_id!r} is not in session {sid}")
        if row.mine:
            raise LabelRejected(f"{reviewer} already labelled item {item_id} (undo it first)")
        _check_rank(item_id, verdict, row.n_candidates)
        # a label needs its author's running claim (the database refuses one without): the claim is renewed while
        # the item still has a slot for this reviewer — counted after the lock, so exact — else the lease ran out
        # and the slot went to someone else
        full = LabelRejected(f"item {item_id} already has its {row.per_item} reviewers (the claim's lease ran out "
                             "and another reviewer took the slot)")
        room = {**params, "per_item": row.per_item, "state": "claimed", "lease": row.lease_seconds, "wait": True}
        if not row.live and Q.execute(c, Q.upsert_claim(c.dialect.name, if_room=True), room).first() is None:
            raise full
        if Q.execute(c, Q.INSERT_LABEL, {**params, "verdict": verdict, "per_item": row.per_item}).first() is None:
            raise full
        self._put_claim(c, sid, item_id, reviewer, "done", 0.0)
        return "committed"

    def commit_label(self, sid: str, item_id: str, reviewer: str, verdict: str, key: str) -> str:
        """Commit one verdict: "committed", or "duplicate" when ``key`` was committed before. Raises
        :class:`LabelRejected` when the item has no free slot for this reviewer any more. ``sid``: the full
        session id."""
        parse_verdict(verdict)
        return self.db.run("save the label", lambda c: self._label_in(c, sid, item_id, reviewer, verdict, key))

    def commit_label_and_claim(self, sid: str, item_id: str, reviewer: str, verdict: str, key: str, *,
                               exclude: Iterable[str] = ()) -> tuple[str, Claim | None]:
        """:meth:`commit_label` and then the claim of the next item, in one transaction: what a reviewer does at
        every keypress, for one lock turn and one commit instead of two. The claim is :data:`.queries.SCAN_OPEN`'s:
        the first item in queue order that is open or already theirs. A refused label (``LabelRejected``) claims
        nothing (rolled back)."""
        parse_verdict(verdict)
        skip = set(exclude)

        def go(c: Connection) -> tuple[str, Claim | None]:
            outcome = self._label_in(c, sid, item_id, reviewer, verdict, key)
            return outcome, self._claim_in(c, sid, reviewer, skip, resume=False)

        return self.db.run("save the label", go)

    def undo(self, sid: str, reviewer: str, *, key: str | None = None) -> str | None:
        """Delete ``reviewer``'s label with client key ``key`` (else their last one) and claim the item again;
        returns its item id, None when there is nothing to undo. Refused (:class:`LabelRejected`) once the label is
        part of the record: another reviewer labelled the item (either may have compared against the other), an
        adjudicator decided it, or the session was pulled. On PostgreSQL the database's ``relgate_review_undo``
        does it (the same rules, in its triggers)."""

        def go(c: Connection) -> str | None:
            info = self._session_row(c, sid)
            if self.db.is_postgres:
                got = c.execute(sa.text("SELECT relgate_review_undo(:s, :k)"), {"s": info.id, "k": key}).scalar()
                return None if got is None else str(got)
            lb = S.labels.c
            q = sa.select(lb.id, lb.item_id).where(lb.session_id == info.id, lb.reviewer == reviewer)
            q = q.where(lb.client_key == key) if key is not None else q.order_by(lb.id.desc()).limit(1)
            row = c.execute(q).first()
            if row is None:
                return None
            self._check_undo(c, info.id, str(row.item_id), reviewer)
            c.execute(sa.delete(S.labels).where(lb.id == row.id))
            self._put_claim(c, info.id, row.item_id, reviewer, "claimed", info.lease_seconds)
            return str(row.item_id)

        try:
            return self.db.run("undo the label", go)
        except ReviewDenied as e:  # the database's rule, said as the embedded store says it
            if "the record" in str(e) or "stands as given" in str(e):
                raise LabelRejected(str(e).split("(", 1)[-1].rstrip(")")) from None
            raise

    def _check_undo(self, c: Connection, sid: str, item_id: str, reviewer: str) -> None:
        """The embedded store's copy of the database's rule (``relgate_review_label_keep``)."""
        lb, ad, se = S.labels.c, S.adjudications.c, S.sessions.c
        if c.execute(sa.select(se.pulled_at).where(se.id == sid)).scalar() is not None:
            raise LabelRejected(f"session {sid} was pulled: its labels are the record")
        if c.execute(sa.select(ad.item_id).where(ad.session_id == sid, ad.item_id == item_id)).first() is not None:
            raise LabelRejected(f"item {item_id} was adjudicated: its labels are the record")
        if c.execute(sa.select(lb.id).where(lb.session_id == sid, lb.item_id == item_id, lb.reviewer != reviewer)
                     ).first() is not None:
            raise LabelRejected(f"item {item_id} has another reviewer's label: {reviewer} stands as given")

    def mark_pulled(self, sid: str) -> None:
        """Record that session ``sid`` was pulled: from now on no label of it is withdrawn."""

        def go(c: Connection) -> None:
            if self.db.is_postgres:
                c.execute(sa.text("SELECT relgate_review_pulled(:s)"), {"s": sid})
            else:
                c.execute(sa.update(S.sessions).where(S.sessions.c.id == sid, S.sessions.c.pulled_at.is_(None))
                          .values(pulled_at=time.time()))

        self.db.run("record the pull", go)

    def last_label_key(self, sid: str, reviewer: str) -> str | None:
        lb = S.labels.c
        return self.db.run("read your last label", lambda c: c.execute(
            sa.select(lb.client_key).where(lb.session_id == sid, lb.reviewer == reviewer)
            .order_by(lb.id.desc()).limit(1)).scalar_one_or_none())

    def labels(self, sid: str, problems: list[tuple[str, str, str]] | None = None) -> dict[str, dict[str, str]]:
        """item → reviewer → verdict, of the labels this connection may read (on PostgreSQL: its own, those of
        items it labelled once committed, or those of full items for an adjudicator). A stored verdict that is
        not one (written by hand into an embedded store, or a version-1 database) is left out and named in
        ``problems`` as (item, reviewer, one line naming both): the item counts as missing that label."""
        lb = S.labels.c
        if self.db.is_postgres:  # verdicts are read through the database's function only (see the schema)
            query: Any = sa.text("SELECT item_id, reviewer, verdict FROM relgate_review_labels(:s)").bindparams(s=sid)
        else:
            query = sa.select(lb.item_id, lb.reviewer, lb.verdict).where(lb.session_id == sid).order_by(lb.id)
        rows = self.db.run("read the labels", lambda c: c.execute(query).all())
        out: dict[str, dict[str, str]] = {}
        for r in rows:
            try:
                parse_verdict(r.verdict)
            except ValueError as e:
                if problems is not None:
                    problems.append((r.item_id, r.reviewer, f"label of item {one_line(str(r.item_id), 80)} by "
                                     f"{one_line(str(r.reviewer), 64)} left out: {e}"))
                continue
            out.setdefault(r.item_id, {})[r.reviewer] = r.verdict
        return out

    def labelled_by(self, sid: str) -> dict[str, list[str]]:
        """item → reviewers who labelled it (from the claims: no verdict, readable by every reviewer)."""
        cl = S.claims.c
        rows = self.db.run("read the progress", lambda c: c.execute(
            sa.select(cl.item_id, cl.reviewer).where(cl.session_id == sid, cl.state == "done")
            .order_by(cl.item_id, cl.reviewer)).all())
        out: dict[str, list[str]] = {}
        for r in rows:
            out.setdefault(r.item_id, []).append(r.reviewer)
        return out

    # ---------------------------------------------------------------------------------------------- adjudication
    def adjudications(self, sid: str) -> dict[str, str]:
        """item → the adjudicator's verdict. A reviewer role may not read them (ReviewDenied)."""
        ad = S.adjudications.c
        try:
            rows = self.db.run("read the adjudications", lambda c: c.execute(
                sa.select(ad.item_id, ad.verdict).where(ad.session_id == sid)).all())
        except ReviewDenied:
            raise ReviewDenied(f"the adjudicator queue needs the {S.ADJUDICATOR_ROLE} role") from None
        return {r.item_id: r.verdict for r in rows}

    def adjudicate(self, sid: str, item_id: str, verdict: str, adjudicator: str) -> None:
        parse_verdict(verdict)

        def go(c: Connection) -> None:
            ad = S.adjudications.c
            info = self._session_row(c, sid)
            n = c.execute(sa.select(S.items.c.n_candidates).where(S.items.c.session_id == info.id,
                                                                  S.items.c.item_id == item_id)).scalar_one_or_none()
            if n is None:
                raise ReviewError(f"item {item_id!r} is not in session {info.id}")
            _check_rank(item_id, verdict, n)
            old = c.execute(sa.select(ad.verdict, ad.adjudicator, ad.created_at)
                            .where(ad.session_id == info.id, ad.item_id == item_id)).first()
            if old is not None and not self.db.is_postgres:  # PostgreSQL: the table's trigger keeps the history
                c.execute(sa.insert(S.adjudication_history).values(
                    session_id=info.id, item_id=item_id, verdict=old.verdict, adjudicator=old.adjudicator,
                    created_at=old.created_at, replaced_at=time.time(), replaced_by=adjudicator))
            updated = c.execute(sa.update(S.adjudications).where(ad.session_id == info.id, ad.item_id == item_id)
                                .values(verdict=verdict, adjudicator=adjudicator, created_at=time.time())).rowcount
            if not updated:
                c.execute(sa.insert(S.adjudications).values(session_id=info.id, item_id=item_id, verdict=verdict,
                                                            adjudicator=adjudicator, created_at=time.time()))

        try:
            self.db.run("record the adjudication", go)
        except ReviewDenied:
            raise ReviewDenied(f"adjudicating needs the {S.ADJUDICATOR_ROLE} role") from None

    def close(self) -> None:
        self.db.close()


def open_store(db: str | None = None, *, check: bool = True) -> ReviewStore:
    """The review store at ``db`` (``--db`` / ``$RELGATE_DB`` / embedded), its schema checked."""
    store = ReviewStore(connect(db))
    if check:
        try:
            store.check()
        except BaseException:
            store.close()
            raise
    return store
