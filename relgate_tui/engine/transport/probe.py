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


async def probe(endpoint: EndpointConfig, items: Sequence[TaskItem], parallel: int = 1) -> tuple[float, float, float]:
    """One warm-up request, then ``parallel`` real requests at once (``items`` in turn; uncached), as a run at that
    concurrency sends them: (wall seconds of the batch / ``parallel`` — the time one call costs at that concurrency,
    so a one-slot server that answers them one after another shows its full latency —, mean prompt tokens, mean
    completion tokens)."""
    if not items:
        raise ValueError("the latency probe needs at least one task item")
    parallel = max(1, int(parallel))
    limits = httpx.Limits(max_connections=parallel, max_keepalive_connections=parallel)
    async with httpx.AsyncClient(trust_env=False, limits=limits, verify=tls_context()) as client:
        # one untimed call first: the connection, and a server's own first-request costs (loading the model), are
        # paid once per run, not per call
        await complete(client, endpoint, item_messages(items[0]), seed=parallel)
        started = time.perf_counter()
        batches = await asyncio.gather(*(complete(client, endpoint, item_messages(items[i % len(items)]), seed=i)
                                         for i in range(parallel)))
        seconds = time.perf_counter() - started
    firsts = [b[0] for b in batches]
    return (seconds / parallel, sum(c.prompt_tokens for c in firsts) / parallel,
            sum(c.completion_tokens for c in firsts) / parallel)
