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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from relgate_tui import __version__
from relgate_tui.core.redact import public_url, redact
from relgate_tui.core.text import one_line
from relgate_tui.engine.transport.http11 import MAX_RESPONSE_BYTES, LeanHTTPTransport, ResponseTooLarge
from relgate_tui.engine.transport.httpread import BodyTooLarge, inflate
from relgate_tui.engine.transport.logprobs import TokenLogprob, parse_logprobs

EndpointKind = Literal["openai", "http"]

RETRYABLE_KINDS = frozenset({"timeout", "connection", "429", "5xx", "malformed", "empty"})
"""Failure kinds worth retrying. ``4xx`` (other than 429) is the request's own fault and ``3xx`` (a redirect, or any
other non-2xx status) a wrong URL: neither is retried."""

MAX_ANSWER_CHARS = 1_000_000
"""Longest answer stored (run directory and cache); a longer one is a ``malformed`` failure, never truncated."""


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
        if self.api_key_env:
            _KEY_VARIABLES.add(self.api_key_env)  # so that errors and answers can be redacted of its value
        key = self.api_key()
        return {"Authorization": f"Bearer {key}"} if key else {}


@dataclass(frozen=True)
class Completion:
    """One answer: its text, the token usage of the request it came from (split evenly over ``n`` choices), the
    finish reason and, when the server returned them, the per-token log-probabilities (engine/transport/logprobs.py)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None


class RequestFailed(Exception):
    """A request that did not produce a usable answer. ``kind``: timeout, connection, 429, 5xx, 4xx, 3xx, malformed,
    empty. ``retry_after``: seconds the server asked us to wait (429/503), if any. The message is redacted (no API key,
    bearer token or authorization header value) and one line."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None, status: int | None = None):
        super().__init__(one_line(redact(message, _known_secrets()), 300))
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
    canonical = json.dumps(_material(cfg, messages, sample_index, seed), sort_keys=True, ensure_ascii=False,
                           separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


_INDEX_MARK, _SEED_MARK = -918273645546372819, -192837465564738291


def fingerprinter(cfg: EndpointConfig, messages: Sequence[dict]) -> Callable[[int, int | None], str]:
    """``(sample_index, seed) -> request_fingerprint(cfg, messages, sample_index, seed)``, with the canonical JSON
    of everything else built once: the same digests, without re-serialising the messages for every sample (a sixth
    of the client's CPU per call on loopback, ``bench/throughput.py``)."""
    canonical = json.dumps(_material(cfg, messages, _INDEX_MARK, _SEED_MARK), sort_keys=True, ensure_ascii=False,
                           separators=(",", ":"))
    index_mark, seed_mark = f":{_INDEX_MARK},", f":{_SEED_MARK},"
    if canonical.count(str(_INDEX_MARK)) != 1 or canonical.count(str(_SEED_MARK)) != 1 or \
            canonical.count(index_mark) != 1 or canonical.count(seed_mark) != 1 or \
            canonical.index(index_mark) > canonical.index(seed_mark):  # the marks must be the two fields: else slow
        return lambda index, seed: request_fingerprint(cfg, messages, index, seed)
    head, rest = canonical.split(index_mark)
    middle, tail = rest.split(seed_mark)

    def fingerprint(index: int, seed: int | None) -> str:
        text = f"{head}:{int(index)},{middle}:{'null' if seed is None else int(seed)},{tail}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    return fingerprint


def body_encoder(cfg: EndpointConfig, messages: Sequence[dict]) -> Callable[[int | None, int], bytes]:
    """``(seed, n) -> `` the UTF-8 JSON body :func:`complete` sends, with the JSON of everything but the seed built
    once (the same bytes as encoding :func:`request_body` each time)."""

    def full(seed: int | None, n: int) -> bytes:
        body = request_body(cfg, messages, seed, n)
        return body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode("utf-8")

    if cfg.kind != "openai" or not cfg.send_seed:
        return full
    text = json.dumps(request_body(cfg, messages, _SEED_MARK, 1))
    mark = f'"seed": {_SEED_MARK}'
    if text.count(str(_SEED_MARK)) != 1 or text.count(mark) != 1:
        return full
    head, tail = (part.encode("utf-8") for part in text.split(mark))

    def encode(seed: int | None, n: int) -> bytes:
        if n != 1 or seed is None:
            return full(seed, n)
        return b'%s"seed": %d%s' % (head, int(seed), tail)

    return encode


SIMULATED_SERVER = "relgate-simulated"
"""What relgate's demo server reports as its models' ``owned_by`` — and the request cache's key for them."""
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def cache_server(cfg: EndpointConfig) -> str:
    """Who answers, as the request cache keys it (issue 31 item 10): the endpoint URL — except for relgate's own
    simulated models (a ``sim-*`` model on a loopback address: the embedded demo on port 47820, ``relgate
    demo-server --port 0``, a test's server), whose answers are a pure function of model, messages and seed
    whichever port the demo listens on: they share one key, :data:`SIMULATED_SERVER`, so the TUI's demo and a
    demo-server never pay twice for the same samples. A real server keeps its URL: two local servers may serve
    different weights under one model name, and the key must be known offline (a rerun from the cache makes no call),
    so it cannot wait for the server to report its identity."""
    if cfg.model.startswith("sim-"):
        host = _parsed_url(cfg.url).host if cfg.url.startswith(("http://", "https://")) else ""
        if host in _LOOPBACK:
            return SIMULATED_SERVER
    return cfg.url


def _material(cfg: EndpointConfig, messages: Sequence[dict], sample_index: int, seed: int | None) -> dict[str, Any]:
    return {
        "v": 1,
        "kind": cfg.kind,
        "url": cache_server(cfg),
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


_USER_AGENT = f"relgate/{__version__}"


@functools.lru_cache(maxsize=64)
def _parsed_url(url: str) -> httpx.URL:
    """The endpoint URL parsed once (httpx would parse the string again on every request: ~7% of client CPU)."""
    return httpx.URL(url)


async def complete(
    client: httpx.AsyncClient, cfg: EndpointConfig, messages: Sequence[dict], *, seed: int | None = None, n: int = 1,
    lean: LeanHTTPTransport | None = None, payload: bytes | None = None,
) -> list[Completion]:
    """Send one request; return its completions (≥ 1) or raise :class:`RequestFailed`. With ``lean`` (the client's
    own transport), plain-http requests skip httpx's Request/Response layer (bench/throughput.py). ``payload``: the
    body already encoded (:func:`body_encoder`), else it is built here."""
    headers = cfg.headers()
    url = _parsed_url(cfg.url)
    if payload is None:
        body = request_body(cfg, messages, seed, n)
        payload = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode("utf-8")
    response_headers: Any
    try:
        if lean is not None and url.scheme == "http":
            headers.update({"Content-Type": "application/json", "Accept": "application/json",
                            "User-Agent": _USER_AGENT, "Connection": "keep-alive"})
            status, response_headers, content = await lean.post(url, payload, headers, cfg.timeout_s)
        else:
            headers["Content-Type"] = "application/json"
            status, response_headers, content = await _post_bounded(client, url, payload, headers, cfg.timeout_s)
    except httpx.TimeoutException:
        raise RequestFailed("timeout", f"no answer within {cfg.timeout_s:g} s") from None
    except (ResponseTooLarge, BodyTooLarge) as exc:
        raise RequestFailed("malformed", str(exc)) from None
    except httpx.DecodingError as exc:
        raise RequestFailed("malformed", f"undecodable response body: {exc}") from None
    except httpx.TransportError as exc:
        raise RequestFailed("connection", f"connection failed: {type(exc).__name__}{_reason(exc)}") from None
    return parse_response(cfg, status, response_headers, content, n)


async def _post_bounded(client: httpx.AsyncClient, url: httpx.URL, content: bytes, headers: dict[str, str],
                        timeout_s: float) -> tuple[int, httpx.Headers, bytes]:
    """POST through httpx (https, or an injected transport), reading at most :data:`MAX_RESPONSE_BYTES` raw and
    inflated (a gzip bomb or an endless body is a ``malformed`` failure, not a full memory)."""
    from relgate_tui.engine.transport.httpread import deadline

    headers = {**headers, "Accept-Encoding": "gzip, deflate"}
    async with deadline(timeout_s), client.stream("POST", url, content=content, headers=headers,
                                                  timeout=timeout_s) as response:
        parts, total = [], 0
        async for chunk in response.aiter_raw():
            total += len(chunk)
            if total > MAX_RESPONSE_BYTES:
                raise BodyTooLarge(f"response body over the {MAX_RESPONSE_BYTES:,}-byte cap")
            parts.append(chunk)
        raw = b"".join(parts)
        body = inflate(raw, response.headers.get("content-encoding", ""), MAX_RESPONSE_BYTES)
        return response.status_code, response.headers, body


def _reason(exc: Exception) -> str:
    text = str(exc)
    return f" ({text})" if text else ""


def parse_response(cfg: EndpointConfig, status: int, headers: Any, content: bytes, n: int = 1) -> list[Completion]:
    """Classify an HTTP response: completions, or :class:`RequestFailed`. Only a 2xx status is an answer; every
    malformed body (invalid or too deeply nested JSON, an integer of thousands of digits, a lone surrogate, an answer
    over :data:`MAX_ANSWER_CHARS`) is a ``malformed`` failure, so nothing unpersistable reaches the cache or the run."""
    if status == 429:
        raise RequestFailed("429", "rate limited (HTTP 429)", parse_retry_after(headers.get("retry-after")), status)
    if status >= 500:
        raise RequestFailed("5xx", f"server error (HTTP {status})", parse_retry_after(headers.get("retry-after")), status)
    if status >= 400:
        raise RequestFailed("4xx", f"request rejected (HTTP {status}): {_error_message(content)}", None, status)
    if not 200 <= status < 300:
        where = headers.get("location")
        to = f" to {public_url(where)[:120]}" if isinstance(where, str) and where else ""
        raise RequestFailed("3xx", f"HTTP {status}{to} is not an answer (check the endpoint URL)", None, status)
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):  # invalid JSON or UTF-8, 4,300+ digit integers, nesting deeper than ~1000
        raise RequestFailed("malformed", "the response is not valid JSON", None, status) from None
    return parse_data(cfg, status, data)


def parse_data(cfg: EndpointConfig, status: int, data: Any) -> list[Completion]:
    """The completions of a 2xx response's body already parsed from JSON (:func:`parse_response`'s second half; a
    Batch API output line holds the body parsed)."""
    if cfg.kind == "http":
        text = _at_path(data, cfg.response_path or "")
        if text is None:
            raise RequestFailed("malformed", f"nothing at response path {cfg.response_path!r}", None, status)
        if not isinstance(text, str):
            try:
                text = json.dumps(text)
            except (ValueError, RecursionError):
                raise RequestFailed("malformed", "the answer is not serialisable", None, status) from None
        return [Completion(_storable(text, status))]
    if not isinstance(data, dict):
        raise RequestFailed("malformed", "the response is not a JSON object", None, status)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise RequestFailed("empty", "the response has no choices", None, status)
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    prompt = _int(usage.get("prompt_tokens"))
    completion = _int(usage.get("completion_tokens"))
    out: list[Completion] = []
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        text = message.get("content") if isinstance(message, dict) else None
        if text is None and isinstance(choice, dict) and isinstance(choice.get("text"), str):
            text = choice["text"]  # legacy completions shape
        if not isinstance(text, str):
            raise RequestFailed("malformed", "a choice has no message content", None, status)
        finish = choice.get("finish_reason")
        finish = finish[:40] if isinstance(finish, str) and _encodable(finish) else None
        out.append(Completion(_storable(text, status), prompt if not out else 0, completion // len(choices), finish,
                              parse_logprobs(choice.get("logprobs"))))
    return out


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ("\ud800" in the JSON): cannot be written to any file
        return False
    return True


def _storable(text: str, status: int) -> str:
    """``text`` if it can be stored (valid Unicode, at most :data:`MAX_ANSWER_CHARS`), redacted; else ``malformed``."""
    if len(text) > MAX_ANSWER_CHARS:
        raise RequestFailed("malformed", f"an answer of {len(text):,} characters is over the "
                            f"{MAX_ANSWER_CHARS:,}-character cap", None, status)
    if not _encodable(text):
        raise RequestFailed("malformed", "the answer contains a lone surrogate (invalid Unicode)", None, status)
    secrets = _known_secrets()
    return redact(text, secrets) if _may_hold_secret(text, secrets) else text


def _may_hold_secret(text: str, secrets: tuple[str | None, ...]) -> bool:
    lowered = text.lower()
    return "bearer" in lowered or "author" in lowered or "key" in lowered or any(s and s in text for s in secrets)


def _known_secrets() -> tuple[str | None, ...]:
    """The values of the API-key variables in use this process (registered by :meth:`EndpointConfig.headers`)."""
    return tuple(os.environ.get(name) for name in _KEY_VARIABLES)


_KEY_VARIABLES: set[str] = set()


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date (RFC 9110 §10.2.3). None if absent/unusable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value[:40])
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
    """A token count: absent (or not a number) is 0; a number that cannot be a count (1e999, negative, 10^15 or
    more) makes the response ``malformed``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if not (math.isfinite(value) and 0 <= value < 10**15):
        raise RequestFailed("malformed", f"usage token count {str(value)[:20]} is not a count")
    return int(value)


def _cut_at_word(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word boundary, with "…" — never mid-name (issue 31 item 22: the
    wrong-model error listed the server's models up to "sim-e")."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = max(cut.rfind(" "), cut.rfind(","))
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,") + " …"


def _error_message(content: bytes) -> str:
    try:
        data = json.loads(content)
        err = data.get("error") if isinstance(data, dict) else None
        message = err.get("message") if isinstance(err, dict) else err
        if isinstance(message, str) and message:
            return _cut_at_word(message.splitlines()[0], 240)
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        pass
    return content[:120].decode("utf-8", "replace").splitlines()[0] if content.strip() else "no details"
