"""Finding model servers on this machine (SPEC §4.2): probe loopback for the usual local servers' ports and list
their models with ``GET /v1/models``. Nothing leaves 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from relgate_tui.core.redact import public_url
from relgate_tui.core.text import one_line
from relgate_tui.engine.transport.endpoints import EndpointConfig
from relgate_tui.engine.transport.httpread import BodyTooLarge, get_bounded, get_bounded_sync
from relgate_tui.engine.transport.tls import tls_context

LOCAL_SERVERS: Mapping[str, int] = {"Ollama": 11434, "llama.cpp": 8080, "LM Studio": 1234, "vLLM": 8000}


@dataclass(frozen=True)
class DiscoveredServer:
    """A server that answered on loopback: its name (by port), base URL (``…/v1``), models, and an error when it
    answered but could not list models."""

    name: str
    base_url: str
    models: tuple[str, ...]
    error: str = ""


async def _probe(client: httpx.AsyncClient, name: str, port: int, timeout_s: float) -> DiscoveredServer | None:
    base = f"http://127.0.0.1:{port}/v1"
    try:
        status, body = await get_bounded(client, f"{base}/models", None, timeout_s)
    except BodyTooLarge:
        return DiscoveredServer(name, base, (), "GET /v1/models answered with an oversized body")
    except httpx.HTTPError:
        return None  # nothing listening (or not HTTP): not a server
    models = _model_ids(body)
    if status >= 300:
        return DiscoveredServer(name, base, (), f"GET /v1/models answered HTTP {status}")
    if models is None:
        return DiscoveredServer(name, base, (), f"GET /v1/models answered HTTP {status} without a model list")
    return DiscoveredServer(name, base, models)


def _model_ids(body: bytes) -> tuple[str, ...] | None:
    """The ``data[].id`` of a model list (control characters stripped, at most 1,000 ids of 200 characters), or
    None when the body is not one."""
    try:
        data = json.loads(body)
        entries = data.get("data", [])
        if not isinstance(entries, list):
            return None
        return tuple(one_line(str(m["id"]), 200) for m in entries[:1000] if isinstance(m, dict) and "id" in m)
    except (ValueError, RecursionError, AttributeError, TypeError):
        return None


async def discover_local_servers(
    timeout: float = 0.3,  # noqa: ASYNC109 - a public keyword argument kept for callers
    ports: Mapping[str, int] | None = None
) -> list[DiscoveredServer]:
    """Servers answering on the given loopback ports (default :data:`LOCAL_SERVERS`), probed concurrently."""
    ports = LOCAL_SERVERS if ports is None else ports
    async with httpx.AsyncClient(trust_env=False, verify=tls_context()) as client:
        found = await asyncio.gather(*(_probe(client, name, port, timeout) for name, port in ports.items()))
    return [s for s in found if s is not None]


def discover(timeout: float = 0.3, ports: Mapping[str, int] | None = None) -> list[DiscoveredServer]:
    """Blocking :func:`discover_local_servers` (safe to call from a worker thread)."""
    return asyncio.run(discover_local_servers(timeout, ports))


def list_models(base_url: str, api_key_env: str | None = None, timeout: float = 5.0) -> list[str]:
    """Model ids from ``GET {base_url}/models``; raises ``ValueError`` (one line) when the server cannot say."""
    headers = EndpointConfig(base_url, "probe", api_key_env=api_key_env).headers()
    shown = public_url(base_url)
    try:
        with httpx.Client(trust_env=False, verify=tls_context()) as client:
            status, body = get_bounded_sync(client, base_url.rstrip("/") + "/models", headers, timeout)
    except BodyTooLarge:
        raise ValueError(f"{shown}: GET /models answered with an oversized body") from None
    except httpx.HTTPError as exc:
        raise ValueError(f"{shown}: cannot connect ({type(exc).__name__})") from None
    if status >= 300:
        raise ValueError(f"{shown}: GET /models answered HTTP {status}")
    models = _model_ids(body)
    if models is None:
        raise ValueError(f"{shown}: GET /models did not return a model list")
    return list(models)
