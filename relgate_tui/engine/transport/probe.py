"""The pre-flight latency probe (issue 24 §2): what one call costs at a run's concurrency, measured with parallel
calls rather than divided by the concurrency — for the answers a run asks and, with the same method, for its judge's
verdicts (issue 31 item 8)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import httpx

from relgate_tui.engine.transport.endpoints import EndpointConfig, complete
from relgate_tui.engine.transport.tls import tls_context

__all__ = ["ProbeResult", "probe"]


class ProbeResult(NamedTuple):
    """``seconds``: wall seconds of the timed calls / their number (what one call costs at that concurrency);
    ``prompt_tokens`` / ``completion_tokens``: their means; ``answers``: each timed call's first answer, in order."""

    seconds: float
    prompt_tokens: float
    completion_tokens: float
    answers: tuple[str, ...]


async def probe(endpoint: EndpointConfig, prompts: Sequence[Sequence[Mapping[str, str]]], parallel: int = 1,
                calls: int | None = None, warm_up: bool = True) -> ProbeResult:
    """With ``warm_up``, one untimed request on the LAST prompt first; then ``calls`` (default ``parallel``) timed
    requests on the other prompts in turn, at most ``parallel`` at once, as a run at that concurrency sends them. A
    one-slot server answers them one after another, so it shows its full latency.

    The warm-up prompt is never timed (issue 31 item 8): a server with a prompt cache (llama.cpp) would answer it
    again faster than a run's fresh prompts, and one timed call of one prompt says little about the next — hence
    ``calls`` over several prompts."""
    if not prompts:
        raise ValueError("the latency probe needs at least one prompt")
    parallel = max(1, int(parallel))
    n_calls = max(1, int(calls if calls is not None else parallel))
    timed = (prompts[:-1] or prompts) if warm_up else prompts
    limits = httpx.Limits(max_connections=parallel, max_keepalive_connections=parallel)
    gate = asyncio.Semaphore(parallel)
    async with httpx.AsyncClient(trust_env=False, limits=limits, verify=tls_context()) as client:
        if warm_up:  # the connection, and a server's own first-request costs (loading the model), are paid once per
            await complete(client, endpoint, [dict(m) for m in prompts[-1]], seed=n_calls)  # run, not per call

        async def one(i: int) -> list:
            async with gate:
                return await complete(client, endpoint, [dict(m) for m in timed[i % len(timed)]], seed=i)

        started = time.perf_counter()
        batches = await asyncio.gather(*(one(i) for i in range(n_calls)))
        seconds = time.perf_counter() - started
    firsts = [b[0] for b in batches]
    return ProbeResult(seconds / n_calls, sum(c.prompt_tokens for c in firsts) / n_calls,
                       sum(c.completion_tokens for c in firsts) / n_calls, tuple(c.text for c in firsts))
