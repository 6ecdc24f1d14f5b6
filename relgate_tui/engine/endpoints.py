"""Model endpoints (SPEC §4.1): OpenAI-compatible chat completions and generic JSON-over-HTTP.

An :class:`EndpointConfig` says where and how to ask; :func:`complete` sends one request and returns its
completions or raises :class:`RequestFailed` with a classified ``kind`` that says whether a retry can help.
The API key is read from the environment variable *named* by ``api_key_env`` at request time and sent as a bearer
token: it is never a field of any object here, never part of a fingerprint, cache entry, log line or error message.

Request fingerprints (SPEC §4.4): SHA-256 of the canonical JSON of everything that determines the answer — URL,
model, messages, every sampling parameter, the generic template and response path, the per-sample seed and the
sample index.
"""

from __future__ import annotations

import email.utils
import functools
import hashlib
import json
import math
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from relgate_tui import __version__
from relgate_tui.engine.http11 import LeanHTTPTransport
from relgate_tui.engine.logprobs import TokenLogprob, parse_logprobs

EndpointKind = Literal["openai", "http"]

RETRYABLE_KINDS = frozenset({"timeout", "connection", "429", "5xx", "malformed", "empty"})
"""Failure kinds worth retrying. ``4xx`` (other than 429) is the request's own fault and is not retried."""


@dataclass(frozen=True)
class EndpointConfig:
    """Where and how to ask. ``base_url`` is e.g. ``http://127.0.0.1:8080/v1`` for ``openai`` (``/chat/completions``
    is appended) or the full URL to POST to for ``http``. ``request_template`` (http) is a JSON text in which
    ``{{question}}`` is replaced by the question (JSON-escaped, so put it inside quotes) and ``{{messages}}`` by the
    chat messages as a JSON array; ``response_path`` is a dotted path with list indices to the answer text, e.g.
    ``choices.0.message.content`` or ``data.answer``."""

    base_url: str
    model: str = ""
    kind: EndpointKind = "openai"
    api_key_env: str | None = None
    system: str | None = None
    temperature: float = 0.7
    max_tokens: int | None = None
    top_p: float | None = None
    logprobs: bool = False
    request_template: str | None = None
    response_path: str | None = None
    timeout_s: float = 60.0
    send_seed: bool = True
    extra: dict[str, Any] = field(default_factory=dict)  # further JSON body fields (openai)

    def __post_init__(self) -> None:
        if self.kind not in ("openai", "http"):
            raise ValueError(f"unknown endpoint kind {self.kind!r}: use openai or http")
        if not re.match(r"^https?://", self.base_url or ""):
            raise ValueError(f"endpoint URL must start with http:// or https://, got {self.base_url!r}")
        if self.kind == "http":
            if not self.request_template or not self.response_path:
                raise ValueError("a generic HTTP endpoint needs a request template and a response path")
            if "{{question}}" not in self.request_template and "{{messages}}" not in self.request_template:
                raise ValueError("the request template must contain {{question}} or {{messages}}")
            try:
                json.loads(_fill_template(self.request_template, "q", [{"role": "user", "content": "q"}]))
            except json.JSONDecodeError as exc:
                raise ValueError(f"the request template is not valid JSON once filled in: {exc.msg}") from None
        if not self.kind == "http" and not self.model:
            raise ValueError("an OpenAI-compatible endpoint needs a model name")
        if self.api_key_env is not None and not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", self.api_key_env):
            raise ValueError(f"--api-key-env must be an environment variable NAME, got {self.api_key_env!r}")

    @property
    def url(self) -> str:
        base = self.base_url.rstrip("/")
        return f"{base}/chat/completions" if self.kind == "openai" else self.base_url

    def api_key(self) -> str | None:
        """The key, read from the environment now (never stored)."""
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def headers(self) -> dict[str, str]:
        key = self.api_key()
        return {"Authorization": f"Bearer {key}"} if key else {}


@dataclass(frozen=True)
class Completion:
    """One answer: its text, the token usage of the request it came from (split evenly over ``n`` choices), the
    finish reason and, when the server returned them, the per-token log-probabilities (engine/logprobs.py)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None


class RequestFailed(Exception):
    """A request that did not produce a usable answer. ``kind``: timeout, connection, 429, 5xx, 4xx, malformed,
    empty. ``retry_after``: seconds the server asked us to wait (429/503), if any."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after
        self.status = status

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS


