"""The pre-flight's time estimate against a real run on a one-slot loopback server (issue 24 §2).

A demo server with one slot (``relgate demo-server --slots 1``: it answers one request at a time, as llama.cpp with
``-np 1``) and a fixed latency serves ``sim-mid``, ignoring ``n`` like llama.cpp (one sample per request). For each
concurrency the Setup screen's pre-flight is computed exactly as the TUI does it — :func:`probe_latency` (the run's
concurrency in parallel calls), then :func:`preflight` — and the same run is sampled as the TUI's Sampling screen
samples it (``--stopping none`` by default, so the calls are exactly the expected ones; ``--stopping anytime`` for the
expected calls and their easy … hard range against the calls made), timed from start to finish. Reported: estimate,
its range, measured wall time, their ratio, and the estimate the old rule (one call's latency divided by the
concurrency) would have given.
Target: the estimate within 25% of the measured time.

Run: ``python bench/preflight_estimate.py [--latency-ms 30] [--items 12] [--k-max 5] [--stopping anytime]
[--model sim-mid]`` (``--smoke``: 4 items × K_max 2 at concurrency 1 and 2, 5 ms, no target checked).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET = 0.25


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency-ms", type=float, default=30.0)
    ap.add_argument("--items", type=int, default=12)
    ap.add_argument("--k-max", type=int, default=5)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    ap.add_argument("--stopping", default="none", choices=("none", "anytime", "paper"))
    ap.add_argument("--model", default="sim-mid")
    ap.add_argument("--smoke", action="store_true", help="the smallest size (seconds), no target checked")
    args = ap.parse_args()
    if args.smoke:
        args.latency_ms, args.items, args.k_max, args.concurrency = 5.0, 4, 2, [1, 2]

    from relgate_tui.demo import DemoServer
    from relgate_tui.engine.certification.session import Session
    from relgate_tui.engine.certification.setup import RunSetup, inspect_task, preflight, probe_latency

    task = "bigbench-3digit-addition"
    rows = []
    with tempfile.TemporaryDirectory() as home:
        os.environ["RELGATE_HOME"] = home
        for concurrency in args.concurrency:
            with DemoServer(latency_ms=args.latency_ms, slots=1, honour_n=False) as server:
                setup = RunSetup(base_url=server.base_url, model=args.model, task=task, limit=args.items,
                                 k_max=args.k_max, stopping=args.stopping, concurrency=concurrency, seed=concurrency)
                latency = asyncio.run(probe_latency(setup))
                pf = preflight(setup, inspect_task(task), latency)
                single = asyncio.run(probe_latency(RunSetup(base_url=server.base_url, model="sim-mid", task=task,
                                                            concurrency=1)))
                session = Session.create(setup, runs_dir=Path(home) / "runs", cache_dir=Path(home) / "cache")
                before = len(server.chat_requests)

                async def drain(s=session) -> None:
                    async for _ in s.sample():
                        pass

                started = time.perf_counter()  # the sampling pass, as the TUI's Sampling screen runs it
                asyncio.run(drain())
                measured = time.perf_counter() - started
                session.close()
                calls = len(server.chat_requests) - before
            assert pf.seconds is not None
            rows.append((concurrency, pf.expected_calls, calls, pf.seconds, measured,
                         pf.expected_calls * single[0] / concurrency, pf.calls_range, pf.seconds_range))
    print(f"one-slot loopback server, {args.model}, latency {args.latency_ms:g} ms, {args.items} items × K_max "
          f"{args.k_max} (stopping {args.stopping})")
    print(f"{'concurrency':>11} {'expected calls':>14} {'range':>11} {'server calls':>12} {'estimate s':>10} "
          f"{'range s':>13} {'measured s':>10} {'error':>7} {'old rule s':>10}   target |error| ≤ {TARGET:.0%}")
    worst = 0.0
    for c, expected, calls, est, meas, old, (lo, hi), span in rows:
        err = est / meas - 1.0
        worst = max(worst, abs(err))
        srange = f"{span[0]:.1f}–{span[1]:.1f}" if span else "—"
        print(f"{c:>11} {expected:>14} {f'{lo}–{hi}':>11} {calls:>12} {est:>10.2f} {srange:>13} {meas:>10.2f} "
              f"{err:>+7.1%} {old:>10.2f}")
    if args.smoke:
        print(f"worst |error| {worst:.1%} (smoke: no target checked)")
        return 0
    print(f"worst |error| {worst:.1%} ({'within' if worst <= TARGET else 'OUTSIDE'} the {TARGET:.0%} target)")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
