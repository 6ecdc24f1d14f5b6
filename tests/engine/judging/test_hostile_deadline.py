"""Issue 29 N9: one total deadline per request. A judge that sends one byte every few hundredths of a second (a
trickle that never completes: every socket read gets data long before any per-read timeout) used to hang the
verification judge's reachability check — and with it ``certify`` — forever. Each exchange now ends at its timeout
as a counted failure.

The server trickles forever (it never finishes a response), so a pass cannot be luck: without a total deadline the
call never returns and the outer ``wait_for`` (minutes, far beyond any deadline here) fails the test."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from relgate_tui.engine.judging import AskCalls, AskFailed, Judge, Request, ask
from relgate_tui.engine.judging.certify_judge import JudgeCertifyError
from relgate_tui.engine.judging.verify_judge import VerifyJudgeConfig, ask_verify_judge_async
from relgate_tui.engine.records import TaskItem
from relgate_tui.engine.transport.httpread import get_bounded, get_bounded_sync, status_of, status_of_sync
from tests.engine.hostile import OK, TRICKLE, HostileServer

NEVER = 300.0  # the outer bound that turns a hang into a failure; no deadline below comes near it
pytestmark = pytest.mark.usefixtures("no_backoff")  # what is tested is that each failure is counted


def _run(coro):
    return asyncio.run(asyncio.wait_for(coro, NEVER))


def test_a_trickling_verification_judge_is_refused_not_waited_for() -> None:
    with HostileServer(default=TRICKLE) as srv:
        cfg = VerifyJudgeConfig(srv.base_url, "judge", timeout_s=0.3, concurrency=1, max_down_s=1.0)
        with pytest.raises(JudgeCertifyError, match="timed out"):
            _run(ask_verify_judge_async([TaskItem("a", "q?")], {"a": "42"}, cfg))
        assert srv.trickling.is_set()


def test_trickled_verdicts_are_counted_failures() -> None:
    with HostileServer(script=[OK], default=TRICKLE) as srv:  # GET /models answers; every verdict trickles
        cfg = VerifyJudgeConfig(srv.base_url, "judge", timeout_s=0.3, concurrency=1, max_down_s=1.0)
        verdicts, calls = _run(ask_verify_judge_async([TaskItem("a", "q?")], {"a": "42"}, cfg))
        assert verdicts["a"].status == "failed" and verdicts["a"].f == 0
        assert calls.failed == 1 and calls.made == 0


@pytest.mark.parametrize("injected", [False, True])
def test_every_sampler_request_has_a_total_deadline(injected: bool) -> None:
    """The lean http transport and the httpx path (https endpoints, an injected transport) alike."""
    async def go() -> list[AskFailed]:
        judge = Judge(srv.base_url, "judge", timeout_s=0.3)
        calls = AskCalls()
        out = []
        transport = httpx.AsyncHTTPTransport() if injected else None
        async for event in ask(judge, [Request(("k",), ({"role": "user", "content": "hi"},))], reps=1,
                               concurrency=1, max_down_s=None, calls=calls, transport=transport):
            if isinstance(event, AskFailed):
                out.append(event)
                if event.final:
                    break
        return out

    with HostileServer(default=TRICKLE) as srv:
        failures = _run(go())
    assert failures and all(f.kind == "timeout" for f in failures) and failures[-1].final


def test_probes_and_listings_have_a_total_deadline() -> None:
    async def go() -> None:
        async with httpx.AsyncClient(trust_env=False) as client:
            with pytest.raises(httpx.ReadTimeout):
                await status_of(client, srv.base_url + "/models", None, 0.2)
            with pytest.raises(httpx.ReadTimeout):
                await get_bounded(client, srv.base_url + "/models", None, 0.2)

    with HostileServer(default=TRICKLE) as srv:
        _run(go())
        for call in (status_of_sync, get_bounded_sync):
            with httpx.Client(trust_env=False) as client, pytest.raises(httpx.ReadTimeout):
                call(client, srv.base_url + "/models", None, 0.2)
