"""A Batch API client (issue 32 §1): OpenAI's ``/v1/files`` + ``/v1/batches``, which other providers and ``vllm
run-batch`` (files only) share.

The request file is JSONL, one ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`` per line
(:func:`request_line`; the body is :func:`~relgate_tui.engine.transport.endpoints.request_body`, the very body a direct
call sends). :class:`BatchClient` uploads it (``purpose=batch``), creates the batch, polls it
(:class:`BatchStatus`: submitted / completed / failed counts and the provider's ETA when it gives one) and downloads
its output and error files, each capped at ``max_file_bytes`` (over the cap: :class:`BatchError`, one line, and the
batch stays where it is, so a rerun with a larger cap reads it).

**Retries.** Every control call (upload, create, list, retrieve, download, cancel) is retried under a
:class:`RetryPolicy` when the provider answers 408, 429 or 5xx or the connection fails: exponential backoff from
``first_s`` doubling to ``max_s``, or the provider's ``Retry-After`` when it sends one, until the call's total
``deadline_s`` would be passed; then :class:`BatchError` (one line). A create is never retried blind: before each
retry the batch list is searched for one created from the same input file (the failed answer may have been lost
after the provider created it), so a retry never pays twice. The clock and the sleep are the policy's (tests inject
a virtual clock).

:func:`parse_results` reads output and error files defensively: every line is one of

* an answer — ``response.status_code`` 2xx, ``response.body`` classified by
  :func:`~relgate_tui.engine.transport.endpoints.parse_response` exactly as a direct call's body is;
* a failure of a known request — a non-2xx ``response`` (429, 5xx, …: the kind a direct call would get) or an
  ``error`` object (``batch_expired``, ``batch_cancelled``, …);
* malformed — not JSON, not an object, no string ``custom_id``, neither a response nor an error: counted in
  :attr:`BatchResults.malformed`; its request simply has no answer, so the caller asks it again.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import httpx

from relgate_tui.core.text import one_line
from relgate_tui.engine.transport.endpoints import (
    Completion,
    EndpointConfig,
    RequestFailed,
    parse_data,
    parse_response,
    parse_retry_after,
)
from relgate_tui.engine.transport.tls import tls_context
from relgate_tui.errors import EndpointError

__all__ = ["BATCH_URL", "MAX_FILE_BYTES", "MAX_MB_ENV", "TERMINAL", "max_file_bytes", "BatchClient", "BatchError",
           "BatchResults", "BatchStatus", "RetryPolicy", "parse_results", "request_line"]

BATCH_URL = "/v1/chat/completions"
MAX_FILE_BYTES = 200 * 1024 * 1024  # OpenAI's limit for a batch file; the default cap on downloads
MAX_MB_ENV = "RELGATE_BATCH_MAX_MB"  # a larger download cap, in MiB, for output files over the default


def max_file_bytes() -> int:
    """The download cap: ``$RELGATE_BATCH_MAX_MB`` MiB when set to a positive integer, else :data:`MAX_FILE_BYTES`."""
    value = os.environ.get(MAX_MB_ENV, "").strip()
    return int(value) * 1024 * 1024 if value.isdigit() and int(value) > 0 else MAX_FILE_BYTES
TERMINAL = frozenset({"completed", "expired", "cancelled", "failed"})


class BatchError(EndpointError):
    """A batch call that failed (one line, redacted by :class:`RequestFailed`'s rules); the run keeps its samples.
    ``status``: the HTTP status when the provider answered with an error; ``retryable``: a 408, 429, 5xx or a
    connection failure (:class:`RetryPolicy`); ``retry_after``: the provider's ``Retry-After`` in seconds."""

    def __init__(self, message: str, status: int | None = None, *, retryable: bool = False,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


def _sleep(seconds: float) -> Awaitable[None]:
    return asyncio.sleep(seconds)


@dataclass(frozen=True)
class RetryPolicy:
    """How a control call is retried (module docstring): waits ``first_s``, 2·``first_s``, … up to ``max_s`` (or the
    provider's ``Retry-After``), while the call's elapsed time plus the next wait stays within ``deadline_s``.
    ``clock`` (seconds, monotonic) and ``sleep`` are injectable: the batch poll loop uses them too."""

    deadline_s: float = 600.0
    first_s: float = 1.0
    max_s: float = 60.0
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[None]] = _sleep


DEFAULT_RETRY = RetryPolicy()


def _retryable(status: int) -> bool:
    return status in (408, 429) or status >= 500


@dataclass(frozen=True)
class BatchStatus:
    """A batch as the provider reports it. ``eta_s``: seconds to completion when the provider says (an
    ``expected_completion_at`` / ``estimated_completion_at`` Unix time), else None."""

    id: str
    status: str
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    eta_at: float | None = None
    errors: tuple[str, ...] = ()

    @property
    def ended(self) -> bool:
        return self.status in TERMINAL

    @classmethod
    def from_json(cls, data: Any) -> BatchStatus:
        if not isinstance(data, dict) or not isinstance(data.get("id"), str) or not isinstance(data.get("status"), str):
            raise BatchError("the batch answer is not a batch object")
        raw_counts = data.get("request_counts")
        counts: dict[str, Any] = raw_counts if isinstance(raw_counts, dict) else {}
        errs = data.get("errors")
        lines = errs.get("data") if isinstance(errs, dict) else None
        messages = tuple(one_line(str(e.get("message", e.get("code", ""))), 200) for e in lines[:5]
                         if isinstance(e, dict)) if isinstance(lines, list) else ()
        eta = next((data[k] for k in ("expected_completion_at", "estimated_completion_at")
                    if isinstance(data.get(k), (int, float)) and not isinstance(data.get(k), bool)), None)
        batch_id = _file_id(data["id"])
        if batch_id is None:
            raise BatchError("the batch answer's id is not a plain token")
        return cls(batch_id, one_line(data["status"], 40), _count(counts.get("total")),
                   _count(counts.get("completed")), _count(counts.get("failed")), _file_id(data.get("output_file_id")),
                   _file_id(data.get("error_file_id")), float(eta) if eta is not None else None, messages)


@dataclass
class BatchResults:
    """What output and error files said: ``answers[custom_id]`` (completions), ``failures[custom_id]`` (a
    :class:`RequestFailed`), ``malformed`` lines (their requests have no answer) and ``conflicts``: custom ids
    answered twice with different texts (neither answer is used)."""

    answers: dict[str, list[Completion]] = field(default_factory=dict)
    failures: dict[str, RequestFailed] = field(default_factory=dict)
    malformed: int = 0
    conflicts: set[str] = field(default_factory=set)


def request_line(custom_id: str, body: Mapping[str, Any] | str) -> bytes:
    """One line of a batch request file (``body`` a JSON object, as :func:`request_body` gives for openai)."""
    if isinstance(body, str):
        body = json.loads(body)
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": BATCH_URL, "body": body},
                      ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def parse_results(files: Iterable[bytes | BinaryIO], cfg: EndpointConfig,
                  results: BatchResults | None = None) -> BatchResults:
    """Read output/error files (bytes, or binary files read line by line) into ``results`` (module docstring). An
    answer wins over a failure of the same id. Memory: one line at a time, at most about twice its size (its text,
    then the parsed object; a 2xx body is read as parsed, never serialised again)."""
    out = results if results is not None else BatchResults()
    for data in files:
        for box in _lines(io.BytesIO(data) if isinstance(data, bytes) else data):
            try:
                text: str | None = box.pop().decode("utf-8")  # the line's bytes are gone before it is parsed
            except UnicodeDecodeError:
                text = None
            if text is None:
                out.malformed += 1
            elif text.strip():
                _parse_line(text, cfg, out)
            text = None
    return out


def _lines(source: BinaryIO, block: int = 1 << 16) -> Iterator[list[bytearray]]:
    """The lines of ``source`` (a seekable binary file; without their newline), each in a one-element list the
    reader empties, so nothing here keeps a line once it is taken. A line is first measured (read through in
    ``block``-sized pieces), then read into a buffer of exactly its size: its bytes are held once."""
    while True:
        start = source.tell()
        length = 0
        ended = False
        while chunk := source.read(block):
            end = chunk.find(b"\n")
            if end >= 0:
                length += end
                ended = True
                break
            length += len(chunk)
        del chunk
        if not length and not ended:
            return
        source.seek(start)
        buf = bytearray(length)
        got = source.readinto(buf) if hasattr(source, "readinto") else 0  # every binary file object has it
        source.seek(start + length + ended)
        if got != length:
            raise OSError(f"a batch results file changed while it was read ({got} of {length} bytes)")
        box, buf = [buf], bytearray()
        yield box
        del box


def _parse_line(raw: str, cfg: EndpointConfig, out: BatchResults) -> None:
    try:
        line = json.loads(raw)
    except (ValueError, RecursionError):
        out.malformed += 1
        return
    custom_id = line.get("custom_id") if isinstance(line, dict) else None
    if not isinstance(custom_id, str) or len(custom_id) > 1000:
        out.malformed += 1
        return
    response, err = line.get("response"), line.get("error")
    if isinstance(response, dict) and isinstance(response.get("status_code"), int):
        body = response.get("body")
        status = response["status_code"]
        if not 200 <= status < 300 and body is None and _reason(err):  # vLLM: no body, the reason in ``error``
            body = {"error": {"message": _reason(err)}}
        try:
            if 200 <= status < 300 and not isinstance(body, str):
                completions = parse_data(cfg, status, body)  # as parsed: a large answer is never copied again
            else:
                content = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode("utf-8")
                completions = parse_response(cfg, status, {}, content)
        except RequestFailed as exc:
            if custom_id not in out.answers:
                out.failures[custom_id] = exc
            return
        except (ValueError, RecursionError, UnicodeEncodeError):
            out.malformed += 1
            return
        known = out.answers.get(custom_id)
        if known is not None and [c.text for c in known] != [c.text for c in completions]:
            out.conflicts.add(custom_id)
        out.answers[custom_id] = completions
        out.failures.pop(custom_id, None)
    elif isinstance(err, dict):
        code = one_line(str(err.get("code") or "error"), 60)
        message = one_line(str(err.get("message") or ""), 200)
        kind = "timeout" if code in ("batch_expired", "batch_cancelled") else "5xx"
        if custom_id not in out.answers:
            out.failures[custom_id] = RequestFailed(kind, f"{code}: {message}" if message else code)
    else:
        out.malformed += 1


def _reason(err: object) -> str | None:
    """The reason of a line's ``error``: a string (vLLM's ``make_error_request_output``) or an object with a
    ``message`` (vLLM's ``ErrorResponse``, flat or under ``error``; OpenAI's ``{"code", "message"}``)."""
    if isinstance(err, str):
        return one_line(err, 240) or None
    if isinstance(err, dict):
        inner = err.get("error")
        message = inner.get("message") if isinstance(inner, dict) else err.get("message")
        if isinstance(message, str) and message:
            return one_line(message, 240)
    return None


class BatchClient:
    """The Batch API of one OpenAI-compatible endpoint (``base_url`` ends in ``/v1``). Use as an async context
    manager; every call raises :class:`BatchError` (one line) on a failure."""

    def __init__(self, endpoint: EndpointConfig, *, max_file_bytes: int = MAX_FILE_BYTES,
                 transport: httpx.AsyncBaseTransport | None = None, retry: RetryPolicy | None = None) -> None:
        self.endpoint = endpoint
        self.base = endpoint.base_url.rstrip("/")
        self.max_file_bytes = max_file_bytes
        self.retry = retry if retry is not None else DEFAULT_RETRY
        self.retries = 0  # failed attempts retried over the client's life
        self._client = httpx.AsyncClient(transport=transport, trust_env=False, verify=tls_context(),
                                         timeout=endpoint.timeout_s)

    async def __aenter__(self) -> BatchClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()

    async def _retrying(self, what: str, attempt: Callable[[int], Awaitable[Any]]) -> Any:
        """``attempt(n)`` (n = 0, 1, …) until it succeeds, raises a non-retryable :class:`BatchError`, or the policy's
        deadline for the call would be passed (then the last error, saying how long it was retried)."""
        policy = self.retry
        start = policy.clock()
        delay = policy.first_s
        n = 0
        while True:
            try:
                return await attempt(n)
            except BatchError as exc:
                if not exc.retryable:
                    raise
                wait = exc.retry_after if exc.retry_after is not None else delay
                elapsed = policy.clock() - start
                if elapsed + wait > policy.deadline_s:
                    raise BatchError(f"{exc} (after {n + 1} attempts in {elapsed:.0f} s)", exc.status) from None
                await policy.sleep(wait)
                delay = min(delay * 2, policy.max_s)
                self.retries += 1
                n += 1

    async def _json_once(self, method: str, path: str, what: str, **kwargs: Any) -> Any:
        try:
            response = await self._client.request(method, self.base + path, headers=self.endpoint.headers(), **kwargs)
        except httpx.HTTPError as exc:
            raise BatchError(f"{what}: {type(exc).__name__}", retryable=True) from None
        if response.status_code >= 300:
            failed = _failed(self.endpoint, response)
            raise BatchError(f"{what}: {failed}", response.status_code, retryable=_retryable(response.status_code),
                             retry_after=parse_retry_after(response.headers.get("retry-after")))
        try:
            return response.json()
        except ValueError:
            raise BatchError(f"{what}: the answer is not JSON") from None

    async def _json(self, method: str, path: str, what: str, **kwargs: Any) -> Any:
        return await self._retrying(what, lambda _n: self._json_once(method, path, what, **kwargs))

    async def upload(self, data: bytes, filename: str = "relgate-batch.jsonl") -> str:
        """``POST /files`` (purpose ``batch``); the file id."""
        if len(data) > MAX_FILE_BYTES:  # the provider's limit, whatever the download cap
            raise BatchError(f"the request file is {len(data):,} bytes, over the {MAX_FILE_BYTES:,}-byte limit")
        answer = await self._json("POST", "/files", "uploading the batch file", data={"purpose": "batch"},
                                  files={"file": (filename, data, "application/jsonl")})
        file_id = _file_id(answer.get("id") if isinstance(answer, dict) else None)
        if file_id is None:
            raise BatchError("uploading the batch file: the answer has no file id")
        return file_id

    async def create(self, input_file_id: str, metadata: Mapping[str, str] | None = None) -> BatchStatus:
        """``POST /batches``; a retry first looks for a batch the lost answer may have created (module docstring)."""
        body: dict[str, Any] = {"input_file_id": input_file_id, "endpoint": BATCH_URL, "completion_window": "24h"}
        if metadata:
            body["metadata"] = dict(metadata)

        async def attempt(n: int) -> BatchStatus:
            if n:
                found = await self._find_once(input_file_id)
                if found is not None:
                    return found
            return BatchStatus.from_json(await self._json_once("POST", "/batches", "creating the batch", json=body))

        return await self._retrying("creating the batch", attempt)

    async def status(self, batch_id: str) -> BatchStatus:
        return BatchStatus.from_json(await self._json("GET", f"/batches/{batch_id}", "polling the batch"))

    async def find(self, input_file_id: str, pages: int = 10) -> BatchStatus | None:
        """The batch created from ``input_file_id``, if the endpoint has one: ``GET /batches`` (newest first, 100 a
        page, at most ``pages`` pages). How a run killed while its create request was on the wire finds the batch
        the endpoint may have created (batch_rounds.py), instead of creating a second one."""
        return await self._retrying("listing the batches", lambda _n: self._find_once(input_file_id, pages))

    async def _find_once(self, input_file_id: str, pages: int = 10) -> BatchStatus | None:
        after: str | None = None
        for _ in range(pages):
            params = {"limit": "100", **({"after": after} if after else {})}
            answer = await self._json_once("GET", "/batches", "listing the batches", params=params)
            data = answer.get("data") if isinstance(answer, dict) else None
            if not isinstance(data, list):
                raise BatchError("listing the batches: the answer has no list")
            for entry in data:
                if isinstance(entry, dict) and entry.get("input_file_id") == input_file_id:
                    return BatchStatus.from_json(entry)
            if not answer.get("has_more") or not data or not isinstance(data[-1], dict):
                return None
            after = _file_id(data[-1].get("id"))
            if after is None:
                return None
        return None

    async def cancel(self, batch_id: str) -> BatchStatus:
        return BatchStatus.from_json(await self._json("POST", f"/batches/{batch_id}/cancel", "cancelling the batch"))

    async def download(self, file_id: str) -> bytes:
        """``GET /files/{id}/content`` as bytes (:meth:`download_to`'s file, read)."""
        with await self.download_to(file_id) as f:
            return f.read()

    async def download_to(self, file_id: str) -> BinaryIO:
        """``GET /files/{id}/content`` into an anonymous temporary file (rewound; the caller closes it), at most
        ``max_file_bytes`` decoded (else :class:`BatchError`), retried as every control call. The file is on disk,
        never in memory: a 200 MB output costs a chunk of memory while it downloads."""
        return await self._retrying(f"downloading {file_id}", lambda _n: self._download_once(file_id))

    async def _download_once(self, file_id: str) -> BinaryIO:
        out = tempfile.TemporaryFile()
        try:
            status = await self._stream(f"{self.base}/files/{file_id}/content", out, file_id)
        except BaseException:
            out.close()
            raise
        if status >= 300:
            out.close()
            raise BatchError(f"downloading {file_id}: HTTP {status}", status, retryable=_retryable(status))
        out.seek(0)
        return out

    async def _stream(self, url: str, out: BinaryIO, file_id: str) -> int:
        size = 0
        try:
            async with asyncio.timeout(self.endpoint.timeout_s), self._client.stream(
                    "GET", url, headers=self.endpoint.headers()) as response:
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > self.max_file_bytes:
                        raise BatchError(f"the batch file {file_id} is over the {self.max_file_bytes:,}-byte cap; it "
                                         f"stays with the provider (rerun with {MAX_MB_ENV} set higher to read it)")
                    if response.status_code < 300:
                        out.write(chunk)
                return response.status_code
        except TimeoutError:
            raise BatchError(f"downloading {file_id}: no complete answer within {self.endpoint.timeout_s:g} s",
                             retryable=True) from None
        except httpx.HTTPError as exc:
            raise BatchError(f"downloading {file_id}: {type(exc).__name__}", retryable=True) from None


def _failed(cfg: EndpointConfig, response: httpx.Response) -> str:
    try:
        parse_response(cfg, response.status_code, response.headers, response.content)
    except RequestFailed as exc:
        return str(exc)
    return f"HTTP {response.status_code}"


def _file_id(value: object) -> str | None:
    """A provider's file id, if it is a plain token (it goes into a URL path)."""
    if isinstance(value, str) and 0 < len(value) <= 200 and all(c.isalnum() or c in "-_." for c in value):
        return value
    return None


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**12 else 0
