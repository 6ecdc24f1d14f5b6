"""The demo endpoint over real loopback sockets (httpx and raw sockets)."""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from relgate_tui import demo as sim
from relgate_tui.core.canon import canonicalize_references, get_canonicalizer
from relgate_tui.demo import FAULT_KINDS, DemoServer, DemoServerProcess, FaultPlan, RequestRecord, main
from relgate_tui.engine.certification.tasks import Task, load_task
from relgate_tui.engine.judging.prompts import (
    correctness_pairwise_prompt,
    direct_prompt,
    pairwise_prompt,
    parse_direct_score,
    parse_pairwise_verdict,
)
from relgate_tui.engine.records import TaskItem
from relgate_tui.engine.transport.prompts import item_messages

QUESTION = "What is 123 + 456?"


def _chat(model: str = "sim-mid", content: str = QUESTION, **extra) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": content}], **extra}


@pytest.fixture(scope="module")
def server():
    with DemoServer() as running:
        yield running


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.base_url, timeout=10) as c:
        yield c


# ------------------------------------------------------------------------------------------------ basics


def test_base_url_and_models(server, client) -> None:
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1" and server.port > 0
    listing = client.get("/models").json()
    assert listing["object"] == "list"
    assert [m["id"] for m in listing["data"]] == [
        "sim-strong", "sim-mid", "sim-weak", "sim-judge", "sim-judge-long", "sim-judge-short", "sim-judge-numbers",
        "sim-judge-hedges", "sim-judge-sensitive", "sim-paraphraser", "sim-embed",
    ]
    assert all(m["owned_by"] == "relgate-simulated" and "SIMULATED" in m["description"] for m in listing["data"])
    assert client.get("/models/sim-judge").json()["id"] == "sim-judge"
    assert client.get("/models/gpt-4").status_code == 404
    assert client.get(f"http://127.0.0.1:{server.port}/health").json()["simulated"] is True


def test_chat_completion_shape_and_usage(client) -> None:
    response = client.post("/chat/completions", json=_chat(seed=1, temperature=0.7, top_p=0.9, max_tokens=200))
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["object"] == "chat.completion" and body["model"] == "sim-mid" and body["id"].startswith("chatcmpl-")
    (choice,) = body["choices"]
    assert choice["index"] == 0 and choice["message"]["role"] == "assistant" and choice["finish_reason"] == "stop"
    content = choice["message"]["content"]
    assert isinstance(content, str)
    usage = body["usage"]
    assert usage["prompt_tokens"] == len(QUESTION.split())
    assert usage["completion_tokens"] == len(content.split())
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert choice["logprobs"] is None


def test_answers_are_deterministic_given_model_content_and_seed(server, client) -> None:
    def answers(c: httpx.Client, seed) -> list[str]:
        payload = _chat("sim-weak", seed=seed)
        return [c.post("/chat/completions", json=payload).json()["choices"][0]["message"]["content"] for _ in range(3)]

    assert len(set(answers(client, 5))) == 1
    with DemoServer() as other, httpx.Client(base_url=other.base_url) as other_client:
        assert answers(other_client, 5) == answers(client, 5)  # a different server instance: same answer
    contents = {answers(client, seed)[0] for seed in range(40)}
    assert len(contents) > 3  # seeds vary the sample
    unseeded = {client.post("/chat/completions", json=_chat("sim-weak")).json()["choices"][0]["message"]["content"] for _ in range(40)}
    assert len(unseeded) > 3  # without a seed the per-server counter varies it


def test_unknown_arithmetic_question_is_answered_mostly_correctly(client) -> None:
    texts = [
        client.post("/chat/completions", json=_chat("sim-strong", "What is 6 * 7?", seed=s)).json()["choices"][0]["message"]["content"]
        for s in range(30)
    ]
    p_star = sim.true_p_star("sim-strong", sim.unknown_item_id("What is 6 * 7?"))
    hits = sum("42" in t for t in texts)
    assert hits >= 30 * p_star - 4 * (30 * p_star * (1 - p_star)) ** 0.5 - 1


