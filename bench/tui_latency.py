"""TUI latency (SPEC §8): cold start to the first screen, and spot-check keypress to the next item on screen.

Both are measured on the real ``relgate`` entry point running in a pseudo-terminal (120×40, TERM=xterm-256color),
exactly as a user starts it — the bytes the app writes to the terminal are what is timed:

* **cold start**: from spawning ``python -m relgate_tui.cli`` to the Home menu ("Open run") appearing on the pty;
* **keypress → next item**: a run against the built-in demo endpoint is sampled first (``--items`` items, half of
  them calibration items verified by hand), then the app is opened on it (Open run → resume) and ``y`` is pressed
  ``--presses`` times; each time the clock runs from writing the key to the pty until the *next* item's id has
  been drawn. Every keypress is persisted (fsync) by the run store before the next item is drawn, so the figure
  includes the durable write.

Targets: cold start ≤ 1.5 s, keypress → next item ≤ 50 ms. Usage::

    python bench/tui_latency.py [--items 200] [--presses 40] [--starts 5]
    python bench/tui_latency.py --smoke     # one session: 10 items, 2 presses; seconds, no target checked
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ROWS, COLS = 40, 120
RUNS_HEADER = "level ≥ bound"  # the Runs table's column header: the Runs screen is drawn


class PtyApp:
    """``relgate`` running in a pseudo-terminal; ``wait_for(text)`` reads its output until ``text`` appears."""

    def __init__(self, env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "relgate_tui.cli"],
            stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True, start_new_session=True,
        )
        os.close(slave)
        self.buffer = b""

    def wait_for(self, text: str, timeout: float = 30.0) -> float:
        """Read output until ``text`` shows up (searching only output read since the last call); returns the
        perf_counter time at which it was read."""
        needle = text.encode()
        self.buffer = b""
        deadline = time.perf_counter() + timeout
        while True:
            if needle in self.buffer:
                return time.perf_counter()
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                tail = self.buffer[-400:].decode(errors="replace")
                raise TimeoutError(f"{text!r} did not appear within {timeout} s; last output: {tail!r}")
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    raise RuntimeError("relgate exited")
                self.buffer += chunk

    def drain(self, quiet: float = 0.15) -> None:
        """Read until the app has written nothing for ``quiet`` seconds."""
        while select.select([self.master], [], [], quiet)[0]:
            try:
                if not os.read(self.master, 65536):
                    return
            except OSError:
                return

    def send(self, keys: str) -> float:
        t = time.perf_counter()
        os.write(self.master, keys.encode())
        return t

    def close(self) -> None:
        try:
            os.write(self.master, b"\x11")  # ctrl+q
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def make_run(home: Path, n_items: int) -> list[str]:
    """Sample a run on the demo endpoint (real sampler, loopback) with every calibration item left for a human;
    return the ids the spot-check will show, in order."""
    from relgate_tui.engine.certification.session import Session
    from relgate_tui.engine.certification.setup import RunSetup
    from relgate_tui.tui.demo_endpoint import start_demo

    demo = start_demo(latency_ms=0.0, port=0)
    try:
        setup = RunSetup(base_url=demo.base_url, model="sim-mid", task="gsm8k", simulated=True, limit=n_items,
                         verification="human", concurrency=16)
        session = Session.create(setup, runs_dir=home / "runs", cache_dir=home / "cache")

        async def sample() -> None:
            async for _ in session.sample():
                pass

        asyncio.run(sample())
        pending = session.pending_items()
        session.close()
        return pending
    finally:
        demo.stop()


def cold_starts(env: dict[str, str], n: int) -> list[float]:
    times = []
    for _ in range(n):
        app = PtyApp(env)
        seen = app.wait_for("Open run")
        times.append(seen - app.started)
        app.drain()
        app.close()
    return times


def keypress_latencies(env: dict[str, str], pending: list[str], presses: int) -> tuple[float, list[float]]:
    """The app's cold start (to Home) and the keypress latencies of one session."""
    app = PtyApp(env)
    try:
        start = app.wait_for("Open run") - app.started
        app.drain()
        app.send("o")
        app.wait_for(RUNS_HEADER)
        app.drain(0.5)
        app.send("r")
        app.wait_for(f"id {pending[0]}")
        app.drain()
        out = []
        for i in range(min(presses, len(pending) - 1)):
            t0 = app.send("y")
            t1 = app.wait_for(f"id {pending[i + 1]}")
            out.append(t1 - t0)
            app.drain(0.05)
        return start, out
    finally:
        app.close()


def summary(name: str, values: list[float], target: float, smoke: bool = False) -> str:
    med = statistics.median(values)
    p90 = sorted(values)[max(0, int(round(0.9 * len(values))) - 1)]
    verdict = "smoke" if smoke else "meets" if med <= target else "MISSES"
    return (f"{name:<28} n={len(values):<3} median {med * 1000:8.1f} ms   p90 {p90 * 1000:8.1f} ms   "
            f"max {max(values) * 1000:8.1f} ms   target {target * 1000:.0f} ms: {verdict}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=200, help="items in the run (half are hand-verified)")
    parser.add_argument("--presses", type=int, default=40, help="spot-check keypresses to time")
    parser.add_argument("--starts", type=int, default=5, help="cold starts to time")
    parser.add_argument("--smoke", action="store_true", help="one session, 10 items, 2 presses (seconds), no target")
    args = parser.parse_args(argv)
    if args.smoke:
        args.items, args.presses = 10, 2
    with tempfile.TemporaryDirectory(prefix="relgate-bench-") as tmp:
        home = Path(tmp)
        env = {**os.environ, "RELGATE_HOME": str(home), "TERM": "xterm-256color", "COLUMNS": str(COLS),
               "LINES": str(ROWS)}
        env.pop("TEXTUAL_ANIMATIONS", None)
        starts = [] if args.smoke else cold_starts(env, args.starts)
        pending = make_run(home, args.items)
        start, keys = keypress_latencies(env, pending, args.presses)
        starts = starts or [start]  # --smoke: the keypress session's own start
    print(f"relgate TUI latency — real `relgate` in a {COLS}x{ROWS} pseudo-terminal, Python "
          f"{sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(summary("cold start → first screen", starts, 1.5, args.smoke))
    print(summary("keypress → next item", keys, 0.050, args.smoke))
    print(f"(spot-check over a {args.items}-item run on the simulated endpoint; every keypress fsync-ed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
