"""The request cache (SPEC §4.4): completed samples by request fingerprint, on disk (diskcache).

Only what an answer is made of is stored — its text, token usage, finish reason and per-token log-probabilities
(when the server sent them) — never headers or keys.
A corrupt or unreadable entry counts as a miss. A damaged database (``cache.db`` not readable by SQLite) is moved
aside to ``<dir>.damaged-<time>`` and an empty cache is built in its place: the run store still holds every sample,
so only cached answers of other runs are lost (and the damaged copy is kept for inspection). Re-running an identical
request configuration costs zero calls.
Nothing unpersistable enters it and nothing unpersistable comes out: an answer that is not valid Unicode (a lone
surrogate) or over :data:`~relgate_tui.engine.transport.endpoints.MAX_ANSWER_CHARS` is refused by :meth:`SampleCache.put` and
read back as a miss (an entry written by an older version), so one bad answer can never abort every rerun.

**Disk syncs.** The cache is rebuildable — the run store holds every sample, so a lost entry costs one repeated
call in another run, never a result — and it syncs accordingly (issue 42 §7: opening a fresh cache used to cost 16
``fdatasync`` calls, ~60 ms on an ordinary disk, before the first request):

* answers are committed by diskcache in WAL mode with ``PRAGMA synchronous=NORMAL`` (its default): a commit costs
  no sync and is safe against ``kill -9``; a power loss can lose what was committed since the last checkpoint, but
  not corrupt the database (the run store still holds every sample). The WAL is synced into the database at
  SQLite's checkpoints (every 1,000 pages of WAL, and when a process closes the database last); a ``relgate
  certify`` process exits with its connections open (everything is frozen out of the collector, cli.py), so it
  leaves the WAL, which the next open reads as SQLite always does;
* a *new* database is created by :func:`_hold_open` with ``synchronous=OFF`` (``auto_vacuum``, WAL and the first
  WAL frame without a sync): it holds nothing yet, and an empty database damaged by a power loss is moved aside
  and rebuilt like any other damaged one;
* that connection holds the WAL open while diskcache sets up (diskcache closes and reopens its connection at the end
  of its set-up; as the last connection that close would checkpoint, syncing twice, and the reopen re-create the
  WAL).

The database is the same file either way (same pages, settings and schema; tests/engine/transport/test_cache.py).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import diskcache

from relgate_tui.engine.transport import logprobs as lp
from relgate_tui.engine.transport.endpoints import MAX_ANSWER_CHARS, Completion


class SampleCache:
    """``fingerprint -> Completion`` on disk. Safe to share between processes (diskcache uses SQLite)."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.moved_aside: Path | None = None
        try:
            self._cache = _open(self.path)
        except sqlite3.DatabaseError:
            self.moved_aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
            os.replace(self.path, self.moved_aside)
            self.path.mkdir(parents=True, exist_ok=True)
            self._cache = _open(self.path)

    def get(self, fingerprint: str) -> Completion | None:
        try:
            value: Any = self._cache.get(fingerprint)
        except Exception:  # noqa: BLE001 - a damaged entry or database is a miss, never an error
            return None
        if not isinstance(value, dict) or not _storable(value.get("text")):
            return None
        finish = value.get("finish_reason")
        return Completion(
            value["text"],
            _count(value.get("prompt_tokens")),
            _count(value.get("completion_tokens")),
            finish if _storable(finish) else None,
            lp.from_json(value.get("logprobs")),
        )

    def get_many(self, fingerprints: Sequence[str]) -> dict[str, Completion]:
        """:meth:`get` of every fingerprint in one call, the hits only (the sampler asks a fixed-K item's indices at
        once, on its cache thread)."""
        found = {}
        for fingerprint in fingerprints:
            hit = self.get(fingerprint)
            if hit is not None:
                found[fingerprint] = hit
        return found

    def put(self, fingerprint: str, completion: Completion) -> None:
        if not _storable(completion.text):
            return
        record = {
            "text": completion.text,
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
            "finish_reason": completion.finish_reason,
        }
        if completion.logprobs is not None:
            record["logprobs"] = lp.to_json(completion.logprobs)
        try:
            self._cache.set(fingerprint, record)
        except Exception:  # noqa: BLE001 - a full disk must not abort sampling: the run store holds the sample
            pass

    def put_many(self, entries: list[tuple[str, Completion]]) -> None:
        """:meth:`put` of every ``(fingerprint, completion)`` in one transaction: one commit, not one per answer (a
        quarter of the wall time per put, bench/throughput.py)."""
        try:
            with self._cache.transact():
                for fingerprint, completion in entries:
                    self.put(fingerprint, completion)
        except Exception:  # noqa: BLE001 - as put: the run store holds every sample
            pass

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        self._cache.close()

    def __enter__(self) -> SampleCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open(path: Path) -> diskcache.Cache:
    """diskcache's cache in ``path``, opened while :func:`_hold_open` holds the database (module docstring: disk
    syncs); :class:`sqlite3.DatabaseError` when the database is damaged."""
    hold = _hold_open(path / "cache.db")
    try:
        return diskcache.Cache(str(path), size_limit=2**32)
    finally:
        hold.close()


def _hold_open(db: Path) -> sqlite3.Connection:
    """A connection to ``db`` with the WAL open (a read), creating the database first when there is none: with
    diskcache's ``auto_vacuum`` (FULL, before the first page), in WAL mode, its first WAL frame written (the
    ``user_version`` it has, 0) — all with ``synchronous=OFF``: an empty database has nothing to lose."""
    try:
        fresh = db.stat().st_size == 0  # an empty file (created, never written) is a new database too
    except FileNotFoundError:
        fresh = True
    con = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    try:
        if fresh:
            con.execute("PRAGMA synchronous=OFF")
            con.execute("PRAGMA auto_vacuum=FULL")
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA user_version=0")
        con.execute("SELECT count(*) FROM sqlite_master").fetchall()
    except BaseException:
        con.close()
        raise
    return con


def _storable(text: object) -> bool:
    """A string that can be written to any file: valid Unicode, within the stored-answer cap."""
    if not isinstance(text, str) or len(text) > MAX_ANSWER_CHARS:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**15 else 0
