"""The latency probe starts at concurrency 1 and falls back to it by itself: one call on its own first (after the
warm-up), then the run's concurrency within a deadline; a server that does not answer that batch in time (a
one-slot llama.cpp, slow) keeps the concurrency-1 figure, and the pre-flight says so instead of "no answer within
60 s". Real requests to the demo server over loopback; the deadline is beaten by the server's own sleeps (four
300 ms answers on one slot take 1.2 s at least), never by a race."""

from __future__ import annotations

import asyncio

from relgate_tui.demo import DemoServer
from relgate_tui.engine.certification.setup import Latency, RunSetup, inspect_task, preflight, probe_latency
from relgate_tui.tui.preflight_text import preflight_text

TASK = "bigbench-3digit-addition"


def test_one_call_on_its_own_comes_before_the_parallel_ones(monkeypatch) -> None:
    from relgate_tui.engine.transport import probe as probe_module

    events: list[str] = []
    real = probe_module.complete

    async def recording(client, cfg, messages, **kw):
        events.append("start")
        try:
            return await real(client, cfg, messages, **kw)
        finally:
            events.append("end")

    monkeypatch.setattr(probe_module, "complete", recording)
    with DemoServer(latency_ms=5, slots=4) as server:
        lat = asyncio.run(probe_latency(RunSetup(base_url=server.base_url, model="sim-mid", task=TASK,
                                                 concurrency=4)))
    # the warm-up, then the first timed call alone (each ends before the next starts), then four at once
    assert events[:4] == ["start", "end", "start", "end"]
    assert events[4:8] == ["start"] * 4
    assert lat.parallel == 4 and lat.note == ""


def test_a_batch_not_answered_in_time_falls_back_to_one_at_a_time() -> None:
    with DemoServer(latency_ms=300, slots=1) as server:
        setup = RunSetup(base_url=server.base_url, model="sim-mid", task=TASK, concurrency=4, limit=40)
        lat = asyncio.run(probe_latency(setup, deadline_s=0.5))
    assert isinstance(lat, Latency)
    assert lat.parallel == 1 and lat.seconds >= 0.3  # the call on its own: the server's full latency
    assert "4 requests at once were not all answered within 0.5 s" in lat.note
    assert "measured one at a time" in lat.note and "concurrency 4" in lat.note
    pf = preflight(setup, inspect_task(TASK), lat)
    assert pf.seconds is not None and pf.seconds >= pf.expected_calls * 0.3  # one at a time: no division
    text = str(preflight_text(pf, setup, lat, 4, ""))
    assert "measured with 1 at once" in text and "measured one at a time" in text