def test_n_is_honoured_or_ignored() -> None:
    payload = _chat(seed=3, n=5)
    with DemoServer() as honouring, DemoServer(honour_n=False) as ignoring:
        many = httpx.post(honouring.base_url + "/chat/completions", json=payload).json()["choices"]
        one = httpx.post(ignoring.base_url + "/chat/completions", json=payload).json()["choices"]
    assert [c["index"] for c in many] == [0, 1, 2, 3, 4] and len(one) == 1
    assert one[0]["message"] == many[0]["message"]


def test_logprobs_when_requested(client) -> None:
    choice = client.post("/chat/completions", json=_chat(seed=2, logprobs=True)).json()["choices"][0]
    tokens = choice["logprobs"]["content"]
    assert tokens and "".join(t["token"] for t in tokens) == choice["message"]["content"]
    assert all(t["logprob"] <= 0 and bytes(t["bytes"]) == t["token"].encode() for t in tokens)


def test_max_tokens_truncates(client) -> None:
    texts = []
    for seed in range(60):
        choice = client.post("/chat/completions", json=_chat(seed=seed, max_tokens=1)).json()["choices"][0]
        assert len(choice["message"]["content"].split()) <= 1
        texts.append((choice["finish_reason"], choice["message"]["content"]))
    assert any(reason == "length" for reason, _ in texts) and any(reason == "stop" for reason, _ in texts)


def test_judge_model_answers_judge_prompts(client) -> None:
    pairwise = pairwise_prompt("Write a story.", "Once upon a time.", "It was a dark night.", "Coherence", "Logical flow.")
    verdicts = [
        parse_pairwise_verdict(client.post("/chat/completions", json={"model": "sim-judge", "messages": pairwise, "seed": s}).json()["choices"][0]["message"]["content"])
        for s in range(20)
    ]
    assert sum(v is not None for v in verdicts) >= 17 and set(verdicts) - {None} <= {"A", "B"}
    direct = direct_prompt("Write a story.", "Once upon a time.", "Coherence", "Logical flow.")
    scores = [
        parse_direct_score(client.post("/chat/completions", json={"model": "sim-judge", "messages": direct, "seed": s}).json()["choices"][0]["message"]["content"])
        for s in range(20)
    ]
    assert sum(s is not None for s in scores) >= 17


def test_bundled_style_item_recognised_through_injected_catalogue() -> None:
    task = Task("t", "t.jsonl", "0" * 64, (TaskItem("only", "Capital of France?", ("B",), ("Rome", "Paris")),), canon="mcq")
    catalogue = sim.ItemCatalogue.from_tasks([task], lambda item: [{"role": "user", "content": "Q: " + item.question}])
    with DemoServer(catalogue=catalogue) as running, httpx.Client(base_url=running.base_url) as c:
        texts = [
            c.post("/chat/completions", json=_chat("sim-strong", "Q: Capital of France?", seed=s)).json()["choices"][0]["message"]["content"]
            for s in range(40)
        ]
    dist = sim.answer_distribution("sim-strong", catalogue.item_for("Q: Capital of France?"))
    assert dist.values[0] == "B"
    assert sum(t in {"B", "(B)", "The answer is B.", "B. Paris", "Paris", "Answer: B", "**B**"} for t in texts) >= 20


@pytest.mark.parametrize(("task_name", "index", "model"), [("gsm8k", 3, "sim-mid"), ("mmlu", 10, "sim-weak"), ("bigbench-3digit-addition", 0, "sim-strong")])
def test_bundled_item_correct_rate_matches_p_star(client, task_name: str, index: int, model: str) -> None:
    """Over the wire: the share of canonicalized samples in the reference classes estimates the known p*."""
    task = load_task(task_name)
    item = task.items[index]
    canon = get_canonicalizer(task.canon)
    references = canonicalize_references(canon, item.answers, item.choices)
    messages = item_messages(item, system="You are a careful assistant.")
    texts = []
    for seed in (0, 1, 2):
        body = client.post("/chat/completions", json={"model": model, "messages": messages, "seed": seed, "n": 100}).json()
        texts += [choice["message"]["content"] for choice in body["choices"]]
    share = sum(canon(text, item.choices) in references for text in texts) / len(texts)
    p_star = sim.true_p_star(model, item.id)
    assert abs(share - p_star) <= 4 * (p_star * (1 - p_star) / len(texts)) ** 0.5 + 0.01


