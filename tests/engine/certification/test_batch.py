"""``relgate certify --batch`` over real loopback sockets against the demo server's Batch API (issue 32): the same
certification as direct calls, stopping in rounds, kill -9 mid-batch resumed without paying twice, and batch faults
(expired, 429/500 lines, a malformed output line, an output file over the cap) as counted failures, nothing lost.

The demo's batches advance per poll, never per second, so nothing here depends on the wall clock."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from relgate_tui.core.certification.stopping import get_stopping_rule
from relgate_tui.demo import DemoServer
from relgate_tui.demo.batches import BatchKnobs
from relgate_tui.engine.certification.batch_rounds import (
    BatchSampler,
    BatchSettings,
    make_batch_sampler,
    parse_custom_id,
    round_size,
)
from relgate_tui.engine.certification.certify import CertifyConfig, prepare
from relgate_tui.engine.certification.pipeline import sampling_job
from relgate_tui.engine.transport.batch import BatchError
from tests.conftest import InProcessCli

TASK = ["--task", "gsm8k", "--limit", "40", "--model", "sim-mid", "--quiet"]


def _certify(incli: InProcessCli, home: Path, server: DemoServer, *extra: str) -> dict:
    home.mkdir(exist_ok=True)
    out = home / "result.json"
    proc = incli(home, "certify", *TASK, "--endpoint", server.base_url, "--json", str(out), *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def _no_request_twice(server: DemoServer) -> Counter:
    """custom ids submitted in more than one batch (a request paid twice) — must be empty."""
    seen = Counter(cid for record in server.batches.records for cid in record.custom_ids)
    return Counter({cid: n for cid, n in seen.items() if n > 1})


@pytest.fixture
def direct(incli: InProcessCli, tmp_path: Path) -> dict:
    with DemoServer() as server:
        return _certify(incli, tmp_path / "direct", server)


def test_batch_certifies_like_direct_within_budget(incli: InProcessCli, tmp_path: Path, direct: dict) -> None:
    with DemoServer() as server:
        doc = _certify(incli, tmp_path / "batch", server, "--batch")
        assert abs(doc["reliability_level"] - direct["reliability_level"]) <= 0.02
        assert doc["calls"]["batched"] <= 1.25 * direct["calls"]["made"]
        assert 1 <= doc["calls"]["batch_rounds"] <= 8
        assert doc["calls"]["batched"] == doc["calls"]["made"] == sum(len(r.custom_ids) for r in server.batches.records)
        assert doc["samples_used"] == direct["samples_used"]  # same seeds, same answers: the rule stops alike
        assert not server.chat_requests  # every sample went through the Batch API
        assert not _no_request_twice(server)
        run_id, item, index = parse_custom_id(server.batches.records[0].custom_ids[0]) or ("", "", -1)
        assert run_id == doc["run_id"] and index >= 0


def test_batch_and_direct_share_the_cache(incli: InProcessCli, tmp_path: Path) -> None:
    """A batch run in the home of a direct run (its cache) asks nothing: the cache key is the direct call's."""
    with DemoServer() as server:
        first = _certify(incli, tmp_path / "home", server)
        doc = _certify(incli, tmp_path / "home", server, "--batch", "--run-dir", str(tmp_path / "other-runs"))
        assert doc["calls"]["made"] == 0 and doc["calls"]["batched"] == 0
        assert doc["calls"]["cached"] >= first["calls"]["made"]
        assert doc["reliability_level"] == first["reliability_level"]
        assert not server.batches.records


def test_round_size_never_passes_kmax_and_reaches_it_by_the_last_round() -> None:
    rule = get_stopping_rule("anytime", 0.05)
    settings = BatchSettings()
    first = round_size(rule, [], 0, 20, 1, settings)
    assert first >= 1 and not rule.should_stop([first - 1], first - 1)  # never less than the rule could stop at
    for counts, n in (([3, 2], 5), ([1, 1, 1], 3), ([10, 9], 19)):
        m = round_size(rule, counts, n, 20, 2, settings)
        assert 1 <= m <= 20 - n
        assert round_size(rule, counts, n, 20, settings.max_rounds, settings) == 20 - n


