"""Issue 10 §1 and §4: one pipeline for the CLI and the TUI, and honest results — over real loopback sockets.

* the CLI (``relgate certify``) and the TUI's session (``Session.sample`` iterating the same pipeline) write the same
  ``results.json`` for the same run, with and without failed items;
* an unsampled item is "not sampled" (never a miss, never dropped) in both, the run is incomplete (``passed`` null,
  exit 3);
* every request failing (a wrong key) is an error, not "reliability 0.0%";
* nothing is written over an input or inside a run directory; a task path must be a regular file.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.demo import DemoServer, FaultPlan
from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.certification.setup import RunSetup
from relgate_tui.engine.certification.tasks import TaskError, load_task
from relgate_tui.engine.runs.listing import open_run
from relgate_tui.engine.runs.store import RunStatus, RunStore
from relgate_tui.errors import CertifyError

TASK = "bigbench-3digit-addition"


def _cli_doc(tmp: Path, monkeypatch: pytest.MonkeyPatch, base_url: str, extra: list[str], capsys) -> tuple[int, dict]:
    monkeypatch.setenv("RELGATE_HOME", str(tmp / "cli-home"))
    out = tmp / "cli.json"
    code = main(["certify", "--task", TASK, "--endpoint", base_url, "--model", "sim-mid", "--limit", "8",
                 "--k-max", "5", "--seed", "2", "--concurrency", "1", "--quiet", "--json", str(out), *extra])
    capsys.readouterr()
    return code, json.loads(out.read_text()) if out.exists() else {}


def _tui_doc(tmp: Path, base_url: str, **setup: object) -> tuple[dict, Session]:
    session = Session.create(
        RunSetup(base_url=base_url, model="sim-mid", task=TASK, limit=8, k_max=5, seed=2, concurrency=1,
                 **setup),  # type: ignore[arg-type]
        runs_dir=tmp / "tui-runs", cache_dir=tmp / "tui-cache")

    async def drain() -> None:
        async for _ in session.sample():
            pass

    asyncio.run(drain())
    session.save_results(0.10)
    return json.loads((session.path / "results.json").read_text()), session


@pytest.mark.parametrize("judge", [False, True], ids=["plain", "pairwise-judge"])
def test_cli_and_tui_write_the_same_results_json(tmp_path, monkeypatch, capsys, judge) -> None:
    extra = ["--pairwise-judge-endpoint", "", "--pairwise-judge-model", "sim-judge"] if judge else []
    with DemoServer() as demo:
        if judge:
            extra[1] = demo.base_url
        code, cli_doc = _cli_doc(tmp_path, monkeypatch, demo.base_url, extra, capsys)
        tui_doc, session = _tui_doc(tmp_path, demo.base_url,
                                    **({"pairwise_judge_model": "sim-judge"} if judge else {}))
    assert code == 0
    stored = json.loads((open_run(cli_doc["run_id"], tmp_path / "cli-home" / "runs").path / "results.json")
                        .read_text())
    assert stored == cli_doc
    assert tui_doc == cli_doc  # the same document, byte for byte as JSON
    assert ("pairwise_judge" in tui_doc) is judge
    assert session.store.run_status in (RunStatus.COMPLETE, RunStatus.LABELLING)
    session.close()


def test_an_unsampled_item_is_not_sampled_in_both_front_ends_and_the_run_is_incomplete(tmp_path, monkeypatch,
                                                                                       capsys) -> None:
    """The first request (item 1, sample 0) gets a non-retryable 400: that item has no sample. It is listed as not
    sampled — not a miss (score ∞), not dropped — and no PASS/FAIL is decided (exit 3), in the CLI and the TUI."""
    with DemoServer(faults=FaultPlan(script=["400"])) as demo:
        code, cli_doc = _cli_doc(tmp_path, monkeypatch, demo.base_url, ["--min-reliability", "0.5"], capsys)
    with DemoServer(faults=FaultPlan(script=["400"])) as demo:
        tui_doc, session = _tui_doc(tmp_path, demo.base_url)
    assert code == 3
    for doc in (cli_doc, tui_doc):
        assert len(doc["items"]) == 8  # never dropped
        missing = [it for it in doc["items"] if it.get("not_sampled")]
        assert len(missing) == 1 and missing[0]["samples"] == 0 and "score" not in missing[0]
        assert missing[0]["verified_by"] is None and missing[0]["incomplete"] is True
        assert doc["n_not_sampled"] == 1 and doc["sampling_complete"] is False and doc["passed"] is None
    assert cli_doc["gate"]["passed"] is None and cli_doc["gate"]["summary"].startswith("undecided")
    assert cli_doc["min_reliability"] == 0.5
    differ = {"min_reliability", "gate", "run_id", "endpoint"}  # the gate; two servers (each replays its faults)
    assert {k: v for k, v in tui_doc.items() if k not in differ} == {
        k: v for k, v in cli_doc.items() if k not in differ}
    view = session.results(0.10)
    assert view.n_unsampled == 1 and len(view.rows) == 8
    assert [r.label_source for r in view.rows if r.samples == 0] == ["not sampled"]
    assert session.store.run_status == RunStatus.INCOMPLETE
    session.close()


def test_every_request_failing_is_an_error_not_a_reliability(tmp_path, monkeypatch, capsys) -> None:
    """A wrong key: every request answers 4xx. The CLI says so as an error (exit 2), never "reliability 0.0%"; the
    TUI's pass raises the same one-line error and no results.json is written."""
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with DemoServer(faults=FaultPlan(rate=1.0, kinds=("400",))) as demo:
        code = main(["certify", "--task", TASK, "--endpoint", demo.base_url, "--model", "sim-mid", "--limit", "6",
                     "--k-max", "3", "--quiet"])
        err = capsys.readouterr().err
        assert code == 2
        assert err.count("\n") == 1 and "every request failed" in err and "API key" in err
        assert "reliability" not in err
        session = Session.create(RunSetup(base_url=demo.base_url, model="sim-mid", task=TASK, limit=6, k_max=3),
                                 runs_dir=tmp_path / "tui-runs", cache_dir=tmp_path / "tui-cache")

        async def drain() -> None:
            async for _ in session.sample():
                pass

        with pytest.raises(CertifyError, match="every request failed"):
            asyncio.run(drain())
    assert not (session.path / "results.json").exists()
    assert session.store.run_status == RunStatus.INCOMPLETE
    session.close()


