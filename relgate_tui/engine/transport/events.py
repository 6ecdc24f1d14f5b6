"""The sampler's events (engine/transport/sampler.py; the Batch API's round loop, certification/batch_rounds.py,
emits the same): a sample done, a request failed, an item done, the endpoint down or up again."""

from __future__ import annotations

from dataclasses import dataclass, field

from relgate_tui.engine.transport.logprobs import TokenLogprob

__all__ = ["EndpointDown", "EndpointUp", "ItemDone", "SampleDone", "SampleFailed", "SamplerEvent"]


@dataclass(frozen=True)
class SampleDone:
    item_id: str
    index: int
    text: str
    canonical: str
    cached: bool
    usage: dict[str, int] = field(default_factory=dict)
    logprobs: tuple[TokenLogprob, ...] | None = None  # per-token log-probs when the server sent them


def _sample_done(item_id: str, index: int, text: str, canonical: str, cached: bool, usage: dict[str, int],
                 logprobs: tuple[TokenLogprob, ...] | None) -> SampleDone:
    """``SampleDone(...)`` without the frozen dataclass's per-field ``__setattr__`` (one event per call)."""
    event = object.__new__(SampleDone)
    event.__dict__.update(item_id=item_id, index=index, text=text, canonical=canonical, cached=cached, usage=usage,
                          logprobs=logprobs)
    return event


@dataclass(frozen=True)
class SampleFailed:
    """A failed request. ``final``: no more retries — the item stops here (with the samples it has)."""

    item_id: str
    index: int
    error_kind: str
    message: str
    final: bool
    attempt: int = 1
    wait_s: float = 0.0  # how long the retry waits (a server's Retry-After, capped, or the backoff)


@dataclass(frozen=True)
class ItemDone:
    item_id: str
    n_samples: int
    stopped_early: bool
    counts: dict[str, int]
    failed: bool = False
    resumed: int = 0  # samples that were already in the run store


@dataclass(frozen=True)
class EndpointDown:
    """The endpoint stopped answering; sampling waits (up to ``max_down_s``)."""

    message: str


@dataclass(frozen=True)
class EndpointUp:
    """The endpoint answers again after ``down_seconds``; sampling resumed."""

    down_seconds: float

    @property
    def message(self) -> str:
        return f"endpoint back after {self.down_seconds:.1f} s; sampling resumed"


SamplerEvent = SampleDone | SampleFailed | ItemDone | EndpointDown | EndpointUp
