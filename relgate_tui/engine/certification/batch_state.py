"""A run's Batch API state, kept in its manifest (``batch``) and read back as :class:`BatchState` (issue 42).

It is what a run must not lose between invocations:

* ``pending`` — the round in flight with the provider: its batch ids, stored right after each create, and the
  uploaded file being created into a batch (``creating``, stored before the create request);
* ``asked`` — the sample indices ``[lo, hi)`` per item that the current round asked for (online: the round in flight;
  offline: the last ``relgate batch write``): an answer outside them is refused, a request inside them with no line
  in the results is a counted failure;
* ``failed`` — items whose request failed for good (a 4xx line, attempts used up, rounds used up), with the
  provider's reason: no later round, and no direct call, asks them again (``relgate batch write --retry-failed``
  does);
* ``offline`` — the calls of the offline rounds (:class:`OfflineCalls`): rounds, requests written, answers, failed
  lines and failures by reason, so the result of the ``certify --config`` that ends an offline run says where its
  samples came from.

Every field is validated on read: a wrong-typed value reads as its default (the state a run had before it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from relgate_tui.core.text import one_line

__all__ = ["BatchState", "OfflineCalls", "Pending", "MAX_REASONS"]

MAX_REASONS = 20  # failure reasons kept per run (the most frequent)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**12 else 0


@dataclass(frozen=True)
class Pending:
    round: int
    batches: tuple[str, ...] = ()
    creating: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"round": self.round, "batches": list(self.batches)}
        if self.creating is not None:
            out["creating"] = self.creating
        return out

    @classmethod
    def from_json(cls, data: object) -> Pending | None:
        if not isinstance(data, dict) or not isinstance(data.get("batches"), list):
            return None
        creating = data.get("creating")
        return cls(_int(data.get("round")), tuple(str(b) for b in data["batches"] if isinstance(b, str)),
                   creating if isinstance(creating, str) else None)


@dataclass(frozen=True)
class OfflineCalls:
    """Calls of a run's offline rounds (``relgate batch read``), summed over its reads."""

    rounds: int = 0
    batched: int = 0
    made: int = 0
    failed: int = 0
    reasons: tuple[tuple[str, int], ...] = ()  # (reason, lines), most frequent first

    def add(self, *, rounds: int, batched: int, made: int, failed: int, reasons: Mapping[str, int]) -> OfflineCalls:
        merged = dict(self.reasons)
        for reason, n in reasons.items():
            merged[reason] = merged.get(reason, 0) + n
        top = sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_REASONS]
        return OfflineCalls(self.rounds + rounds, self.batched + batched, self.made + made, self.failed + failed,
                            tuple(top))

    def to_json(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "batched": self.batched, "made": self.made, "failed": self.failed,
                "reasons": [[r, n] for r, n in self.reasons]}

    @classmethod
    def from_json(cls, data: object) -> OfflineCalls:
        if not isinstance(data, dict):
            return cls()
        raw = data.get("reasons")
        reasons = tuple((one_line(r[0], 200), _int(r[1])) for r in raw if isinstance(r, list) and len(r) == 2
                        and isinstance(r[0], str)) if isinstance(raw, list) else ()
        return cls(_int(data.get("rounds")), _int(data.get("batched")), _int(data.get("made")),
                   _int(data.get("failed")), reasons[:MAX_REASONS])


@dataclass(frozen=True)
class BatchState:
    """The manifest's ``batch`` (module docstring)."""

    rounds: int = 0
    pending: Pending | None = None
    asked: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    failed: Mapping[str, str] = field(default_factory=dict)
    offline: OfflineCalls = OfflineCalls()
    written: int = 0  # request lines of the round ``asked`` describes (an index already cached is not written)

    def with_(self, **changes: Any) -> BatchState:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "pending": self.pending.to_json() if self.pending else None,
                "asked": {k: [lo, hi] for k, (lo, hi) in self.asked.items()}, "failed": dict(self.failed),
                "offline": self.offline.to_json(), "written": self.written}

    @classmethod
    def from_json(cls, data: object) -> BatchState:
        if not isinstance(data, dict):
            return cls()
        asked_raw = data.get("asked")
        asked = {str(k): (_int(v[0]), _int(v[1])) for k, v in asked_raw.items()
                 if isinstance(v, list) and len(v) == 2} if isinstance(asked_raw, dict) else {}
        failed_raw = data.get("failed")
        failed = {str(k): one_line(str(v), 300) for k, v in failed_raw.items()} if isinstance(failed_raw, dict) else {}
        return cls(_int(data.get("rounds")), Pending.from_json(data.get("pending")), asked, failed,
                   OfflineCalls.from_json(data.get("offline")), _int(data.get("written")))
