"""Run store (SPEC §4.5, §7): append-only files, label replay with undo, torn-line tolerance, locking, listing."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relgate_tui.engine.records import StoredSample
from relgate_tui.engine.runs.listing import list_runs, open_run
from relgate_tui.engine.runs.store import Label, RunStore, RunStoreError, make_run_id, read_jsonl, replay_labels

IDENTITY = {"task_sha256": "ab" * 32, "model": "sim-mid", "endpoint": "http://127.0.0.1:1/v1", "k_max": 20}
INFO = {"task": {"name": "demo", "sha256": "ab" * 32, "items": 3}, "model": "sim-mid", "endpoint": "x"}


def _sample(item: str, index: int, text: str = "The answer is 42.") -> StoredSample:
    return StoredSample(item, index, text, "42", {"prompt_tokens": 10, "completion_tokens": 5}, f"fp-{item}-{index}")


# ---------------------------------------------------------------------------------------------------------- run id
def test_run_id_is_deterministic_and_depends_on_identity() -> None:
    a = make_run_id(IDENTITY, "demo sim-mid")
    assert a == make_run_id(dict(reversed(list(IDENTITY.items()))), "demo sim-mid")
    assert a.startswith("demo-sim-mid-") and len(a.rsplit("-", 1)[1]) == 12
    assert make_run_id({**IDENTITY, "k_max": 10}, "demo sim-mid") != a
    assert make_run_id({**IDENTITY, "model": "sim-weak"}, "demo sim-mid") != a


def test_create_then_reopen_same_run(tmp_path: Path) -> None:
    with RunStore.create_or_open(tmp_path, IDENTITY, label="demo", info=INFO) as s1:
        run_id = s1.run_id
        s1.append_samples([_sample("q1", 0), _sample("q1", 1)])
        s1.append_label(Label("q1", rank=1))
        assert s1.status == "created"
        s1.set_status("sampled")
    with RunStore.create_or_open(tmp_path, IDENTITY, label="demo", info=INFO) as s2:
        assert s2.run_id == run_id
        assert s2.status == "sampled"
        assert [s.index for s in s2.samples_by_item()["q1"]] == [0, 1]
        assert s2.current_labels()["q1"].rank == 1
        m = s2.manifest
        assert m["identity"] == IDENTITY and m["task"]["name"] == "demo" and "relgate_version" in m


def test_different_identity_in_same_dir_is_refused(tmp_path: Path) -> None:
    with RunStore.create_or_open(tmp_path, IDENTITY) as s:
        path = s.path
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["identity"]["model"] = "something-else"
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(RunStoreError, match="different run"):
        RunStore.create_or_open(tmp_path, IDENTITY)


def test_second_writer_is_refused_until_first_closes(tmp_path: Path) -> None:
    s1 = RunStore.create_or_open(tmp_path, IDENTITY)
    with pytest.raises(RunStoreError, match="in use"):
        RunStore.create_or_open(tmp_path, IDENTITY)
    reader = open_run(s1.path)  # reading needs no lock
    with pytest.raises(RunStoreError, match="in use"):
        reader.append_label(Label("q", skip=True))
    s1.close()
    reader.append_label(Label("q", skip=True))
    assert reader.current_labels()["q"].skip
    reader.close()


# ---------------------------------------------------------------------------------------------------------- labels
def test_label_validation() -> None:
    with pytest.raises(ValueError):
        Label("q")
    with pytest.raises(ValueError):
        Label("q", rank=1, none=True)
    with pytest.raises(ValueError):
        Label("q", rank=0)
    with pytest.raises(ValueError):
        Label("q", rank=True)
    with pytest.raises(ValueError):
        Label("q", none=True, source="robot")
    assert Label("q", none=True).score == math.inf
    assert Label("q", skip=True).score is None
    assert Label("q", rank=3).score == 3.0


def test_undo_walks_back_and_is_persisted(tmp_path: Path) -> None:
    with RunStore.create_or_open(tmp_path, IDENTITY) as s:
        assert s.undo_last_label() is None
        assert not (s.path / "labels.jsonl").exists() or read_jsonl(s.path / "labels.jsonl") == []
        s.append_label(Label("a", rank=2))
        s.append_label(Label("a", none=True))
        s.append_label(Label("b", skip=True))
        assert s.undo_last_label().item == "b"
        assert s.undo_last_label().none
        assert s.current_labels() == {"a": s.current_labels()["a"]} and s.current_labels()["a"].rank == 2
        path = s.path
    events = read_jsonl(path / "labels.jsonl")
    assert [e["event"] for e in events] == ["label", "label", "label", "undo", "undo"]
    assert open_run(path).current_labels()["a"].rank == 2


verdicts = st.one_of(
    st.integers(1, 5).map(lambda r: {"rank": r}), st.just({"none": True}), st.just({"skip": True})
)
ops = st.lists(
    st.one_of(st.just(("undo",)), st.tuples(st.just("label"), st.sampled_from(["a", "b", "c", "d"]), verdicts)),
    max_size=30,
)


def _model_replay(operations: list[tuple]) -> dict[str, tuple]:
    """Reference semantics: every label pushes a full snapshot of the state; undo restores the previous snapshot."""
    history: list[dict[str, tuple]] = [{}]
    for op in operations:
        if op[0] == "undo":
            if len(history) > 1:
                history.pop()
        else:
            _, item, v = op
            state = dict(history[-1])
            state[item] = (v.get("rank"), v.get("none", False), v.get("skip", False))
            history.append(state)
    return history[-1]


@settings(max_examples=60, deadline=None)
@given(ops)
def test_label_replay_matches_snapshot_model(operations: list[tuple]) -> None:
    with tempfile.TemporaryDirectory() as d:
        with RunStore.create_or_open(d, IDENTITY) as s:
            for op in operations:
                if op[0] == "undo":
                    s.undo_last_label()
                else:
                    s.append_label(Label(op[1], source="human", **op[2]))
            path = s.path
        reopened = open_run(path).current_labels()  # replay from disk only
    got = {k: (v.rank, v.none, v.skip) for k, v in reopened.items()}
    assert got == _model_replay(operations)
    # pure replay of in-memory events agrees too (None = undo)
    mem = [None if op[0] == "undo" else Label(op[1], **op[2]) for op in operations]
    assert {k: (v.rank, v.none, v.skip) for k, v in replay_labels(mem).items()} == got


# --------------------------------------------------------------------------------------------- torn lines / crash
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 6), st.data())
def test_torn_last_line_is_ignored_then_repaired(n_complete: int, data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as d:
        with RunStore.create_or_open(d, IDENTITY) as s:
            s.append_samples([_sample("q", i) for i in range(n_complete)])
            s.append_label(Label("q", rank=1))
            path = s.path
        extra = (json.dumps(_sample("q", 99, "torn §").to_json(), ensure_ascii=False) + "\n").encode("utf-8")
        cut = data.draw(st.integers(1, len(extra) - 1), label="cut")  # anything short of the final newline
        with open(path / "samples.jsonl", "ab") as f:
            f.write(extra[:cut])
        ev = (json.dumps({"event": "label", "item": "q", "none": True, "source": "human", "ts": 1.0}) + "\n").encode()
        with open(path / "labels.jsonl", "ab") as f:
            f.write(ev[: data.draw(st.integers(1, len(ev) - 1), label="label cut")])

        reader = open_run(path)
        assert [x.index for x in reader.samples()] == list(range(n_complete))
        assert reader.current_labels()["q"].rank == 1  # the torn "none" never happened
        with RunStore.create_or_open(d, IDENTITY) as w:  # a writer repairs the tail, then appends cleanly
            w.append_samples([_sample("q", 50)])
            w.append_label(Label("q", skip=True))
        assert [x.index for x in open_run(path).samples()] == [*range(n_complete), 50]
        assert open_run(path).current_labels()["q"].skip
        assert (path / "samples.jsonl").read_bytes().endswith(b"\n")


def test_corrupt_middle_line_is_a_one_line_error(tmp_path: Path) -> None:
    with RunStore.create_or_open(tmp_path, IDENTITY) as s:
        s.append_samples([_sample("q", 0)])
        path = s.path
    with open(path / "samples.jsonl", "ab") as f:
        f.write(b"{not json\n")
        f.write((json.dumps(_sample("q", 1).to_json()) + "\n").encode())
    with pytest.raises(RunStoreError) as exc:
        open_run(path).samples()
    assert "line 2" in str(exc.value) and "\n" not in str(exc.value)


def test_kill_minus_9_after_writes_loses_nothing(tmp_path: Path) -> None:
    """Labels and samples written by a process that is then SIGKILLed (no close, no atexit) are all there."""
    code = f"""
