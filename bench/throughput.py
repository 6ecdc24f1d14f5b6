"""Sampling throughput against the demo endpoint on loopback (SPEC §8, issue 5 item 8).

The demo server runs in a child process with a fixed latency (20 ms); the sampler (one httpx.AsyncClient, bounded
concurrency) asks for ``CALLS`` samples with the ``none`` stopping rule and no cache, one sample per request (the
server ignores ``n``, so every sample is one call). Reported per concurrency: achieved calls/s, that rate as a
fraction of the ideal concurrency / latency, and the client's CPU time per call. Target: ≥ 85 % of ideal at 16.

Run: ``python bench/throughput.py [--calls 2000] [--latency-ms 20]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from relgate_tui.core.canon import get_canonicalizer
from relgate_tui.core.stopping import get_stopping_rule
from relgate_tui.demo.process import DemoServerProcess
from relgate_tui.engine.endpoints import EndpointConfig
from relgate_tui.engine.sampler import Sampler, SamplingJob, run_sampling
from relgate_tui.engine.tasks import load_task


def measure(base_url: str, concurrency: int, calls: int, k: int) -> tuple[float, float, int]:
    items = load_task("bigbench-3digit-addition").items
    n_items = max(1, calls // k)
    items = (items * (n_items // len(items) + 1))[:n_items]
    items = [type(it)(f"{it.id}-{j}", it.question, it.answers) for j, it in enumerate(items)]
    job = SamplingJob(items, get_canonicalizer("numeric"), get_stopping_rule("none"), k)
    sampler = Sampler(EndpointConfig(base_url, "sim-strong", send_seed=True), concurrency=concurrency)
    wall, cpu = time.perf_counter(), time.process_time()
    totals = run_sampling(sampler, job)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return totals.made / wall, cpu / totals.made * 1000, totals.made


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    latency = args.latency_ms / 1000
    print(f"demo endpoint in a child process, latency {args.latency_ms:g} ms, {args.calls} calls per run, "
          f"median of {args.repeats} runs, stopping 'none', no cache\n")
    print(f"{'concurrency':>11}  {'calls/s':>8}  {'ideal':>7}  {'of ideal':>8}  {'client CPU ms/call':>18}")
    ok = True
    with DemoServerProcess(latency_ms=args.latency_ms, honour_n=False) as server:
        measure(server.base_url, 4, 100, 10)  # warm up imports and connections
        for concurrency in (1, 8, 16, 32):
            calls = args.calls if concurrency > 1 else max(100, args.calls // 10)
            runs = [measure(server.base_url, concurrency, calls, 10) for _ in range(args.repeats)]
            rate = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            ideal = concurrency / latency
            share = rate / ideal
            print(f"{concurrency:>11}  {rate:8.0f}  {ideal:7.0f}  {share:8.1%}  {cpu:18.2f}")
            if concurrency == 16:
                ok = share >= 0.85
    print(f"\ntarget: >= 85% of ideal at concurrency 16 -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
