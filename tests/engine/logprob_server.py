"""A small loopback OpenAI-compatible judge that returns per-token log-probabilities (tests only).

It answers every chat request with a 1–5 score (or "A"/"B" for a pairwise prompt) drawn from a distribution fixed
by the request's content and seed, and — when asked with ``logprobs: true`` — the OpenAI ``choices[0].logprobs``
block: for the score token its log-prob and ``top_logprobs`` alternatives from the same distribution (so the
log-probs are consistent with the sampled score). Records every request body."""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _distribution(content: str, labels: list[str]) -> list[float]:
    rng = random.Random(hashlib.sha256(content.encode()).digest())
    weights = [rng.random() ** 2 + 0.02 for _ in labels]
    total = sum(weights)
    return [w / total for w in weights]


class LogprobJudge:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(200, {"data": [{"id": "lp-judge"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                outer.bodies.append(body)
                self._send(200, outer.reply(body))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        content = body["messages"][-1]["content"]
        labels = ["A", "B"] if "Response A:" in content else ["1", "2", "3", "4", "5"]
        probs = _distribution(content, labels)
        rng = random.Random(f"{content}|{body.get('seed')}")
        token = rng.choices(labels, probs)[0]
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": token},
                                  "finish_reason": "stop"}
        if body.get("logprobs"):
            k = int(body.get("top_logprobs") or 0)
            top = sorted(zip(labels, probs), key=lambda t: -t[1])[:k]
            choice["logprobs"] = {"content": [{
                "token": token, "logprob": math.log(probs[labels.index(token)]),
                "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top]}]}
        return {"choices": [choice], "usage": {"prompt_tokens": 10, "completion_tokens": 1}}

    def __enter__(self) -> LogprobJudge:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
