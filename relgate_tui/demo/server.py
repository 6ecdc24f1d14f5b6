"""The demo endpoint (SPEC §4.6): a real HTTP/1.1 server on 127.0.0.1 speaking the OpenAI chat API, serving
clearly labelled *simulated* models (see :mod:`relgate_tui.demo`) with optional fault injection.

Use it in tests and benchmarks over real sockets::

    with DemoServer(latency_ms=20, faults=FaultPlan(script=["429", None, "500"])) as server:
        httpx.post(server.base_url + "/chat/completions", json={...})
        server.requests  # -> [RequestRecord(...), ...]

Routes: ``GET /v1/models``, ``GET /v1/models/{id}``, ``POST /v1/chat/completions``, ``POST /v1/embeddings``
(``sim-embed`` only, :mod:`relgate_tui.demo.embeddings`), ``GET /health``, and the Batch API (``/v1/files``,
``/v1/batches``: :mod:`relgate_tui.demo.batches`, tuned by ``batches=BatchKnobs(...)``). Unknown paths get a
JSON 404, a wrong method a JSON 405, a body that is not a JSON object a JSON 400 (OpenAI's error shape ``{"error":
{"message", "type", "code"}}``). An unknown model gets 404 ``model_not_found``; a model used on the wrong route 400 ``model_not_supported``.

Chat requests accept ``messages``, ``temperature``, ``top_p`` (both accepted and ignored: p* stays known),
``max_tokens`` (longer answers are cut to that many tokens, ``finish_reason: "length"``), ``n`` (honoured only when
``honour_n=True``; otherwise exactly one choice, like llama.cpp), ``seed`` (answers are deterministic given model,
last user message and seed; without a seed a per-server counter varies them), ``logprobs`` and ``top_logprobs``
(0–20; :mod:`relgate_tui.demo.responses`).

Faults (:mod:`relgate_tui.demo.faults`) are decided for every well-formed model request (chat or embeddings: a JSON
object with a ``model``), in arrival order: a ``FaultPlan.script`` applies to the first requests, then ``rate`` draws
from ``kinds`` with a seeded RNG. ``slots`` (0 = unlimited) lets at most that many requests spend their latency at
once, as a server with that many slots (llama.cpp ``-np``) does. ``latency_ms`` delays every model response, including fault responses ("reset",
which reads the whole request and then closes with a TCP RST, does so at once).

Implementation: stdlib asyncio (``asyncio.start_server``) in a daemon thread with its own event loop; a small
HTTP/1.1 parser (Content-Length and chunked bodies, keep-alive, ``Connection: close``, HTTP/1.0, ``Expect:
100-continue``). Per-request work is a dict lookup into precomputed per-item tables plus JSON encoding.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import socket
import struct
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from relgate_tui.demo import simulate
from relgate_tui.demo.batches import BATCH_PREFIXES, BatchAPI, BatchKnobs
from relgate_tui.demo.catalogue import (
    ItemCatalogue,
    add_audit_data,
    bundled_catalogue,
    candidate_index,
    human_quality_index,
)
from relgate_tui.demo.embeddings import embeddings_response
from relgate_tui.demo.faults import FaultPlan, FaultState
from relgate_tui.demo.judge import JudgeKnobs
from relgate_tui.demo.responses import OWNED_BY, REASONS, Response, completion_body, error, json_body, validate_chat

__all__ = ["MAX_BODY_BYTES", "DemoServer", "RequestRecord"]

MAX_BODY_BYTES = 32 * 1024 * 1024
MAX_DRAIN_BYTES = 256 * 1024 * 1024  # a body over MAX_BODY_BYTES up to this size is read and dropped before the 413
_ROUTES = {"/v1/models": "GET", "/v1/chat/completions": "POST", "/v1/embeddings": "POST", "/health": "GET"}
_MODEL_ROUTES = ("/v1/chat/completions", "/v1/embeddings")


@dataclass(frozen=True)
class RequestRecord:
    """One request the server received. ``status`` 0 = the connection was reset without a response.

    ``model`` / ``body_sha256`` / ``sample_seed`` are None for requests without a JSON body (e.g. ``GET /v1/models``).
    """

    path: str
    model: str | None
    body_sha256: str | None
    sample_seed: object
    status: int
    fault: str | None


class _Reset(Exception):
    """Internal: close the connection without a response."""


class DemoServer:
    """A real OpenAI-compatible HTTP server on 127.0.0.1 serving simulated models (module docstring).

    ``judge`` tunes the simulated judge; ``catalogue`` replaces the bundled-task catalogue (tests); ``judge_data``
    adds judge-audit JSONL files whose human scores the judges learn (process-wide: :func:`add_audit_data`). Thread-safe:
    ``requests`` may be read from any thread while the server runs.
    """

    def __init__(
        self,
        port: int = 0,
        latency_ms: float = 0.0,
        faults: FaultPlan | None = None,
        honour_n: bool = True,
        *,
        judge: JudgeKnobs | None = None,
        catalogue: ItemCatalogue | None = None,
        judge_data: Sequence[str] = (),
        slots: int = 0,
        batches: BatchKnobs | None = None,
    ) -> None:
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port must be an integer 0-65535, got {port!r}")
        if latency_ms < 0:
            raise ValueError(f"latency must be non-negative, got {latency_ms} ms")
        self.port = port
        self.latency_ms = float(latency_ms)
        if not isinstance(slots, int) or slots < 0:
            raise ValueError(f"slots must be a non-negative integer, got {slots!r}")
        self.slots = slots  # 0 = unlimited; N = at most N requests in their latency at once (llama.cpp -np N)
        self._slot_gate: asyncio.Semaphore | None = None
        self.honour_n = honour_n
        self.judge = judge if judge is not None else JudgeKnobs()
        for path in judge_data:  # before serving: the judges' indexes are only read once requests arrive
            add_audit_data(path)
        self._fault_state = FaultState(faults or FaultPlan())
        self.batches = BatchAPI(batches)  # the Batch API (demo/batches.py)
        self._catalogue = catalogue
        self._records: list[RequestRecord] = []
        self._records_lock = threading.Lock()
        self._counter = 0
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._ready = threading.Event()  # set once the server has listened (base_url stays valid after stop)
        self._listening = threading.Event()
        self._startup_error: BaseException | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._created = int(time.time())
        self._models_body = json_body(
            {
                "object": "list",
                "data": [self._model_object(name) for name in simulate.SIM_MODELS],
            }
        )

    # ------------------------------------------------------------------------------------------- lifecycle

    def _model_object(self, name: str) -> dict:
        return {
            "id": name,
            "object": "model",
            "created": self._created,
            "owned_by": OWNED_BY,
            "description": simulate.MODEL_DESCRIPTIONS[name],
        }

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (valid once started)."""
        if not self._ready.is_set():
            raise RuntimeError("the demo server is not started")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def faults(self) -> FaultPlan:
        return self._fault_state.plan

    @faults.setter
    def faults(self, plan: FaultPlan | None) -> None:
        """Replace the fault plan (its script starts again with the next chat request)."""
        self._fault_state = FaultState(plan or FaultPlan())  # one atomic attribute swap

    @property
    def requests(self) -> list[RequestRecord]:
        """A copy of every request received so far, in arrival order."""
        with self._records_lock:
            return list(self._records)

    @property
    def chat_requests(self) -> list[RequestRecord]:
        """Only the ``/v1/chat/completions`` records."""
        return [r for r in self.requests if r.path == "/v1/chat/completions"]

    def clear_requests(self) -> None:
        with self._records_lock:
            self._records.clear()

    def start(self) -> DemoServer:
        """Start serving in a background thread; returns once the socket is listening.

        After :meth:`stop`, ``start()`` serves again on the same port (an endpoint that went down and came back);
        ``requests`` keeps the earlier records."""
        if self._thread is not None:
            raise RuntimeError("the demo server is already started")
        if self._catalogue is None:  # warm the bundled-task index in the background
            threading.Thread(target=bundled_catalogue, name="relgate-demo-index", daemon=True).start()
        self._listening = threading.Event()
        self._thread = threading.Thread(target=self._run, name="relgate-demo-server", daemon=True)
        self._thread.start()
        self._listening.wait()
        if self._startup_error is not None:
            self._thread.join()
            self._thread = None
            error, self._startup_error = self._startup_error, None
            raise OSError(f"demo server could not listen on 127.0.0.1:{self.port}: {error}") from error
        self._ready.set()
        return self

    def stop(self) -> None:
        """Stop serving and close every open connection (idempotent)."""
        if self._thread is None:
            return
        loop, stop_event = self._loop, self._stop_event
        if loop is not None and stop_event is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stop_event.set)
            except RuntimeError:
                pass
        self._thread.join(timeout=10)
        self._thread = None

    def __enter__(self) -> DemoServer:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # noqa: BLE001 - startup failure: reported to start()
            if not self._listening.is_set():
                self._startup_error = exc
                self._listening.set()
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                loop.close()

    async def _serve(self) -> None:
        self._stop_event = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        self._listening.set()
        try:
            await self._stop_event.wait()
        finally:
            server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            await server.wait_closed()
            pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    # ------------------------------------------------------------------------------------------- HTTP

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    return  # the client closed the connection (between requests or mid-head)
                except asyncio.LimitOverrunError:
                    await self._send(writer, error(431, "request head too large", "invalid_request_error"), False)
                    return
                parsed = self._parse_head(head)
                if parsed is None:
                    await self._send(writer, error(400, "malformed HTTP request", "invalid_request_error"), False)
                    return
                method, target, version, headers = parsed
                connection = headers.get("connection", "").lower()
                keep_alive = ("close" not in connection) if version == "HTTP/1.1" else ("keep-alive" in connection)
                try:
                    body = await self._read_body(reader, writer, headers)
                except (asyncio.LimitOverrunError, ValueError):
                    body = error(400, "malformed request body", "invalid_request_error")
                if isinstance(body, Response):
                    await self._send(writer, body, False)
                    return
                try:
                    path, _, query = target.partition("?")
                    response = await self._dispatch(method, path, body, query)
                except _Reset:
                    self._reset(writer)
                    return
                except Exception as exc:  # noqa: BLE001 - a bug must surface as a visible 500, not a silently dropped connection
                    response = error(500, f"demo server internal error: {exc!r}", "server_error")
                await self._send(writer, response, keep_alive)
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        except asyncio.CancelledError:  # server shutdown: end quietly (a cancelled handler task logs a traceback)
            return
        finally:
            self._writers.discard(writer)
            if not writer.transport.is_closing():
                writer.close()

    @staticmethod
    def _parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]] | None:
        try:
            lines = head.decode("latin-1").split("\r\n")
            method, target, version = lines[0].split(" ")
        except ValueError:
            return None
        if version not in ("HTTP/1.1", "HTTP/1.0") or not target.startswith("/"):
            return None
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                return None
            headers[name.lower()] = value.strip()
        return method, target, version, headers

    async def _read_body(self, reader, writer, headers: dict[str, str]) -> bytes | Response:
        if headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            total = 0
            while True:
                size_line = await reader.readuntil(b"\r\n")
                try:
                    size = int(size_line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    return error(400, "malformed chunked body", "invalid_request_error")
                total += size
                if total > MAX_BODY_BYTES:
                    return error(413, "request body too large", "invalid_request_error")
                if size == 0:
                    while (await reader.readuntil(b"\r\n")) != b"\r\n":
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
        length_text = headers.get("content-length")
        if length_text is None:
            return b""
        if not length_text.isdigit():
            return error(400, "invalid Content-Length", "invalid_request_error")
        length = int(length_text)
        if length > MAX_BODY_BYTES:
            remaining = length if length <= MAX_DRAIN_BYTES else 0  # read (and drop) it: the client then sees the 413,
            while remaining:                                         # not a reset while it is still sending
                chunk = await reader.read(min(remaining, 1 << 20))
                if not chunk:
                    break
                remaining -= len(chunk)
            return error(413, f"request body too large (over {MAX_BODY_BYTES:,} bytes)", "invalid_request_error")
        return await reader.readexactly(length) if length else b""

    async def _send(self, writer: asyncio.StreamWriter, response: Response, keep_alive: bool) -> None:
        head = [
            f"HTTP/1.1 {response.status} {REASONS.get(response.status, 'Unknown')}",
            "Server: relgate-demo (simulated models)",
            "Content-Type: application/json",
            f"Content-Length: {len(response.body)}",
            "Connection: keep-alive" if keep_alive else "Connection: close",
        ]
        head += [f"{name}: {value}" for name, value in response.headers]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body)
        await writer.drain()

    @staticmethod
    def _reset(writer: asyncio.StreamWriter) -> None:
        """Close with a TCP RST (SO_LINGER 0) and no response."""
        sock = writer.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        writer.transport.abort()

    def _record(self, record: RequestRecord) -> None:
        with self._records_lock:
            self._records.append(record)

    # ------------------------------------------------------------------------------------------- routes

    async def _dispatch(self, method: str, path: str, body: bytes, query: str = "") -> Response:
        if path in _MODEL_ROUTES and method == "POST":
            return await self._model_request(path, body)
        if path.startswith(BATCH_PREFIXES):
            response = await self.batches.handle(method, path, body, self._batch_answer, query)
        else:
            response = self._simple_route(method, path)
        self._record(RequestRecord(path, None, None, None, response.status, None))
        return response

    def _simple_route(self, method: str, path: str) -> Response:
        if path.startswith("/v1/models/") and method == "GET":
            name = path[len("/v1/models/") :]
            if name in simulate.SIM_MODELS:
                return Response(200, json_body(self._model_object(name)))
            return error(404, f"model {name!r} not found", "invalid_request_error", "model_not_found")
        allowed = _ROUTES.get(path) or ("GET" if path.startswith("/v1/models/") else None)
        if allowed is None:
            return error(404, f"no route for {path}", "invalid_request_error", "not_found")
        if method != allowed:
            return error(405, f"{method} not allowed on {path}", "invalid_request_error", headers=[("Allow", allowed)])
        if path == "/v1/models":
            return Response(200, self._models_body)
        return Response(200, b'{"status":"ok","simulated":true}')

    async def _model_request(self, path: str, body: bytes) -> Response:
        """A chat or embeddings request: parse, draw its fault (in arrival order), answer, record."""
        digest = hashlib.sha256(body).hexdigest()
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            payload = None
        if not isinstance(payload, dict):
            self._record(RequestRecord(path, None, digest, None, 400, None))
            return error(400, "request body must be a JSON object", "invalid_request_error")
        model, seed = payload.get("model"), payload.get("seed")
        if not isinstance(model, str):
            self._record(RequestRecord(path, None, digest, seed, 400, None))
            return error(400, "'model' is required", "invalid_request_error")
        self._counter += 1
        counter = self._counter
        fault = self._fault_state.next_fault()
        try:
            response = await self._fault_response(fault)
            if response is None:
                if path == "/v1/embeddings":
                    response = embeddings_response(payload, model, simulate.SIM_MODELS, fault)
                else:
                    response = await self._chat_response(payload, model, seed, counter, fault)
        except _Reset:
            self._record(RequestRecord(path, model, digest, seed, 0, fault))
            raise
        self._record(RequestRecord(path, model, digest, seed, response.status, fault))
        return response

    async def _batch_answer(self, payload: dict) -> Response:
        """One request line of a batch, answered as ``/v1/chat/completions`` would (no latency, no chat faults)."""
        model = payload.get("model")
        if not isinstance(model, str):
            return error(400, "'model' is required", "invalid_request_error")
        self._counter += 1
        return await self._chat_response(payload, model, payload.get("seed"), self._counter, None)

    async def _fault_response(self, fault: str | None) -> Response | None:
        """Apply the latency and ``fault``: the fault's response, None to answer normally (after any delay), or
        :class:`_Reset` for "reset" (the request has been read in full; it closes at once, without the latency)."""
        if fault == "reset":
            raise _Reset
        if self.latency_ms > 0 and self.slots:
            if self._slot_gate is None:  # created on the server's loop, at its first request
                self._slot_gate = asyncio.Semaphore(self.slots)
            async with self._slot_gate:  # a server with N slots answers N requests at a time
                await asyncio.sleep(self.latency_ms / 1000.0)
        elif self.latency_ms > 0:
            await asyncio.sleep(self.latency_ms / 1000.0)
        if fault == "slow":
            await asyncio.sleep(self.faults.slow_ms / 1000.0)
        elif fault == "429":
            plan = self.faults
            value = (
                str(plan.retry_after_s)
                if plan.retry_after == "seconds"
                else email.utils.formatdate(time.time() + plan.retry_after_s, usegmt=True)
            )
            return error(429, "simulated rate limit", "rate_limit_error", "rate_limit_exceeded", [("Retry-After", value)])
        elif fault == "500":
            return error(500, "simulated server error", "server_error")
        elif fault == "400":
            return error(400, "simulated client error (not retryable)", "invalid_request_error")
        return None

    async def _chat_response(self, payload: dict, model: str, seed: object, counter: int, fault: str | None) -> Response:
        invalid = validate_chat(payload, model, simulate.CHAT_MODELS, simulate.SIM_MODELS)
        if invalid is not None:
            return invalid
        if fault == "malformed":
            return Response(200, b'{"id":"chatcmpl-sim-malformed","object":"chat.completion","choices":[{"index":0,')
        n = payload.get("n", 1) if self.honour_n else 1
        loop = asyncio.get_running_loop()
        if model in simulate.JUDGE_MODELS and self._catalogue is None:
            await loop.run_in_executor(None, human_quality_index)
            await loop.run_in_executor(None, candidate_index)
        catalogue = self._catalogue
        if catalogue is None:
            catalogue = self._catalogue = await loop.run_in_executor(None, bundled_catalogue)
        messages = payload["messages"]
        completions = (
            []
            if fault == "empty"
            else simulate.simulate_chat(model, messages, seed, n, counter, catalogue, self.judge)
        )
        return Response(200, json_body(completion_body(payload, model, counter, messages, completions)))
