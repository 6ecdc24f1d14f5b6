"""Fault injection of the demo server: which model requests fail, and how.

Kinds (:data:`FAULT_KINDS`): ``429`` (rate limit with ``Retry-After``), ``500``, ``400`` (not retryable), ``slow``
(an extra delay, then a normal answer), ``malformed`` (a truncated JSON body), ``empty`` (``choices: []``), and
``reset``: the server reads the whole request, then closes the connection with a TCP RST (``SO_LINGER`` 0) and no
response — the client sees ECONNRESET (issue 10 §2).
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

__all__ = ["FAULT_KINDS", "FaultPlan", "FaultState", "parse_fault_kinds"]

FAULT_KINDS: tuple[str, ...] = ("429", "500", "slow", "malformed", "empty", "reset", "400")


@dataclass(frozen=True)
class FaultPlan:
    """Which chat requests fail and how.

    * ``script``: fault kinds (or None = no fault) for the first ``len(script)`` chat requests, in order.
    * ``rate``: after the script, each request fails with probability ``rate``, the kind drawn uniformly from
      ``kinds`` (RNG seeded with ``seed``).
    * ``retry_after``: "seconds" (``Retry-After: 1``) or "date" (an HTTP date ``retry_after_s`` seconds ahead);
      ``retry_after_s`` is the delay in whole seconds.
    * ``slow_ms``: extra delay of a "slow" response (then a normal answer).
    """

    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    seed: int = 0
    script: tuple[str | None, ...] = ()
    retry_after: str = "seconds"
    retry_after_s: int = 1
    slow_ms: float = 1500.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "kinds", tuple(self.kinds))
        object.__setattr__(self, "script", tuple(self.script))
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"fault rate must be between 0 and 1, got {self.rate}")
        unknown = [k for k in (*self.kinds, *self.script) if k is not None and k not in FAULT_KINDS]
        if unknown:
            raise ValueError(f"unknown fault kind {unknown[0]!r} (known: {', '.join(FAULT_KINDS)})")
        if self.rate > 0 and not self.kinds:
            raise ValueError("a fault rate needs at least one fault kind")
        if self.retry_after not in ("seconds", "date"):
            raise ValueError(f"retry_after must be 'seconds' or 'date', got {self.retry_after!r}")
        if self.retry_after_s < 0 or self.slow_ms < 0:
            raise ValueError("retry_after_s and slow_ms must be non-negative")


class FaultState:
    """The running schedule of a :class:`FaultPlan` (used on the server's loop thread only)."""

    def __init__(self, plan: FaultPlan) -> None:
        self.plan = plan
        self.rng = Random(plan.seed)
        self.index = 0

    def next_fault(self) -> str | None:
        index, self.index = self.index, self.index + 1
        if index < len(self.plan.script):
            return self.plan.script[index]
        if self.plan.rate > 0.0 and self.rng.random() < self.plan.rate:
            return self.plan.kinds[int(self.rng.random() * len(self.plan.kinds))]
        return None


def parse_fault_kinds(text: str) -> tuple[str, ...]:
    """``"reset,429"`` → ``("reset", "429")``; raises ValueError naming an unknown kind."""
    kinds = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [k for k in kinds if k not in FAULT_KINDS]
    if unknown or not kinds:
        raise ValueError(f"unknown fault kind {unknown[0] if unknown else text!r} (known: {', '.join(FAULT_KINDS)})")
    return kinds
