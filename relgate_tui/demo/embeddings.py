"""``sim-embed``: deterministic text embeddings for ``POST /v1/embeddings`` (OpenAI format), for paper 003's
embedding features without a real model.

Embedding of a text (dimension D, default 128, ``dimensions`` 8–1024): feature hashing of its casefolded word
unigrams (weight 1) and the character 3-grams of each word padded with "<" and ">" (weight ½) — each feature f adds
``sign(f)·w·(1 + log count(f))`` to coordinate ``h(f) mod D`` (h, sign from BLAKE2b of f, so the same text gives the
same vector in every process, and a random ±1 hashing projection approximately preserves inner products of the
sparse bag-of-features vectors) — then L2-normalised. Texts sharing words and word pieces therefore have high
cosine similarity. A text with no word characters maps to the unit vector of the hashed feature ``<empty>``.

Request: ``{"model": "sim-embed", "input": str | [str, ...], "dimensions"?: int, "encoding_format"?: "float" |
"base64"}`` (base64 = little-endian float32, as the OpenAI client asks by default). Token-array inputs are refused.
Response: ``{"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [...]}], "model",
"usage": {"prompt_tokens", "total_tokens"}}`` (tokens = words).
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import struct
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from relgate_tui.demo.responses import Response, error, json_body, model_not_found

__all__ = ["DEFAULT_DIMENSIONS", "EMBED_MODEL", "MAX_INPUTS", "embed", "embeddings_response"]

EMBED_MODEL = "sim-embed"
DEFAULT_DIMENSIONS = 128
MIN_DIMENSIONS, MAX_DIMENSIONS = 8, 1024
MAX_INPUTS = 2048
_WORD = re.compile(r"[^\W_]+")


@lru_cache(maxsize=200_000)
def _slot(feature: str) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    return value >> 1, (1.0 if value & 1 else -1.0)


def _features(text: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for word in _WORD.findall(text.casefold()):
        counts["w:" + word] += 1
        padded = f"<{word}>"
        for i in range(len(padded) - 2):
            counts["c:" + padded[i : i + 3]] += 1
    return counts


def embed(text: str, dimensions: int = DEFAULT_DIMENSIONS) -> list[float]:
    """The L2-normalised ``sim-embed`` vector of ``text`` (module docstring)."""
    vector = [0.0] * dimensions
    counts = _features(text) or Counter({"<empty>": 1})
    for feature, count in counts.items():
        slot, sign = _slot(feature)
        weight = 0.5 if feature.startswith("c:") else 1.0
        vector[slot % dimensions] += sign * weight * (1.0 + math.log(count))
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:  # every feature cancelled out: fall back to the <empty> direction
        slot, sign = _slot("<empty>")
        vector[slot % dimensions], norm = sign, 1.0
    return [v / norm for v in vector]


def _encode(vector: list[float], encoding: str) -> list[float] | str:
    if encoding == "base64":
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
    return vector


def embeddings_response(payload: dict, model: str, served: Sequence[str], fault: str | None = None) -> Response:
    """The response to an embeddings request (validated here; ``fault`` "malformed"/"empty" as for chat)."""
    if model not in served:
        return model_not_found(model, served)
    if model != EMBED_MODEL:
        return error(400, f"model {model!r} does not support embeddings (use {EMBED_MODEL!r})",
                     "invalid_request_error", "model_not_supported")
    texts = payload.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts or len(texts) > MAX_INPUTS:
        return error(400, f"'input' must be a string or a list of 1-{MAX_INPUTS} strings", "invalid_request_error")
    if not all(isinstance(t, str) for t in texts):
        return error(400, "'input' must contain strings (token arrays are not supported)", "invalid_request_error")
    dimensions = payload.get("dimensions", DEFAULT_DIMENSIONS)
    if isinstance(dimensions, bool) or not isinstance(dimensions, int) or not MIN_DIMENSIONS <= dimensions <= MAX_DIMENSIONS:
        return error(400, f"'dimensions' must be an integer between {MIN_DIMENSIONS} and {MAX_DIMENSIONS}",
                     "invalid_request_error")
    encoding = payload.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        return error(400, "'encoding_format' must be 'float' or 'base64'", "invalid_request_error")
    if fault == "malformed":
        return Response(200, b'{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,')
    data = [] if fault == "empty" else [
        {"object": "embedding", "index": i, "embedding": _encode(embed(text, dimensions), encoding)}
        for i, text in enumerate(texts)
    ]
    tokens = sum(len(text.split()) for text in texts)
    return Response(200, json_body({"object": "list", "data": data, "model": model,
                                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}))