def sample_seed(run_seed: int, item_id: str, index: int) -> int:
    """A stable 31-bit seed per (run seed, item, sample index): reproducible samples, distinct across indices."""
    digest = hashlib.sha256(f"{run_seed}\x00{item_id}\x00{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def request_body(cfg: EndpointConfig, messages: Sequence[dict], seed: int | None, n: int = 1) -> dict[str, Any] | str:
    """The JSON body for ``messages`` (a dict for openai, the filled template text for http)."""
    msgs = _with_system(cfg, messages)
    if cfg.kind == "http":
        question = next((m["content"] for m in reversed(msgs) if m.get("role") == "user"), "")
        return _fill_template(cfg.request_template or "", question, msgs)
    body: dict[str, Any] = {"model": cfg.model, "messages": msgs, "temperature": cfg.temperature}
    if cfg.max_tokens is not None:
        body["max_tokens"] = cfg.max_tokens
    if cfg.top_p is not None:
        body["top_p"] = cfg.top_p
    if cfg.logprobs:
        body["logprobs"] = True
    if seed is not None and cfg.send_seed:
        body["seed"] = seed
    if n > 1:
        body["n"] = n
    body.update(cfg.extra)
    return body


def request_fingerprint(cfg: EndpointConfig, messages: Sequence[dict], sample_index: int, seed: int | None = None) -> str:
    """SHA-256 of the canonical request for sample ``sample_index`` (never the API key)."""
    material = {
        "v": 1,
        "kind": cfg.kind,
        "url": cfg.url,
        "model": cfg.model,
        "messages": _with_system(cfg, messages),
        "temperature": cfg.temperature,
        "max_tokens": cfg.max_tokens,
        "top_p": cfg.top_p,
        "logprobs": cfg.logprobs,
        "template": cfg.request_template,
        "response_path": cfg.response_path,
        "send_seed": cfg.send_seed,
        "seed": seed,
        "extra": cfg.extra,
        "sample_index": sample_index,
    }
    canonical = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


_USER_AGENT = f"relgate/{__version__}"


@functools.lru_cache(maxsize=64)
def _parsed_url(url: str) -> httpx.URL:
    """The endpoint URL parsed once (httpx would parse the string again on every request: ~7% of client CPU)."""
    return httpx.URL(url)


async def complete(
    client: httpx.AsyncClient, cfg: EndpointConfig, messages: Sequence[dict], *, seed: int | None = None, n: int = 1,
    lean: LeanHTTPTransport | None = None,
) -> list[Completion]:
    """Send one request; return its completions (≥ 1) or raise :class:`RequestFailed`. With ``lean`` (the client's
    own transport), plain-http requests skip httpx's Request/Response layer (bench/throughput.py)."""
    body = request_body(cfg, messages, seed, n)
    headers = cfg.headers()
    url = _parsed_url(cfg.url)
    try:
        if lean is not None and url.scheme == "http":
            payload = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode("utf-8")
            headers.update({"Content-Type": "application/json", "Accept": "application/json",
                            "User-Agent": _USER_AGENT, "Connection": "keep-alive"})
            status, response_headers, content = await lean.post(url, payload, headers, cfg.timeout_s)
            return parse_response(cfg, status, response_headers, content, n)
        if isinstance(body, str):
            headers["Content-Type"] = "application/json"
            response = await client.post(url, content=body.encode("utf-8"), headers=headers, timeout=cfg.timeout_s)
        else:
            response = await client.post(url, json=body, headers=headers, timeout=cfg.timeout_s)
    except httpx.TimeoutException:
        raise RequestFailed("timeout", f"no answer within {cfg.timeout_s:g} s") from None
    except httpx.TransportError as exc:
        raise RequestFailed("connection", f"connection failed: {type(exc).__name__}") from None
    return parse_response(cfg, response.status_code, response.headers, response.content, n)


def parse_response(cfg: EndpointConfig, status: int, headers: Any, content: bytes, n: int = 1) -> list[Completion]:
    """Classify an HTTP response: completions, or :class:`RequestFailed`."""
    if status == 429:
        raise RequestFailed("429", "rate limited (HTTP 429)", parse_retry_after(headers.get("retry-after")), status)
    if status >= 500:
        raise RequestFailed("5xx", f"server error (HTTP {status})", parse_retry_after(headers.get("retry-after")), status)
    if status >= 400:
        raise RequestFailed("4xx", f"request rejected (HTTP {status}): {_error_message(content)}", None, status)
    try:
        data = json.loads(content)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise RequestFailed("malformed", "the response is not valid JSON", None, status) from None
    if cfg.kind == "http":
        text = _at_path(data, cfg.response_path or "")
        if text is None:
            raise RequestFailed("malformed", f"nothing at response path {cfg.response_path!r}", None, status)
        return [Completion(text if isinstance(text, str) else json.dumps(text))]
    if not isinstance(data, dict):
        raise RequestFailed("malformed", "the response is not a JSON object", None, status)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise RequestFailed("empty", "the response has no choices", None, status)
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    prompt = _int(usage.get("prompt_tokens"))
    completion = _int(usage.get("completion_tokens"))
    out = []
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        text = message.get("content") if isinstance(message, dict) else None
        if text is None and isinstance(choice, dict) and isinstance(choice.get("text"), str):
            text = choice["text"]  # legacy completions shape
        if not isinstance(text, str):
            raise RequestFailed("malformed", "a choice has no message content", None, status)
        out.append(Completion(text, prompt if not out else 0, completion // len(choices), choice.get("finish_reason"),
                              parse_logprobs(choice.get("logprobs"))))
    return out


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date (RFC 9110 §10.2.3). None if absent/unusable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
        return max(0.0, seconds) if math.isfinite(seconds) else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _with_system(cfg: EndpointConfig, messages: Sequence[dict]) -> list[dict]:
    msgs = [dict(m) for m in messages]
    if cfg.system and (not msgs or msgs[0].get("role") != "system"):
        msgs.insert(0, {"role": "system", "content": cfg.system})
    return msgs


def _fill_template(template: str, question: str, messages: Sequence[dict]) -> str:
    return template.replace("{{question}}", json.dumps(question, ensure_ascii=False)[1:-1]).replace(
        "{{messages}}", json.dumps(list(messages), ensure_ascii=False)
    )


def _at_path(data: Any, path: str) -> Any:
    for part in [p for p in path.split(".") if p]:
        if isinstance(data, list):
            try:
                data = data[int(part)]
            except (ValueError, IndexError):
                return None
        elif isinstance(data, dict):
            if part not in data:
                return None
            data = data[part]
        else:
            return None
    return data


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else 0


def _error_message(content: bytes) -> str:
    try:
        data = json.loads(content)
        err = data.get("error") if isinstance(data, dict) else None
        message = err.get("message") if isinstance(err, dict) else err
        if isinstance(message, str) and message:
            return message.splitlines()[0][:200]
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        pass
    return content[:120].decode("utf-8", "replace").splitlines()[0] if content.strip() else "no details"
