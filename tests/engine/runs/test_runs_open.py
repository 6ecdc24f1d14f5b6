"""Issue 10 §5–6: runs that open whatever happened to them, viewing that changes nothing, listing without parsing."""

from __future__ import annotations

import fcntl
import json
import os
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relgate_tui.cli import main
from relgate_tui.demo import DemoServer
from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.runs import store as runstore
from relgate_tui.engine.runs.listing import list_runs
from relgate_tui.engine.runs.store import RunStore, RunStoreError
from relgate_tui.engine.transport.cache import SampleCache
from tests.tui.runfixtures import stored_run

TASK = "bigbench-3digit-addition"


def _snapshot(path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.is_file()}


def test_a_wrong_typed_manifest_field_is_one_unreadable_row(tmp_path, capsys) -> None:
    good = stored_run(tmp_path / "runs", model="good")
    bad = tmp_path / "runs" / "bad-run"
    shutil.copytree(good, bad)
    for field, value in (("task", {"name": "t", "items": "x"}), ("created", 5), ("task", [1])):
        manifest = json.loads((good / "manifest.json").read_text())
        manifest[field] = value
        (bad / "manifest.json").write_text(json.dumps(manifest))
        rows = list_runs(tmp_path / "runs")
        assert len(rows) == 2
        assert [r.path for r in rows if r.status.startswith("unreadable")] == [bad]
        assert main(["runs", "--run-dir", str(tmp_path / "runs")]) == 0
        out = capsys.readouterr().out
        assert "unreadable" in out and "sampled" in out


def test_listing_reads_no_sample_once_counts_are_stored(tmp_path, monkeypatch) -> None:
    path = stored_run(tmp_path / "runs")  # closed by its writer: the manifest holds the counts
    assert json.loads((path / "manifest.json").read_text())["counts"]["samples"] == 400

    def no_parse(*_a, **_k):
        raise AssertionError("listing parsed a JSONL file")

    monkeypatch.setattr(runstore, "read_jsonl", no_parse)
    [row] = list_runs(tmp_path / "runs")
    assert (row.n_samples, row.n_items) == (400, 40)
    # a file grown since (another process appending) is counted on bytes, still without parsing
    with (path / "samples.jsonl").open("ab") as f:
        f.write(b'{"item": "x", "index": 0, "text": "1", "canonical": "1"}\n')
    assert list_runs(tmp_path / "runs")[0].n_samples == 401


def test_viewing_a_run_takes_no_lock_and_rewrites_nothing(tmp_path) -> None:
    path = stored_run(tmp_path / "runs")
    before = _snapshot(path)
    session = Session.open(path)
    fd = os.open(path / "run.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: the viewer holds no lock
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    session.results(0.2)
    session.document(0.2, gate=0.5)
    session.save_results(0.2, gate=0.5)
    session.item_view(session.prepared.items[0].id)
    session.spot_progress()
    session.close()
    assert _snapshot(path) == before


def test_a_run_opens_from_its_own_samples_and_labels_after_task_and_labels_files_moved(tmp_path, monkeypatch,
                                                                                       capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    task = tmp_path / "task.jsonl"
    task.write_text("".join(f'{{"id": "q{i}", "question": "What is {i} + 100?", "answer": "{i + 100}"}}\n'
                            for i in range(8)))
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "q0", "rank": 1}\n{"id": "q1", "none": true}\n')
    with DemoServer() as demo:
        assert main(["certify", "--task", str(task), "--endpoint", demo.base_url, "--model", "sim-mid",
                     "--k-max", "3", "--labels", str(labels), "--quiet", "--json", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    run = tmp_path / "runs" / doc["run_id"]
    task.rename(tmp_path / "moved-task.jsonl")
    labels.rename(tmp_path / "moved-labels.jsonl")
    session = Session.open(run)
    assert session.n_items == 8
    assert {k: v.kind for k, v in session.store.current_labels().items()} == {"q0": "rank", "q1": "none"}
    assert session.document(doc["alpha"])["items"] == doc["items"]
    session.close()


def test_a_corrupt_sample_line_is_one_line_and_repair_quarantines_it(tmp_path, capsys) -> None:
    path = stored_run(tmp_path / "runs")
    data = (path / "samples.jsonl").read_bytes().split(b"\n")
    data[10] = b"\x00garbage{"
    data[20] = b'{"item": 7, "index": "no"}'
    (path / "samples.jsonl").write_bytes(b"\n".join(data))
    with pytest.raises(RunStoreError) as info:
        Session.open(path)
    msg = str(info.value)
    assert "\n" not in msg and "samples.jsonl: line 11 is corrupt" in msg and "relgate runs --repair" in msg
    assert main(["runs", "--run-dir", str(tmp_path / "runs"), "--repair", path.name]) == 0
    assert "moved 2 corrupt lines" in capsys.readouterr().err
    quarantined = (path / "samples.jsonl.quarantine").read_bytes().split(b"\n")
    assert quarantined[:2] == [data[10], data[20]]
    session = Session.open(path)  # opens now, with the 398 good samples
    assert sum(len(v) for v in session.store.samples_by_item().values()) == 398
    session.close()
    assert main(["runs", "--run-dir", str(tmp_path / "runs"), "--repair", path.name]) == 0
    assert "no corrupt line" in capsys.readouterr().err


def test_a_damaged_cache_is_moved_aside_and_rebuilt(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    cache = tmp_path / "cache" / "samples"
    SampleCache(cache).close()
    (cache / "cache.db").write_bytes(b"this is not an SQLite database" * 100)
    with DemoServer() as demo:
        assert main(["certify", "--task", TASK, "--endpoint", demo.base_url, "--model", "sim-mid", "--limit", "4",
                     "--k-max", "3", "--quiet"]) == 0
    capsys.readouterr()
    aside = [p for p in (tmp_path / "cache").iterdir() if p.name.startswith("samples.damaged-")]
    assert len(aside) == 1 and (aside[0] / "cache.db").read_bytes().startswith(b"this is not")
    with SampleCache(cache) as rebuilt:
        assert len(rebuilt) > 0 and rebuilt.moved_aside is None


def test_a_renamed_run_resumes_into_itself(tmp_path) -> None:
    path = stored_run(tmp_path / "runs")
    renamed = path.with_name("my-renamed-run")
    path.rename(renamed)
    session = Session.open(renamed)
    assert session.path == renamed and session.run_id == path.name
    session.store.set_status(runstore.RunStatus.SAMPLED)  # a write goes to the renamed directory
    session.close()
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["my-renamed-run"]
    assert RunStore(renamed).status == "sampled"


def test_an_unsampled_item_is_never_offered_for_spot_check(tmp_path) -> None:
    path = stored_run(tmp_path / "runs")  # verification "human": every calibration item goes to the human
    session = Session.open(path)
    victim = session.pending_items()[0]
    session.close()
    lines = (path / "samples.jsonl").read_bytes().splitlines(keepends=True)
    (path / "samples.jsonl").write_bytes(b"".join(x for x in lines if json.loads(x)["item"] != victim))
    session = Session.open(path)
    assert victim not in session.pending_items() and victim not in session.human_items()
    doc = session.document(0.1)
    [row] = [it for it in doc["items"] if it["id"] == victim]
    assert row["not_sampled"] is True and doc["n_not_sampled"] == 1 and doc["passed"] is None
    assert [r.label_source for r in session.results(0.1).rows if r.item_id == victim] == ["not sampled"]
    session.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 5), st.sampled_from("xyz")), max_size=30))
