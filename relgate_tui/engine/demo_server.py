"""The demo endpoint (SPEC §4.6): a real HTTP/1.1 server on 127.0.0.1 speaking the OpenAI chat API, serving
clearly labelled *simulated* models (see :mod:`relgate_tui.engine.simulation`) with optional fault injection.

Use it in tests and benchmarks over real sockets::

    with DemoServer(latency_ms=20, faults=FaultPlan(script=["429", None, "500"])) as server:
        httpx.post(server.base_url + "/chat/completions", json={...})
        server.requests  # -> [RequestRecord(...), ...]

Routes: ``GET /v1/models``, ``GET /v1/models/{id}``, ``POST /v1/chat/completions``, ``GET /health``. Unknown paths get a
JSON 404, a wrong method a JSON 405, a body that is not a JSON object a JSON 400 (OpenAI's error shape
``{"error": {"message", "type", "code"}}``). An unknown model gets 404 ``model_not_found``.

Chat requests accept ``messages``, ``temperature``, ``top_p`` (both accepted and ignored: p* stays known),
``max_tokens`` (longer answers are cut to that many whitespace tokens, ``finish_reason: "length"``), ``n`` (honoured
only when ``honour_n=True``; otherwise exactly one choice, like llama.cpp), ``seed`` (answers are deterministic given
model, last user message and seed; without a seed a per-server counter varies them) and ``logprobs``.

Faults are decided for every well-formed chat request (JSON object with a ``model``), in arrival order: a
``FaultPlan.script`` applies to the first requests, then ``rate`` draws from ``kinds`` with a seeded RNG.
``latency_ms`` delays every chat response, including fault responses ("reset" closes at once).

Implementation: stdlib asyncio (``asyncio.start_server``) in a daemon thread with its own event loop; a small
HTTP/1.1 parser (Content-Length and chunked bodies, keep-alive, ``Connection: close``, HTTP/1.0, ``Expect:
100-continue``). Per-request work is a dict lookup into precomputed per-item tables plus JSON encoding.
"""

from __future__ import annotations

import argparse
import asyncio
import email.utils
import hashlib
import json
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from random import Random

from relgate_tui.engine import simulation
from relgate_tui.engine.simulation import ItemCatalogue, JudgeKnobs

__all__ = ["FAULT_KINDS", "DemoServer", "DemoServerProcess", "FaultPlan", "RequestRecord", "main"]

FAULT_KINDS: tuple[str, ...] = ("429", "500", "slow", "malformed", "empty", "reset", "400")
OWNED_BY = "relgate-simulated"
MAX_BODY_BYTES = 32 * 1024 * 1024
MAX_N = 128


@dataclass(frozen=True)
class FaultPlan:
    """Which chat requests fail and how.

    * ``script``: fault kinds (or None = no fault) for the first ``len(script)`` chat requests, in order.
    * ``rate``: after the script, each request fails with probability ``rate``, the kind drawn uniformly from
      ``kinds`` (RNG seeded with ``seed``).
    * ``retry_after``: "seconds" (``Retry-After: 1``) or "date" (an HTTP date ``retry_after_s`` seconds ahead);
      ``retry_after_s`` is the delay in whole seconds.
    * ``slow_ms``: extra delay of a "slow" response (then a normal answer).
    """

    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    seed: int = 0
    script: tuple[str | None, ...] = ()
    retry_after: str = "seconds"
    retry_after_s: int = 1
    slow_ms: float = 1500.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "kinds", tuple(self.kinds))
        object.__setattr__(self, "script", tuple(self.script))
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"fault rate must be between 0 and 1, got {self.rate}")
        unknown = [k for k in (*self.kinds, *self.script) if k is not None and k not in FAULT_KINDS]
        if unknown:
            raise ValueError(f"unknown fault kind {unknown[0]!r} (known: {', '.join(FAULT_KINDS)})")
        if self.rate > 0 and not self.kinds:
            raise ValueError("a fault rate needs at least one fault kind")
        if self.retry_after not in ("seconds", "date"):
            raise ValueError(f"retry_after must be 'seconds' or 'date', got {self.retry_after!r}")
        if self.retry_after_s < 0 or self.slow_ms < 0:
            raise ValueError("retry_after_s and slow_ms must be non-negative")


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


_REASONS = {
    100: "Continue",
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Payload Too Large",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
}
_ROUTES = {"/v1/models": "GET", "/v1/chat/completions": "POST", "/health": "GET"}
_TOKEN = re.compile(r"\s*\S+")