def test_correctness_judge_over_http_on_a_bundled_item(client) -> None:
    item = load_task("bigbench-2digit-multiplication").items[0]
    question = item_messages(item)[-1]["content"]
    wrong = str(int(item.answers[0]) + 10)
    verdicts = []
    for seed in range(40):
        for first, second, correct in ((item.answers[0], wrong, "A"), (f"The answer is {wrong}.", f"#### {item.answers[0]}", "B")):
            payload = {"model": "sim-judge", "messages": correctness_pairwise_prompt(question, first, second), "seed": seed}
            text = client.post("/chat/completions", json=payload).json()["choices"][0]["message"]["content"]
            verdicts.append(parse_pairwise_verdict(text) == correct)
    assert sum(verdicts) >= 0.85 * len(verdicts)


# ------------------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "fragment"),
    [
        ("GET", "/v1/nowhere", None, 404, "no route"),
        ("GET", "/v1/chat/completions", None, 405, "not allowed"),
        ("POST", "/v1/models", b"{}", 405, "not allowed"),
        ("POST", "/v1/chat/completions", b"{not json", 400, "JSON object"),
        ("POST", "/v1/chat/completions", b"[1, 2]", 400, "JSON object"),
        ("POST", "/v1/chat/completions", b"\xff\xfe", 400, "JSON object"),
        ("POST", "/v1/chat/completions", json.dumps({"messages": []}).encode(), 400, "'model'"),
        ("POST", "/v1/chat/completions", json.dumps(_chat("gpt-4")).encode(), 404, "not found"),
        ("POST", "/v1/chat/completions", json.dumps({"model": "sim-mid", "messages": "hi"}).encode(), 400, "messages"),
        ("POST", "/v1/chat/completions", json.dumps({"model": "sim-mid", "messages": []}).encode(), 400, "messages"),
        ("POST", "/v1/chat/completions", json.dumps(_chat(n=0)).encode(), 400, "'n'"),
        ("POST", "/v1/chat/completions", json.dumps(_chat(n="2")).encode(), 400, "'n'"),
        ("POST", "/v1/chat/completions", json.dumps(_chat(max_tokens=0)).encode(), 400, "max_tokens"),
        ("POST", "/v1/chat/completions", json.dumps(_chat(temperature="hot")).encode(), 400, "temperature"),
    ],
)
def test_json_errors(client, server, method, path, body, status, fragment) -> None:
    response = client.request(method, f"http://127.0.0.1:{server.port}{path}", content=body)
    assert response.status_code == status
    error = response.json()["error"]
    assert fragment in error["message"] and error["type"]
    if status == 405:
        assert response.headers["allow"] in {"GET", "POST"}


# ------------------------------------------------------------------------------------------------ HTTP details


def _raw_request(body: bytes, extra_headers: str = "", version: str = "HTTP/1.1") -> bytes:
    return (
        f"POST /v1/chat/completions {version}\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{extra_headers}\r\n"
    ).encode() + body


def _read_response(sock: socket.socket, buffer: bytearray) -> tuple[bytes, dict, bytes]:
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        assert chunk, "connection closed before a response"
        buffer += chunk
    head, _, rest = bytes(buffer).partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk
        rest += chunk
    buffer[:] = rest[length:]
    return lines[0].encode(), headers, rest[:length]


