"""The review store's schema (issue 21 §1, §7; issue 39): one set of tables for SQLite and PostgreSQL, versioned.

Tables (SQLAlchemy Core; the same on both)::

    review_meta          key → value; "schema_version"
    review_sessions      a published run: id, name, run_id, per_item (R, 1…100), lease_seconds, created_by/at,
                         run_info, pulled_at (set by the first ``review pull``: from then on no label is withdrawn)
    review_items         the session's items in queue order, each with its payload (question, ranked candidates
                         with counts and one representative text per class, references) and its number of
                         candidates (a rank beyond it is refused); ``touched`` holds nothing: every writer of the
                         item's slots UPDATEs it, which is the item's lock (PostgreSQL)
    review_claims        (session, item, reviewer) → state "claimed" until ``expires_at`` (the lease) or "done"
                         (labelled); what the queue counts — it holds no verdict, so every reviewer may read it
    review_labels        one verdict per (session, item, reviewer), with the client's key (``client_key``, unique:
                         the journal's resend of a label already committed is recognised, never doubled) and, on
                         PostgreSQL, ``written_in`` (the transaction that wrote it: what blindness checks)
    review_reviewers     (session, reviewer) → a counter: the row a reviewer's writes of a session lock first
                         (PostgreSQL; parallel transactions of one role take turns on it)
    review_adjudications an adjudicator's decision per (session, item)
    review_adjudication_history  every decision a later one replaced (who, what, when, replaced by whom)

**Versioning.** ``review_meta.schema_version`` is :data:`SCHEMA_VERSION`; a store written by a newer relgate is
refused with one line (:func:`check_version`). An older version is migrated by ``relgate review init`` — the owner's
job on PostgreSQL; until then reviewers are told so in one line. Version 2 added the label's ``written_in`` and made
the label id a bigint; version 3 the session's ``pulled_at``, ``review_reviewers`` and the adjudication history.

**PostgreSQL: the database enforces the review rules itself** (:func:`security_statements`, run by
``relgate review init``), so a reviewer with ``psql`` can do nothing the queue forbids, under any isolation level
and any number of parallel transactions. Group roles ``relgate_reviewer`` and ``relgate_adjudicator`` (a member of
the first) are NOLOGIN and never a reviewer. A reviewer is the role that logged in (``session_user``: ``SET ROLE``
to a group or to another member changes nothing). Reviewers may SELECT the queue (sessions, items, claims, the
labels' columns but the verdict) and INSERT labels; nothing else — no UPDATE or DELETE anywhere, hence no
``FOR UPDATE`` and no ``LOCK TABLE`` beyond what an INSERT takes. A claim (take, renew, release, done) goes through
``relgate_review_claim``, an undo through ``relgate_review_undo``, a verdict is read through
``relgate_review_labels``; these and the triggers run as the store's owner (``SECURITY DEFINER``, ``search_path``
pinned). ``review grant`` gives each reviewer role :data:`REVIEWER_TIMEOUTS`.

**Counting under a lock.** Every write that can fill a slot (a claim, a label, an undo re-opening a claim) first
UPDATEs the reviewer's ``review_reviewers`` row, then the item's row (``relgate_review_lock``), and counts after
both: under READ COMMITTED each count is a new snapshot taken after the locks (exact); under REPEATABLE READ or
SERIALIZABLE a writer whose snapshot predates another writer's commit fails with 40001 on the UPDATE instead of
counting in a stale snapshot (the store retries, :meth:`.db.ReviewDB.run`). Writes that free a slot (a release, a
lease's end) need no lock: a stale view only over-counts. The clock is ``clock_timestamp()`` (the statement's
moment), never ``now()`` (the transaction's start) nor a client's.

* a label: only by its author, only with a running claim of theirs on the item, only while the item has fewer
  than R labels; its id (a bigint; reviewers may not call ``nextval``), time and transaction are set by the server;
  the verdict is CHECKed (``1``…``999999``, ``none``, ``skip``) and its rank against the item's candidates; a label
  is never changed, and deleted (undo, which turns the claim back to running) only while no other reviewer labelled
  the item, the item is not adjudicated and the session not pulled — not even by the owner;
* a claim: only by its author, ``done`` only with their label, a lease ending at most the session's lease after the
  server's clock, only while others hold fewer than R slots, and one running claim per reviewer and session (a new
  one ends the others: nobody holds the whole queue);
* sessions, items and adjudications: only under the logged-in role's own name (items only into a session it
  published); session ids match ``[A-Za-z0-9_-]{1,32}``; a session never changes after publishing (but for its
  ``pulled_at``, once); a decision is never deleted, and one replaced goes into the history.

Reading: a reviewer reads verdicts only through ``relgate_review_labels`` — their own, another's of an item only once
their own label of it was committed by an earlier transaction (``BEGIN; INSERT …; SELECT …; ROLLBACK`` shows
nothing), and an adjudicator's of an item once it has its R labels committed. No reviewer may select the verdict
column, so the planner's statistics of it (``EXPLAIN … WHERE verdict = …``, ``pg_stats``) tell them nothing.
Reviewers have no privilege on ``review_adjudications``. The store's owner (the role that ran ``init``, or a
superuser) bypasses the identity checks, not the queue's nor the record's. SQLite has neither roles nor triggers: the
embedded store is one machine's trust domain, its writers are serialised (``BEGIN IMMEDIATE``), and the store checks
the same rules there.
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    ForeignKeyConstraint,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

__all__ = ["SCHEMA_VERSION", "MAX_PER_ITEM", "metadata", "meta", "sessions", "items", "claims", "labels",
           "adjudications", "reviewers", "adjudication_history", "REVIEWER_ROLE", "ADJUDICATOR_ROLE",
           "REVIEWER_TIMEOUTS", "MAX_LEASE", "security_statements", "check_version", "session_id_ok"]

SCHEMA_VERSION = 3
MAX_PER_ITEM = 100  # reviewers per item: a session may ask at most this many
MAX_LEASE = 7 * 86400.0  # seconds: the longest lease a session may set
SESSION_ID_PATTERN = "^[A-Za-z0-9_-]{1,32}$"
VERDICT_PATTERN = "^(none|skip|[1-9][0-9]{0,5})$"  # core.review.verdicts.parse_verdict's domain
REVIEWER_ROLE = "relgate_reviewer"
# set on every role `review grant` makes a reviewer or adjudicator (settings are per login role, never inherited):
# a wait for a lock ends with an error after 10 s, a transaction left idle is ended after 60 s
REVIEWER_TIMEOUTS = (("lock_timeout", "10s"), ("idle_in_transaction_session_timeout", "60s"))
ADJUDICATOR_ROLE = "relgate_adjudicator"

metadata = MetaData()

meta = Table("review_meta", metadata,
             Column("key", String(64), primary_key=True),
             Column("value", Text, nullable=False))

sessions = Table("review_sessions", metadata,
                 Column("id", String(32), primary_key=True),
                 Column("name", Text, nullable=False),
                 Column("run_id", Text, nullable=False),
                 Column("per_item", Integer, nullable=False),
                 Column("lease_seconds", Float, nullable=False),
                 Column("created_by", Text, nullable=False),
                 Column("created_at", Float, nullable=False),
                 Column("run_info", Text, nullable=False),
                 Column("pulled_at", Float, nullable=True))

items = Table("review_items", metadata,
              Column("session_id", String(32), sa.ForeignKey("review_sessions.id"), primary_key=True),
              Column("item_id", Text, primary_key=True),
              Column("position", Integer, nullable=False),
              Column("payload", Text, nullable=False),
              Column("n_candidates", Integer, nullable=False),
              Column("touched", Integer, nullable=False, server_default="0"),
              sa.Index("review_items_queue", "session_id", "position"))

claims = Table("review_claims", metadata,
               Column("session_id", String(32), primary_key=True),
               Column("item_id", Text, primary_key=True),
               Column("reviewer", Text, primary_key=True),
               Column("state", String(8), nullable=False),
               Column("expires_at", Float, nullable=False),
               ForeignKeyConstraint(["session_id", "item_id"], ["review_items.session_id", "review_items.item_id"]),
               sa.Index("review_claims_by_reviewer", "session_id", "reviewer", "state"))

labels = Table("review_labels", metadata,
               Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
               Column("session_id", String(32), nullable=False),
               Column("item_id", Text, nullable=False),
               Column("reviewer", Text, nullable=False),
               Column("verdict", String(16), nullable=False),
               Column("client_key", String(64), nullable=False),
               Column("created_at", Float, nullable=False),
               Column("written_in", BigInteger, nullable=True),
               UniqueConstraint("session_id", "item_id", "reviewer", name="review_labels_one_per_reviewer"),
               UniqueConstraint("client_key", name="review_labels_client_key"),
               ForeignKeyConstraint(["session_id", "item_id"], ["review_items.session_id", "review_items.item_id"]))

adjudications = Table("review_adjudications", metadata,
                      Column("session_id", String(32), primary_key=True),
                      Column("item_id", Text, primary_key=True),
                      Column("verdict", String(16), nullable=False),
                      Column("adjudicator", Text, nullable=False),
                      Column("created_at", Float, nullable=False),
                      ForeignKeyConstraint(["session_id", "item_id"],
                                           ["review_items.session_id", "review_items.item_id"]))


reviewers = Table("review_reviewers", metadata,  # PostgreSQL: the row a reviewer's writes of a session lock first
                  Column("session_id", String(32), primary_key=True),
                  Column("reviewer", Text, primary_key=True),
                  Column("writes", BigInteger, nullable=False, server_default="0"))

adjudication_history = Table(
    "review_adjudication_history", metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    Column("session_id", String(32), nullable=False),
    Column("item_id", Text, nullable=False),
    Column("verdict", String(16), nullable=False),
    Column("adjudicator", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("replaced_at", Float, nullable=False),
    Column("replaced_by", Text, nullable=False))


def check_version(found: str | None, where: str) -> int:
    """The store's schema version; refuse a store without the schema, or written by a newer relgate (one line).
    An older version is returned: :meth:`.store.ReviewStore.init` migrates it (the owner's job on PostgreSQL)."""
    from relgate_tui.engine.review.db import ReviewError

    if found is None:
        raise ReviewError(f"{where} has no review schema yet: run `relgate review init --db URL` first")
    try:
        version = int(found)
    except ValueError:
        raise ReviewError(f"{where}: unreadable review schema version {found[:20]!r}") from None
    if version > SCHEMA_VERSION:
        raise ReviewError(f"{where} holds review schema version {version}, newer than this relgate's "
                          f"{SCHEMA_VERSION}: upgrade relgate")
    return version


def session_id_ok(sid: object) -> bool:
    """A session id is 1–32 characters of ``[A-Za-z0-9_-]`` (the database's CHECK on PostgreSQL)."""
    return isinstance(sid, str) and _SAFE_ID.fullmatch(sid) is not None


_SAFE_ID = re.compile(SESSION_ID_PATTERN)


def security_statements(schema: str) -> list[str]:
    """The PostgreSQL DDL of the rules, roles, grants and row-level policies (idempotent; see the module
    docstring); it also migrates a version-1 or -2 schema. ``schema``: the schema the tables live in."""
    q = '"' + schema.replace('"', '""') + '"'
    rv, ad = REVIEWER_ROLE, ADJUDICATOR_ROLE
    now = "extract(epoch from clock_timestamp())::float8"  # the moment of the statement, not the transaction's start
    definer = f"LANGUAGE plpgsql SECURITY DEFINER SET search_path = {q}, pg_temp"
    # inside a SECURITY DEFINER function current_user is the function's owner (the store's owner), session_user the
    # role that logged in: SET ROLE changes neither
    owner = "pg_has_role(session_user, current_user, 'MEMBER')"
    deny = "USING ERRCODE = '42501'"
    # the two locks every writer of an item's slots takes, in this order: the reviewer's row of the session (parallel
    # transactions of one role take turns), then the item's row. Each is an UPDATE, so under REPEATABLE READ or
    # SERIALIZABLE a writer whose snapshot predates another writer's commit fails (40001) instead of counting in a
    # stale snapshot; under READ COMMITTED each count that follows is a new snapshot taken after the lock: exact.
    lock = """nc := relgate_review_lock(NEW.session_id, NEW.item_id, NEW.reviewer, true);
              SELECT s.per_item, s.lease_seconds INTO r, lease FROM review_sessions s WHERE s.id = NEW.session_id;"""
    lock_old = lock.replace("NEW.", "OLD.")
    # a label is part of the record once the session was pulled, the item adjudicated, or another reviewer's label
    # of the item exists (that reviewer may have compared against it, and it against theirs)
    final_check = f"""IF EXISTS (SELECT 1 FROM review_sessions s WHERE s.id = OLD.session_id AND s.pulled_at IS NOT NULL)
              THEN RAISE EXCEPTION 'session % was pulled: its labels are the record', OLD.session_id {deny};
              END IF;
              IF EXISTS (SELECT 1 FROM review_adjudications a WHERE a.session_id = OLD.session_id
                         AND a.item_id = OLD.item_id) THEN
                RAISE EXCEPTION 'item % was adjudicated: its labels are the record', OLD.item_id {deny};
              END IF;"""
    stmts = [
        f"""DO $$ BEGIN
              IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{rv}') THEN CREATE ROLE {rv} NOLOGIN; END IF;
              IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{ad}') THEN CREATE ROLE {ad} NOLOGIN; END IF;
            END $$""",
        f"ALTER ROLE {rv} NOLOGIN",
        f"ALTER ROLE {ad} NOLOGIN",
        f"GRANT {rv} TO {ad}",
        # --- the table rules (an older table is migrated here; a row breaking a rule stops the migration)
        "ALTER TABLE review_labels ADD COLUMN IF NOT EXISTS written_in bigint",
        "ALTER TABLE review_labels ALTER COLUMN id TYPE bigint",
        "ALTER SEQUENCE review_labels_id_seq AS bigint",
        "ALTER TABLE review_labels ALTER COLUMN id DROP DEFAULT",  # the label trigger numbers labels
        "ALTER TABLE review_sessions ADD COLUMN IF NOT EXISTS pulled_at float8",
        "ALTER TABLE review_sessions DROP CONSTRAINT IF EXISTS review_sessions_safe_id",
        f"ALTER TABLE review_sessions ADD CONSTRAINT review_sessions_safe_id CHECK (id ~ '{SESSION_ID_PATTERN}')",
        "ALTER TABLE review_sessions DROP CONSTRAINT IF EXISTS review_sessions_settings",
        "ALTER TABLE review_sessions ADD CONSTRAINT review_sessions_settings "
        f"CHECK (per_item >= 1 AND per_item <= {MAX_PER_ITEM} AND lease_seconds > 0 AND lease_seconds <= {MAX_LEASE})",
        "ALTER TABLE review_claims DROP CONSTRAINT IF EXISTS review_claims_state",
        "ALTER TABLE review_claims ADD CONSTRAINT review_claims_state CHECK (state IN ('claimed', 'done'))",
        "ALTER TABLE review_labels DROP CONSTRAINT IF EXISTS review_labels_verdict",
        f"ALTER TABLE review_labels ADD CONSTRAINT review_labels_verdict CHECK (verdict ~ '{VERDICT_PATTERN}')",
        "ALTER TABLE review_adjudications DROP CONSTRAINT IF EXISTS review_adjudications_verdict",
        "ALTER TABLE review_adjudications ADD CONSTRAINT review_adjudications_verdict "
        f"CHECK (verdict ~ '{VERDICT_PATTERN}')",
        # --- grants: reviewers read the queue, write their claims and labels (through the triggers below); no
        # UPDATE on an item (no FOR UPDATE, no LOCK TABLE), no SELECT of a verdict (neither its rows nor the
        # planner's statistics of the column: verdicts are read through relgate_review_labels only)
        f"GRANT USAGE ON SCHEMA {q} TO {rv}",
        f"REVOKE ALL ON review_meta, review_sessions, review_items, review_claims, review_labels, review_reviewers, "
        f"review_adjudications, review_adjudication_history FROM {rv}, {ad}, PUBLIC",
        f"GRANT SELECT ON review_meta, review_sessions, review_items TO {rv}",
        f"GRANT SELECT ON review_claims TO {rv}",
        f"GRANT SELECT (id, session_id, item_id, reviewer, client_key, created_at, written_in) ON review_labels TO {rv}",
        f"GRANT INSERT ON review_labels TO {rv}",
        f"REVOKE ALL ON SEQUENCE review_labels_id_seq FROM {rv}, {ad}, PUBLIC",
        f"GRANT SELECT, INSERT, UPDATE ON review_adjudications TO {ad}",
        f"GRANT SELECT ON review_adjudication_history TO {ad}",
        f"GRANT INSERT ON review_sessions, review_items TO {ad}",
        f"""CREATE OR REPLACE FUNCTION relgate_review_lock(s text, i text, me text, wait boolean) RETURNS int
              {definer} AS $$
            DECLARE nc int;
            BEGIN
              INSERT INTO review_reviewers AS w (session_id, reviewer, writes) VALUES (s, me, 1)
                ON CONFLICT (session_id, reviewer) DO UPDATE SET writes = w.writes + 1;
              IF NOT wait THEN
                PERFORM 1 FROM review_items it WHERE it.session_id = s AND it.item_id = i FOR UPDATE SKIP LOCKED;
                IF NOT FOUND THEN
                  IF EXISTS (SELECT 1 FROM review_items it WHERE it.session_id = s AND it.item_id = i) THEN
                    RETURN NULL;  -- another transaction holds it
                  END IF;
                  RAISE EXCEPTION 'item % is not in session %', i, s USING ERRCODE = '23503';
                END IF;
              END IF;
              UPDATE review_items it SET touched = 1 - it.touched
                WHERE it.session_id = s AND it.item_id = i RETURNING it.n_candidates INTO nc;
              IF nc IS NULL THEN
                RAISE EXCEPTION 'item % is not in session %', i, s USING ERRCODE = '23503';
              END IF;
              RETURN nc;
            END $$""",
        # --- the triggers: the only way a row gets in, whatever SQL a role sends
        f"""CREATE OR REPLACE FUNCTION relgate_review_label_guard() RETURNS trigger {definer} AS $$
            DECLARE r int; lease float8; nc int; n int;
            BEGIN
              IF NOT {owner} AND NEW.reviewer IS DISTINCT FROM session_user::text THEN
                RAISE EXCEPTION 'a label is given only as the role that logged in (%)', session_user {deny};
              END IF;
              IF NEW.reviewer IN ('{rv}', '{ad}') THEN
                RAISE EXCEPTION 'a group role is never a reviewer' {deny};
              END IF;
              {lock}
              IF NEW.verdict ~ '^[0-9]+$' AND NEW.verdict::int > nc THEN
                RAISE EXCEPTION 'item % has % candidate answers: rank % does not exist', NEW.item_id, nc,
                  NEW.verdict USING ERRCODE = '23514';
              END IF;
              IF NOT EXISTS (SELECT 1 FROM review_claims c WHERE c.session_id = NEW.session_id
                             AND c.item_id = NEW.item_id AND c.reviewer = NEW.reviewer AND c.state = 'claimed'
                             AND c.expires_at > {now}) THEN
                RAISE EXCEPTION 'no running claim of % on item %: claim it first', NEW.reviewer, NEW.item_id {deny};
              END IF;
              SELECT count(*) INTO n FROM review_labels l
                WHERE l.session_id = NEW.session_id AND l.item_id = NEW.item_id;
              IF n >= r THEN
                RAISE EXCEPTION 'item % already has its % labels', NEW.item_id, r {deny};
              END IF;
              NEW.id := nextval('review_labels_id_seq');
              NEW.created_at := {now};
              NEW.written_in := txid_current();
              RETURN NEW;
            END $$""",
        f"""CREATE OR REPLACE FUNCTION relgate_review_label_keep() RETURNS trigger {definer} AS $$
            DECLARE r int; lease float8; nc int;
            BEGIN
              IF TG_OP = 'UPDATE' THEN
                RAISE EXCEPTION 'a label is never changed (undo it while nobody else labelled the item)' {deny};
              END IF;
              {lock_old}
              {final_check}
              IF EXISTS (SELECT 1 FROM review_labels l WHERE l.session_id = OLD.session_id
                         AND l.item_id = OLD.item_id AND l.reviewer <> OLD.reviewer) THEN
                RAISE EXCEPTION 'item % has another reviewer''s label: % stands as given', OLD.item_id,
                  OLD.reviewer {deny};
              END IF;
              RETURN OLD;
            END $$""",
        f"""CREATE OR REPLACE FUNCTION relgate_review_unlabel() RETURNS trigger {definer} AS $$
            BEGIN
              UPDATE review_claims c SET state = 'claimed', expires_at = {now} + s.lease_seconds
                FROM review_sessions s
                WHERE s.id = OLD.session_id AND c.session_id = OLD.session_id AND c.item_id = OLD.item_id
                  AND c.reviewer = OLD.reviewer;
              RETURN OLD;
            END $$""",
        f"""CREATE OR REPLACE FUNCTION relgate_review_claim_guard() RETURNS trigger {definer} AS $$
            DECLARE r int; lease float8; nc int; t float8 := {now}; held int;
                    labelled boolean;
            BEGIN
              IF TG_OP = 'UPDATE' AND (NEW.session_id, NEW.item_id, NEW.reviewer)
                                      IS DISTINCT FROM (OLD.session_id, OLD.item_id, OLD.reviewer) THEN
                RAISE EXCEPTION 'a claim keeps its item and reviewer' {deny};
              END IF;
              IF NOT {owner} AND NEW.reviewer IS DISTINCT FROM session_user::text THEN
                RAISE EXCEPTION 'a claim is made only as the role that logged in (%)', session_user {deny};
              END IF;
              IF NEW.reviewer IN ('{rv}', '{ad}') THEN
                RAISE EXCEPTION 'a group role is never a reviewer' {deny};
              END IF;
              IF NEW.state = 'claimed' AND NEW.expires_at <= t AND (TG_OP = 'INSERT' OR OLD.state = 'claimed') THEN
                RETURN NEW;  -- a release (or an ended lease): holds nothing, needs no lock
              END IF;
              {lock}
              t := {now};  -- after the locks: a lease is measured from the moment it is granted
              labelled := EXISTS (SELECT 1 FROM review_labels l WHERE l.session_id = NEW.session_id
                                  AND l.item_id = NEW.item_id AND l.reviewer = NEW.reviewer);
              IF NEW.state = 'done' THEN
                IF NOT labelled THEN
                  RAISE EXCEPTION 'a claim is done only with its label (item %)', NEW.item_id {deny};
                END IF;
                NEW.expires_at := t;
              ELSE
                IF labelled THEN
                  RAISE EXCEPTION '% already labelled item %', NEW.reviewer, NEW.item_id {deny};
                END IF;
                NEW.expires_at := LEAST(NEW.expires_at, t + lease);
                IF NEW.expires_at > t THEN
                  SELECT count(*) INTO held FROM review_claims c
                    WHERE c.session_id = NEW.session_id AND c.item_id = NEW.item_id AND c.reviewer <> NEW.reviewer
                      AND (c.state = 'done' OR c.expires_at > t);
                  IF held >= r THEN
                    RAISE EXCEPTION 'item % has no free slot', NEW.item_id {deny};
                  END IF;
                  -- one running claim per reviewer and session: a new one ends the others (the queue hands out
                  -- one item at a time), so nobody holds the whole queue
                  UPDATE review_claims c SET expires_at = t
                    WHERE c.session_id = NEW.session_id AND c.reviewer = NEW.reviewer AND c.item_id <> NEW.item_id
                      AND c.state = 'claimed' AND c.expires_at > t;
                END IF;
              END IF;
              RETURN NEW;
            END $$""",
        f"""CREATE OR REPLACE FUNCTION relgate_review_session_guard() RETURNS trigger {definer} AS $$
            BEGIN
              IF TG_OP = 'UPDATE' THEN  -- only relgate_review_pulled (or the owner) marks the pull, once
                IF (NEW.id, NEW.name, NEW.run_id, NEW.per_item, NEW.lease_seconds, NEW.created_by, NEW.created_at,
                    NEW.run_info) IS DISTINCT FROM (OLD.id, OLD.name, OLD.run_id, OLD.per_item, OLD.lease_seconds,
                    OLD.created_by, OLD.created_at, OLD.run_info)
                   OR (OLD.pulled_at IS NOT NULL AND NEW.pulled_at IS NULL) THEN
                  RAISE EXCEPTION 'a session is never changed after publishing' {deny};
                END IF;
                RETURN NEW;
              END IF;
              IF NOT {owner} AND NEW.created_by IS DISTINCT FROM session_user::text THEN
                RAISE EXCEPTION 'a session is published only under the role that logged in (%)', session_user {deny};
              END IF;
              NEW.created_at := {now};
              NEW.pulled_at := NULL;
              RETURN NEW;
            END $$""",
        f"""CREATE OR REPLACE FUNCTION relgate_review_item_guard() RETURNS trigger {definer} AS $$
            BEGIN
              IF NOT {owner} AND NOT EXISTS (SELECT 1 FROM review_sessions s WHERE s.id = NEW.session_id
                                              AND s.created_by = session_user::text) THEN
                RAISE EXCEPTION 'items are added only to a session % published', session_user {deny};
              END IF;
              RETURN NEW;
            END $$""",
        f"""CREATE OR REPLACE FUNCTION relgate_review_adjudication_guard() RETURNS trigger {definer} AS $$
            DECLARE nc int;
            BEGIN
              IF TG_OP = 'DELETE' THEN
                RAISE EXCEPTION 'a decision is never deleted (record a new one: the old stays in the history)' {deny};
              END IF;
              IF NOT {owner} AND NEW.adjudicator IS DISTINCT FROM session_user::text THEN
                RAISE EXCEPTION 'a decision is recorded only under the role that logged in (%)', session_user {deny};
              END IF;
              IF TG_OP = 'UPDATE' AND (NEW.session_id, NEW.item_id) IS DISTINCT FROM (OLD.session_id, OLD.item_id)
              THEN
                RAISE EXCEPTION 'a decision keeps its item' {deny};
              END IF;
              SELECT i.n_candidates INTO nc FROM review_items i
                WHERE i.session_id = NEW.session_id AND i.item_id = NEW.item_id;
              IF NEW.verdict ~ '^[0-9]+$' AND NEW.verdict::int > nc THEN
                RAISE EXCEPTION 'item % has % candidate answers: rank % does not exist', NEW.item_id, nc,
                  NEW.verdict USING ERRCODE = '23514';
              END IF;
              IF TG_OP = 'UPDATE' THEN  -- the decision it replaces goes into the history
                INSERT INTO review_adjudication_history (session_id, item_id, verdict, adjudicator, created_at,
                                                         replaced_at, replaced_by)
                  VALUES (OLD.session_id, OLD.item_id, OLD.verdict, OLD.adjudicator, OLD.created_at, {now},
                          NEW.adjudicator);
              END IF;
              NEW.created_at := {now};
              RETURN NEW;
            END $$""",
        f"""CREATE OR REPLACE FUNCTION relgate_review_history_guard() RETURNS trigger {definer} AS $$
            BEGIN
              RAISE EXCEPTION 'the adjudication history is never changed' {deny};
            END $$""",
        # who may see an item's labels besides their author: a reviewer whose own label of it was committed by an
        # earlier transaction (never one inserted in this one and rolled back), and an adjudicator once the item
        # has its R labels committed (it can no longer take their label)
        f"""CREATE OR REPLACE FUNCTION relgate_review_visible(s text, i text) RETURNS boolean {definer} STABLE AS $$
            DECLARE mine_txn bigint := txid_current_if_assigned();
            BEGIN
              IF EXISTS (SELECT 1 FROM review_labels l WHERE l.session_id = s AND l.item_id = i
                         AND l.reviewer = session_user::text AND l.written_in IS DISTINCT FROM mine_txn) THEN
                RETURN true;
              END IF;
              RETURN pg_has_role(session_user, '{ad}', 'MEMBER')
                 AND (SELECT count(*) FROM review_labels l WHERE l.session_id = s AND l.item_id = i
                      AND l.written_in IS DISTINCT FROM mine_txn)
                     >= (SELECT per_item FROM review_sessions WHERE id = s);
            END $$""",
        # the one way to a verdict: the labels of session s this login may read (its own; the rest by
        # relgate_review_visible; every one for the owner). A function: the planner's estimates of a query on it
        # know nothing of the verdict column's statistics
        f"""CREATE OR REPLACE FUNCTION relgate_review_labels(s text)
              RETURNS TABLE (id bigint, item_id text, reviewer text, verdict text) {definer} STABLE AS $$
            BEGIN
              RETURN QUERY SELECT l.id, l.item_id, l.reviewer, l.verdict::text FROM review_labels l
                WHERE l.session_id = s AND ({owner} OR l.reviewer = session_user::text
                                            OR relgate_review_visible(l.session_id, l.item_id))
                ORDER BY l.id;
            END $$""",
        f"""CREATE OR REPLACE FUNCTION relgate_review_pulled(s text) RETURNS void {definer} AS $$
            BEGIN
              IF NOT ({owner} OR pg_has_role(session_user, '{ad}', 'MEMBER')) THEN
                RAISE EXCEPTION 'only an adjudicator or the owner pulls a session' {deny};
              END IF;
              UPDATE review_sessions SET pulled_at = {now} WHERE id = s AND pulled_at IS NULL;
            END $$""",
        # a reviewer's claims and undos: through these two functions only (reviewers may not UPDATE or DELETE
        # a row, so they can neither lock rows nor LOCK a table); the triggers above check the rules again
        f"""CREATE OR REPLACE FUNCTION relgate_review_claim(s text, i text, st text, lease float8, wait boolean)
              RETURNS TABLE (item_id text, expires_at float8) {definer} AS $$
            #variable_conflict use_column
            DECLARE me text := session_user::text; r int; nc int; t float8; held int;
            BEGIN
              IF st = 'claimed' AND lease <= 0 THEN  -- a release
                RETURN QUERY UPDATE review_claims c SET expires_at = {now}
                  WHERE c.session_id = s AND c.item_id = i AND c.reviewer = me AND c.state = 'claimed'
                  RETURNING c.item_id, c.expires_at;
                RETURN;
              END IF;
              IF st = 'claimed' THEN
                nc := relgate_review_lock(s, i, me, wait);
                IF nc IS NULL THEN  -- busy: (item, NULL)
                  RETURN QUERY SELECT i, NULL::float8;
                  RETURN;
                END IF;
                SELECT per_item INTO r FROM review_sessions WHERE id = s;
                t := {now};
                SELECT count(*) INTO held FROM review_claims c
                  WHERE c.session_id = s AND c.item_id = i AND c.reviewer <> me AND (c.state = 'done' OR c.expires_at > t);
                IF held >= r OR EXISTS (SELECT 1 FROM review_labels l WHERE l.session_id = s AND l.item_id = i
                                        AND l.reviewer = me) THEN
                  RETURN;  -- full, or labelled already: no row
                END IF;
              END IF;
              RETURN QUERY INSERT INTO review_claims AS c (session_id, item_id, reviewer, state, expires_at)
                VALUES (s, i, me, st, {now} + GREATEST(lease, 0))
                ON CONFLICT (session_id, item_id, reviewer)
                  DO UPDATE SET state = excluded.state, expires_at = excluded.expires_at
                RETURNING c.item_id, c.expires_at;
            END $$""",
        f"""CREATE OR REPLACE FUNCTION relgate_review_undo(s text, k text) RETURNS text {definer} AS $$
            DECLARE me text := session_user::text; lid bigint; it text;
            BEGIN
              SELECT l.id, l.item_id INTO lid, it FROM review_labels l
                WHERE l.session_id = s AND l.reviewer = me AND (k IS NULL OR l.client_key = k)
                ORDER BY l.id DESC LIMIT 1;
              IF lid IS NULL THEN
                RETURN NULL;
              END IF;
              DELETE FROM review_labels WHERE id = lid;
              RETURN it;
            END $$""",
    ]
    triggers = [("review_labels", "relgate_review_label_guard", "BEFORE INSERT"),
                ("review_labels", "relgate_review_label_keep", "BEFORE UPDATE OR DELETE"),
                ("review_labels", "relgate_review_unlabel", "AFTER DELETE"),
                ("review_claims", "relgate_review_claim_guard", "BEFORE INSERT OR UPDATE"),
                ("review_sessions", "relgate_review_session_guard", "BEFORE INSERT OR UPDATE"),
                ("review_items", "relgate_review_item_guard", "BEFORE INSERT"),
                ("review_adjudications", "relgate_review_adjudication_guard", "BEFORE INSERT OR UPDATE OR DELETE"),
                ("review_adjudication_history", "relgate_review_history_guard", "BEFORE UPDATE OR DELETE")]
    for table, fn, when in triggers:
        stmts += [f"DROP TRIGGER IF EXISTS {fn} ON {table}",
                  f"CREATE TRIGGER {fn} {when} ON {table} FOR EACH ROW EXECUTE FUNCTION {fn}()",
                  f"REVOKE ALL ON FUNCTION {fn}() FROM PUBLIC"]
    stmts.append("REVOKE ALL ON FUNCTION relgate_review_lock(text, text, text, boolean) FROM PUBLIC")
    # the reviewers' timeouts on every role already granted (an older store's), where this role may set them
    sets = " ".join(f"EXECUTE format('ALTER ROLE %I SET {k} = ''{v}''', m.rolname);" for k, v in REVIEWER_TIMEOUTS)
    stmts.append(f"""DO $$ DECLARE m record; BEGIN
          FOR m IN SELECT DISTINCT r.rolname FROM pg_auth_members a JOIN pg_roles g ON g.oid = a.roleid
                   JOIN pg_roles r ON r.oid = a.member
                   WHERE g.rolname IN ('{rv}', '{ad}') AND r.rolname NOT IN ('{rv}', '{ad}') AND r.rolcanlogin LOOP
            BEGIN {sets}
            EXCEPTION WHEN insufficient_privilege THEN
              RAISE NOTICE 'cannot set the reviewer timeouts of %: grant it again as a role that may', m.rolname;
            END;
          END LOOP;
        END $$""")
    for fn, group in (("relgate_review_visible(text, text)", rv), ("relgate_review_labels(text)", rv),
                      ("relgate_review_claim(text, text, text, float8, boolean)", rv),
                      ("relgate_review_undo(text, text)", rv), ("relgate_review_pulled(text)", ad)):
        stmts += [f"REVOKE ALL ON FUNCTION {fn} FROM PUBLIC", f"GRANT EXECUTE ON FUNCTION {fn} TO {group}"]
    stmts += [
        # --- row-level security: a role reads and writes its own rows (session_user: SET ROLE to a group or to
        # another member changes nothing); the triggers check the rest
        "ALTER TABLE review_labels ENABLE ROW LEVEL SECURITY",
        "DROP POLICY IF EXISTS review_label_insert ON review_labels",
        f"CREATE POLICY review_label_insert ON review_labels FOR INSERT TO {rv} "
        "WITH CHECK (reviewer = session_user::text)",
        "DROP POLICY IF EXISTS review_label_read ON review_labels",
        f"CREATE POLICY review_label_read ON review_labels FOR SELECT TO {rv} USING (reviewer = session_user::text)",
        "DROP POLICY IF EXISTS review_label_delete ON review_labels",
        f"CREATE POLICY review_label_delete ON review_labels FOR DELETE TO {rv} "
        "USING (reviewer = session_user::text)",
        "DROP FUNCTION IF EXISTS relgate_review_labelled(text, text, text)",  # version 1's
        "ALTER TABLE review_claims ENABLE ROW LEVEL SECURITY",
        "DROP POLICY IF EXISTS review_claim_read ON review_claims",
        f"CREATE POLICY review_claim_read ON review_claims FOR SELECT TO {rv} USING (true)",
        "DROP POLICY IF EXISTS review_claim_insert ON review_claims",
        f"CREATE POLICY review_claim_insert ON review_claims FOR INSERT TO {rv} "
        "WITH CHECK (reviewer = session_user::text)",
        "DROP POLICY IF EXISTS review_claim_update ON review_claims",
        f"CREATE POLICY review_claim_update ON review_claims FOR UPDATE TO {rv} "
        "USING (reviewer = session_user::text) WITH CHECK (reviewer = session_user::text)",
    ]
    return stmts
