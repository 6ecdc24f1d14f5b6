"""A stand-in for ``vllm run-batch -i requests.jsonl -o results.jsonl`` (issue 32 §3 tests): every request line's
body is POSTed to an OpenAI-compatible server (the demo server, over a real socket) and each answer is written in the
format vLLM's ``run_batch`` writes — ``{"id": "vllm-…", "custom_id", "response": {"status_code", "request_id",
"body"}, "error": null}`` — in input order.

    python -m tests.engine.vllm_run_batch -i requests.jsonl -o results.jsonl --url http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import argparse
import json
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx


def run_batch(requests: Path, results: Path, base_url: str,
              reject: Callable[[dict], str | None] | None = None) -> int:
    """Answer every line of ``requests`` into ``results``; the number of lines written. ``reject(line)``: a reason
    to reject the request as vLLM does before running it (e.g. over the context length) — written as vLLM writes it:
    status 400, no body, the reason in ``error`` as an ``ErrorResponse`` object."""
    out = []
    with httpx.Client(base_url=base_url.rstrip("/").removesuffix("/v1"), trust_env=False, timeout=30) as client:
        for raw in requests.read_text(encoding="utf-8").splitlines():
            if not raw.strip():
                continue
            line = json.loads(raw)
            reason = reject(line) if reject is not None else None
            if reason is not None:
                out.append(json.dumps({"id": f"vllm-{uuid.uuid4().hex}", "custom_id": line["custom_id"],
                                       "response": {"status_code": 400,
                                                    "request_id": f"vllm-batch-{uuid.uuid4().hex}", "body": None},
                                       "error": {"object": "error", "message": reason, "type": "BadRequestError",
                                                 "param": None, "code": 400}}))
                continue
            response = client.post(line["url"], json=line["body"])
            out.append(json.dumps({"id": f"vllm-{uuid.uuid4().hex}", "custom_id": line["custom_id"],
                                   "response": {"status_code": response.status_code,
                                                "request_id": f"vllm-batch-{uuid.uuid4().hex}",
                                                "body": response.json()},
                                   "error": None}))
    results.write_text("".join(line + "\n" for line in out), encoding="utf-8")
    return len(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-i", "--input-file", required=True, type=Path)
    parser.add_argument("-o", "--output-file", required=True, type=Path)
    parser.add_argument("--url", required=True)
    args = parser.parse_args()
    run_batch(args.input_file, args.output_file, args.url)


if __name__ == "__main__":
    main()
