"""llama-cpp-python's server (issue 23 §9, found on the real server): it has no ``/props`` and serves one request at a
time behind one lock; relgate recognises it by the title of its OpenAPI document and starts at one request in flight,
so eight queued requests never wait past the timeout. Servers that say nothing keep the default start; a server
that does not answer ``/props`` at all is asked nothing more. Loopback servers, real sockets."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from relgate_tui.engine.transport.concurrency import START, AdaptiveLimit, advertised_slots
from tests.engine.hostile import HANG, HostileServer, response


def _server(routes: dict[str, tuple[int, bytes]], *, hang_first: bool = False) -> HostileServer:
    """Answers GET <path> from ``routes`` (else 404, as FastAPI); ``hang_first``: the first request is never
    answered."""
    def route(head: bytes) -> bytes:
        path = head.split(b"\r\n", 1)[0].split(b" ")[1].decode()
        status, body = routes.get(path, (404, b'{"detail": "Not Found"}'))
        return response(status, body, ["Content-Type: application/json"])

    return HostileServer(script=[HANG] if hang_first else [], default=route)


def _asked(server: HostileServer) -> list[str]:
    return [h.split(b"\r\n", 1)[0].split(b" ")[1].decode() for h in server.heads]


def _slots(server: HostileServer) -> int | None:
    async def go() -> int | None:
        async with httpx.AsyncClient(trust_env=False) as client:
            return await advertised_slots(client, server.base_url, {})

    return asyncio.run(go())


def _openapi(title: str) -> tuple[int, bytes]:
    return 200, json.dumps({"openapi": "3.1.0", "info": {"title": title, "version": "0.3.36"}, "paths": {}}).encode()


def test_llama_cpp_python_is_one_slot() -> None:
    with _server({"/openapi.json": _openapi("🦙 llama.cpp Python API")}) as server:
        assert _slots(server) == 1
    assert _asked(server) == ["/props", "/openapi.json"]
    limit = AdaptiveLimit(8, 1)
    assert limit.allowed == 1 and limit.maximum == 1


@pytest.mark.parametrize("routes", [
    {"/openapi.json": _openapi("vLLM API")},                          # another FastAPI server
    {},                                                               # no OpenAPI document (Ollama, a cloud API)
    {"/openapi.json": (200, b"not json")},
    {"/openapi.json": (200, b'{"info": "llama.cpp Python API"}')},    # the title not where it belongs
    {"/openapi.json": (200, b" " * (70 * 1024) + b"{}")},             # too large to read
], ids=["vllm", "none", "not-json", "misplaced", "too-large"])
def test_other_servers_keep_the_default_start(routes: dict[str, tuple[int, bytes]]) -> None:
    with _server(routes) as server:
        assert _slots(server) is None
    assert AdaptiveLimit(8, None).allowed == START


def test_llama_cpp_props_win_and_nothing_more_is_asked() -> None:
    with _server({"/props": (200, b'{"total_slots": 3}')}) as server:
        assert _slots(server) == 3
    assert _asked(server) == ["/props"]


def test_a_server_that_does_not_answer_props_is_asked_nothing_more(monkeypatch: pytest.MonkeyPatch) -> None:
    from relgate_tui.engine.transport import concurrency

    monkeypatch.setattr(concurrency, "PROPS_TIMEOUT_S", 0.3)  # the wait is not the point: what is asked after it
    with _server({"/openapi.json": _openapi("llama.cpp Python API")}, hang_first=True) as server:
        assert _slots(server) is None  # after the timeout; the OpenAPI document is not asked for
        assert _asked(server) == ["/props"]
