"""The demo server in a child process, for benchmarks (an in-process server would share the client's GIL)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Sequence

__all__ = ["DemoServerProcess"]


class DemoServerProcess:
    """The demo server in a child process (``main()``), for throughput benchmarks.

    An in-process :class:`DemoServer` shares the GIL with the client, which then measures the two together; a
    benchmark should run the server here instead. No ``requests`` records (they live in the child).
    ``with DemoServerProcess(latency_ms=20) as server: server.base_url``.
    """

    def __init__(self, latency_ms: float = 0.0, fault_rate: float = 0.0, honour_n: bool = True, port: int = 0,
                 fault_kinds: Sequence[str] = ()) -> None:
        self.argv = ["--port", str(port), "--latency-ms", repr(float(latency_ms)), "--fault-rate", repr(float(fault_rate))]
        if fault_kinds:
            self.argv += ["--fault-kinds", ",".join(fault_kinds)]
        if not honour_n:
            self.argv.append("--ignore-n")
        self.process: subprocess.Popen | None = None
        self.base_url = ""

    def start(self) -> DemoServerProcess:
        code = f"from relgate_tui.demo.cli import main; raise SystemExit(main({self.argv!r}))"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        first = self.process.stdout.readline().strip() if self.process.stdout else ""
        if not first.startswith("http://127.0.0.1:"):
            error = self.process.communicate(timeout=10)[1].strip() if self.process.poll() is not None else first
            self.stop()
            raise OSError(f"demo server process did not start: {error}")
        self.base_url = first
        return self

    def stop(self) -> int | None:
        """SIGTERM the child and wait; returns its exit code (0 = clean)."""
        process, self.process = self.process, None
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        return process.returncode

    def __enter__(self) -> DemoServerProcess:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
