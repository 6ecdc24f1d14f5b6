"""What a sampler is asked and what it cost (engine/transport/sampler.py runs it): the job (items, canonicalizer,
stopping rule, K_max, seed, the samples already stored), the retry policy per request, and the pass's totals."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from relgate_tui.core.types import INVALID
from relgate_tui.engine.records import StoredSample

__all__ = ["RetryPolicy", "SamplingJob", "SamplingTotals", "class_counts"]


@dataclass(frozen=True)
class RetryPolicy:
    """Retries per request: ``max_attempts`` in all, delays ``base_delay_s · 2^(attempt−1)`` with full jitter, capped
    at ``max_delay_s``; a server's ``Retry-After`` is honoured up to ``max_retry_after_s``."""

    max_attempts: int = 5
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    max_retry_after_s: float = 30.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after_s)
        return rng.uniform(0.0, min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)))

    def wait_note(self, wait: float, retry_after: float | None) -> str:
        """What a retry waits for, said in the failure's message when it is a server's ``Retry-After`` or long."""
        if retry_after is not None:
            capped = " (capped)" if retry_after > self.max_retry_after_s else ""
            return f"; the server asked to retry after {retry_after:g} s: waiting {_seconds(wait)} s{capped}"
        return f"; retrying in {_seconds(wait)} s" if wait >= 5 else ""


def _seconds(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.2g}"


@dataclass
class SamplingTotals:
    """Calls of one sampling pass. ``made``: requests answered (each paid); ``cached``: samples served from the cache
    or the run store; ``failed``: requests that failed after their retries (through a Batch API: every failed line);
    ``retries``: failed attempts retried."""

    made: int = 0
    cached: int = 0
    failed: int = 0
    retries: int = 0
    samples_new: int = 0
    samples_used: int = 0
    items: int = 0
    items_stopped_early: int = 0
    items_failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    batch_rounds: int = 0  # rounds sent through a Batch API (engine/certification/batch_rounds.py); 0 = direct
    batched: int = 0  # requests submitted in batches

    def saved_vs_kmax(self, k_max: int) -> float:
        budget = self.items * k_max
        return 1.0 - self.samples_used / budget if budget else 0.0

    def cost(self, price_in: float | None, price_out: float | None) -> float | None:
        """Cost from prices per million input / output tokens."""
        if price_in is None or price_out is None:
            return None
        return (self.prompt_tokens * price_in + self.completion_tokens * price_out) / 1e6


@dataclass(frozen=True)
class SamplingJob:
    """What to sample: the items (``TaskItem``s), the canonicalizer ``(text, choices) -> class``, the stopping rule,
    ``k_max``, the run seed and the samples already stored (by item id, any order)."""

    items: Sequence[Any]
    canonicalizer: Callable[[str, Sequence[str]], str]
    rule: Any
    k_max: int
    seed: int = 0
    existing: Mapping[str, Sequence[StoredSample]] = field(default_factory=dict)


def class_counts(canonicals: Sequence[str]) -> dict[str, int]:  # the non-INVALID classes, first-appearance order
    return dict(Counter(c for c in canonicals if c != INVALID))
