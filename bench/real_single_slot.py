"""Opt-in (issue 23 §9): relgate's judge-asking layer against a REAL one-slot llama.cpp server at concurrency 8.

The loopback test (tests/engine/transport/test_single_slot.py) uses a server written for the test; this runs the same check on
llama.cpp itself (llama-cpp-python's server, Qwen2.5-Coder-0.5B-Instruct Q4_K_M, one request at a time):

1. after a warm-up request, N distinct requests (temperature 0) are asked at concurrency 1: the sequential time S and the mean
   service time L = S / N;
2. the client timeout is set to T = 6·L, so 8 queued requests (8·L) would pass it;
3. the same N requests (temperature 0: the same answers, so the same work) are asked again at concurrency 8 with
   timeout T (time C); nothing is cached on relgate's side.

Pass: no timeout and no failure at concurrency 8, every request answered once, and C ≤ 1.2 × S. (llama-cpp-python's
server has no ``/props``; relgate recognises it by its OpenAPI title and keeps one request in flight.)

Run: ``python bench/real_single_slot.py [--requests 16]`` (``--smoke``: 2 requests, or exit 77 without the model; see bench/llama_server.py for what it needs;
``LLAMA_PYTHON`` names a Python with llama-cpp-python[server], ``GGUF`` an existing model file).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.llama_server import LlamaServer, ensure_model, smoke_skip  # noqa: E402
from relgate_tui.engine.judging.ask import AskFailed, Judge, Request, ask  # noqa: E402

MAX_TOKENS = 24


def _requests(tag: str, n: int) -> list[Request]:
    return [Request((tag, str(i)), ({"role": "user", "content": f"In one sentence, what is {i + 3} times {i + 7}? "
                                     f"({tag} {i})"},)) for i in range(n)]


async def _run(url: str, model: str, reqs: list[Request], concurrency: int, timeout_s: float
               ) -> tuple[float, list[Any], Any]:
    judge = Judge(url, model, timeout_s=timeout_s, max_tokens=MAX_TOKENS, temperature=0.0)
    samplers: list[Any] = []
    t0 = time.perf_counter()
    events = [e async for e in ask(judge, reqs, reps=1, concurrency=concurrency, on_sampler=samplers.append)]
    return time.perf_counter() - t0, events, samplers[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=16)
    ap.add_argument("--smoke", action="store_true", help="2 requests, or exit 77 without a real model")
    args = ap.parse_args()
    if args.smoke:
        if (skipped := smoke_skip("qwen0.5b")) is not None:
            return skipped
        args.requests = 2
    with LlamaServer(ensure_model("qwen0.5b")) as srv:
        model = srv.model_id()
        _, ev, _ = asyncio.run(_run(srv.base_url, model, _requests("warm-up", 1), 1, 300.0))
        if any(isinstance(e, AskFailed) for e in ev):
            raise SystemExit(f"the warm-up request failed: {ev}")
        seq_t, seq_ev, seq_s = asyncio.run(_run(srv.base_url, model, _requests("q", args.requests), 1, 300.0))
        service = seq_t / args.requests
        timeout = 6 * service
        con_t, con_ev, con_s = asyncio.run(_run(srv.base_url, model, _requests("q", args.requests), 8, timeout))
    timeouts = [e for e in con_ev if isinstance(e, AskFailed)]
    answered = [e for e in con_ev if not isinstance(e, AskFailed) and hasattr(e, "text")]
    ratio = con_t / seq_t
    ok = (not timeouts and con_s.totals.failed == 0 and len(answered) == args.requests
          and con_s.totals.made == args.requests and ratio <= 1.2)
    print(f"\nllama.cpp one slot (llama-cpp-python), {model}; mean service time L = {service:.2f} s, client timeout "
          f"T = 6·L = {timeout:.2f} s (8 queued = {8 * service:.1f} s > T)\n")
    print("| run | requests | answered | wall | timeouts | failed | requests sent | max in flight | target |")
    print("|---|---|---|---|---|---|---|---|---|")
    seq_answered = sum(1 for e in seq_ev if not isinstance(e, AskFailed) and hasattr(e, "text"))
    print(f"| concurrency 1 | {args.requests} | {seq_answered} | {seq_t:.1f} s | "
          f"{sum(isinstance(e, AskFailed) for e in seq_ev)} | {seq_s.totals.failed} | {seq_s.totals.made} | "
          f"{seq_s.limit.max_in_flight} | — |")
    print(f"| concurrency 8 | {args.requests} | {len(answered)} | {con_t:.1f} s | {len(timeouts)} | "
          f"{con_s.totals.failed} | {con_s.totals.made} | {con_s.limit.max_in_flight} | 0 timeouts, ≤ 1.2 × "
          "sequential |")
    print(f"\nratio concurrency 8 / sequential = {ratio:.2f} (target ≤ 1.20): {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
