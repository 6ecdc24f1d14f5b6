"""Text embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint (llama.cpp, Ollama, vLLM serve them).

Used by paper 003's item features. Texts go in batches of 64; every answer is checked (one vector per input, in
``index`` order, finite numbers, one dimension) and bounded (8 MB per response body, at most
:data:`MAX_DIMS` dimensions); any problem is one
:class:`~relgate_tui.errors.EndpointError` line that names the status but never echoes the server's body or the key.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np

from relgate_tui.core.redact import public_url
from relgate_tui.errors import EndpointError, UserError

BATCH = 64
MAX_BODY = 8 * 1024 * 1024
MAX_TEXT_CHARS = 20_000
MAX_DIMS = 8192
"""Longest embedding vector accepted (the largest served models use 4096): a longer one is a one-line error."""


def embed_texts(endpoint: str, model: str, texts: Sequence[str], *, api_key_env: str | None = None,
                timeout: float = 120.0) -> np.ndarray:
    """The embeddings of ``texts`` (len(texts) × dims)."""
    import httpx

    from relgate_tui.engine.transport.tls import tls_context

    headers = {"Content-Type": "application/json"}
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise UserError(f"the environment variable {api_key_env} (embeddings API key) is not set")
        headers["Authorization"] = f"Bearer {key}"
    url = endpoint.rstrip("/") + "/embeddings"
    shown = public_url(endpoint)  # every error line names the endpoint without its credentials
    rows: list[list[float]] = []
    with httpx.Client(timeout=timeout, trust_env=False, verify=tls_context()) as client:
        for start in range(0, len(texts), BATCH):
            batch = [t[:MAX_TEXT_CHARS] or " " for t in texts[start: start + BATCH]]
            try:
                with client.stream("POST", url, json={"model": model, "input": batch}, headers=headers) as resp:
                    body = bytearray()
                    for chunk in resp.iter_bytes():
                        body += chunk
                        if len(body) > MAX_BODY:
                            raise EndpointError(f"embeddings endpoint {shown}: response larger than {MAX_BODY:,} "
                                                "bytes")
                    status = resp.status_code
            except httpx.HTTPError as exc:
                raise EndpointError(f"embeddings endpoint {shown}: {type(exc).__name__}") from None
            if status != 200:
                raise EndpointError(f"embeddings endpoint {shown}: HTTP {status} for model {model!r}")
            rows.extend(_parse(bytes(body), len(batch), shown))
    dims = {len(r) for r in rows}
    if len(dims) != 1:
        raise EndpointError(f"embeddings endpoint {shown}: vectors of different sizes {sorted(dims)[:4]}")
    return np.asarray(rows, dtype=float)


def _parse(body: bytes, expected: int, endpoint: str) -> list[list[float]]:
    import json

    def bad(why: str) -> EndpointError:
        return EndpointError(f"embeddings endpoint {endpoint}: malformed response ({why})")

    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        raise bad("not JSON") from None
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list) or len(data) != expected:
        raise bad(f"expected {expected} embeddings")
    out: list[list[float] | None] = [None] * expected
    for pos, item in enumerate(data):
        vec = item.get("embedding") if isinstance(item, dict) else None
        idx = item.get("index", pos) if isinstance(item, dict) else pos
        if not isinstance(idx, int) or not 0 <= idx < expected or out[idx] is not None:
            raise bad("bad index")
        if not isinstance(vec, list) or not vec or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in vec):
            raise bad("an embedding is not a list of finite numbers")
        if len(vec) > MAX_DIMS:
            raise bad(f"vectors of {len(vec)} dimensions (at most {MAX_DIMS})")
        out[idx] = [float(v) for v in vec]
    return [v for v in out if v is not None]
