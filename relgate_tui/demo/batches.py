"""The demo server's Batch API (issue 32 §4): OpenAI's ``/v1/files`` + ``/v1/batches``, over the same real HTTP server.

Routes (all JSON, OpenAI's shapes):

* ``POST /v1/files`` (``multipart/form-data``: ``purpose=batch`` and a ``file`` part holding JSONL) → a file object;
  ``GET /v1/files`` → the list; ``GET /v1/files/{id}``; ``DELETE /v1/files/{id}``;
* ``GET /v1/files/{id}/content`` → the file's bytes (input, output or error JSONL);
* ``POST /v1/batches`` ``{"input_file_id", "endpoint": "/v1/chat/completions", "completion_window": "24h",
  "metadata"}`` → a batch object; ``GET /v1/batches/{id}``; ``POST /v1/batches/{id}/cancel``; ``GET /v1/batches``
  (``limit`` 1–100, default 20, and ``after``: newest first, ``has_more``) → the list.

Batch objects are the API's: timestamps set once when the state is reached (``failed_at`` for a batch that failed
validation), ``metadata`` kept as given. Stored files are bounded: past :data:`MAX_STORED_BYTES` the oldest files are
forgotten (a long-running demo server does not keep every upload in memory).

Input lines are ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body": {...}}``; a file with a
line that is not such an object, or with a repeated ``custom_id``, makes the batch ``failed`` (``errors.data``), as
OpenAI's validation does. Output lines are ``{"id", "custom_id", "response": {"status_code", "request_id", "body"},
"error": null}`` — what OpenAI and ``vllm run-batch`` write; a request answered with a non-200 status goes to the
error file in the same shape; a request never run (expired, cancelled) goes to the error file as ``{"id",
"custom_id", "response": null, "error": {"code": "batch_expired" | "batch_cancelled", "message"}}``.

Time is counted in polls, never in seconds, so tests do not depend on the wall clock: a batch answers
:attr:`BatchKnobs.polls` ``GET``\\ s as ``in_progress``, each running the next share of its lines (so
``request_counts`` climb), then ends. :attr:`BatchKnobs.hold` keeps every batch ``in_progress`` without progress
until :meth:`BatchAPI.release` (a client killed mid-batch in a test). Faults: every :attr:`BatchKnobs.fail_every`-th
line run (counted over the server's life, so a retry in a later batch gets through) is answered with the next status
of :attr:`BatchKnobs.fail_statuses`; :attr:`BatchKnobs.expire_after` ends a batch ``expired`` after that many lines;
:attr:`BatchKnobs.malformed_lines` breaks the first output lines; :attr:`BatchKnobs.pad_output_bytes` appends blank
padding to output files (a client's size cap); these three apply to the first :attr:`BatchKnobs.faulty_batches`
batches created (None: all).
"""

from __future__ import annotations

import itertools
import json
import math
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from relgate_tui.demo.responses import Response, error, json_body

__all__ = ["BATCH_PREFIXES", "BatchAPI", "BatchKnobs", "BatchRecord"]

BATCH_PREFIXES = ("/v1/files", "/v1/batches")
MAX_LINES = 50_000  # OpenAI's limit per batch file
MAX_STORED_BYTES = 512 * 1024 * 1024  # files kept in memory, oldest forgotten first

Answer = Callable[[dict[str, Any]], Awaitable[Response]]


@dataclass
class BatchKnobs:
    """How the demo's batches behave (module docstring). Mutable: a test may change them between batches."""

    polls: int = 1
    hold: bool = False
    fail_every: int = 0
    fail_statuses: tuple[int, ...] = (429, 500)
    expire_after: int | None = None
    malformed_lines: int = 0
    pad_output_bytes: int = 0
    faulty_batches: int | None = None  # expire_after / malformed_lines / pad_output_bytes apply to this many batches


@dataclass
class BatchRecord:
    """A batch the server was asked to create: its id, input file and the custom ids it holds (tests count them)."""

    id: str
    input_file_id: str
    custom_ids: tuple[str, ...]


@dataclass
class _Batch:
    id: str
    input_file_id: str
    lines: list[dict[str, Any]]
    created_at: int
    status: str = "in_progress"
    polls_seen: int = 0
    done: int = 0  # lines run so far
    outputs: list[bytes] = field(default_factory=list)
    errors: list[bytes] = field(default_factory=list)
    failed: int = 0
    completed: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    validation_errors: list[dict[str, Any]] = field(default_factory=list)
    cancel_requested: bool = False
    faulty: bool = True  # BatchKnobs.faulty_batches
    metadata: dict[str, str] | None = None
    ended_at: dict[str, int] = field(default_factory=dict)  # "completed_at" / "failed_at" / …: set once