def _closed(sock: socket.socket) -> bool:
    sock.settimeout(2)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_keep_alive_pipelining_and_connection_close(server) -> None:
    body = json.dumps(_chat(seed=1)).encode()
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(_raw_request(body) + _raw_request(body))  # two pipelined requests
        buffer = bytearray()
        first = _read_response(sock, buffer)
        second = _read_response(sock, buffer)
        assert first[0].startswith(b"HTTP/1.1 200") and second[0].startswith(b"HTTP/1.1 200")
        assert first[1]["connection"] == "keep-alive"
        assert json.loads(first[2])["choices"] == json.loads(second[2])["choices"]
        sock.sendall(_raw_request(body, "Connection: close\r\n"))
        status, headers, _ = _read_response(sock, buffer)
        assert status.startswith(b"HTTP/1.1 200") and headers["connection"] == "close"
        assert _closed(sock)


def test_http_1_0_closes_and_chunked_body_is_read(server) -> None:
    body = json.dumps(_chat(seed=4)).encode()
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(_raw_request(body, version="HTTP/1.0"))
        status, headers, payload = _read_response(sock, bytearray())
        assert status.startswith(b"HTTP/1.1 200") and headers["connection"] == "close" and json.loads(payload)["choices"]
        assert _closed(sock)
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:10], body[10:])) + b"0\r\n\r\n"
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(head + chunked)
        status, _, payload = _read_response(sock, bytearray())
        assert status.startswith(b"HTTP/1.1 200") and json.loads(payload)["model"] == "sim-mid"


def test_malformed_http_gets_400_and_close(server) -> None:
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"NONSENSE\r\n\r\n")
        status, headers, payload = _read_response(sock, bytearray())
        assert status.startswith(b"HTTP/1.1 400") and "error" in json.loads(payload)
        assert _closed(sock)


async def test_concurrent_requests_overlap_their_latency() -> None:
    with DemoServer(latency_ms=300) as running:
        async with httpx.AsyncClient(base_url=running.base_url, timeout=10) as c:
            start = time.perf_counter()
            responses = await asyncio.gather(*[c.post("/chat/completions", json=_chat(seed=s)) for s in range(8)])
            elapsed = time.perf_counter() - start
    assert all(r.status_code == 200 for r in responses)
    assert 0.3 <= elapsed < 8 * 0.3 / 2  # each waits the latency; they overlap


# ------------------------------------------------------------------------------------------------ faults


def _post(base_url: str, seed: int = 0, timeout: float = 10.0) -> httpx.Response:
    return httpx.post(base_url + "/chat/completions", json=_chat(seed=seed), timeout=timeout)


def test_fault_429_retry_after_seconds() -> None:
    with DemoServer(faults=FaultPlan(script=["429"], retry_after_s=3)) as running:
        limited = _post(running.base_url)
        after = _post(running.base_url)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "3"
    assert limited.json()["error"]["type"] == "rate_limit_error"
    assert after.status_code == 200


def test_fault_429_retry_after_http_date() -> None:
    with DemoServer(faults=FaultPlan(script=["429"], retry_after="date", retry_after_s=5)) as running:
        limited = _post(running.base_url)
    when = email.utils.parsedate_to_datetime(limited.headers["retry-after"])
    assert limited.status_code == 429 and limited.headers["retry-after"].endswith(" GMT")
    assert 3 <= when.timestamp() - time.time() <= 6


@pytest.mark.parametrize(("kind", "status"), [("500", 500), ("400", 400)])
def test_fault_status_errors(kind: str, status: int) -> None:
    with DemoServer(faults=FaultPlan(script=[kind])) as running:
        response = _post(running.base_url)
        assert response.status_code == status and "simulated" in response.json()["error"]["message"]
        assert running.chat_requests[0].fault == kind and running.chat_requests[0].status == status


def test_fault_malformed_json() -> None:
    with DemoServer(faults=FaultPlan(script=["malformed"])) as running:
        response = _post(running.base_url)
    assert response.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(response.content)


def test_fault_empty_choices() -> None:
    with DemoServer(faults=FaultPlan(script=["empty"])) as running:
        body = _post(running.base_url).json()
    assert body["choices"] == [] and body["object"] == "chat.completion"


