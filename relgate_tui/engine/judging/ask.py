"""Asking judges: the one async ``ask()`` every judge study goes through (issue 9 item 1).

A :class:`Judge` says where and how to ask (endpoint, model, the NAME of the API-key variable, temperature,
max_tokens, ``top_logprobs``); a :class:`Request` is a prompt keyed by a tuple of strings (never a formatted string:
the key is only ever compared, never parsed); each request is asked ``reps`` times. :func:`ask` yields an
:class:`Answer` per repetition — its text and, when the server returned them, its per-token log-probabilities — and
the sampler's fault events as :class:`AskFailed` / :class:`EndpointState`.

Everything that makes sampling robust is the sampler's (:class:`~relgate_tui.engine.transport.sampler.Sampler`): bounded
concurrency, retries with jittered backoff, ``Retry-After``, the endpoint-down pause with probing, the request cache
(a cached answer, log-probabilities included, comes back identical and costs no call). Cancelling the task that
iterates :func:`ask` stops every request at once (the sampler cancels its workers until they are gone): there is no
polled flag and no thread.

Per-repetition seeds derive from the run seed, the request key and the repetition (``sample_seed``), so the same
audit always asks the same questions, and a judge asked again with the same settings is served from the cache.
Answers already held (a stored audit being resumed) are passed as ``held`` and never asked again.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from relgate_tui.engine.transport.logprobs import TokenLogprob
from relgate_tui.engine.transport.tls import tls_context
from relgate_tui.errors import UserError

Key = tuple[str, ...]
"""A request's identity: a tuple of strings, e.g. ``("pairwise", "original", input_id, first_id, second_id)``."""

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Judge:
    """One judge: an OpenAI-compatible endpoint and model with its sampling settings. ``api_key_env`` is the NAME of
    an environment variable (never the key). ``top_logprobs`` > 0 asks for per-token log-probabilities with that many
    alternatives (``logprobs: true, top_logprobs: k``); 0 asks for none. ``name`` labels the judge in results (default:
    the model)."""

    endpoint: str
    model: str
    api_key_env: str | None = None
    temperature: float = 0.7
    max_tokens: int | None = 16
    top_logprobs: int = 0
    timeout_s: float = 60.0
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.endpoint, str) or not re.match(r"^https?://", self.endpoint):
            raise UserError(f"judge endpoint must be an http(s) URL such as http://127.0.0.1:8080/v1, got {self.endpoint!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise UserError("a judge needs a model name")
        if self.api_key_env is not None and not _ENV_NAME.match(self.api_key_env):
            raise UserError("a judge's API key option takes the NAME of an environment variable, not the key itself")
        if not (isinstance(self.temperature, (int, float)) and math.isfinite(self.temperature)
                and 0.0 <= self.temperature <= 2.0):
            raise UserError(f"judge temperature must be in [0, 2], got {self.temperature!r}")
        if self.max_tokens is not None and not (isinstance(self.max_tokens, int) and self.max_tokens >= 1):
            raise UserError(f"judge max tokens must be a positive integer, got {self.max_tokens!r}")
        if not (isinstance(self.top_logprobs, int) and 0 <= self.top_logprobs <= 20):
            raise UserError(f"judge top_logprobs must be an integer in [0, 20], got {self.top_logprobs!r}")

    @property
    def label(self) -> str:
        return self.name or self.model

    def endpoint_config(self) -> Any:
        from relgate_tui.engine.transport.endpoints import EndpointConfig

        extra = {"top_logprobs": self.top_logprobs} if self.top_logprobs else {}
        return EndpointConfig(self.endpoint, self.model, api_key_env=self.api_key_env,
                              temperature=float(self.temperature), max_tokens=self.max_tokens,
                              logprobs=self.top_logprobs > 0, timeout_s=float(self.timeout_s), extra=extra)

    def to_json(self) -> dict[str, Any]:
        """Every setting (a stored audit's manifest and its id); the key itself is never part of it, nor are the
        credentials a URL may carry (userinfo, ``?api_key=``: :func:`~relgate_tui.core.redact.public_url`)."""
        from relgate_tui.core.redact import public_url

        return {"name": self.label, "endpoint": public_url(self.endpoint.rstrip("/")), "model": self.model,
                "api_key_env": self.api_key_env, "temperature": self.temperature, "max_tokens": self.max_tokens,
                "top_logprobs": self.top_logprobs, "timeout_s": self.timeout_s}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Judge:
        return cls(endpoint=d["endpoint"], model=d["model"], api_key_env=d.get("api_key_env"),
                   temperature=d.get("temperature", 0.7), max_tokens=d.get("max_tokens", 16),
                   top_logprobs=d.get("top_logprobs", 0), timeout_s=d.get("timeout_s", 60.0), name=d.get("name", ""))


@dataclass(frozen=True)
class Request:
    """One prompt, keyed by a tuple. ``messages``: the chat messages sent as they are."""

    key: Key
    messages: tuple[Mapping[str, str], ...]


@dataclass(frozen=True)
class Answer:
    """One repetition's answer. ``logprobs``: per generated token (token, log-prob, top alternatives) when the server
    returned them, else None. ``cached``: served from the request cache (no call)."""

    judge: str
    key: Key
    rep: int
    text: str
    logprobs: tuple[TokenLogprob, ...] | None = None
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class AskFailed:
    """A failed request. ``final``: no more retries — the request's remaining repetitions get no answer."""

    judge: str
    key: Key
    rep: int
    kind: str
    message: str
    final: bool
    attempt: int = 1


@dataclass(frozen=True)
class EndpointState:
    """The judge's endpoint went down (every request waits) or came back."""

    judge: str
    down: bool
    message: str


AskEvent = Answer | AskFailed | EndpointState


@dataclass
class AskCalls:
    """Calls of one or more ask passes: ``made`` requests answered (paid), ``cached`` answers from the cache or held,
    ``failed`` requests given up on, ``retries`` failed attempts retried."""

    made: int = 0
    cached: int = 0
    failed: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, totals: Any) -> None:
        for name in ("made", "cached", "failed", "retries", "prompt_tokens", "completion_tokens"):
            setattr(self, name, getattr(self, name) + getattr(totals, name))

    def to_json(self) -> dict[str, int]:
        return {"made": self.made, "cached": self.cached, "failed": self.failed}