class BatchAPI:
    """The Batch API state of one demo server. ``answer(body)`` answers one chat request body as the server's
    ``/v1/chat/completions`` would (without latency or the chat fault plan)."""

    def __init__(self, knobs: BatchKnobs | None = None) -> None:
        self.knobs = knobs if knobs is not None else BatchKnobs()
        self._files: dict[str, tuple[str, bytes, int]] = {}  # id -> (purpose, bytes, created_at), oldest first
        self._stored_bytes = 0
        self._batches: dict[str, _Batch] = {}
        self._ids = itertools.count(1)
        self._lines_run = 0
        self._lock = threading.Lock()
        self.created: list[BatchRecord] = []
        self.failed_lines = 0  # lines answered with an error or never run (expired, cancelled), over all batches

    # -------------------------------------------------------------------------------------------- test hooks
    def release(self) -> None:
        """End :attr:`BatchKnobs.hold`: held batches progress with their next polls."""
        self.knobs.hold = False

    @property
    def records(self) -> list[BatchRecord]:
        with self._lock:
            return list(self.created)

    # -------------------------------------------------------------------------------------------- routing
    async def handle(self, method: str, path: str, body: bytes, answer: Answer, query: str = "") -> Response:
        parts = path.strip("/").split("/")  # ["v1", "files" | "batches", id?, action?]
        if parts[1] == "files":
            if len(parts) == 2 and method == "POST":
                return self._upload(body)
            if len(parts) == 2 and method == "GET":
                return Response(200, json_body({"object": "list", "data": [self._file_json(f) for f in self._files],
                                                "has_more": False}))
            if len(parts) == 3 and method == "GET":
                return self._file_object(parts[2])
            if len(parts) == 3 and method == "DELETE":
                if parts[2] not in self._files:
                    return error(404, f"no file {parts[2]!r}", "invalid_request_error", "not_found")
                self._forget(parts[2])
                return Response(200, json_body({"id": parts[2], "object": "file", "deleted": True}))
            if len(parts) == 4 and parts[3] == "content" and method == "GET":
                stored = self._files.get(parts[2])
                if stored is None:
                    return error(404, f"no file {parts[2]!r}", "invalid_request_error", "not_found")
                return Response(200, stored[1])
        else:
            if len(parts) == 2 and method == "POST":
                return self._create(body)
            if len(parts) == 2 and method == "GET":  # the list, newest first, ``limit`` a page after ``after``
                return self._list(query)
            if len(parts) == 3 and method == "GET":
                return await self._poll(parts[2], answer)
            if len(parts) == 4 and parts[3] == "cancel" and method == "POST":
                batch = self._batches.get(parts[2])
                if batch is None:
                    return error(404, f"no batch {parts[2]!r}", "invalid_request_error", "not_found")
                if batch.status in ("validating", "in_progress"):
                    batch.cancel_requested = True
                    batch.status = "cancelling"
                    batch.ended_at.setdefault("cancelling_at", int(time.time()))
                return Response(200, json_body(self._batch_object(batch)))
        return error(404, f"no route for {method} {path}", "invalid_request_error", "not_found")

    def _list(self, query: str) -> Response:
        from urllib.parse import parse_qs

        params = {k: v[-1] for k, v in parse_qs(query).items()}
        limit_text = params.get("limit", "20")
        if not limit_text.isdigit() or not 1 <= int(limit_text) <= 100:
            return error(400, "limit must be an integer between 1 and 100", "invalid_request_error")
        newest = list(reversed(list(self._batches.values())))
        after = params.get("after")
        if after is not None:
            ids = [b.id for b in newest]
            newest = newest[ids.index(after) + 1:] if after in ids else []
        page = newest[: int(limit_text)]
        data = [self._batch_object(b) for b in page]
        return Response(200, json_body({"object": "list", "data": data, "has_more": len(newest) > len(page),
                                        "first_id": data[0]["id"] if data else None,
                                        "last_id": data[-1]["id"] if data else None}))

    # -------------------------------------------------------------------------------------------- files
    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-sim{next(self._ids):06d}"

    def _upload(self, body: bytes) -> Response:
        fields = _multipart(body)
        if fields is None or "file" not in fields:
            return error(400, "expected multipart/form-data with a 'file' part", "invalid_request_error")
        purpose = fields.get("purpose", b"").decode("utf-8", "replace")
        if purpose != "batch":
            return error(400, f"purpose must be 'batch', got {purpose!r}", "invalid_request_error")
        file_id = self._keep(purpose, fields["file"])
        return Response(200, json_body(self._file_json(file_id)))

    def _keep(self, purpose: str, data: bytes) -> str:
        """Store a file (the oldest forgotten past :data:`MAX_STORED_BYTES`); its id."""
        file_id = self._new_id("file")
        self._files[file_id] = (purpose, data, int(time.time()))
        self._stored_bytes += len(data)
        while self._stored_bytes > MAX_STORED_BYTES and len(self._files) > 1:
            self._forget(next(iter(self._files)))
        return file_id

    def _forget(self, file_id: str) -> None:
        self._stored_bytes -= len(self._files.pop(file_id)[1])

    def _file_json(self, file_id: str) -> dict[str, Any]:
        purpose, data, created_at = self._files[file_id]
        return {"id": file_id, "object": "file", "bytes": len(data), "created_at": created_at,
                "filename": f"{file_id}.jsonl", "purpose": purpose, "status": "processed"}

    def _file_object(self, file_id: str) -> Response:
        if file_id not in self._files:
            return error(404, f"no file {file_id!r}", "invalid_request_error", "not_found")
        return Response(200, json_body(self._file_json(file_id)))

    def _store_file(self, purpose: str, lines: list[bytes], pad: int = 0) -> str:
        return self._keep(purpose, b"".join(line + b"\n" for line in lines) + b"\n" * pad)

    # -------------------------------------------------------------------------------------------- batches
    def _create(self, body: bytes) -> Response:
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            payload = None
        if not isinstance(payload, dict) or not isinstance(payload.get("input_file_id"), str):
            return error(400, "'input_file_id' is required", "invalid_request_error")
        if payload.get("endpoint") != "/v1/chat/completions":
            return error(400, "endpoint must be /v1/chat/completions", "invalid_request_error")
        stored = self._files.get(payload["input_file_id"])
        if stored is None:
            return error(404, f"no file {payload['input_file_id']!r}", "invalid_request_error", "not_found")
        batch = _Batch(self._new_id("batch"), payload["input_file_id"], [], int(time.time()))
        batch.lines, batch.validation_errors = _parse_input(stored[1])
        batch.faulty = self.knobs.faulty_batches is None or len(self.created) < self.knobs.faulty_batches
        metadata = payload.get("metadata")
        if isinstance(metadata, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            batch.metadata = dict(metadata)
        if batch.validation_errors:
            batch.status = "failed"
            batch.ended_at["failed_at"] = batch.created_at
        self._batches[batch.id] = batch
        with self._lock:
            self.created.append(BatchRecord(batch.id, batch.input_file_id,
                                            tuple(str(line.get("custom_id")) for line in batch.lines)))
        return Response(200, json_body(self._batch_object(batch)))

    async def _poll(self, batch_id: str, answer: Answer) -> Response:
        batch = self._batches.get(batch_id)
        if batch is None:
            return error(404, f"no batch {batch_id!r}", "invalid_request_error", "not_found")
        if batch.status == "cancelling":
            self._finish(batch, "cancelled")
        elif batch.status == "in_progress" and not self.knobs.hold:
            batch.polls_seen += 1
            target = len(batch.lines) if batch.polls_seen >= self.knobs.polls else \
                math.ceil(len(batch.lines) * batch.polls_seen / max(1, self.knobs.polls))
            expire_after = self.knobs.expire_after if batch.faulty else None
            if expire_after is not None:
                target = min(target, expire_after)
            while batch.done < target:
                await self._run_line(batch, batch.lines[batch.done], answer)
                batch.done += 1
            if batch.done >= len(batch.lines):
                self._finish(batch, "completed")
            elif expire_after is not None and batch.done >= expire_after:
                self._finish(batch, "expired")
        return Response(200, json_body(self._batch_object(batch)))

    async def _run_line(self, batch: _Batch, line: dict[str, Any], answer: Answer) -> None:
        self._lines_run += 1
        request_id = f"req-sim{self._lines_run:08d}"
        every = self.knobs.fail_every
        if every and self._lines_run % every == 0 and self.knobs.fail_statuses:
            statuses = self.knobs.fail_statuses
            status = statuses[(self._lines_run // every - 1) % len(statuses)]
            response = error(status, f"simulated batch line failure ({status})", "server_error" if status >= 500
                             else "rate_limit_error")
        else:
            response = await answer(line["body"])
        record = {"id": f"batch_req_{self._lines_run:08d}", "custom_id": line["custom_id"],
                  "response": {"status_code": response.status, "request_id": request_id,
                               "body": json.loads(response.body)},
                  "error": None}
        if response.status == 200:
            batch.completed += 1
            if batch.faulty and len(batch.outputs) < self.knobs.malformed_lines:
                batch.outputs.append(json_body(record)[: 40])  # cut mid-object
            else:
                batch.outputs.append(json_body(record))
        else:
            batch.failed += 1
            self.failed_lines += 1
            batch.errors.append(json_body(record))

    def _finish(self, batch: _Batch, status: str) -> None:
        """End ``batch`` with ``status``; lines never run go to the error file as ``batch_expired`` /
        ``batch_cancelled``."""
        code = {"expired": "batch_expired", "cancelled": "batch_cancelled"}.get(status)
        if code is not None:
            for i, line in enumerate(batch.lines[batch.done:]):
                batch.errors.append(json_body({"id": f"batch_req_{batch.id}_{batch.done + i}",
                                               "custom_id": line["custom_id"], "response": None,
                                               "error": {"code": code, "message": f"this request was {status} "
                                                                                  "before it ran"}}))
                batch.failed += 1
                self.failed_lines += 1
        batch.status = status
        batch.ended_at.setdefault(f"{status}_at", int(time.time()))
        pad = self.knobs.pad_output_bytes if batch.faulty else 0
        if batch.outputs or pad:
            batch.output_file_id = self._store_file("batch_output", batch.outputs, pad)
        if batch.errors:
            batch.error_file_id = self._store_file("batch_output", batch.errors)

    def _batch_object(self, batch: _Batch) -> dict[str, Any]:
        ended = batch.status in ("completed", "expired", "cancelled", "failed")
        return {
            "id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions",
            "errors": {"object": "list", "data": batch.validation_errors} if batch.validation_errors else None,
            "input_file_id": batch.input_file_id, "completion_window": "24h", "status": batch.status,
            "output_file_id": batch.output_file_id, "error_file_id": batch.error_file_id,
            "created_at": batch.created_at, "in_progress_at": batch.created_at,
            "expires_at": batch.created_at + 86400,
            **{key: batch.ended_at.get(key) for key in ("completed_at", "failed_at", "expired_at", "cancelling_at",
                                                          "cancelled_at")},
            "request_counts": {"total": len(batch.lines), "completed": batch.completed, "failed": batch.failed}
            if batch.lines or ended else {"total": 0, "completed": 0, "failed": 0},
            "metadata": batch.metadata,
        }


# ------------------------------------------------------------------------------------------------ parsing
def _parse_input(data: bytes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The input file's request lines and its validation errors (OpenAI's ``{"code", "message", "line"}``)."""
    lines: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            line = None
        if (not isinstance(line, dict) or not isinstance(line.get("custom_id"), str) or line.get("method") != "POST"
                or line.get("url") != "/v1/chat/completions" or not isinstance(line.get("body"), dict)):
            problems.append({"code": "invalid_request", "message": "not a batch request line", "line": number})
            continue
        if line["custom_id"] in seen:
            problems.append({"code": "duplicate_custom_id", "message": "custom_id repeated", "line": number})
            continue
        seen.add(line["custom_id"])
        lines.append(line)
    if len(lines) > MAX_LINES:
        problems.append({"code": "too_many_requests", "message": f"more than {MAX_LINES} requests", "line": None})
    if not lines and not problems:
        problems.append({"code": "empty_file", "message": "the input file holds no requests", "line": None})
    return lines, problems


def _multipart(body: bytes) -> dict[str, bytes] | None:
    """The fields of a ``multipart/form-data`` body, its boundary read from the body's first line (RFC 7578: the body
    starts with ``--boundary``)."""
    first, sep, _ = body.partition(b"\r\n")
    if not sep or not first.startswith(b"--") or len(first) < 3:
        return None
    fields: dict[str, bytes] = {}
    for part in body.split(first)[1:]:
        if part.startswith(b"--"):
            break
        head, sep, content = part.partition(b"\r\n\r\n")
        if not sep:
            return None
        if content.endswith(b"\r\n"):
            content = content[:-2]
        name = None
        for header in head.decode("latin-1").split("\r\n"):
            if header.lower().startswith("content-disposition:"):
                for param in header.split(";")[1:]:
                    key, _, value = param.strip().partition("=")
                    if key == "name":
                        name = value.strip('"')
        if name:
            fields[name] = content
    return fields
