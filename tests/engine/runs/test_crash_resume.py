"""SIGKILL `relgate certify` mid-sampling and mid-labelling, rerun, compare with an uninterrupted run (SPEC §7,
issue 5 acceptance): same final JSON, no repeated request for a completed sample, no label lost. The killed run is a
process of its own; the reruns and reference runs are ``cli.main`` in the test's process (``incli``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from relgate_tui.demo import DemoServer
from relgate_tui.engine.certification.certify import CRASH_AFTER_LABELS_ENV
from relgate_tui.engine.runs.listing import open_run
from relgate_tui.engine.runs.store import read_jsonl
from relgate_tui.engine.transport.endpoints import sample_seed
from tests.conftest import InProcessCli

CLI = [sys.executable, "-m", "relgate_tui.cli"]


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != CRASH_AFTER_LABELS_ENV}
    return {**env, "RELGATE_HOME": str(home), **extra}


def _run(args: list[str], home: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=_env(home, **extra), timeout=180)


def _chat(server: DemoServer) -> list:
    return [r for r in server.requests if r.path.endswith("/chat/completions")]


def _without_call_counts(doc: dict) -> dict:
    """The result document minus the counts that describe one invocation by definition (made/cached/failed)."""
    return {**doc, "calls": {"saved_vs_kmax": doc["calls"]["saved_vs_kmax"]}}


def _wait_until_idle(server, limit_s: float = 60.0) -> None:
    """Until the demo server holds no open connection (the killed client's were closed by the kernel): every request
    in flight at the kill has been recorded or dropped. The limit only turns a hang into a failure."""
    deadline = time.monotonic() + limit_s
    while server._writers and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not server._writers, "the server still has open connections"


def _count_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_sigkill_mid_sampling_then_resume(tmp_path: Path, incli: InProcessCli) -> None:
    with DemoServer(latency_ms=15) as server:
        run_dir = tmp_path / "runs"
        args = ["certify", "--task", "bigbench-3digit-addition", "--limit", "36", "--endpoint", server.base_url,
                "--model", "sim-mid", "--k-max", "10", "--concurrency", "4", "--run-dir", str(run_dir), "--quiet"]

        # 1. start, watch samples.jsonl grow, SIGKILL mid-run
        proc = subprocess.Popen([*CLI, *args, "--json", str(tmp_path / "never.json")], env=_env(tmp_path / "home1"),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        samples_file = None
        while time.monotonic() < deadline:
            found = list(run_dir.glob("*/samples.jsonl"))
            if found and _count_lines(found[0]) >= 80:
                samples_file = found[0]
                break
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.005)
        assert samples_file is not None, "sampling never got going"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
        assert not (tmp_path / "never.json").exists()
        _wait_until_idle(server)  # the server has recorded every request that was in flight at the kill
        completed = open_run(samples_file.parent).samples()
        assert 80 <= len(completed) < 330  # really mid-run (the full run needs ~340 samples)
        requests_before = len(_chat(server))

        # 2. rerun the same command with an EMPTY cache (another RELGATE_HOME): only the run store can resume
        out = tmp_path / "resumed.json"
        resumed = incli(tmp_path / "home2", *args, "--json", str(out), cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        doc = json.loads(out.read_text())
        new_requests = _chat(server)[requests_before:]

        # no completed sample was asked for again (each sample has its own seed)
        completed_seeds = {sample_seed(0, s.item, s.index) for s in completed}
        assert completed_seeds.isdisjoint({r.sample_seed for r in new_requests})
        assert doc["calls"]["cached"] == len(completed)
        assert doc["calls"]["made"] == len(new_requests)

    # 3. an uninterrupted run of the same command on a fresh server and fresh dirs gives the same document
    with DemoServer(port=0, latency_ms=0) as fresh:
        ref_out = tmp_path / "reference.json"
        ref_args = [a if a != server.base_url else fresh.base_url for a in args]
        ref_args[ref_args.index(str(run_dir))] = str(tmp_path / "runs_ref")
        ref = incli(tmp_path / "home3", *ref_args, "--json", str(ref_out), cwd=tmp_path)
        assert ref.returncode == 0, ref.stderr
        reference = json.loads(ref_out.read_text())
        paid = len(_chat(fresh))
    assert reference["calls"]["made"] == paid == len(completed) + doc["calls"]["made"]  # nothing paid twice
    for d in (doc, reference):  # the endpoint URL (port) differs between the two servers, the rest must not
        d["endpoint"] = d["run_id"] = "-"
    assert _without_call_counts(doc) == _without_call_counts(reference)


@pytest.fixture()
def labelled_task(tmp_path: Path) -> Path:
    task = tmp_path / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": f"t{i:02d}", "question": f"What is {23 * i + 5} + {7 * i}?"}) + "\n"
                            for i in range(40)))
    return task


def test_sigkill_mid_labelling_then_resume(tmp_path: Path, labelled_task: Path, incli: InProcessCli) -> None:
    """Labels from a file are being persisted (fsync per verdict) when the process is SIGKILLed; the rerun applies the
    rest exactly once and the result equals an uninterrupted run's."""
    with DemoServer() as server:
        base = ["certify", "--task", str(labelled_task), "--endpoint", server.base_url, "--model", "sim-weak",
                "--k-max", "5", "--canon", "numeric", "--quiet"]
        homes = {name: tmp_path / name for name in ("crash", "reference")}
        # sample both runs first (the labels refer to the ranked candidates the user saw)
        first = tmp_path / "first.json"
        assert incli(homes["crash"], *base, "--json", str(first), cwd=tmp_path).returncode == 0
        assert incli(homes["reference"], *base, cwd=tmp_path).returncode == 0
        items = [it for it in json.loads(first.read_text())["items"] if it["role"] == "calibration"]
        verdicts = []
        for j, it in enumerate(items):
            if j % 7 == 3:
                verdicts.append({"id": it["id"], "skip": True})
            elif j % 5 == 1 or not it["classes"]:
                verdicts.append({"id": it["id"], "none": True})
            else:
                verdicts.append({"id": it["id"], "rank": 2 if len(it["classes"]) > 1 and j % 3 == 0 else 1})
        labels = tmp_path / "labels.jsonl"
        labels.write_text("".join(json.dumps(v) + "\n" for v in verdicts))
        requests_after_sampling = len(_chat(server))

        # the crash: SIGKILL right after the 7th label reached the disk
        crashed = _run([*base, "--labels", str(labels), "--json", str(tmp_path / "never.json")], homes["crash"],
                       **{CRASH_AFTER_LABELS_ENV: "7"})
        assert crashed.returncode == -signal.SIGKILL
        run_path = next((homes["crash"] / "runs").iterdir())
        events = read_jsonl(run_path / "labels.jsonl")
        assert len(events) == 7 and all(e["event"] == "label" for e in events)
        assert open_run(run_path).read_results()["n_cal"] == 0  # the results on disk predate the labels

        # rerun: the remaining labels are applied once, nothing is re-sampled
        out, ref_out = tmp_path / "resumed.json", tmp_path / "reference.json"
        resumed = incli(homes["crash"], *base, "--labels", str(labels), "--json", str(out), cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        reference = incli(homes["reference"], *base, "--labels", str(labels), "--json", str(ref_out), cwd=tmp_path)
        assert reference.returncode == 0, reference.stderr
        assert len(_chat(server)) == requests_after_sampling  # labelling never calls the model

    events = read_jsonl(run_path / "labels.jsonl")
    assert len(events) == len(verdicts)  # 7 before the kill + the rest once; no duplicate, no loss
    assert [e["item"] for e in events] == [v["id"] for v in verdicts]
    doc, ref = json.loads(out.read_text()), json.loads(ref_out.read_text())
    assert doc["n_cal"] + doc["n_skipped"] == len(verdicts)
    assert _without_call_counts(doc) == _without_call_counts(ref)
