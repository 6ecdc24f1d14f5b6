"""``relgate certify --batch`` against a Batch API that fails the way real ones do (tests/engine/batch_faults.py, real
loopback HTTP): a paid batch is never paid twice — a run holding a submitted batch is kept whatever ends the
invocation (Ctrl-C, a download refused), and its rerun collects that batch; every control call is retried with
backoff, honouring ``Retry-After``, within a deadline per call. Time is a virtual clock: nothing here waits on the
wall clock."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from relgate_tui.demo import DemoServer
from relgate_tui.demo.batches import BatchKnobs
from relgate_tui.engine.transport import batch as batch_module
from tests.conftest import InProcessCli
from tests.engine.batch_faults import BatchFaults, FaultyBatchServer

TASK = ["--task", "gsm8k", "--limit", "12", "--model", "sim-mid", "--k-max", "4", "--stopping", "none", "--quiet"]


class VirtualClock:
    """A monotonic clock that moves only when the code under test sleeps on it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> VirtualClock:
    """Every BatchClient of the test retries on a virtual clock (deadline 60 s per call, waits 1, 2, 4, … 16 s)."""
    vc = VirtualClock()
    policy = getattr(batch_module, "RetryPolicy", None)
    if policy is not None:
        monkeypatch.setattr(batch_module, "DEFAULT_RETRY",
                            policy(deadline_s=60.0, first_s=1.0, max_s=16.0, clock=vc, sleep=vc.sleep))
    return vc


def _certify(incli: InProcessCli, home: Path, server: DemoServer, *extra: str) -> tuple[int, str, dict | None]:
    home.mkdir(exist_ok=True)
    out = home / "result.json"
    out.unlink(missing_ok=True)
    proc = incli(home, "certify", *TASK, "--endpoint", server.base_url, "--batch", "--json", str(out), *extra)
    return proc.returncode, proc.stderr, json.loads(out.read_text()) if out.exists() else None


def _stored_batch(home: Path) -> str | None:
    for manifest in home.glob("runs/*/manifest.json"):
        try:
            batch = json.loads(manifest.read_text()).get("batch") or {}
        except ValueError:
            continue
        pending = (batch.get("pending") or {}).get("batches")
        if pending:
            return str(pending[0])
    return None


def test_ctrl_c_while_round_1_is_in_flight_keeps_the_run_and_the_rerun_pays_once(incli: InProcessCli,
                                                                                 tmp_path: Path) -> None:
    """SIGINT while round 1's batch runs (no sample stored yet): the run is kept with its batch id, `relgate runs`
    shows it in flight, and the rerun collects that batch — one batch in all."""
    with DemoServer(batches=BatchKnobs(hold=True)) as server:
        home = tmp_path / "home"
        home.mkdir()
        args = [sys.executable, "-m", "relgate_tui.cli", "certify", *TASK, "--endpoint", server.base_url, "--batch"]
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("RELGATE_")}, "RELGATE_HOME": str(home)}
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        stored = None
        deadline = time.monotonic() + 120  # a safety net only: the test waits for the stored batch id
        while stored is None and time.monotonic() < deadline:
            stored = _stored_batch(home)
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.01)
        assert stored is not None, "the batch id was never stored"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 2 and "rerun the same command" in err.decode(), err.decode()
        runs = list(home.glob("runs/*/manifest.json"))
        assert len(runs) == 1, "the run holding the batch was deleted"
        listing = incli(home, "runs")
        assert f"batch in flight (id {stored})" in listing.stdout + listing.stderr, listing.stdout
        server.batches.release()
        code, err, doc = _certify(incli, home, server)
        assert code == 0, err
        assert [r.id for r in server.batches.records] == [stored]  # one batch in all
        assert doc is not None and doc["sampling_complete"] and doc["samples_used"] == 48