def test_expired_batch_keeps_its_half(incli: InProcessCli, tmp_path: Path, direct: dict) -> None:
    knobs = BatchKnobs(expire_after=60, faulty_batches=1)
    with DemoServer(batches=knobs) as server:
        doc = _certify(incli, tmp_path / "batch", server, "--batch")
        first = server.batches.records[0]
        assert len(first.custom_ids) > 60  # the first batch expired with part of it answered
        assert doc["calls"]["failed"] == server.batches.failed_lines == len(first.custom_ids) - 60
        answered = set(first.custom_ids[:60])
        later = {cid for r in server.batches.records[1:] for cid in r.custom_ids}
        assert not answered & later  # the expired batch's answers were kept, never asked again
        assert set(first.custom_ids[60:]) <= later  # its unanswered requests were asked in the next round
        assert doc["sampling_complete"] and doc["reliability_level"] == direct["reliability_level"]


def test_error_file_lines_are_counted_and_retried(incli: InProcessCli, tmp_path: Path, direct: dict) -> None:
    knobs = BatchKnobs(fail_every=9, fail_statuses=(429, 500))
    with DemoServer(batches=knobs) as server:
        doc = _certify(incli, tmp_path / "batch", server, "--batch")
        assert server.batches.failed_lines > 0
        assert doc["calls"]["failed"] == server.batches.failed_lines
        assert doc["sampling_complete"] and doc["reliability_level"] == direct["reliability_level"]
        assert doc["samples_used"] == direct["samples_used"]


def test_malformed_output_line_is_a_counted_failure(incli: InProcessCli, tmp_path: Path, direct: dict) -> None:
    knobs = BatchKnobs(malformed_lines=2, faulty_batches=1)
    with DemoServer(batches=knobs) as server:
        doc = _certify(incli, tmp_path / "batch", server, "--batch")
        assert doc["calls"]["failed"] == 2
        assert doc["sampling_complete"] and doc["reliability_level"] == direct["reliability_level"]


def test_output_over_the_cap_is_one_line_and_the_batch_stays(tmp_path: Path) -> None:
    """An output file over the download cap: one-line BatchError, the batch id stays in the run, and a rerun with a
    larger cap reads that same batch (no second batch for its requests)."""
    knobs = BatchKnobs(pad_output_bytes=200_000, faulty_batches=1)
    with DemoServer(batches=knobs) as server:
        cfg = CertifyConfig(task="gsm8k", endpoint=server.base_url, model="sim-mid", limit=10,
                            run_dir=str(tmp_path / "runs"), batch=0.5).validate()

        def sample(cap: int) -> BatchSampler:
            prepared = prepare(cfg)
            try:
                store = prepared.store
                sampler = make_batch_sampler(prepared, settings=BatchSettings(max_file_bytes=cap))

                async def go() -> None:
                    async for _ in sampler.run(sampling_job(prepared)):
                        pass

                try:
                    asyncio.run(go())
                finally:
                    store.sync_samples()
                return sampler
            finally:
                prepared.close()

        with pytest.raises(BatchError) as caught:
            sample(100_000)
        assert "\n" not in str(caught.value) and "cap" in str(caught.value)
        assert len(server.batches.records) == 1
        sampler = sample(10_000_000)
        assert not _no_request_twice(server)
        assert sampler.totals.items_failed == 0 and sampler.totals.made > 0


