"""A direct run's fixed costs (bench/throughput.py ``--numeric``): the round trips before the first request are
waited for together, and with the ``none`` rule a worker's next request leaves before the previous answer is
persisted and reported — over real loopback HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from relgate_tui.core.canon import get_canonicalizer
from relgate_tui.core.certification.stopping import get_stopping_rule
from relgate_tui.demo import DemoServer
from relgate_tui.engine.certification.options import CertifyConfig
from relgate_tui.engine.certification.pipeline import run_certify
from relgate_tui.engine.certification.tasks import load_task
from relgate_tui.engine.transport.endpoints import EndpointConfig
from relgate_tui.engine.transport.sampler import ItemDone, SampleDone, Sampler, SamplingJob, run_sampling

ITEMS = load_task("bigbench-3digit-addition").items
MODELS_WAIT_S = 5.0  # how long GET /models waits for GET /props before answering alone


class PropsFirstServer:
    """An OpenAI-style server whose ``GET /models`` answers only once ``GET /props`` has arrived (or after
    :data:`MODELS_WAIT_S`), and which records whether it had to wait alone: a client that asks the two one after
    the other makes ``/models`` wait the whole time."""

    def __init__(self, models_wait_s: float = MODELS_WAIT_S) -> None:
        self.props_seen = threading.Event()
        self.models_waited_alone = False
        self.gets: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, doc: Any) -> None:
                body = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                outer.gets.append(self.path)
                if self.path == "/props":
                    outer.props_seen.set()
                    self._send(200, {"total_slots": 4})
                elif self.path.endswith("/models"):
                    if not outer.props_seen.wait(models_wait_s):
                        outer.models_waited_alone = True
                    self._send(200, {"data": [{"id": "m"}]})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self._send(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": "42"},
                                              "finish_reason": "stop"}],
                                 "usage": {"prompt_tokens": 5, "completion_tokens": 1}})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> PropsFirstServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def props_first() -> Iterator[PropsFirstServer]:
    with PropsFirstServer() as server:
        yield server


def test_the_reachability_check_and_the_slot_question_are_asked_together(props_first: PropsFirstServer,
                                                                        tmp_path: Path) -> None:
    cfg = CertifyConfig(task="bigbench-3digit-addition", endpoint=props_first.base_url, model="m", limit=4, k_max=2,
                        stopping="none", concurrency=4, run_dir=str(tmp_path / "runs")).validate()
    outcome = run_certify(cfg)
    assert outcome.calls.made == 8 and outcome.calls.failed == 0
    assert not props_first.models_waited_alone  # /props arrived while /models was still open
    assert props_first.gets.count("/props") == 1  # asked once: the run did not ask it again


def test_a_one_worker_run_asks_no_slots(tmp_path: Path) -> None:
    """As before: a run with one worker (here one item) has nothing to limit, so it asks no ``/props``. Nothing
    waits for ``/props`` here (``/models`` answers at once): a ``/props`` asked at any point of the run is recorded."""
    with PropsFirstServer(models_wait_s=0.0) as server:
        cfg = CertifyConfig(task="bigbench-3digit-addition", endpoint=server.base_url, model="m", limit=1, k_max=2,
                            stopping="none", concurrency=4, run_dir=str(tmp_path / "runs")).validate()
        assert run_certify(cfg).calls.made == 2
    assert server.gets and "/props" not in server.gets


class _RequestCounting(Sampler):
    """Counts requests as they are sent (entering ``_request``, before the bytes go out)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.requests = 0

    async def _request(self, *args: Any, **kwargs: Any) -> Any:
        self.requests += 1
        return await super()._request(*args, **kwargs)


def test_with_the_none_rule_the_next_request_leaves_before_the_answer_is_persisted() -> None:
    persisted_after: list[int] = []  # requests sent when each sample was persisted
    with DemoServer(honour_n=False, latency_ms=1) as server:
        sampler = _RequestCounting(EndpointConfig(server.base_url, "sim-mid"), concurrency=1,
                                   persist=lambda sample: persisted_after.append(sampler.requests))
        events: list[Any] = []
        job = SamplingJob(ITEMS[:1], get_canonicalizer("numeric"), get_stopping_rule("none"), 5)
        totals = run_sampling(sampler, job, events.append)
    assert totals.made == 5 and totals.failed == 0
    # sample i was persisted once request i + 1 was on its way (the last one: nothing more to ask)
    assert persisted_after == [2, 3, 4, 5, 5]
    # and everything is still delivered in index order, the item's end last
    assert [e.index for e in events if isinstance(e, SampleDone)] == [0, 1, 2, 3, 4]
    assert isinstance(events[-1], ItemDone) and events[-1].n_samples == 5


def test_with_an_adaptive_rule_each_answer_is_persisted_before_the_next_request() -> None:
    """The next index depends on the answers so far: nothing is asked before they are delivered."""
    persisted_after: list[int] = []
    with DemoServer(latency_ms=1) as server:
        sampler = _RequestCounting(EndpointConfig(server.base_url, "sim-mid"), concurrency=1,
                                   persist=lambda sample: persisted_after.append(sampler.requests))
        job = SamplingJob(ITEMS[:1], get_canonicalizer("numeric"), get_stopping_rule("anytime"), 8)
        totals = run_sampling(sampler, job)
    assert totals.made == len(persisted_after) >= 2
    assert persisted_after == list(range(1, totals.made + 1))


_FIRST_IMPORT_PROBE = """
import json, sys, threading

first = []


class Watch:  # records which thread imports numpy first; finds nothing itself
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" and not first:
            first.append(threading.current_thread().name)
        return None


sys.meta_path.insert(0, Watch())
from relgate_tui.cli import main

code = main(sys.argv[1:])
print(json.dumps({"code": code, "numpy_first_imported_by": first[0] if first else None}))
"""


@pytest.mark.parametrize(("stopping", "importer"), [("none", "relgate-prefetch"), ("anytime", "MainThread")])
def test_a_run_with_the_none_rule_samples_while_numpy_loads_in_the_background(stopping: str, importer: str,
                                                                             tmp_path: Path) -> None:
    """The statistics (numpy, the analysis, the core's certification) are not needed to sample with the ``none``
    rule: the run's background thread imports them while it samples, and the result is written as ever. The
    default rule computes with numpy on every answer, so the run loads it before its first request."""
    import os
    import subprocess
    import sys

    with DemoServer() as server:
        out = tmp_path / "result.json"
        env = {**os.environ, "RELGATE_HOME": str(tmp_path / "home")}
        argv = ["certify", "--task", "bigbench-3digit-addition", "--limit", "12", "--k-max", "3", "--stopping",
                stopping, "--endpoint", server.base_url, "--model", "sim-strong", "--quiet", "--json", str(out)]
        done = subprocess.run([sys.executable, "-c", _FIRST_IMPORT_PROBE, *argv], capture_output=True, text=True,
                              env=env, check=False, timeout=120)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"code": 0, "numpy_first_imported_by": importer}, done.stderr
    result = json.loads(out.read_text())
    assert result["sampling_complete"] and result["calls"]["failed"] == 0
    assert result["samples_used"] == 12 * 3 or stopping != "none"  # the none rule: every index asked
