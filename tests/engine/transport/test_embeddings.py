"""The embeddings client over a real loopback server: good answers, and every malformed one a one-line error."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from relgate_tui.engine.transport.embeddings import embed_texts
from relgate_tui.errors import EndpointError


def _serve(reply):
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.path, body, self.headers.get("Authorization")))
            status, payload = reply(body)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1", seen


def _good(body):
    data = [{"index": i, "embedding": [float(len(t)), 1.0, float(i)]} for i, t in enumerate(body["input"])]
    return 200, {"data": data[::-1]}  # out of order: the client sorts by index


def test_batches_in_index_order_with_the_key_from_its_variable(monkeypatch):
    server, url, seen = _serve(_good)
    monkeypatch.setenv("EMB_KEY", "sk-secret")
    try:
        texts = [f"text {i}" * (i % 3 + 1) for i in range(70)]
        out = embed_texts(url, "m", texts, api_key_env="EMB_KEY")
    finally:
        server.shutdown()
    assert out.shape == (70, 3) and np.array_equal(out[:, 0], [len(t) for t in texts])
    assert [len(b["input"]) for _, b, _ in seen] == [64, 6] and seen[0][0] == "/v1/embeddings"
    assert seen[0][2] == "Bearer sk-secret"


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (lambda b: (500, {"error": "Authorization: Bearer sk-leak"}), "HTTP 500"),
        (lambda b: (200, b"not json"), "not JSON"),
        (lambda b: (200, {"data": []}), "expected 2 embeddings"),
        (lambda b: (200, {"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}), "index"),
        (lambda b: (200, {"data": [{"index": 0, "embedding": ["x"]}, {"index": 1, "embedding": [1.0]}]}), "finite"),
        (lambda b: (200, {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]}),
         "different sizes"),
        (lambda b: (200, b"[" * 100_000), "not JSON"),
        (lambda b: (200, {"data": [{"index": i, "embedding": [0.5] * 32768} for i in range(2)]}), "32768 dimensions"),
    ],
)
def test_malformed_answers_are_one_line_errors_without_the_body(reply, words):
    server, url, _ = _serve(reply)
    try:
        with pytest.raises(EndpointError, match=words) as info:
            embed_texts(url, "m", ["a", "b"])
    finally:
        server.shutdown()
    assert "\n" not in str(info.value) and "sk-leak" not in str(info.value)
