"""Issue 10 §6: the derived per-item sample index (samples.index.npz) — used only when it matches the samples file,
rebuilt when stale or corrupt, never needed (a run written without it opens), and results identical either way."""

from __future__ import annotations

import os
import random
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relgate_tui.core.certification.stopping import get_stopping_rule
from relgate_tui.core.types import INVALID
from relgate_tui.engine.certification.analysis import used_sample_counts
from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.records import StoredSample, canonical_prefix
from relgate_tui.engine.runs import store as runstore
from relgate_tui.engine.runs.sampleindex import INDEX, ItemSamples, load_index, prefix_stats, stamp
from relgate_tui.engine.runs.store import RunStore, RunStoreError
from tests.tui.runfixtures import stored_run


def _summary(grouped: dict[str, ItemSamples]) -> dict[str, tuple]:
    """Everything a summary says, as plain values (the samples themselves included)."""
    return {item: ([int(i) for i in s.indices], list(s.canonicals), s.prompt_tokens, s.completion_tokens,
                   [tuple(int(v) for v in span) for span in s.spans], [x.to_json() for x in s])
            for item, s in grouped.items()}


def _parsed(path) -> dict[str, ItemSamples]:
    """samples_by_item of a reader that ignores any index (parses samples.jsonl)."""
    store = RunStore(path)
    return store._group_samples()


def _no_parse(monkeypatch) -> None:
    real = runstore.read_jsonl

    def refuse(path, **k):
        assert path.name != "samples.jsonl", "samples.jsonl was parsed"
        return real(path, **k)

    monkeypatch.setattr(runstore, "read_jsonl", refuse)


def test_the_writer_leaves_an_index_that_opens_the_run_without_parsing_and_gives_the_same_results(
        tmp_path, monkeypatch) -> None:
    path = stored_run(tmp_path / "runs")  # written through the run store, closed by its writer
    assert (path / INDEX).is_file()
    expected = _summary(_parsed(path))
    without = tmp_path / "without"
    shutil.copytree(path, without)
    (without / INDEX).unlink()

    plain = Session.open(without)  # no index: parsed
    doc_plain, view_plain = plain.document(0.2), plain.results(0.2)
    items_plain = {i.id: plain.item_view(i.id) for i in plain.prepared.items[:5]}
    plain.close()

    with monkeypatch.context() as m:
        _no_parse(m)
        session = Session.open(path)
        grouped = session.store.samples_by_item()
        assert all(type(s) is ItemSamples for s in grouped.values())
        assert session.document(0.2) == doc_plain
        view = session.results(0.2)
        assert (view.rows, view.samples_used, view.result.reliability_level) == (
            view_plain.rows, view_plain.samples_used, view_plain.result.reliability_level)
        assert {i: session.item_view(i) for i in items_plain} == items_plain  # texts read at their byte spans
        assert _summary(grouped) == expected
        session.close()


def test_a_run_written_without_an_index_opens_and_a_viewer_writes_none_but_the_next_writer_does(tmp_path) -> None:
    path = stored_run(tmp_path / "runs")
    (path / INDEX).unlink()
    session = Session.open(path)
    session.results(0.2)
    session.close()
    assert not (path / INDEX).exists()  # viewing changes nothing
    store = RunStore(path)
    store.lock()
    store.close()
    assert (path / INDEX).is_file()
    assert _summary(RunStore(path).samples_by_item()) == _summary(_parsed(path))