def _count(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_kill_during_a_round_resumes_the_same_batch(incli: InProcessCli, tmp_path: Path, direct: dict) -> None:
    """kill -9 while a batch is in flight (held by the demo until released); the rerun polls the stored batch id
    and submits none of its requests again."""
    knobs = BatchKnobs(hold=True)
    with DemoServer(batches=knobs) as server:
        home = tmp_path / "batch"
        home.mkdir()
        args = [sys.executable, "-m", "relgate_tui.cli", "certify", *TASK, "--endpoint", server.base_url, "--batch"]
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("RELGATE_")}, "RELGATE_HOME": str(home)}
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        stored: str | None = None
        deadline = time.monotonic() + 120  # a safety net only: the test waits for the stored batch id
        while stored is None and time.monotonic() < deadline:
            for manifest in home.glob("runs/*/manifest.json"):
                try:
                    batch = json.loads(manifest.read_text()).get("batch") or {}
                except ValueError:
                    continue  # replaced atomically: never torn, but a read may race the rename on some systems
                pending = (batch.get("pending") or {}).get("batches")
                stored = pending[0] if pending else None
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.01)
        assert stored is not None, "the batch id was never stored"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
        assert [r.id for r in server.batches.records] == [stored]
        run = next(home.glob("runs/*"))
        assert _count(run / "samples.jsonl") == 0
        server.batches.release()
        server.clear_requests()
        doc = _certify(incli, home, server, "--batch")
        assert server.batches.records[0].id == stored
        assert any(r.path == f"/v1/batches/{stored}" for r in server.requests)
        assert not _no_request_twice(server)
        assert doc["sampling_complete"] and doc["reliability_level"] == direct["reliability_level"]
        assert doc["calls"]["made"] == sum(len(r.custom_ids) for r in server.batches.records)


def test_setup_batch_choice_reaches_the_run_and_the_preflight() -> None:
    from relgate_tui.engine.certification.setup import Preflight, RunSetup, certify_config
    from relgate_tui.tui.preflight_text import preflight_text

    setup = RunSetup(base_url="http://127.0.0.1:1/v1", model="sim-mid", task="gsm8k", batch=0.5)
    assert certify_config(setup, runs_dir=None).batch == 0.5
    assert certify_config(RunSetup(base_url="http://127.0.0.1:1/v1", model="m", task="gsm8k"), None).batch is None
    text = preflight_text(Preflight(10, 5, 200, 100, cost=4.0), setup, None, 1, "").plain
    assert "cost        ≈ $4.00" in text and "batch cost  ≈ $2.00 (×0.5 of direct" in text


def test_cancelled_batch_keeps_answers_and_reports_the_rest(tmp_path: Path) -> None:
    """The client against the demo's Batch API: a batch cancelled after one of two polls keeps the answers it ran
    (output file) and lists the others as batch_cancelled failures (error file), which are retryable."""
    from relgate_tui.engine.transport.batch import BatchClient, parse_results, request_line
    from relgate_tui.engine.transport.endpoints import EndpointConfig, request_body

    with DemoServer(batches=BatchKnobs(polls=2)) as server:
        cfg = EndpointConfig(server.base_url, "sim-mid")
        messages = [{"role": "user", "content": "What is 2 + 2?"}]
        lines = b"".join(request_line(f"run/item/{i}", request_body(cfg, messages, i)) for i in range(6))

        async def go() -> tuple[list[str], bytes, bytes]:
            async with BatchClient(cfg) as client:
                batch = await client.create(await client.upload(lines))
                seen = [(await client.status(batch.id)).status]  # the first of two polls: half the lines ran
                seen.append((await client.cancel(batch.id)).status)
                final = await client.status(batch.id)
                seen.append(final.status)
                assert final.output_file_id and final.error_file_id
                assert (final.total, final.completed, final.failed) == (6, 3, 3)
                return seen, await client.download(final.output_file_id), await client.download(final.error_file_id)

        seen, output, errors = asyncio.run(go())
        assert seen == ["in_progress", "cancelling", "cancelled"]
        results = parse_results([output, errors], cfg)
        assert len(results.answers) == 3 and len(results.failures) == 3 and results.malformed == 0
        assert all(f.retryable and "batch_cancelled" in str(f) for f in results.failures.values())