def test_grouping_in_one_pass_equals_sorting_the_file_order(tmp_path, rows) -> None:
    """samples_by_item (one pass, sorting only items whose indices go back) == samples() grouped and sorted, the
    first occurrence of a repeated (item, index) winning."""
    from relgate_tui.engine.records import StoredSample

    root = tmp_path / f"r{abs(hash(tuple(rows)))}"
    store = RunStore.create_or_open(root, {"rows": len(rows)})
    store.append_samples([StoredSample(item, index, text, text) for item, index, text in rows])
    expected: dict[str, list] = {}
    for s in store.samples():
        expected.setdefault(s.item, []).append(s)
    for lst in expected.values():
        lst.sort(key=lambda s: s.index)
    assert store.samples_by_item() == expected
    assert RunStore(store.path).samples_by_item() == expected  # a fresh reader parses the file itself
    store.close()


def test_own_appends_extend_the_parsed_samples_exactly(tmp_path, monkeypatch) -> None:
    """After a read, this process's appends are added to the parsed samples without parsing the file again — and
    the result equals what a fresh reader parses; an out-of-order append falls back to parsing."""
    from relgate_tui.engine.records import StoredSample

    store = RunStore.create_or_open(tmp_path, {"x": 2})
    store.append_samples([StoredSample("a", 0, "1", "1"), StoredSample("b", 0, "2", "2")])
    assert set(store.samples_by_item()) == {"a", "b"}
    parses = []
    real = runstore.read_jsonl
    monkeypatch.setattr(runstore, "read_jsonl", lambda p, **k: parses.append(p) or real(p, **k))
    store.append_samples([StoredSample("a", 1, "1", "1")])
    store.append_samples([StoredSample("c", 0, "3", "3"), StoredSample("a", 2, "5", "5")])
    mine = store.samples_by_item()
    assert parses == []
    assert mine == RunStore(store.path).samples_by_item() and [s.index for s in mine["a"]] == [0, 1, 2]
    store.append_samples([StoredSample("b", 0, "dup", "dup")])  # a repeated index: parsed again, first one wins
    assert store.samples_by_item()["b"][0].text == "2" and len(parses) == 2
    store.close()


def test_reopening_reads_the_call_counts_from_the_manifest_while_it_describes_results_json(tmp_path,
                                                                                            monkeypatch) -> None:
    store = RunStore.create_or_open(tmp_path, {"x": 3})
    doc = {"calls": {"made": 7, "cached": 2, "failed": 1}, "pairwise_judge": {"calls": {"made": 4}}, "items": []}
    store.write_results(doc)
    store.close()
    reader = RunStore(store.path)
    with monkeypatch.context() as m:
        m.setattr(RunStore, "read_results", lambda self: (_ for _ in ()).throw(AssertionError("parsed")))
        assert reader.result_calls() == ({"made": 7, "cached": 2, "failed": 1}, {"made": 4})
    # results.json replaced since (another size): read from the file, not the manifest
    (store.path / "results.json").write_text(json.dumps({"calls": {"made": 99}, "items": [1, 2, 3]}))
    assert RunStore(store.path).result_calls() == ({"made": 99}, {})
    # a manifest written before it carried the counts
    manifest = json.loads((store.path / "manifest.json").read_text())
    manifest["result"] = {k: v for k, v in manifest["result"].items() if k not in ("calls", "judge_calls")}
    (store.path / "manifest.json").write_text(json.dumps(manifest))
    assert RunStore(store.path).result_calls() == ({"made": 99}, {})