def test_a_stale_index_is_never_trusted(tmp_path) -> None:
    path = stored_run(tmp_path / "runs")
    samples = path / "samples.jsonl"
    item = RunStore(path).samples_by_item()
    first = next(iter(item))
    # another process appends (the index describes the old size): the new sample is seen
    with samples.open("ab") as f:
        f.write(b'{"item": "extra", "index": 0, "text": "7", "canonical": "7"}\n')
    grouped = RunStore(path).samples_by_item()
    assert "extra" in grouped and _summary(grouped) == _summary(_parsed(path))
    writer = RunStore(path)
    writer.lock()
    writer.close()  # the index describes the grown file again
    assert RunStore(path).samples_by_item()[first].canonicals[0] != "9"
    # the same size and modification time, one canonical class changed in place: the edges' hash differs
    data = samples.read_bytes()
    st = samples.stat()
    at = data.index(b'"canonical": "') + len(b'"canonical": "')
    samples.write_bytes(data[:at] + b"9" + data[at + 1:])
    os.utime(samples, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert samples.stat().st_size == st.st_size and samples.stat().st_mtime_ns == st.st_mtime_ns
    store = RunStore(path)
    grouped = store.samples_by_item()
    assert _summary(grouped) == _summary(_parsed(path))
    assert grouped[first].canonicals[0].startswith("9")


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "bad_meta", "inconsistent", "wrong_span"])
def test_a_corrupt_index_is_ignored_and_rebuilt_by_the_next_writer(tmp_path, damage) -> None:
    path = stored_run(tmp_path / "runs")
    index = path / INDEX
    good = index.read_bytes()
    expected = _summary(_parsed(path))
    if damage == "garbage":
        index.write_bytes(b"\x00not a zip" * 100)
    elif damage == "truncated":
        index.write_bytes(good[: len(good) // 2])
    elif damage == "empty":
        index.write_bytes(b"")
    else:
        with np.load(index, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        if damage == "bad_meta":
            arrays["meta"] = np.frombuffer(b"{not json", dtype=np.uint8)
        elif damage == "inconsistent":
            arrays["n"] = arrays["n"] + 1  # more samples than spans
        else:
            arrays["starts"] = arrays["starts"] + 3  # points into the middle of other lines
        with index.open("wb") as f:
            np.savez(f, **arrays)
    store = RunStore(path)
    grouped = store.samples_by_item()
    if damage == "wrong_span":  # consistent enough to load: a wrong span is caught when its texts are read
        assert {item: [x.to_json() for x in s] for item, s in grouped.items()} == {
            item: [x.to_json() for x in s] for item, s in _parsed(path).items()}
    else:
        assert _summary(grouped) == expected
    store.close()
    writer = RunStore(path)
    writer.lock()
    writer.close()  # the writer replaces a stale or corrupt index
    assert load_index(path, path / "samples.jsonl", stamp(path / "samples.jsonl")) is not None
    assert _summary(RunStore(path).samples_by_item()) == expected


def test_an_index_of_another_samples_file_is_not_used(tmp_path) -> None:
    a = stored_run(tmp_path / "a", seed=1)
    b = stored_run(tmp_path / "b", seed=2)
    shutil.copy(b / INDEX, a / INDEX)
    assert _summary(RunStore(a).samples_by_item()) == _summary(_parsed(a))


def test_the_index_follows_a_sampling_writer_without_a_reparse(tmp_path, monkeypatch) -> None:
    store = RunStore.create_or_open(tmp_path, {"x": 1})
    store.append_samples([StoredSample("a", 0, "1", "1", {"prompt_tokens": 3}), StoredSample("b", 0, "2", "2")])
    store.samples_by_item()
    store.append_samples([StoredSample("a", 1, "x", INVALID, {"completion_tokens": 4}), StoredSample("a", 3, "3", "3")])
    parses: list = []
    real = runstore.read_jsonl
    monkeypatch.setattr(runstore, "read_jsonl", lambda p, **k: parses.append(p) or real(p, **k))
    store.close()  # built from this process's summaries
    assert [p.name for p in parses if p.name == "samples.jsonl"] == []
    monkeypatch.setattr(runstore, "read_jsonl", real)
    grouped = RunStore(tmp_path / store.path.name).samples_by_item()
    assert _summary(grouped) == _summary(_parsed(store.path))
    assert list(grouped["a"].canonicals) == ["1", INVALID] and (grouped["a"].prompt_tokens,
                                                                grouped["a"].completion_tokens) == (3, 4)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 6), st.sampled_from(["x", "y", "z", INVALID]),
                          st.integers(0, 9)), max_size=40))
def test_index_summaries_equal_the_parsed_ones(tmp_path, rows) -> None:
    root = tmp_path / f"r{abs(hash(tuple(rows)))}"
    store = RunStore.create_or_open(root, {"rows": len(rows)})
    store.append_samples([StoredSample(item, index, f"{text}!", text, {"prompt_tokens": t, "completion_tokens": 1})
                          for item, index, text, t in rows])
    store.close()
    path = store.path
    parsed = _parsed(path)
    if rows:
        assert (path / INDEX).is_file()
    indexed = RunStore(path).samples_by_item()
    assert _summary(indexed) == _summary(parsed)
    eager: dict[str, list] = {}  # every line parsed into a sample: the independent reading
    for s in RunStore(path).samples():
        eager.setdefault(s.item, []).append(s)
    assert {k: list(v) for k, v in indexed.items()} == {k: sorted(v, key=lambda s: s.index) for k, v in eager.items()}
    assert {k: list(v) for k, v in parsed.items()} == {k: sorted(v, key=lambda s: s.index) for k, v in eager.items()}
    for item, s in indexed.items():
        assert list(s.canonicals) == canonical_prefix(list(parsed[item]))
        assert [tuple(r) for r in s.stats.tolist()] == prefix_stats(s.canonicals)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "c", INVALID]), max_size=12), max_size=8),
       st.sampled_from(["anytime", "paper", "none"]), st.integers(1, 12))