import os, signal
from relgate_tui.engine.runs.store import RunStore, Label, StoredSample
s = RunStore.create_or_open({str(tmp_path)!r}, {IDENTITY!r}, fsync_interval=3600)
for i in range(25):
    s.append_samples([StoredSample("q%d" % (i % 5), i // 5, "t", "c")])
    s.append_label(Label("q%d" % (i % 5), rank=1 + i % 3, source="file"))
s.undo_last_label()
print(s.path, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    run = open_run(proc.stdout.strip())
    assert len(run.samples()) == 25
    labels = run.current_labels()
    assert len(run.label_events()) == 26
    assert labels["q4"].rank == 1 + 19 % 3  # the last label (i = 24) was undone, q4 keeps i = 19's verdict
    # the lock died with the process: a new writer gets in
    with RunStore.create_or_open(tmp_path, IDENTITY) as w:
        assert w.run_id == run.run_id


# --------------------------------------------------------------------------------------------------------- listing
def test_list_runs_open_by_prefix_and_results(tmp_path: Path) -> None:
    ids = []
    for model in ("sim-strong", "sim-weak"):
        with RunStore.create_or_open(
            tmp_path, {**IDENTITY, "model": model}, label=f"demo {model}", info={**INFO, "model": model}
        ) as s:
            s.append_samples([_sample("q", 0)])
            s.write_results({"reliability_level": 0.8, "reliability_lower_bound": 0.6, "m_star": None, "passed": True})
            ids.append(s.run_id)
    (tmp_path / "not-a-run").mkdir()
    rows = list_runs(tmp_path)
    assert sorted(r.run_id for r in rows) == sorted(ids)
    row = next(r for r in rows if r.model == "sim-weak")
    assert (row.n_samples, row.reliability_level, row.m_star, row.passed, row.task) == (1, 0.8, None, True, "demo")
    assert open_run("demo-sim-weak", tmp_path).run_id == row.run_id
    with pytest.raises(RunStoreError, match="ambiguous"):
        open_run("demo", tmp_path)
    with pytest.raises(RunStoreError, match="no run"):
        open_run("nope", tmp_path)
    assert list_runs(tmp_path / "missing") == []


def test_manifest_and_results_are_replaced_atomically(tmp_path: Path) -> None:
    with RunStore.create_or_open(tmp_path, IDENTITY) as s:
        s.write_results({"a": 1})
        s.write_results({"a": 2})
        assert s.read_results() == {"a": 2}
        leftovers = [p.name for p in s.path.iterdir() if p.name.endswith(".tmp")]
        assert leftovers == []
        assert os.stat(s.path / "results.json").st_size > 0