def test_outputs_never_overwrite_inputs_or_run_files(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    task = tmp_path / "task.jsonl"
    task.write_text("".join(f'{{"id": "q{i}", "question": "What is {i} + 100?", "answer": "{i + 100}"}}\n'
                            for i in range(6)))
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "q0", "rank": 1}\n')
    before = task.read_bytes(), labels.read_bytes()
    with DemoServer() as demo:
        base = ["certify", "--task", str(task), "--endpoint", demo.base_url, "--model", "sim-mid", "--k-max", "3",
                "--quiet"]
        assert main([*base, "--json", str(task)]) == 2
        assert "refusing to write over an input file" in capsys.readouterr().err
        assert main([*base, "--labels", str(labels), "--json", str(labels)]) == 2
        assert "input file" in capsys.readouterr().err
        assert (task.read_bytes(), labels.read_bytes()) == before
        assert main([*base, "--json", str(tmp_path / "ok.json")]) == 0
    run = open_run(json.loads((tmp_path / "ok.json").read_text())["run_id"], tmp_path / "runs").path
    samples = (run / "samples.jsonl").read_bytes()
    for target in (run / "samples.jsonl", run / "manifest.json", run / "new-file.md"):
        assert main(["report", str(run), "--output", str(target)]) == 2
        assert "inside the run directory" in capsys.readouterr().err
    assert (run / "samples.jsonl").read_bytes() == samples and not (run / "new-file.md").exists()
    assert main([*base[:1], "--task", str(task), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m",
                 "--json", str(run / "results.json"), "--quiet"]) == 2
    assert "inside the run directory" in capsys.readouterr().err
    # the run's own exports/ folder is a fine place for a report
    assert main(["report", str(run), "--format", "csv", "--output", str(run / "exports" / "r.csv")]) == 0
    capsys.readouterr()


def test_task_paths_must_be_regular_files(tmp_path) -> None:
    with pytest.raises(TaskError, match="not a regular file"):
        load_task("/dev/zero")
    fifo = tmp_path / "task.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(TaskError, match="not a regular file"):
        load_task(str(fifo))  # never opened: a FIFO would block


def test_limit_streams_the_task_file_and_still_hashes_all_of_it(tmp_path) -> None:
    """With ``--limit 5`` only the first five lines are parsed (later garbage is never read as items), but the
    task's hash covers the whole file, so the run identity is unchanged."""
    import hashlib

    task = tmp_path / "big.jsonl"
    good = "".join(f'{{"id": "q{i}", "question": "Q{i}?", "answer": "{i}"}}\n' for i in range(5))
    task.write_text(good + "this is not JSON\n" * 1000)
    loaded = load_task(str(task), limit=5)
    assert [it.id for it in loaded.items] == [f"q{i}" for i in range(5)]
    assert loaded.sha256 == hashlib.sha256(task.read_bytes()).hexdigest()
    with pytest.raises(TaskError, match=r"big.jsonl:6: bad JSON"):
        load_task(str(task))  # without a limit the whole file is checked
    csv = tmp_path / "big.csv"
    csv.write_text("id,question,answer\n" + "".join(f"c{i},Q{i}?,{i}\n" for i in range(7)) + '"unterminated\n')
    assert [it.id for it in load_task(str(csv), limit=3).items] == ["c0", "c1", "c2"]


def test_status_is_an_enum_owned_by_the_run_store(tmp_path) -> None:
    store = RunStore.create_or_open(tmp_path, {"x": 1})
    with pytest.raises(ValueError):
        store.set_status("judgeing")  # type: ignore[arg-type]
    store.set_status(RunStatus.JUDGING)
    assert store.run_status is RunStatus.JUDGING and store.status == "judging"
    assert not RunStatus.JUDGING.sampling_done and RunStatus.LABELLING.sampling_done
    store.close()