class _FaultState:
    """The running schedule of a :class:`FaultPlan` (used on the server's loop thread only)."""

    def __init__(self, plan: FaultPlan) -> None:
        self.plan = plan
        self.rng = Random(plan.seed)
        self.index = 0

    def next_fault(self) -> str | None:
        index, self.index = self.index, self.index + 1
        if index < len(self.plan.script):
            return self.plan.script[index]
        if self.plan.rate > 0.0 and self.rng.random() < self.plan.rate:
            return self.plan.kinds[int(self.rng.random() * len(self.plan.kinds))]
        return None


class _Reset(Exception):
    """Internal: close the connection without a response."""


@dataclass
class _Response:
    status: int
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)


def _json_body(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _error(status: int, message: str, kind: str, code: str | None = None, headers=None) -> _Response:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return _Response(status, _json_body(body), list(headers or []))


def _words(text: str) -> int:
    return len(text.split())


class DemoServer:
    """A real OpenAI-compatible HTTP server on 127.0.0.1 serving simulated models (module docstring).

    ``judge`` tunes the simulated judge; ``catalogue`` replaces the bundled-task catalogue (tests). Thread-safe:
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
    ) -> None:
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port must be an integer 0-65535, got {port!r}")
        if latency_ms < 0:
            raise ValueError(f"latency must be non-negative, got {latency_ms} ms")
        self.port = port
        self.latency_ms = float(latency_ms)
        self.honour_n = honour_n
        self.judge = judge if judge is not None else JudgeKnobs()
        self._fault_state = _FaultState(faults or FaultPlan())
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
        self._models_body = _json_body(
            {
                "object": "list",
                "data": [self._model_object(name) for name in simulation.SIM_MODELS],
            }
        )

    # ------------------------------------------------------------------------------------------- lifecycle

    def _model_object(self, name: str) -> dict:
        return {
            "id": name,
            "object": "model",
            "created": self._created,
            "owned_by": OWNED_BY,
            "description": simulation.MODEL_DESCRIPTIONS[name],
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
        self._fault_state = _FaultState(plan or FaultPlan())  # one atomic attribute swap

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
            threading.Thread(target=simulation.bundled_catalogue, name="relgate-demo-index", daemon=True).start()
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
        except BaseException as exc:  # startup failure: reported to start()
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
                    await self._send(writer, _error(431, "request head too large", "invalid_request_error"), False)
                    return
                parsed = self._parse_head(head)
                if parsed is None:
                    await self._send(writer, _error(400, "malformed HTTP request", "invalid_request_error"), False)
                    return
                method, target, version, headers = parsed
                connection = headers.get("connection", "").lower()
                keep_alive = ("close" not in connection) if version == "HTTP/1.1" else ("keep-alive" in connection)
                try:
                    body = await self._read_body(reader, writer, headers)
                except (asyncio.LimitOverrunError, ValueError):
                    body = _error(400, "malformed request body", "invalid_request_error")
                if isinstance(body, _Response):
                    await self._send(writer, body, False)
                    return
                try:
                    response = await self._dispatch(method, target.split("?", 1)[0], body)
                except _Reset:
                    self._reset(writer)
                    return
                except Exception as exc:  # a bug must surface as a visible 500, not a silently dropped connection
                    response = _error(500, f"demo server internal error: {exc!r}", "server_error")
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

    async def _read_body(self, reader, writer, headers: dict[str, str]) -> bytes | _Response:
        if headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks, total = [], 0
            while True:
                size_line = await reader.readuntil(b"\r\n")
                try:
                    size = int(size_line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    return _error(400, "malformed chunked body", "invalid_request_error")
                total += size
                if total > MAX_BODY_BYTES:
                    return _error(413, "request body too large", "invalid_request_error")
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
            return _error(400, "invalid Content-Length", "invalid_request_error")
        length = int(length_text)
        if length > MAX_BODY_BYTES:
            return _error(413, "request body too large", "invalid_request_error")
        return await reader.readexactly(length) if length else b""

    async def _send(self, writer: asyncio.StreamWriter, response: _Response, keep_alive: bool) -> None:
        head = [
            f"HTTP/1.1 {response.status} {_REASONS.get(response.status, 'Unknown')}",
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

    async def _dispatch(self, method: str, path: str, body: bytes) -> _Response:
        if path == "/v1/chat/completions" and method == "POST":
            return await self._chat(path, body)
        response = self._simple_route(method, path)
        self._record(RequestRecord(path, None, None, None, response.status, None))
        return response

    def _simple_route(self, method: str, path: str) -> _Response:
        if path.startswith("/v1/models/") and method == "GET":
            name = path[len("/v1/models/") :]
            if name in simulation.SIM_MODELS:
                return _Response(200, _json_body(self._model_object(name)))
            return _error(404, f"model {name!r} not found", "invalid_request_error", "model_not_found")
        allowed = _ROUTES.get(path) or ("GET" if path.startswith("/v1/models/") else None)
        if allowed is None:
            return _error(404, f"no route for {path}", "invalid_request_error", "not_found")
        if method != allowed:
            return _error(405, f"{method} not allowed on {path}", "invalid_request_error", headers=[("Allow", allowed)])
        if path == "/v1/models":
            return _Response(200, self._models_body)
        return _Response(200, b'{"status":"ok","simulated":true}')

    async def _chat(self, path: str, body: bytes) -> _Response:
        digest = hashlib.sha256(body).hexdigest()
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            payload = None
        if not isinstance(payload, dict):
            self._record(RequestRecord(path, None, digest, None, 400, None))
            return _error(400, "request body must be a JSON object", "invalid_request_error")
        model, seed = payload.get("model"), payload.get("seed")
        if not isinstance(model, str):
            self._record(RequestRecord(path, None, digest, seed, 400, None))
            return _error(400, "'model' is required", "invalid_request_error")
        self._counter += 1
        counter = self._counter
        fault = self._fault_state.next_fault()
        try:
            response = await self._chat_response(payload, model, seed, counter, fault)
        except _Reset:
            self._record(RequestRecord(path, model, digest, seed, 0, fault))
            raise
        self._record(RequestRecord(path, model, digest, seed, response.status, fault))
        return response

    async def _chat_response(self, payload: dict, model: str, seed: object, counter: int, fault: str | None) -> _Response:
        if fault == "reset":
            raise _Reset
        if self.latency_ms > 0:
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
            return _error(429, "simulated rate limit", "rate_limit_error", "rate_limit_exceeded", [("Retry-After", value)])
        elif fault == "500":
            return _error(500, "simulated server error", "server_error")
        elif fault == "400":
            return _error(400, "simulated client error (not retryable)", "invalid_request_error")
        invalid = self._validate(payload, model)
        if invalid is not None:
            return invalid
        if fault == "malformed":
            return _Response(200, b'{"id":"chatcmpl-sim-malformed","object":"chat.completion","choices":[{"index":0,')
        n = payload.get("n", 1) if self.honour_n else 1
        if model == simulation.JUDGE_MODEL and self._catalogue is None:
            await asyncio.get_running_loop().run_in_executor(None, simulation.human_quality_index)
        catalogue = self._catalogue
        if catalogue is None:
            catalogue = self._catalogue = await asyncio.get_running_loop().run_in_executor(
                None, simulation.bundled_catalogue
            )
        messages = payload["messages"]
        completions = (
            []
            if fault == "empty"
            else simulation.simulate_chat(model, messages, seed, n, counter, catalogue, self.judge)
        )
        return _Response(200, _json_body(self._completion_body(payload, model, counter, messages, completions)))

    @staticmethod
    def _validate(payload: dict, model: str) -> _Response | None:
        if model not in simulation.SIM_MODELS:
            return _error(
                404,
                f"model {model!r} not found (simulated models: {', '.join(simulation.SIM_MODELS)})",
                "invalid_request_error",
                "model_not_found",
            )
        messages = payload.get("messages")
        if (
            not isinstance(messages, list)
            or not messages
            or not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages)
        ):
            return _error(400, "'messages' must be a non-empty list of {role, content} objects", "invalid_request_error")
        n = payload.get("n", 1)
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_N:
            return _error(400, f"'n' must be an integer between 1 and {MAX_N}", "invalid_request_error")
        max_tokens = payload.get("max_tokens")
        if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
            return _error(400, "'max_tokens' must be a positive integer", "invalid_request_error")
        for name in ("temperature", "top_p"):
            value = payload.get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                return _error(400, f"'{name}' must be a non-negative number", "invalid_request_error")
        return None

    def _completion_body(
        self, payload: dict, model: str, counter: int, messages: Sequence[dict], completions: list
    ) -> dict:
        max_tokens = payload.get("max_tokens")
        want_logprobs = payload.get("logprobs") is True
        choices, completion_tokens = [], 0
        for index, completion in enumerate(completions):
            tokens = _TOKEN.findall(completion.text)
            finish = "stop"
            if max_tokens is not None and len(tokens) > max_tokens:
                tokens, finish = tokens[:max_tokens], "length"
            text = "".join(tokens).lstrip() if finish == "length" else completion.text
            completion_tokens += len(tokens)
            choice = {"index": index, "message": {"role": "assistant", "content": text}, "logprobs": None,
                      "finish_reason": finish}
            if want_logprobs:
                choice["logprobs"] = {
                    "content": [
                        {
                            "token": token,
                            "logprob": round(completion.logprob if i == 0 else -0.02 * (1 + i % 3), 6),
                            "bytes": list(token.encode("utf-8")),
                            "top_logprobs": [],
                        }
                        for i, token in enumerate(tokens)
                    ]
                }
            choices.append(choice)
        prompt_tokens = sum(_words(m["content"]) for m in messages if isinstance(m.get("content"), str))
        return {
            "id": f"chatcmpl-sim-{counter}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": OWNED_BY,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


class DemoServerProcess:
    """The demo server in a child process (``main()``), for throughput benchmarks.

    An in-process :class:`DemoServer` shares the GIL with the client, which then measures the two together; a
    benchmark should run the server here instead. No ``requests`` records (they live in the child).
    ``with DemoServerProcess(latency_ms=20) as server: server.base_url``.
    """

    def __init__(self, latency_ms: float = 0.0, fault_rate: float = 0.0, honour_n: bool = True, port: int = 0) -> None:
        self.argv = ["--port", str(port), "--latency-ms", repr(float(latency_ms)), "--fault-rate", repr(float(fault_rate))]
        if not honour_n:
            self.argv.append("--ignore-n")
        self.process: subprocess.Popen | None = None
        self.base_url = ""

    def start(self) -> DemoServerProcess:
        code = f"from relgate_tui.engine.demo_server import main; raise SystemExit(main({self.argv!r}))"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        first = self.process.stdout.readline().strip() if self.process.stdout else ""
        if not first.startswith("http://127.0.0.1:"):
            error = self.process.communicate(timeout=10)[1].strip() if self.process.poll() is not None else first
            self.stop()
            raise OSError(f"demo server process did not start: {error}")
        self.base_url = first
        return self

    def stop(self) -> int | None:
        """SIGTERM the child and wait; returns its exit code (0 = clean)."""
        process, self.process = self.process, None
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        return process.returncode

    def __enter__(self) -> DemoServerProcess:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


# ----------------------------------------------------------------------------------------------- CLI


def _parser() -> _ArgumentParser:
    parser = _ArgumentParser(
        prog="relgate demo-server",
        description="Serve SIMULATED models (not real LLMs) over the OpenAI chat API on 127.0.0.1.",
    )
    parser.add_argument("--port", type=int, default=0, help="TCP port (0 = any free port; default 0)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="simulated latency per chat call (ms)")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of chat calls that fail (0-1)")
    parser.add_argument("--fault-seed", type=int, default=0, help="seed of the fault schedule")
    parser.add_argument("--ignore-n", action="store_true", help="return one choice whatever n is (like llama.cpp)")
    return parser


class _UsageError(ValueError):
    """A bad command-line option (reported as one line)."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise _UsageError(message)


def main(argv: list[str] | None = None) -> int:
    """``relgate demo-server``: print the base URL (first line), say the models are simulated, serve until
    SIGINT/SIGTERM, return 0. Bad options: a one-line message on stderr and 2."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if not 0 <= args.port <= 65535:
            raise _UsageError(f"--port must be 0-65535, got {args.port}")
        if args.latency_ms < 0:
            raise _UsageError(f"--latency-ms must be non-negative, got {args.latency_ms}")
        faults = FaultPlan(rate=args.fault_rate, seed=args.fault_seed)
        server = DemoServer(args.port, args.latency_ms, faults, honour_n=not args.ignore_n).start()
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except (ValueError, OSError) as exc:
        print(f"relgate demo-server: {exc}", file=sys.stderr, flush=True)
        return 2
    stop = threading.Event()
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, lambda *_: stop.set())
    try:
        print(server.base_url, flush=True)
        print(
            f"SIMULATED models (not real LLMs): {', '.join(simulation.SIM_MODELS)}"
            f" - latency {args.latency_ms:g} ms, fault rate {args.fault_rate:g}. Stop with Ctrl-C.",
            flush=True,
        )
        while not stop.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
