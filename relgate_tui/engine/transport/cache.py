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
"""

from __future__ import annotations

import os
import sqlite3
import time
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
            self._cache = diskcache.Cache(str(self.path), size_limit=2**32)
        except sqlite3.DatabaseError:
            self.moved_aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
            os.replace(self.path, self.moved_aside)
            self.path.mkdir(parents=True, exist_ok=True)
            self._cache = diskcache.Cache(str(self.path), size_limit=2**32)

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
