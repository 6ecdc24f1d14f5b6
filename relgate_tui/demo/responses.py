"""The demo server's JSON responses: request validation and the OpenAI-shaped bodies (chat, errors).

Log-probabilities (``"logprobs": true``, optional ``"top_logprobs": N``, 0–20): judges report their reply's tokens
with exact log-probs and the N most likely alternatives at each position (:mod:`relgate_tui.demo.tokens`); answer
models report whitespace tokens with log P(answer class) on the first and small constants on the rest, each token
its own only alternative.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from relgate_tui.demo.tokens import SimCompletion

__all__ = ["MAX_N", "MAX_TOP_LOGPROBS", "OWNED_BY", "REASONS", "Response", "completion_body", "error", "json_body",
           "validate_chat"]

OWNED_BY = "relgate-simulated"
MAX_N = 128
MAX_TOP_LOGPROBS = 20
REASONS = {
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
_TOKEN = re.compile(r"\s*\S+")


@dataclass
class Response:
    status: int
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)


def json_body(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def error(status: int, message: str, kind: str, code: str | None = None, headers=None) -> Response:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return Response(status, json_body(body), list(headers or []))


def _words(text: str) -> int:
    return len(text.split())


def model_not_found(model: str, served: Sequence[str]) -> Response:
    return error(404, f"model {model!r} not found (simulated models: {', '.join(served)})", "invalid_request_error",
                 "model_not_found")


def validate_chat(payload: dict, model: str, chat_models: Sequence[str], served: Sequence[str]) -> Response | None:
    """None if ``payload`` is a chat request the simulator can answer, else the error response."""
    if model not in served:
        return model_not_found(model, served)
    if model not in chat_models:
        return error(400, f"model {model!r} does not support chat completions", "invalid_request_error",
                     "model_not_supported")
    messages = payload.get("messages")
    if (
        not isinstance(messages, list)
        or not messages
        or not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages)
    ):
        return error(400, "'messages' must be a non-empty list of {role, content} objects", "invalid_request_error")
    n = payload.get("n", 1)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_N:
        return error(400, f"'n' must be an integer between 1 and {MAX_N}", "invalid_request_error")
    max_tokens = payload.get("max_tokens")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
        return error(400, "'max_tokens' must be a positive integer", "invalid_request_error")
    for name in ("temperature", "top_p"):
        value = payload.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            return error(400, f"'{name}' must be a non-negative number", "invalid_request_error")
    top = payload.get("top_logprobs")
    if top is not None and (isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= MAX_TOP_LOGPROBS):
        return error(400, f"'top_logprobs' must be an integer between 0 and {MAX_TOP_LOGPROBS}",
                     "invalid_request_error")
    return None


def _entry(token: str, logprob: float) -> dict:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def _choice_tokens(completion: SimCompletion, max_tokens: int | None, top: int) -> tuple[str, str, list[dict]]:
    """(content, finish_reason, log-prob entries) of one completion, cut at ``max_tokens`` tokens."""
    if completion.tokens:
        chosen = list(completion.tokens)
        finish = "stop"
        if max_tokens is not None and len(chosen) > max_tokens:
            chosen, finish = chosen[:max_tokens], "length"
        entries = [
            _entry(t.token, t.logprob) | {"top_logprobs": [_entry(a, lp) for a, lp in t.alternatives[:top]]}
            for t in chosen
        ]
        return "".join(t.token for t in chosen), finish, entries
    tokens = _TOKEN.findall(completion.text)
    finish = "stop"
    if max_tokens is not None and len(tokens) > max_tokens:
        tokens, finish = tokens[:max_tokens], "length"
    text = "".join(tokens).lstrip() if finish == "length" else completion.text
    entries = []
    for i, token in enumerate(tokens):
        logprob = round(completion.logprob if i == 0 else -0.02 * (1 + i % 3), 6)
        entries.append(_entry(token, logprob) | {"top_logprobs": [_entry(token, logprob)] if top else []})
    return text, finish, entries


def completion_body(
    payload: dict, model: str, counter: int, messages: Sequence[dict], completions: Sequence[SimCompletion]
) -> dict:
    """The ``chat.completion`` object for ``completions``."""
    max_tokens = payload.get("max_tokens")
    want_logprobs = payload.get("logprobs") is True
    top = payload.get("top_logprobs") or 0
    choices, completion_tokens = [], 0
    for index, completion in enumerate(completions):
        text, finish, entries = _choice_tokens(completion, max_tokens, top)
        completion_tokens += len(entries)
        choices.append({"index": index, "message": {"role": "assistant", "content": text},
                        "logprobs": {"content": entries} if want_logprobs else None, "finish_reason": finish})
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
