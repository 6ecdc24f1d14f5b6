"""Team review (issue 21): the review store (SQLite embedded or PostgreSQL, one schema, one code path), the
reviewer's client with its local journal, publishing a run and pulling the final labels back into it."""