def test_unknown_stored_batch_is_one_line_then_dropped(tmp_path: Path) -> None:
    """A stored batch id the provider does not know (404): one line, and the next run submits the requests again."""
    with DemoServer() as server:
        cfg = CertifyConfig(task="gsm8k", endpoint=server.base_url, model="sim-mid", limit=5,
                            run_dir=str(tmp_path / "runs"), batch=0.5).validate()

        def sample() -> BatchSampler:
            prepared = prepare(cfg)
            try:
                sampler = make_batch_sampler(prepared)

                async def go() -> None:
                    async for _ in sampler.run(sampling_job(prepared)):
                        pass

                asyncio.run(go())
                return sampler
            finally:
                prepared.store.sync_samples()
                prepared.close()

        prepared = prepare(cfg)
        prepared.store.update_manifest(batch={"rounds": 0, "pending": {"round": 1, "batches": ["batch-gone"]}})
        prepared.close()
        with pytest.raises(BatchError) as caught:
            sample()
        assert "unknown" in str(caught.value) and "\n" not in str(caught.value)
        assert sample().totals.items_failed == 0 and len(server.batches.records) >= 1


def test_batch_from_a_run_config_prices_the_result_at_the_batch_price(incli: InProcessCli, tmp_path: Path) -> None:
    """``batch``/``batch-price`` are run-config keys (the TUI's saved config writes them); ``usage.cost`` is then the
    batch price, the direct one beside it, and the summary shows both (issue 32 §5)."""
    from relgate_tui.engine.certification.run_config import run_config_text

    with DemoServer() as server:
        cfg = CertifyConfig(task="gsm8k", endpoint=server.base_url, model="sim-mid", limit=40, price_in=2.0,
                            price_out=8.0, batch=0.25)
        text = run_config_text(cfg)
        assert "batch = true" in text and "batch-price = 0.25" in text
        assert "batch" not in run_config_text(CertifyConfig(task="gsm8k", endpoint=server.base_url, model="sim-mid"))
        config = tmp_path / "run.toml"
        config.write_text(text)
        home = tmp_path / "home"
        home.mkdir()
        out = home / "result.json"
        proc = incli(home, "certify", "--config", str(config), "--json", str(out))
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(out.read_text())
        assert doc["calls"]["batched"] == doc["calls"]["made"] > 0 and not server.chat_requests
        usage = doc["usage"]
        direct_cost = (usage["prompt_tokens"] * 2.0 + usage["completion_tokens"] * 8.0) / 1e6
        assert usage["cost_direct"] == pytest.approx(direct_cost) and direct_cost > 0
        assert usage["cost"] == pytest.approx(0.25 * direct_cost) and usage["batch_price"] == 0.25
        assert f"cost ≈ ${usage['cost']:.4f} at the batch price (×0.25 of direct ${direct_cost:.4f})" in proc.stderr


def test_the_sampling_screen_gets_each_round_as_a_progress_line(tmp_path: Path) -> None:
    """The TUI's session turns a round's counts into ``SamplingUpdate.batch`` (the sampling screen's progress line:
    submitted / in progress / completed, the ETA), not into notes (issue 32 §1)."""
    from relgate_tui.engine.certification.batch_rounds import BatchProgress
    from relgate_tui.engine.certification.session import Session
    from relgate_tui.engine.certification.setup import RunSetup

    line = BatchProgress(2, "batch_1", "in_progress", 40, 25, 3, eta_s=31.6).line
    assert line == "batch round 2 in_progress: submitted 40 · in progress 12 · completed 25 · failed 3 · ETA 32 s"
    assert BatchProgress(1, "batch_1", "failed", 0, 0, 0, note="2 unreadable lines").line is None

    async def updates() -> list:
        with DemoServer(batches=BatchKnobs(polls=2)) as server:
            setup = RunSetup(base_url=server.base_url, model="sim-mid", task="gsm8k", limit=20, batch=0.5)
            session = Session.create(setup, runs_dir=tmp_path / "runs", cache_dir=tmp_path / "cache")
            try:
                return [u async for u in session.sample()]
            finally:
                session.close()

    got = asyncio.run(updates())
    lines = [u.batch for u in got if u.batch]
    assert lines and all(line.startswith("batch round ") and "submitted" in line for line in lines), lines
    assert any("in progress 0 ·" not in line for line in lines), lines  # a round still running …
    assert any("completed: submitted" in line and "in progress 0 ·" in line for line in lines), lines  # … then done
    assert not any(note.startswith("batch round") for u in got for note in u.errors)  # counts are no notes
    assert got[-1].items_done == 20


