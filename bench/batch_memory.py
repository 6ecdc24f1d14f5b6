"""Peak memory of reading one Batch API output line (issue 42 §4): a round's output file holding a single 150 MB line
is downloaded and read by relgate's batch client, in a child process that measures its own peak RSS.

The parent serves the file from disk (a plain ``http.server`` on loopback, ``GET /v1/files/{id}/content``); the child
imports relgate, notes its RSS, runs :meth:`~relgate_tui.engine.transport.batch.BatchClient.download_to` and
:func:`~relgate_tui.engine.transport.batch.parse_results` on the line (an answer over the stored-answer cap: a counted
failure, as a real round would count it), and reports ``ru_maxrss`` − the RSS before. Target: ≤ 2× the line.

Run: ``python bench/batch_memory.py [--mb 150]``; ``--smoke``: a 4 MB line, no target checked.
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

TARGET = 2.0
SLACK_BYTES = 1 << 20  # beside 2× the line: the 64 KB read block, the parsed object's headers, page rounding


def _status(field: str) -> int:
    """``VmRSS`` (now) or ``VmHWM`` (the peak) of this process, in bytes. Not ``ru_maxrss``: after fork + exec it
    starts at the parent's peak (which built the 150 MB line)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # Linux: VmHWM starts again from VmRSS


def child(base_url: str) -> None:
    from relgate_tui.engine.transport.batch import BatchClient, parse_results
    from relgate_tui.engine.transport.endpoints import EndpointConfig

    cfg = EndpointConfig(base_url, "m", timeout_s=600.0)
    before = _status("VmRSS")
    steps: list[tuple[str, int]] = []

    async def go() -> tuple[int, int, int]:
        async with BatchClient(cfg, max_file_bytes=1 << 31) as client:
            with await client.download_to("file-big") as f:
                steps.append(("the download (to a temporary file)", _status("VmHWM") - before))
                _reset_peak()  # the read's own peak from here
                start = _status("VmRSS")
                results = parse_results([f], cfg)
                steps.append(("reading the line", _status("VmHWM") - start))
        return len(results.answers), len(results.failures), results.malformed

    answers, failures, malformed = asyncio.run(go())
    peak = _status("VmHWM")
    print(json.dumps({"before": before, "peak": peak, "answers": answers, "failures": failures,
                      "malformed": malformed, "steps": steps}))


def _serve(path: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            size = path.stat().st_size
            self.send_response(200)
            self.send_header("Content-Type", "application/jsonl")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            with path.open("rb") as f:
                while chunk := f.read(1 << 20):
                    self.wfile.write(chunk)

        def log_message(self, *args: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=150.0, help="size of the output line in MB (default 150)")
    parser.add_argument("--smoke", action="store_true", help="a 4 MB line, no target checked")
    parser.add_argument("--child", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return 0
    mb = 4.0 if args.smoke else args.mb
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "output.jsonl"
        answer = "x" * int(mb * 1_000_000)
        line = {"id": "batch_req_1", "custom_id": "run/item/0", "error": None,
                "response": {"status_code": 200, "request_id": "req_1",
                             "body": {"choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                                                   "finish_reason": "stop"}]}}}
        path.write_text(json.dumps(line) + "\n")
        del answer, line
        size = path.stat().st_size
        server, url = _serve(path)
        try:
            env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
            out = subprocess.run([sys.executable, __file__, "--child", url], capture_output=True, text=True,
                                 env=env, check=True).stdout
        finally:
            server.shutdown()
    got = json.loads(out.splitlines()[-1])
    steps = dict(got["steps"])
    download, read = steps["the download (to a temporary file)"], steps["reading the line"]
    ratio = read / size
    print(f"one output line of {size / 1e6:,.0f} MB ({got['answers']} answers, {got['failures']} failures, "
          f"{got['malformed']} malformed):")
    print(f"  {'step':<36} {'peak memory':>12} {'× the line':>11} {'target':>8}")
    print(f"  {'the download (to a temporary file)':<36} {'+' + format(download / 1e6, ',.0f') + ' MB':>12} "
          f"{download / size:>10.2f}× {'—':>8}")
    print(f"  {'reading the line':<36} {'+' + format(read / 1e6, ',.1f') + ' MB':>12} {ratio:>10.3f}× "
          f"{'≤ ' + format(TARGET, 'g') + '× + 1 MB':>8}")
    if args.smoke:
        return 0
    ok = read <= TARGET * size + SLACK_BYTES
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
