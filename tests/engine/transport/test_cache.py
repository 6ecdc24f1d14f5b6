"""The request cache's database (engine/transport/cache.py): created without a disk sync, and the same file as the
one diskcache makes on its own — same pragmas, settings and schema — so caches made before and after read alike."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import diskcache

from relgate_tui.engine.transport.cache import SampleCache
from relgate_tui.engine.transport.endpoints import Completion


def _describe(db: Path) -> tuple:
    con = sqlite3.connect(db)
    try:
        pragmas = tuple(con.execute(f"PRAGMA {p}").fetchone()[0]
                        for p in ("auto_vacuum", "journal_mode", "page_size", "user_version", "encoding"))
        schema = tuple(con.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall())
        settings = tuple(con.execute("SELECT key, value FROM Settings ORDER BY key").fetchall())
    finally:
        con.close()
    return pragmas, schema, settings


def test_a_new_cache_is_the_database_diskcache_makes(tmp_path) -> None:
    SampleCache(tmp_path / "ours").close()
    diskcache.Cache(str(tmp_path / "theirs"), size_limit=2**32).close()
    ours, theirs = _describe(tmp_path / "ours" / "cache.db"), _describe(tmp_path / "theirs" / "cache.db")
    assert ours == theirs
    assert ours[0][:2] == (1, "wal")  # auto_vacuum FULL, WAL


def test_answers_survive_a_reopen_and_a_cache_diskcache_made_opens(tmp_path) -> None:
    done = Completion("The answer is 579.", 20, 6, "stop", None)
    with SampleCache(tmp_path / "c") as cache:
        cache.put_many([("fp-1", done), ("fp-2", done)])
    with SampleCache(tmp_path / "c") as again:
        assert again.get("fp-1") == done and len(again) == 2 and again.moved_aside is None
    diskcache.Cache(str(tmp_path / "d"), size_limit=2**32).close()
    with SampleCache(tmp_path / "d") as other:
        other.put("fp", done)
        assert other.get("fp") == done


def test_an_empty_database_file_is_set_up_as_a_new_one(tmp_path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "cache.db").write_bytes(b"")  # created, never written (a crash at the first write)
    with SampleCache(tmp_path / "c") as cache:
        cache.put("fp", Completion("x", 1, 1, "stop", None))
        assert cache.get("fp") is not None and cache.moved_aside is None
    assert _describe(tmp_path / "c" / "cache.db")[0][:2] == (1, "wal")
