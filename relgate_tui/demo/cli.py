"""``relgate demo-server``: serve the simulated models on 127.0.0.1 until SIGINT/SIGTERM.

``relgate demo-server [--port 0] [--latency-ms 0] [--fault-rate 0] [--fault-kinds 429,500,...] [--fault-seed 0]
[--judge-data FILE ...] [--ignore-n]`` prints the base URL as its first line, then says the models are simulated.
``--fault-rate 0.25 --fault-kinds reset`` reproduces issue 10 §2 (a quarter of requests read, then reset).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time

from relgate_tui.demo.batches import BatchKnobs
from relgate_tui.demo.faults import FAULT_KINDS, FaultPlan, parse_fault_kinds
from relgate_tui.demo.server import DemoServer
from relgate_tui.demo.simulate import SIM_MODELS

__all__ = ["main"]

def _parser() -> _ArgumentParser:
    parser = _ArgumentParser(
        prog="relgate demo-server",
        description="Serve SIMULATED models (not real LLMs) over the OpenAI chat API on 127.0.0.1.",
    )
    parser.add_argument("--port", type=int, default=0, help="TCP port (0 = any free port; default 0)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="simulated latency per chat call (ms)")
    parser.add_argument("--slots", type=int, default=0,
                        help="answer at most N requests at a time, like a server with N slots (0 = unlimited)")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of chat calls that fail (0-1)")
    parser.add_argument("--fault-kinds", default=",".join(FAULT_KINDS),
                        help=f"comma-separated fault kinds to draw from (default: all of {','.join(FAULT_KINDS)})")
    parser.add_argument("--fault-seed", type=int, default=0, help="seed of the fault schedule")
    parser.add_argument("--judge-data", action="append", default=[], metavar="FILE",
                        help="judge-audit JSONL whose human scores the simulated judges learn (repeatable)")
    parser.add_argument("--ignore-n", action="store_true", help="return one choice whatever n is (like llama.cpp)")
    parser.add_argument("--batch-polls", type=int, default=1, metavar="N",
                        help="Batch API: a batch answers N polls as in_progress before it completes (default 1)")
    parser.add_argument("--batch-fail-every", type=int, default=0, metavar="N",
                        help="Batch API: every Nth request line fails (429/500 in the error file; 0 = none)")
    return parser


class _UsageError(ValueError):
    """A bad command-line option (reported as one line)."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise _UsageError(message)


MAX_LATENCY_MS = 600_000.0  # ten minutes per call: more is a typo (or inf/nan), never a useful simulation


def main(argv: list[str] | None = None) -> int:
    """``relgate demo-server``: print the base URL (first line), say the models are simulated, serve until
    SIGINT/SIGTERM, return 0. Bad options: a one-line message on stderr and 2."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if not 0 <= args.port <= 65535:
            raise _UsageError(f"--port must be 0-65535, got {args.port}")
        if not 0 <= args.latency_ms <= MAX_LATENCY_MS:  # also refuses nan and inf
            raise _UsageError(f"--latency-ms must be non-negative and finite (at most {MAX_LATENCY_MS:g} ms), got "
                              f"{args.latency_ms:g}")
        faults = FaultPlan(rate=args.fault_rate, kinds=parse_fault_kinds(args.fault_kinds), seed=args.fault_seed)
        if args.batch_polls < 1 or args.batch_fail_every < 0:
            raise _UsageError("--batch-polls must be at least 1 and --batch-fail-every non-negative")
        batches = BatchKnobs(polls=args.batch_polls, fail_every=args.batch_fail_every)
        server = DemoServer(args.port, args.latency_ms, faults, honour_n=not args.ignore_n, slots=args.slots,
                            judge_data=args.judge_data, batches=batches).start()
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except (ValueError, OSError) as exc:
        print(f"relgate demo-server: {exc}", file=sys.stderr, flush=True)
        return 2
    # The handler only flips a flag: ``Event.set()`` in a signal handler can deadlock when the signal lands while
    # the main thread holds the event's lock inside ``wait()`` (CI hung here once); ``time.sleep`` is interrupted
    # by the signal, so the loop sees the flag at once.
    stop: list[int] = []
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, lambda signum, _frame: stop.append(signum))
    try:
        print(server.base_url, flush=True)
        print(
            f"SIMULATED models (not real LLMs): {', '.join(SIM_MODELS)}"
            f" - latency {args.latency_ms:g} ms, fault rate {args.fault_rate:g}"
            f"{f' ({args.fault_kinds})' if args.fault_rate else ''}. Stop with Ctrl-C.",
            flush=True,
        )
        while not stop:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