@pytest.mark.parametrize("created_before_the_kill", [True, False])
def test_a_kill_while_the_create_request_is_on_the_wire_never_makes_a_second_batch(tmp_path: Path,
                                                                                  created_before_the_kill: bool) -> None:
    """The file was uploaded and its id stored; the run died while ``POST /batches`` was on the wire. Whether the
    endpoint created the batch (its answer lost) or not, the rerun ends with exactly one batch of those requests:
    the one it finds by its input file (``GET /batches``), or the one it creates then."""
    from relgate_tui.engine.transport.batch import BatchClient

    with DemoServer() as server:
        cfg = CertifyConfig(task="gsm8k", endpoint=server.base_url, model="sim-mid", limit=5, k_max=3,
                            stopping="none", run_dir=str(tmp_path / "runs"), batch=0.5).validate()
        prepared = prepare(cfg)
        try:
            sampler = make_batch_sampler(prepared)
            round_no, lines, _ = sampler.offline_requests(sampling_job(prepared))

            async def upload() -> str:
                async with BatchClient(cfg.endpoint_config()) as client:
                    file_id = await client.upload(b"".join(lines))
                    if created_before_the_kill:
                        await client.create(file_id)
                    return file_id

            file_id = asyncio.run(upload())
            prepared.store.update_manifest(batch={"rounds": 0, "pending": {"round": round_no, "batches": [],
                                                                           "creating": file_id}})

            async def go() -> None:
                async for _ in sampler.run(sampling_job(prepared)):
                    pass

            asyncio.run(go())
        finally:
            prepared.store.sync_samples()
            prepared.close()
        records = server.batches.records
    assert [r.input_file_id for r in records] == [file_id]  # one batch of that file, found or created after the kill
    assert not _no_request_twice(server)
    assert sampler.totals.samples_used == 15 and sampler.totals.items_failed == 0
    assert sampler.totals.made == len(lines) == 15


def test_batch_progress_counts_what_is_done(incli: InProcessCli, tmp_path: Path) -> None:
    """``certify --batch`` progress (plain lines, stderr not a terminal) counts what is done after each round: the items
    a round settled (their ItemDone comes with the round, not all at the end: it said "0/60 items, calls made 761")
    and the samples stored — never "0 items" once rounds have settled some."""
    import re

    with DemoServer() as server:
        home = tmp_path / "home"
        home.mkdir()
        proc = incli(home, "certify", "--task", "gsm8k", "--limit", "20", "--model", "sim-mid", "--endpoint",
                     server.base_url, "--batch", "--json", str(home / "r.json"))
        assert proc.returncode in (0, 1), proc.stderr
    lines = [(int(m[1]), int(m[2]), int(m[3])) for m in
             re.finditer(r"sampling: (\d+)/(\d+) items settled, (\d+) samples stored", proc.stderr)]
    assert len(lines) >= 3, proc.stderr
    settled, stored = [x[0] for x in lines], [x[2] for x in lines]
    assert settled == sorted(settled) and stored == sorted(stored)
    assert any(0 < s < 20 for s in settled), proc.stderr  # items settled round by round, not only at the end
    assert lines[-1][:2] == (20, 20)
    (run,) = (home / "runs").iterdir()
    assert stored[-1] == len((run / "samples.jsonl").read_text().splitlines())