def test_fault_reset_closes_without_response() -> None:
    with DemoServer(faults=FaultPlan(script=["reset"])) as running:
        with pytest.raises(httpx.TransportError):
            _post(running.base_url)
        assert _post(running.base_url).status_code == 200  # the server keeps serving
        records = running.chat_requests
    assert (records[0].status, records[0].fault) == (0, "reset") and records[1].status == 200


def _read_until_reset(sock: socket.socket) -> bytes:
    """Read until the peer closes; raises ConnectionResetError on a TCP RST."""
    sock.settimeout(10)
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def test_fault_reset_reads_the_request_then_sends_a_tcp_rst() -> None:
    """Issue 10 §2: the server reads the whole request (the record has its body hash), then resets (ECONNRESET,
    not an orderly FIN, no response bytes)."""
    body = json.dumps(_chat(seed=1, padding="x" * 200_000)).encode()  # larger than one socket buffer
    with DemoServer(faults=FaultPlan(script=["reset"])) as running:
        with socket.create_connection(("127.0.0.1", running.port)) as sock:
            sock.sendall(_raw_request(body))
            with pytest.raises(ConnectionResetError):
                _read_until_reset(sock)
        (record,) = running.chat_requests
    assert (record.status, record.fault) == (0, "reset")
    assert record.body_sha256 == hashlib.sha256(body).hexdigest()  # the request was read in full first


def test_fault_kinds_option_reaches_the_server_process() -> None:
    """``relgate demo-server --fault-rate 1 --fault-kinds reset`` (via DemoServerProcess): every request resets."""
    server = DemoServerProcess(fault_rate=1.0, fault_kinds=("reset",)).start()
    try:
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        for seed in range(3):
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(_raw_request(json.dumps(_chat(seed=seed)).encode()))
                with pytest.raises(ConnectionResetError):
                    _read_until_reset(sock)
        assert httpx.get(server.base_url + "/models", timeout=5).status_code == 200  # only model requests fail
    finally:
        assert server.stop() == 0


def test_fault_slow_times_out_a_short_client_timeout() -> None:
    with DemoServer(faults=FaultPlan(script=["slow", "slow"], slow_ms=600)) as running:
        with pytest.raises(httpx.ReadTimeout):
            _post(running.base_url, timeout=0.2)
        start = time.perf_counter()
        response = _post(running.base_url)
        assert response.status_code == 200 and response.json()["choices"]
        assert time.perf_counter() - start >= 0.6


def test_rate_based_faults_are_seeded_and_cover_all_kinds() -> None:
    plan = FaultPlan(rate=0.5, seed=11, slow_ms=20)

    def run() -> list[str | None]:
        with DemoServer(faults=plan) as running, httpx.Client(base_url=running.base_url, timeout=5) as c:
            for s in range(120):
                try:
                    c.post("/chat/completions", json=_chat(seed=s))
                except httpx.TransportError:
                    pass
            return [r.fault for r in running.chat_requests]

    faults = run()
    assert faults == run() and len(faults) == 120
    assert 40 <= sum(f is not None for f in faults) <= 80
    assert set(faults) - {None} == set(FAULT_KINDS)


def test_faults_can_be_replaced_while_running() -> None:
    with DemoServer() as running:
        assert _post(running.base_url).status_code == 200
        running.faults = FaultPlan(script=["500"])
        assert _post(running.base_url).status_code == 500
        assert _post(running.base_url).status_code == 200


def test_fault_plan_validation() -> None:
    with pytest.raises(ValueError, match="unknown fault kind 'boom'"):
        FaultPlan(script=["boom"])
    with pytest.raises(ValueError, match="between 0 and 1"):
        FaultPlan(rate=1.5)
    with pytest.raises(ValueError, match="retry_after"):
        FaultPlan(retry_after="minutes")
    assert FaultPlan(script=["429", None]).script == ("429", None)