def test_a_download_refused_with_429_until_allowed_keeps_the_batch_and_the_rerun_pays_once(
        incli: InProcessCli, tmp_path: Path, clock: VirtualClock) -> None:
    """Round 1's output download answers 429 until the server allows it: the run stops after the retry deadline with
    the batch id kept and one line saying how to resume; once allowed, the rerun downloads the same batch."""
    with FaultyBatchServer(BatchFaults(hold_downloads=True)) as server:
        home = tmp_path / "home"
        code, err, _ = _certify(incli, home, server)
        assert code == 2 and "downloading" in err and "429" in err, err
        stored = server.batches.records[0].id
        assert f"keeps batch {stored}: rerun the same command" in err, err
        assert len(err.strip().splitlines()) == 1, err
        assert server.injected["download"] >= 3  # retried with backoff first …
        assert clock.slept[:3] == [1.0, 2.0, 4.0] and clock.now <= 60  # … within the call's deadline
        assert _stored_batch(home) == stored
        server.release_downloads()
        code, err, doc = _certify(incli, home, server)
        assert code == 0, err
        assert [r.id for r in server.batches.records] == [stored]
        assert doc is not None and doc["sampling_complete"] and doc["calls"]["made"] == 48


def test_every_control_call_is_retried_honouring_retry_after_and_a_lost_create_is_found(
        incli: InProcessCli, tmp_path: Path, clock: VirtualClock) -> None:
    """429/500/503 on upload, create, retrieve and download, and a create the server performed but answered 500:
    the run finishes with one batch; the waits follow the backoff and the server's Retry-After (7 s)."""
    faults = BatchFaults(control={"upload": [500, 429], "create": [429], "retrieve": [500, 503], "download": [500]},
                         retry_after="7", create_then_fail=1)
    with FaultyBatchServer(faults) as server:
        code, err, doc = _certify(incli, tmp_path / "home", server)
        assert code == 0, err
        assert sum(server.injected.values()) == 7
        assert len(server.batches.records) == 1  # the lost create was found by its input file, not made again
        assert server.calls["list"] >= 2 and server.calls["upload"] == 3
        assert clock.slept[:6] == [1.0, 7.0, 7.0, 2.0, 1.0, 7.0]  # backoff, and the 429/503s' Retry-After (7 s)
        assert doc is not None and doc["sampling_complete"] and doc["calls"]["made"] == 48


def _first_download_only(rewrite: Callable[[list[dict]], list[dict]]) -> Callable[[list[dict]], list[dict]]:
    done = []

    def once(lines: list[dict]) -> list[dict]:
        if done:
            return lines
        done.append(True)
        return rewrite(lines)

    return once


def _with_id(line: dict, custom_id: str, text: str | None = None) -> dict:
    copy = json.loads(json.dumps(line))
    copy["custom_id"] = custom_id
    if text is not None:
        copy["response"]["body"]["choices"][0]["message"]["content"] = text
    return copy


def test_foreign_unrequested_and_conflicting_lines_are_refused_and_counted(incli: InProcessCli,
                                                                         tmp_path: Path) -> None:
    """An output file with a line of another run, an answer to an index never asked and a second, different answer
    to one request: all three refused and counted with their reasons; the conflicting request is asked again; no
    refused text reaches the run."""
    def hostile(lines: list[dict]) -> list[dict]:
        run, _, rest = lines[0]["custom_id"].partition("/")
        item = rest.rpartition("/")[0]
        return [*lines, _with_id(lines[0], f"another-run/{rest}"),
                _with_id(lines[1], f"{run}/{item}/99", "UNREQUESTED 12345"),
                _with_id(lines[2], lines[2]["custom_id"], "CONFLICTING 67890")]

    with FaultyBatchServer(BatchFaults(rewrite=_first_download_only(hostile))) as server:
        home = tmp_path / "home"
        code, err, doc = _certify(incli, home, server)
        assert code == 0, err
        assert doc is not None and doc["sampling_complete"]
        calls = doc["calls"]
        assert calls["failed"] == 3 and calls["made"] == 48 and calls["batched"] == 49, calls
        assert set(calls["failure_reasons"]) == {"refused: a line of another run",
                                                 "refused: a sample index this round did not ask for",
                                                 "refused: conflicting answers to one request"}, calls
        assert [len(r.custom_ids) for r in server.batches.records] == [48, 1]
        samples = next(home.glob("runs/*/samples.jsonl")).read_text()
        assert "UNREQUESTED" not in samples and "CONFLICTING" not in samples


