"""A pre-flight that tells the truth (issue 24 §2): the latency is measured at the run's concurrency with parallel
probe calls and the time estimate multiplies by it, never divides one call's latency by the concurrency (a one-slot
server answers in turn). How close the estimate comes to a real run's wall time is measured by
``bench/preflight_estimate.py`` (timing does not belong in a test)."""

from __future__ import annotations

import asyncio

import pytest

from relgate_tui.demo import DemoServer
from relgate_tui.engine.setup import (
    PROBE_MAX_PARALLEL,
    RunSetup,
    inspect_task,
    preflight,
    probe_latency,
    probe_parallelism,
)

TASK = "bigbench-3digit-addition"


@pytest.mark.parametrize("concurrency", [1, 8, 32])
def test_the_estimate_is_expected_calls_times_the_per_call_time_measured_at_that_concurrency(concurrency):
    setup = RunSetup(base_url="http://127.0.0.1:9/v1", model="m", task=TASK, limit=40, concurrency=concurrency)
    pf = preflight(setup, inspect_task(TASK), (0.5, 20.0, 5.0))
    assert pf.seconds == pytest.approx(pf.expected_calls * 0.5)  # no division by the concurrency
    assert probe_parallelism(setup) == min(concurrency, PROBE_MAX_PARALLEL)


def test_the_probe_sends_its_calls_at_once_and_a_one_slot_server_shows_its_full_latency():
    with DemoServer(latency_ms=40, slots=1) as server:
        setup = RunSetup(base_url=server.base_url, model="sim-mid", task=TASK, concurrency=4)
        per_call, prompt_tokens, completion_tokens = asyncio.run(probe_latency(setup))
        assert len(server.chat_requests) == 1 + 4  # a warm-up call, then one per slot of the run's concurrency
        assert len({r.body_sha256 for r in server.chat_requests}) == 5  # all different requests
    # four requests on one slot: each waits its turn, so one call costs at least the server's full latency
    # (a lower bound set by the server's own sleeps — dividing one call's latency by 4 would give ~10 ms)
    assert per_call >= 0.040 and prompt_tokens > 0 and completion_tokens > 0
