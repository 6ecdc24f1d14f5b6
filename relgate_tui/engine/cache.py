"""The request cache (SPEC §4.4): completed samples by request fingerprint, on disk (diskcache).

Only what an answer is made of is stored — its text, token usage, finish reason and per-token log-probabilities
(when the server sent them) — never headers or keys.
A corrupt or unreadable entry counts as a miss. Re-running an identical request configuration costs zero calls.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import diskcache

from relgate_tui.engine import logprobs as lp
from relgate_tui.engine.endpoints import Completion


class SampleCache:
    """``fingerprint -> Completion`` on disk. Safe to share between processes (diskcache uses SQLite)."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._cache = diskcache.Cache(str(self.path), size_limit=2**32)

    def get(self, fingerprint: str) -> Completion | None:
        try:
            value: Any = self._cache.get(fingerprint)
        except Exception:  # a damaged entry or database is a miss, never an error
            return None
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            return None
        return Completion(
            value["text"],
            int(value.get("prompt_tokens") or 0),
            int(value.get("completion_tokens") or 0),
            value.get("finish_reason") if isinstance(value.get("finish_reason"), str) else None,
            lp.from_json(value.get("logprobs")),
        )

    def put(self, fingerprint: str, completion: Completion) -> None:
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
        except Exception:  # a full disk must not abort sampling: the run store still holds the sample
            pass

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        self._cache.close()

    def __enter__(self) -> SampleCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