@pytest.mark.parametrize("output", ["another run's", "empty"])
def test_a_round_with_no_usable_answer_stops_after_one_retry_round(incli: InProcessCli, tmp_path: Path,
                                                                   output: str) -> None:
    """Every output line names another run (or the output is empty): round 1 and its one retry round, then one clear
    line — never ten batches of the same requests."""
    def useless(lines: list[dict]) -> list[dict]:
        return [] if output == "empty" else [_with_id(x, "another-run/" + x["custom_id"].partition("/")[2])
                                             for x in lines]

    with FaultyBatchServer(BatchFaults(rewrite=useless)) as server:
        code, err, _ = _certify(incli, tmp_path / "home", server)
        assert code == 2 and "gave no usable answer" in err, err
        reason = "a line of another run" if output != "empty" else "no line of the batch results answers it"
        assert reason in err and len(err.strip().splitlines()) == 1, err
        assert len(server.batches.records) == 2


def test_a_batch_that_never_completes_stops_at_the_deadline_with_its_id_kept(
        incli: InProcessCli, tmp_path: Path, clock: VirtualClock) -> None:
    with DemoServer(batches=BatchKnobs(hold=True)) as server:
        home = tmp_path / "home"
        code, err, _ = _certify(incli, home, server, "--batch-deadline", "0.01")  # 36 s on the virtual clock
        stored = _stored_batch(home)
        assert code == 2 and "--batch-deadline" in err and f"keeps batch {stored}" in err, err
        assert 36 <= clock.now <= 36 + 10
        server.batches.release()
        code, err, doc = _certify(incli, home, server)
        assert code == 0 and doc is not None and doc["sampling_complete"], err
        assert [r.id for r in server.batches.records] == [stored]


def test_a_round_over_the_byte_limit_is_several_batches(incli: InProcessCli, tmp_path: Path) -> None:
    """--batch-max-mb splits a round's requests by bytes (the download cap, RELGATE_BATCH_MAX_MB, is another limit)."""
    import httpx

    limit = int(0.005 * 1024 * 1024)
    with DemoServer() as server:
        code, err, doc = _certify(incli, tmp_path / "home", server, "--batch-max-mb", "0.005")
        assert code == 0 and doc is not None and doc["calls"]["made"] == 48, err
        records = server.batches.records
        assert len(records) >= 3 and sum(len(r.custom_ids) for r in records) == 48
        sizes = [httpx.get(f"{server.base_url}/files/{r.input_file_id}", trust_env=False).json()["bytes"]
                 for r in records]
        assert max(sizes) <= limit and sum(sizes) > 2 * limit, sizes


def test_results_files_are_read_line_by_line_with_vllm_reasons_in_both_shapes(tmp_path: Path) -> None:
    """parse_results on a file on disk: a line longer than the read block, blank lines, an invalid UTF-8 line, a last
    line without its newline; vLLM's 400 lines keep their reason whether ``error`` is a string or an object."""
    from relgate_tui.engine.transport.batch import parse_results
    from relgate_tui.engine.transport.endpoints import EndpointConfig
    from tests.engine.batch_faults import vllm_rejection

    def answer(custom_id: str, text: str) -> bytes:
        return json.dumps({"custom_id": custom_id, "response": {"status_code": 200, "body": {
            "choices": [{"message": {"role": "assistant", "content": text}}]}}, "error": None}).encode()

    long_text = "7 " * 100_000  # 200 KB: over the 64 KB read block
    lines = [answer("r/a/0", long_text), b"", b"\xff\xfe not utf-8",
             json.dumps(vllm_rejection({"custom_id": "r/b/0"}, "over the context length", as_object=False)).encode(),
             json.dumps(vllm_rejection({"custom_id": "r/c/0"}, "too many tokens")).encode(), answer("r/d/0", "4")]
    path = tmp_path / "out.jsonl"
    path.write_bytes(b"\n".join(lines))  # no newline after the last line
    cfg = EndpointConfig("http://127.0.0.1:1/v1", "m")
    with path.open("rb") as f:
        results = parse_results([f], cfg)
    assert results.answers["r/a/0"][0].text == long_text and results.answers["r/d/0"][0].text == "4"
    assert results.malformed == 1
    assert "over the context length" in str(results.failures["r/b/0"]) and results.failures["r/b/0"].kind == "4xx"
    assert "too many tokens" in str(results.failures["r/c/0"]) and not results.failures["r/c/0"].retryable
