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
