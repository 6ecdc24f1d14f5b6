"""Team review (issue 21): the review store (SQLite embedded or PostgreSQL, one schema, one code path), the
reviewer's client with its local journal, publishing a run and pulling the final labels back into it.

Modules: :mod:`.db` (where the store lives, how to reach it), :mod:`.schema` (one schema, roles, row-level
security), :mod:`.queries` (the per-keypress statements), :mod:`.store` (``ReviewStore``, ``open_store``, the claim
queue), :mod:`.item` (a published item, typed), :mod:`.client` (the reviewer's client) with :mod:`.journal` (its
local journal), :mod:`.publish`, :mod:`.status`, :mod:`.pull`, :mod:`.summary` (a run's ``review.json``).
"""
