"""The pre-flight latency probe (issue 24 §2): what one call costs at a run's concurrency, measured with parallel
calls rather than divided by the concurrency."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import httpx

from relgate_tui.engine.records import TaskItem
from relgate_tui.engine.transport.endpoints import EndpointConfig, complete
from relgate_tui.engine.transport.prompts import item_messages
from relgate_tui.engine.transport.tls import tls_context

__all__ = ["probe"]


async def probe(endpoint: EndpointConfig, items: Sequence[TaskItem], parallel: int = 1,
                calls: int | None = None) -> tuple[float, float, float]:
    """One warm-up request on the LAST item, then ``calls`` (default ``parallel``) timed requests on the other items
    in turn, at most ``parallel`` at once, as a run at that concurrency sends them: (wall seconds of the timed calls
    / ``calls`` — the time one call costs at that concurrency, so a one-slot server that answers them one after
    another shows its full latency —, mean prompt tokens, mean completion tokens).

    The warm-up item is never timed (issue 31 item 8): a server with a prompt cache (llama.cpp) would answer the
    warm-up's own prompt again faster than a run's fresh prompts, and one timed call of one item says little about
    the next — hence ``calls`` over several items."""
    if not items:
        raise ValueError("the latency probe needs at least one task item")
    parallel = max(1, int(parallel))
    n_calls = max(1, int(calls if calls is not None else parallel))
    timed = items[:-1] or items
    limits = httpx.Limits(max_connections=parallel, max_keepalive_connections=parallel)
    gate = asyncio.Semaphore(parallel)
    async with httpx.AsyncClient(trust_env=False, limits=limits, verify=tls_context()) as client:
        # one untimed call first: the connection, and a server's own first-request costs (loading the model), are
        # paid once per run, not per call
        await complete(client, endpoint, item_messages(items[-1]), seed=n_calls)

        async def one(i: int) -> list:
            async with gate:
                return await complete(client, endpoint, item_messages(timed[i % len(timed)]), seed=i)

        started = time.perf_counter()
        batches = await asyncio.gather(*(one(i) for i in range(n_calls)))
        seconds = time.perf_counter() - started
    firsts = [b[0] for b in batches]
    return (seconds / n_calls, sum(c.prompt_tokens for c in firsts) / n_calls,
            sum(c.completion_tokens for c in firsts) / n_calls)