# ------------------------------------------------------------------------------------------------ records


def test_request_records_hold_body_hash_and_seed() -> None:
    with DemoServer() as running, httpx.Client(base_url=running.base_url) as c:
        c.get("/models")
        bodies = [json.dumps(_chat(seed=s)).encode() for s in (7, 8)]
        for body in bodies:
            c.post("/chat/completions", content=body, headers={"content-type": "application/json"})
        c.post("/chat/completions", content=json.dumps(_chat()).encode())
        records = running.requests
    assert records[0] == RequestRecord("/v1/models", None, None, None, 200, None)
    chats = records[1:]
    assert [r.body_sha256 for r in chats[:2]] == [hashlib.sha256(b).hexdigest() for b in bodies]
    assert [r.sample_seed for r in chats] == [7, 8, None]
    assert all(r.model == "sim-mid" and r.status == 200 and r.fault is None for r in chats)


# ------------------------------------------------------------------------------------------------ lifecycle


def test_stop_closes_the_port_and_start_errors() -> None:
    running = DemoServer().start()
    port = running.port
    with pytest.raises(RuntimeError, match="already started"):
        running.start()
    with pytest.raises(OSError, match="could not listen"):
        DemoServer(port=port).start()
    running.stop()
    running.stop()  # idempotent
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    with pytest.raises(RuntimeError, match="not started"):
        DemoServer().base_url


def test_restart_on_the_same_port_keeps_the_records() -> None:
    """Stop + start simulates an endpoint that goes down and comes back (same URL)."""
    running = DemoServer().start()
    try:
        url = running.base_url
        assert _post(url).status_code == 200
        running.stop()
        with pytest.raises(httpx.ConnectError):
            _post(url)
        running.start()
        assert running.base_url == url and _post(url).status_code == 200
        assert len(running.chat_requests) == 2
    finally:
        running.stop()


@pytest.mark.parametrize("kwargs", [{"port": -1}, {"port": 70000}, {"latency_ms": -5}])
def test_bad_constructor_arguments(kwargs) -> None:
    with pytest.raises(ValueError):
        DemoServer(**kwargs)


# ------------------------------------------------------------------------------------------------ main()

_MAIN = "from relgate_tui.demo import main; raise SystemExit(main({argv!r}))"


def test_main_prints_url_serves_and_exits_on_sigterm() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", _MAIN.format(argv=["--port", "0", "--latency-ms", "1"])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = process.stdout.readline().strip()
        second = process.stdout.readline()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert "SIMULATED" in second
        models = httpx.get(url + "/models", timeout=5).json()
        assert {m["owned_by"] for m in models["data"]} == {"relgate-simulated"}
        assert httpx.post(url + "/chat/completions", json=_chat(seed=1), timeout=5).status_code == 200
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stderr.read() == ""


def test_main_sigint_exits_zero() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", _MAIN.format(argv=["--port", "0"])], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout.readline().startswith("http://127.0.0.1:")
        os.kill(process.pid, signal.SIGINT)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--port", "abc"], "invalid int value"),
        (["--port", "99999"], "--port must be 0-65535"),
        (["--latency-ms", "-1"], "--latency-ms must be non-negative"),
        (["--fault-rate", "2"], "fault rate must be between 0 and 1"),
        (["--fault-kinds", "reset,bogus"], "unknown fault kind 'bogus'"),
        (["--bogus"], "unrecognized arguments"),
    ],
)
def test_main_bad_options_one_line_error(argv, fragment, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1 and "Traceback" not in err


def test_demo_server_process_for_benchmarks() -> None:
    server = DemoServerProcess(latency_ms=1, honour_n=False).start()
    try:
        body = httpx.post(server.base_url + "/chat/completions", json=_chat(seed=1, n=3), timeout=5).json()
        assert len(body["choices"]) == 1  # --ignore-n reached the child
    finally:
        assert server.stop() == 0
    with pytest.raises(OSError, match="did not start"):
        DemoServerProcess(fault_rate=3.0).start()
