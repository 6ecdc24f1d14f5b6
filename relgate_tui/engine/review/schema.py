"""The review store's schema (issue 21 §1, §7): one set of tables for SQLite and PostgreSQL, versioned.

Tables (SQLAlchemy Core; the same on both)::

    review_meta          key → value; "schema_version"
    review_sessions      a published run: id, name, run_id, per_item (R), lease_seconds, created_by/at, run_info
    review_items         the session's items in queue order, each with its payload (question, ranked candidates
                         with counts and one representative text per class, references) and its number of
                         candidates (a rank beyond it is refused); concurrent claimers of one item serialise on
                         its row (``FOR UPDATE``); ``touched`` is unused since (kept: schema version 1)
    review_claims        (session, item, reviewer) → state "claimed" until ``expires_at`` (the lease) or "done"
                         (labelled); what the queue counts — it holds no verdict, so every reviewer may read it
    review_labels        one verdict per (session, item, reviewer), with the client's key (``client_key``, unique:
                         the journal's resend of a label already committed is recognised, never doubled)
    review_adjudications an adjudicator's decision per (session, item)

**Versioning.** ``review_meta.schema_version`` is :data:`SCHEMA_VERSION`; a store written by a newer relgate is
refused with one line (:func:`check_version`), an older one would be migrated here (there is none yet).

**PostgreSQL roles and row-level security** (:func:`security_statements`, run by ``relgate review init``): group
roles ``relgate_reviewer`` and ``relgate_adjudicator`` (a member of the first). A reviewer is their database role:
``review_labels`` lets a role insert and delete only rows whose ``reviewer`` is ``current_user``, and read another
reviewer's label of an item only once it labelled that item itself (a ``SECURITY DEFINER`` function looks that up,
since a policy may not query its own table) or as an adjudicator. Reviewers have no privilege at all on
``review_adjudications``. SQLite has neither roles nor policies: the embedded store is one machine's trust domain.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Column, Float, ForeignKeyConstraint, Integer, MetaData, String, Table, Text, UniqueConstraint

__all__ = ["SCHEMA_VERSION", "metadata", "meta", "sessions", "items", "claims", "labels", "adjudications",
           "REVIEWER_ROLE", "ADJUDICATOR_ROLE", "security_statements", "check_version"]

SCHEMA_VERSION = 1
REVIEWER_ROLE = "relgate_reviewer"
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
                 Column("run_info", Text, nullable=False))

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
               Column("id", Integer, primary_key=True, autoincrement=True),
               Column("session_id", String(32), nullable=False),
               Column("item_id", Text, nullable=False),
               Column("reviewer", Text, nullable=False),
               Column("verdict", String(16), nullable=False),
               Column("client_key", String(64), nullable=False),
               Column("created_at", Float, nullable=False),
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


def check_version(found: str | None, where: str) -> None:
    """Refuse a store without the schema, or written by a newer relgate (one line)."""
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


def security_statements(schema: str) -> list[str]:
    """The PostgreSQL DDL of the roles, grants and row-level policies (idempotent; see the module docstring).
    ``schema``: the schema the tables live in (an identifier, quoted here)."""
    q = '"' + schema.replace('"', '""') + '"'
    rv, ad = REVIEWER_ROLE, ADJUDICATOR_ROLE
    return [
        f"""DO $$ BEGIN
              IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{rv}') THEN CREATE ROLE {rv} NOLOGIN; END IF;
              IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{ad}') THEN CREATE ROLE {ad} NOLOGIN; END IF;
            END $$""",
        f"GRANT {rv} TO {ad}",
        f"GRANT USAGE ON SCHEMA {q} TO {rv}",
        f"GRANT SELECT ON review_meta, review_sessions, review_items TO {rv}",
        f"GRANT UPDATE (touched) ON review_items TO {rv}",
        f"GRANT SELECT, INSERT, UPDATE ON review_claims TO {rv}",
        f"GRANT SELECT, INSERT, DELETE ON review_labels TO {rv}",
        f"GRANT USAGE ON SEQUENCE review_labels_id_seq TO {rv}",
        f"GRANT SELECT, INSERT, UPDATE ON review_adjudications TO {ad}",
        f"GRANT INSERT ON review_sessions, review_items TO {ad}",
        f"""CREATE OR REPLACE FUNCTION relgate_review_labelled(s text, i text, who text) RETURNS boolean
            LANGUAGE sql STABLE SECURITY DEFINER SET search_path = {q}, pg_temp AS $$
              SELECT EXISTS (SELECT 1 FROM review_labels l
                             WHERE l.session_id = s AND l.item_id = i AND l.reviewer = who) $$""",
        "REVOKE ALL ON FUNCTION relgate_review_labelled(text, text, text) FROM PUBLIC",
        f"GRANT EXECUTE ON FUNCTION relgate_review_labelled(text, text, text) TO {rv}",
        "ALTER TABLE review_labels ENABLE ROW LEVEL SECURITY",
        "DROP POLICY IF EXISTS review_label_insert ON review_labels",
        f"CREATE POLICY review_label_insert ON review_labels FOR INSERT TO {rv} "
        "WITH CHECK (reviewer = current_user::text)",
        "DROP POLICY IF EXISTS review_label_read ON review_labels",
        f"CREATE POLICY review_label_read ON review_labels FOR SELECT TO {rv} USING ("
        "reviewer = current_user::text "
        f"OR pg_has_role(current_user, '{ad}', 'MEMBER') "
        "OR relgate_review_labelled(session_id, item_id, current_user::text))",
        "DROP POLICY IF EXISTS review_label_delete ON review_labels",
        f"CREATE POLICY review_label_delete ON review_labels FOR DELETE TO {rv} "
        "USING (reviewer = current_user::text)",
        "ALTER TABLE review_claims ENABLE ROW LEVEL SECURITY",
        "DROP POLICY IF EXISTS review_claim_read ON review_claims",
        f"CREATE POLICY review_claim_read ON review_claims FOR SELECT TO {rv} USING (true)",
        "DROP POLICY IF EXISTS review_claim_insert ON review_claims",
        f"CREATE POLICY review_claim_insert ON review_claims FOR INSERT TO {rv} "
        "WITH CHECK (reviewer = current_user::text)",
        "DROP POLICY IF EXISTS review_claim_update ON review_claims",
        f"CREATE POLICY review_claim_update ON review_claims FOR UPDATE TO {rv} "
        "USING (reviewer = current_user::text) WITH CHECK (reviewer = current_user::text)",
    ]
