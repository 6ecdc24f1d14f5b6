"""Finding model servers on this machine (SPEC §4.2): probe loopback for the usual local servers' ports and list
their models with ``GET /v1/models``. Nothing leaves 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from relgate_tui.engine.endpoints import EndpointConfig

LOCAL_SERVERS: Mapping[str, int] = {"Ollama": 11434, "llama.cpp": 8080, "LM Studio": 1234, "vLLM": 8000}


@dataclass(frozen=True)
class DiscoveredServer:
    """A server that answered on loopback: its name (by port), base URL (``…/v1``), models, and an error when it
    answered but could not list models."""

    name: str
    base_url: str
    models: tuple[str, ...]
    error: str = ""


async def _probe(client: httpx.AsyncClient, name: str, port: int, timeout: float) -> DiscoveredServer | None:
    base = f"http://127.0.0.1:{port}/v1"
    try:
        response = await client.get(f"{base}/models", timeout=timeout)
    except httpx.HTTPError:
        return None  # nothing listening (or not HTTP): not a server
    try:
        data = response.json()
        models = tuple(str(m["id"]) for m in data.get("data", []) if isinstance(m, dict) and "id" in m)
    except (ValueError, AttributeError, TypeError):
        return DiscoveredServer(name, base, (), f"GET /v1/models answered HTTP {response.status_code} without a model list")
    if response.status_code >= 400:
        return DiscoveredServer(name, base, (), f"GET /v1/models answered HTTP {response.status_code}")
    return DiscoveredServer(name, base, models)


async def discover_local_servers(
    timeout: float = 0.3, ports: Mapping[str, int] | None = None
) -> list[DiscoveredServer]:
    """Servers answering on the given loopback ports (default :data:`LOCAL_SERVERS`), probed concurrently."""
    ports = LOCAL_SERVERS if ports is None else ports
    async with httpx.AsyncClient(trust_env=False) as client:
        found = await asyncio.gather(*(_probe(client, name, port, timeout) for name, port in ports.items()))
    return [s for s in found if s is not None]


def discover(timeout: float = 0.3, ports: Mapping[str, int] | None = None) -> list[DiscoveredServer]:
    """Blocking :func:`discover_local_servers` (safe to call from a worker thread)."""
    return asyncio.run(discover_local_servers(timeout, ports))


def list_models(base_url: str, api_key_env: str | None = None, timeout: float = 5.0) -> list[str]:
    """Model ids from ``GET {base_url}/models``; raises ``ValueError`` (one line) when the server cannot say."""
    headers = EndpointConfig(base_url, "probe", api_key_env=api_key_env).headers()
    try:
        response = httpx.get(base_url.rstrip("/") + "/models", headers=headers, timeout=timeout, trust_env=False)
    except httpx.HTTPError as exc:
        raise ValueError(f"{base_url}: cannot connect ({type(exc).__name__})") from None
    if response.status_code >= 400:
        raise ValueError(f"{base_url}: GET /models answered HTTP {response.status_code}")
    try:
        return [str(m["id"]) for m in response.json().get("data", []) if isinstance(m, dict) and "id" in m]
    except (ValueError, AttributeError, TypeError):
        raise ValueError(f"{base_url}: GET /models did not return a model list") from None