def seed_id(key: Key) -> str:
    """The string a key's per-repetition seeds and cache fingerprints derive from (never parsed back)."""
    return json.dumps(list(key), ensure_ascii=False, separators=(",", ":"))


def _ok(text: str, choices: Sequence[str] = ()) -> str:
    return "answer"


async def ask(
    judge: Judge,
    requests: Sequence[Request],
    *,
    reps: int,
    seed: int = 0,
    cache: Any = None,
    concurrency: int = 8,
    max_down_s: float | None = 120.0,
    held: Mapping[Key, int] | None = None,
    calls: AskCalls | None = None,
    transport: Any = None,
    on_sampler: Callable[[Any], None] | None = None,
) -> AsyncIterator[AskEvent]:
    """Ask ``judge`` every request ``reps`` times; yields events as they happen (answers in completion order).

    ``held[key] = m``: repetitions 0..m−1 of that request are already held by the caller (a stored audit) and are
    not asked. ``calls`` (optional) is updated when the pass ends (also when it is cancelled). Raises
    :class:`~relgate_tui.errors.EndpointError` when the endpoint stays down longer than ``max_down_s``."""
    from relgate_tui.core.certification.stopping import get_stopping_rule
    from relgate_tui.engine.records import StoredSample, TaskItem
    from relgate_tui.engine.transport.sampler import (
        EndpointDown,
        EndpointUnreachable,
        EndpointUp,
        SampleDone,
        SampleFailed,
        Sampler,
        SamplingJob,
    )
    from relgate_tui.errors import EndpointError

    if not requests:
        return
    by_id: dict[str, Key] = {}  # the sampler's item id -> the request key (never parsed back)
    items, existing = [], {}
    for request in requests:
        sid = seed_id(request.key)
        if sid in by_id:
            raise ValueError(f"duplicate request key {request.key!r}")
        by_id[sid] = request.key
        items.append(TaskItem(sid, "", messages=tuple(dict(m) for m in request.messages)))
        m = min(int((held or {}).get(request.key, 0)), reps)
        if m:
            existing[sid] = [StoredSample(sid, i, "", "answer", {}, "") for i in range(m)]
    sampler = Sampler(judge.endpoint_config(), concurrency=concurrency, cache=cache, max_down_s=max_down_s,
                      transport=transport, discover_slots=True)
    if on_sampler is not None:
        on_sampler(sampler)
    job = SamplingJob(items, _ok, get_stopping_rule("none"), reps, seed=seed, existing=existing)
    name = judge.label
    try:
        async for event in sampler.run(job):
            if isinstance(event, SampleDone):
                usage = event.usage or {}
                yield Answer(name, by_id[event.item_id], event.index, event.text, event.logprobs, event.cached,
                             int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)))
            elif isinstance(event, SampleFailed):
                yield AskFailed(name, by_id[event.item_id], event.index, event.error_kind, event.message,
                                event.final, event.attempt)
            elif isinstance(event, EndpointDown):
                yield EndpointState(name, True, event.message)
            elif isinstance(event, EndpointUp):
                yield EndpointState(name, False, f"back after {event.down_seconds:.1f} s; resumed")
    except EndpointUnreachable as exc:
        raise EndpointError(f"judge {name}: {exc}") from None
    finally:
        if calls is not None:
            calls.add(sampler.totals)


def uncached(judge: Judge, requests: Sequence[Request], reps: int, seed: int, cache: Any) -> bool:
    """Would asking cost at least one call (some repetition of some request is not in ``cache``)?"""
    from relgate_tui.engine.transport.endpoints import request_fingerprint, sample_seed

    endpoint = judge.endpoint_config()
    for request in requests:
        sid = seed_id(request.key)
        for index in range(reps):
            if cache is None or cache.get(request_fingerprint(endpoint, [dict(m) for m in request.messages], index,
                                                              sample_seed(seed, sid, index))) is None:
                return True
    return False


async def check_reachable(judge: Judge, attempts: int = 3) -> None:
    """One cheap ``GET /models`` (retried ``attempts`` times with backoff) before paying for anything; raises
    :class:`~relgate_tui.errors.EndpointError` ("URL (what failed after N attempts); is the server running?")."""
    import asyncio

    import httpx

    from relgate_tui.core.redact import public_url
    from relgate_tui.engine.transport.httpread import status_of
    from relgate_tui.errors import EndpointError

    endpoint = judge.endpoint_config()
    url = endpoint.base_url.rstrip("/") + "/models"
    last = ""
    async with httpx.AsyncClient(trust_env=False, timeout=min(10.0, endpoint.timeout_s), verify=tls_context()) as client:
        for attempt in range(attempts):
            try:
                await status_of(client, url, endpoint.headers(), min(10.0, endpoint.timeout_s))  # body never read
                return
            except httpx.TimeoutException:
                last = "timed out"
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            if attempt + 1 < attempts:
                await asyncio.sleep(0.25 * 2**attempt)
    raise EndpointError(f"{public_url(endpoint.base_url)} ({last} after {attempts} attempts); is the server running?")