def test_the_replay_with_stored_prefix_states_equals_the_replay_without(canons, rule_name, k_max) -> None:
    rule = get_stopping_rule(rule_name, 0.05)
    stats = [np.array(prefix_stats(c), dtype=np.int32).reshape(-1, 4) for c in canons]
    assert used_sample_counts(canons, rule, k_max, stats) == used_sample_counts(canons, rule, k_max)


def test_prefix_states_match_a_direct_count() -> None:
    rng = random.Random(3)
    for _ in range(300):
        canon = [rng.choice("abcd") if rng.random() > 0.1 else INVALID for _ in range(rng.randrange(1, 15))]
        for k, (lead, runner, seen, order) in enumerate(prefix_stats(canon), start=1):
            counts: dict[str, int] = {}
            for c in canon[:k]:
                if c != INVALID:
                    counts[c] = counts.get(c, 0) + 1
            top = sorted(counts.values(), reverse=True) + [0, 0]
            assert (lead, runner, seen) == (top[0], top[1], len(counts))
            if top[0] > top[1]:  # a strict leader: its order of first appearance
                leader = max(counts, key=counts.__getitem__)
                assert order == list(dict.fromkeys(c for c in canon if c != INVALID)).index(leader) + 1


def test_the_fast_record_constructors_build_the_same_records() -> None:
    from relgate_tui.engine.transport.sampler import SampleDone, _sample_done

    assert StoredSample.trusted("a", 2, "t", "c", {"prompt_tokens": 1}, "fp") == StoredSample(
        "a", 2, "t", "c", {"prompt_tokens": 1}, "fp")
    assert StoredSample.from_json(StoredSample("a", 2, "t", "c", {}, "fp").to_json()) == StoredSample("a", 2, "t", "c", {}, "fp")
    assert _sample_done("a", 2, "t", "c", True, {}, None) == SampleDone("a", 2, "t", "c", True, {}, None)


def test_what_samples_by_item_returned_is_not_changed_by_later_appends(tmp_path) -> None:
    store = RunStore.create_or_open(tmp_path, {"x": 4})
    store.append_samples([StoredSample("a", 0, "1", "1")])
    before = store.samples_by_item()
    first = before["a"]
    store.append_samples([StoredSample("a", 1, "2", "2"), StoredSample("b", 0, "3", "3")])
    assert set(before) == {"a"} and before["a"] is first and len(first) == 1 and list(first.canonicals) == ["1"]
    after = store.samples_by_item()
    assert [s.index for s in after["a"]] == [0, 1] and list(after["a"].canonicals) == ["1", "2"]
    store.close()


def test_texts_are_found_when_the_samples_file_was_rewritten_after_the_index_was_read(tmp_path) -> None:
    """A run opened from its index, then samples.jsonl rewritten (a repair moving a line aside): the item's texts are
    found by parsing the file, not read at stale offsets."""
    path = stored_run(tmp_path / "runs")
    session = Session.open(path)
    items = [i.id for i in session.prepared.items]
    samples = path / "samples.jsonl"
    lines = samples.read_bytes().split(b"\n")
    samples.write_bytes(b"\n".join(lines[3:]))  # the first three lines gone: every offset moves
    fresh = _parsed(path)
    view = session.item_view(items[-1])
    assert [t for t, _ in view.samples] == [s.text for s in fresh[items[-1]]]
    session.close()
    samples.write_bytes(b"\x00corrupt\n" + b"\n".join(lines[3:]))
    reopened = RunStore(path)
    with pytest.raises(RunStoreError):
        reopened.samples_by_item()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d", INVALID]), max_size=25))
def test_prefix_states_from_codes_equal_the_direct_ones(canon) -> None:
    from relgate_tui.engine.runs.sampleindex import _coded_prefix_stats

    table = list(dict.fromkeys(c for c in canon if c != INVALID))
    codes = [-1 if c == INVALID else table.index(c) for c in canon]
    assert _coded_prefix_stats(codes, len(table)) == prefix_stats(canon)
