"""A fault-injecting Batch API server for the tests (issue 42 §6): the demo server's Batch API (real loopback HTTP,
:mod:`relgate_tui.demo.batches`) behind a layer that answers control calls with errors, holds downloads, and rewrites
the output files a client downloads.

* :attr:`BatchFaults.control` — per control call (``upload``, ``create``, ``list``, ``retrieve``, ``download``,
  ``cancel``) the statuses to answer it with, in order, before it is served (``Retry-After`` from
  :attr:`BatchFaults.retry_after` on 429/503); ``create_then_fail`` — a create that the server performs and then
  answers 500 (the client's answer is lost);
* :attr:`BatchFaults.hold_downloads` — every download answered 429 until :meth:`FaultyBatchServer.release_downloads`;
* :attr:`BatchFaults.rewrite` — a function over each downloaded output file's lines (dicts, in order): the tests give
  foreign run ids, unrequested indices, conflicting duplicates, 4xx lines in vLLM's shape (:func:`vllm_rejection`).

A batch that never completes: ``BatchKnobs(hold=True)`` of the demo server underneath. Time is never read: the
faults are counted in calls.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from relgate_tui.demo import DemoServer
from relgate_tui.demo.batches import BatchKnobs
from relgate_tui.demo.responses import Response, error, json_body

__all__ = ["BatchFaults", "FaultyBatchServer", "call_of", "vllm_rejection"]

Rewrite = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


@dataclass
class BatchFaults:
    control: dict[str, list[int]] = field(default_factory=dict)
    retry_after: str | None = None
    create_then_fail: int = 0  # this many creates are performed, then answered 500
    hold_downloads: bool = False
    rewrite: Rewrite | None = None


def call_of(method: str, path: str) -> str | None:
    """The control call a request is (module docstring), or None."""
    parts = path.strip("/").split("/")
    if parts[:2] == ["v1", "files"]:
        if len(parts) == 2 and method == "POST":
            return "upload"
        if len(parts) == 4 and parts[3] == "content":
            return "download"
        return "files"
    if parts[:2] == ["v1", "batches"]:
        if len(parts) == 2:
            return "create" if method == "POST" else "list"
        if len(parts) == 3:
            return "retrieve"
        return "cancel"
    return None


def vllm_rejection(line: dict[str, Any], message: str, as_object: bool = True) -> dict[str, Any]:
    """``line`` as ``vllm run-batch`` writes a request it rejects: status 400, no body, the reason in ``error`` — an
    ``ErrorResponse`` object (``as_object``) or a string (``make_error_request_output``)."""
    reason: Any = {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400} \
        if as_object else message
    return {"id": line.get("id", "vllm-x"), "custom_id": line["custom_id"],
            "response": {"status_code": 400, "request_id": "vllm-batch-x", "body": None}, "error": reason}


class FaultyBatchServer(DemoServer):
    """The demo server with :class:`BatchFaults` in front of its Batch API. ``calls`` counts every control call
    received, ``injected`` the faults answered."""

    def __init__(self, faults: BatchFaults | None = None, batches: BatchKnobs | None = None, **kwargs: Any) -> None:
        super().__init__(batches=batches, **kwargs)
        self.batch_faults = faults if faults is not None else BatchFaults()
        self.calls: Counter[str] = Counter()
        self.injected: Counter[str] = Counter()

    def release_downloads(self) -> None:
        self.batch_faults.hold_downloads = False

    async def _dispatch(self, method: str, path: str, body: bytes, query: str = "") -> Response:
        call = call_of(method, path.split("?", 1)[0])
        faults = self.batch_faults
        if call is None:
            return await super()._dispatch(method, path, body, *([query] if query else []))
        self.calls[call] += 1
        queued = faults.control.get(call)
        if queued:
            return self._inject(call, queued.pop(0))
        if call == "download" and faults.hold_downloads:
            return self._inject(call, 429)
        response = await super()._dispatch(method, path, body, *([query] if query else []))
        if call == "create" and faults.create_then_fail and response.status == 200:
            faults.create_then_fail -= 1
            return self._inject(call, 500)
        if call == "download" and response.status == 200 and faults.rewrite is not None:
            lines = [json.loads(raw) for raw in response.body.splitlines() if raw.strip()]
            if lines and all(isinstance(x.get("response"), dict) and x["response"].get("status_code") == 200
                             for x in lines):  # an output file (the error file is left as it is)
                response = Response(200, b"".join(json_body(x) + b"\n" for x in faults.rewrite(lines)))
        return response

    def _inject(self, call: str, status: int) -> Response:
        self.injected[call] += 1
        headers = [("Retry-After", self.batch_faults.retry_after)] if self.batch_faults.retry_after and status in (
            429, 503) else []
        return error(status, f"injected {status} on {call}", "server_error" if status >= 500 else "rate_limit_error",
                     headers=headers)
