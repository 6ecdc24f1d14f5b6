"""Pipeline pieces of engine/certify.py without the network: split, labels file, stopping replay, analysis, JSON,
report exports. The end-to-end runs over real sockets are in test_cli.py / test_crash_resume.py."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from relgate_tui.core.certification.stopping import get_stopping_rule
from relgate_tui.core.types import INVALID
from relgate_tui.engine.certification.analysis import analyse, item_rng, split_items, used_sample_count
from relgate_tui.engine.certification.calls import CallCounts
from relgate_tui.engine.certification.certify import CertifyConfig, results_document
from relgate_tui.engine.certification.report import items_dataframe, render_report
from relgate_tui.engine.certification.tasks import Task
from relgate_tui.engine.records import StoredSample, TaskItem
from relgate_tui.engine.runs.labels_file import apply_labels, check_label_ranks, parse_labels_file
from relgate_tui.engine.runs.store import Label, RunStore
from relgate_tui.errors import CertifyError


# ----------------------------------------------------------------------------------------------------------- split
def test_split_is_seeded_and_ignores_file_order() -> None:
    ids = [f"q{i}" for i in range(30)]
    cal, dep = split_items(ids, None, seed=3)
    assert len(cal) == 15 and len(dep) == 15 and set(cal) | set(dep) == set(ids) and not set(cal) & set(dep)
    assert split_items(list(reversed(ids)), None, seed=3) == (cal, dep)  # file order does not matter
    assert split_items(ids, None, seed=4) != (cal, dep)
    assert len(split_items(ids, 7, seed=3)[0]) == 7
    assert split_items(ids, 0, 3)[0] == () and len(split_items(ids, 30, 3)[0]) == 30
    with pytest.raises(CertifyError):
        split_items(ids, 31, 0)


def test_item_rng_is_per_item_and_reproducible() -> None:
    a = item_rng(0, "q1").integers(1 << 30, size=4)
    assert (a == item_rng(0, "q1").integers(1 << 30, size=4)).all()
    assert not (a == item_rng(0, "q2").integers(1 << 30, size=4)).all()
    assert not (a == item_rng(1, "q1").integers(1 << 30, size=4)).all()


# ------------------------------------------------------------------------------------------------------ stopping
def test_used_sample_count_replays_the_rule() -> None:
    none = get_stopping_rule("none", 0.05)
    assert used_sample_count(["1"] * 30, none, 20) == 20
    assert used_sample_count(["1"] * 5, none, 20) == 5  # fewer stored (failures): all of them
    anytime = get_stopping_rule("anytime", 0.05)
    k = used_sample_count(["7"] * 20, anytime, 20)
    assert 1 < k < 20  # unanimous answers stop early
    # the decision at k is exactly the rule's decision on the first k samples
    assert anytime.should_stop([k], k) and not anytime.should_stop([k - 1], k - 1)
    # INVALID samples count in n but not in the class counts
    mixed = ["7", INVALID] * 10
    k2 = used_sample_count(mixed, anytime, 20)
    assert k2 > k


# ---------------------------------------------------------------------------------------------------- labels file
def _write(tmp_path: Path, text: str | bytes, name: str = "labels.jsonl") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def test_labels_file_parses_rank_none_skip(tmp_path: Path) -> None:
    p = _write(tmp_path, '{"id": "a", "rank": 2}\n\n{"id": "b", "none": true}\n{"id": 7, "skip": true}\n')
    labels = parse_labels_file(p, ["a", "b", "7"])
    assert [(x.item, x.kind, x.rank, x.source) for x in labels] == [
        ("a", "rank", 2, "file"), ("b", "none", None, "file"), ("7", "skip", None, "file")]


@pytest.mark.parametrize(
    "content, fragment",
    [
        ('{"id": "a", "rank": 1}\n{oops\n', "labels.jsonl:2: not valid JSON"),
        ('["a", 1]\n', ":1: expected a JSON object"),
        ('{"rank": 1}\n', "field 'id' is missing"),
        ('{"id": "a"}\n', "exactly one of"),
        ('{"id": "a", "rank": 1, "none": true}\n', "exactly one of"),
        ('{"id": "a", "rank": 0}\n', "integer >= 1"),
        ('{"id": "a", "rank": "1"}\n', "integer >= 1"),
        ('{"id": "a", "rank": true}\n', "integer >= 1"),
        ('{"id": "a", "none": false}\n', "must be true"),
        ('{"id": "a", "score": 1}\n', "unknown field 'score'"),
        ('{"id": "zz", "rank": 1}\n', "item 'zz' is not in the task"),
        ('{"id": "a", "rank": 1}\n{"id": "a", "skip": true}\n', ":2: item 'a' already labelled on line 1"),
    ],
)
def test_labels_file_errors_are_one_line(tmp_path: Path, content: str, fragment: str) -> None:
    p = _write(tmp_path, content)
    with pytest.raises(CertifyError) as exc:
        parse_labels_file(p, ["a", "b"])
    assert fragment in str(exc.value) and "\n" not in str(exc.value)


def test_labels_file_unreadable(tmp_path: Path) -> None:
    with pytest.raises(CertifyError, match="not found"):
        parse_labels_file(tmp_path / "missing.jsonl")
    with pytest.raises(CertifyError, match="not UTF-8"):
        parse_labels_file(_write(tmp_path, b'{"id": "\xff"}\n'))


def test_label_ranks_must_exist() -> None:
    check_label_ranks([Label("a", rank=2)], {"a": 2})
    with pytest.raises(CertifyError, match="has 1 candidate answer, so rank 2"):
        check_label_ranks([Label("a", rank=2)], {"a": 1})


def test_apply_labels_is_idempotent(tmp_path: Path) -> None:
    labels = [Label("a", rank=1, source="file"), Label("b", none=True, source="file")]
    with RunStore.create_or_open(tmp_path, {"x": 1}) as store:
        assert apply_labels(store, labels) == 2
        assert apply_labels(store, labels) == 0
        store.append_label(Label("a", rank=2))  # a human changed it; the file verdict is re-applied
        assert apply_labels(store, labels) == 1
        assert {k: v.kind for k, v in store.current_labels().items()} == {"a": "rank", "b": "none"}
        assert store.current_labels()["a"].rank == 1


# ------------------------------------------------------------------------------------------------------- config
@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"endpoint": "localhost:8080"}, "--endpoint"),
        ({"api_key_env": "sk-123"}, "NAME of an environment variable"),
        ({"k_max": 0}, "--k-max"),
        ({"delta": 1.0}, "--delta"),
        ({"alpha": 0.0}, "--alpha"),
        ({"stopping": "fast"}, "--stopping"),
        ({"temperature": -1.0}, "--temperature"),
        ({"concurrency": 0}, "--concurrency"),
        ({"min_reliability": 1.5}, "--min-reliability"),
        ({"price_in": 1.0}, "both --price-in and --price-out"),
        ({"n_cal": -1}, "--n-cal"),
        ({"limit": 0}, "--limit"),
    ],
)
def test_config_validation(change: dict, fragment: str) -> None:
    base = dict(task="t", endpoint="http://127.0.0.1:1/v1", model="m")
    CertifyConfig(**base).validate()
    with pytest.raises(CertifyError) as exc:
        CertifyConfig(**{**base, **change}).validate()
    assert fragment in str(exc.value)


# ------------------------------------------------------------------------------------------------------ analysis
def _task() -> Task:
    items = (
        TaskItem("c1", "q", answers=("10",)),   # leader right
        TaskItem("c2", "q", answers=("20",)),   # right answer second
        TaskItem("c3", "q", answers=("30",)),   # never sampled: score inf, kept
        TaskItem("c4", "q"),                    # no reference: labelled none by a file
        TaskItem("c5", "q"),                    # skipped
        TaskItem("d1", "q", answers=("5",)),
        TaskItem("d2", "q"),                    # unverified deployment item
    )
    return Task("toy", "toy.jsonl", "0" * 64, items, canon="numeric")


def _samples(item: str, answers: list[str]) -> list[StoredSample]:
    return [StoredSample(item, i, f"answer {a}", a, {"prompt_tokens": 3, "completion_tokens": 2}) for i, a in
            enumerate(answers)]


def _analysis(labels: dict[str, Label]):
    roles = {**{f"c{i}": "calibration" for i in range(1, 6)}, "d1": "deployment", "d2": "deployment"}
    samples = {
        "c1": _samples("c1", ["10", "10", "10", "11"]),
        "c2": _samples("c2", ["21", "21", "21", "20", INVALID]),
        "c3": _samples("c3", ["31", "31", "32"]),
        "c4": _samples("c4", ["1", "2", "2"]),
        "c5": _samples("c5", ["9"]),
        # d1: a gap at index 2 (a crash left it unfilled): only the prefix 0..1 counts
        "d1": [s for s in _samples("d1", ["5", "5", "6", "6"]) if s.index != 2],
        "d2": _samples("d2", ["3", "3"]),
    }
    return analyse(
        _task(), roles, samples, labels,
        canonicalize_refs=lambda it: set(it.answers) if it.answers else None,
        rule=get_stopping_rule("none", 0.05), k_max=4, seed=0,
    )


def test_analysis_scores_and_json_document() -> None:
    labels = {"c4": Label("c4", none=True, source="file"), "c5": Label("c5", skip=True, source="human")}
    an = _analysis(labels)
    doc = results_document(an, alpha=0.5, header={"run_id": "r", "endpoint": "e", "model": "m",
                                                  "task": {"name": "toy", "sha256": "0" * 64, "items": 7}},
                           calls=CallCounts(3, 4, 1), delta=0.05, stopping="none", gate=0.5)
    by_id = {it["id"]: it for it in doc["items"]}
    assert [it["id"] for it in doc["items"]] == ["c1", "c2", "c3", "c4", "c5", "d1", "d2"]  # file order
    assert by_id["c1"]["score"] == 1 and by_id["c2"]["score"] == 2
    assert by_id["c3"]["score"] is None and by_id["c4"]["score"] is None  # inf (never dropped)
    assert by_id["c4"]["verified_by"] == "file" and by_id["c3"]["verified_by"] == "reference"
    assert "score" not in by_id["c5"] and by_id["c5"]["skipped"] is True
    assert "score" not in by_id["d2"] and by_id["d2"]["verified_by"] is None
    assert by_id["c2"]["samples"] == 4 and by_id["c2"]["invalid"] == 0  # K_max = 4 caps the 5 stored samples
    assert by_id["c2"]["samples_stored"] == 5
    assert by_id["d1"]["samples"] == 2  # the gap cuts the prefix
    # rule "none", K_max 4: items with fewer samples did not finish (failed requests) and say so
    assert doc["n_incomplete"] == 5 and "incomplete" not in by_id["c1"] and "incomplete" not in by_id["c2"]
    assert all(by_id[i]["incomplete"] is True for i in ("c3", "c4", "c5", "d1", "d2"))
    assert by_id["c2"]["classes"] == [{"answer": "21", "count": 3}, {"answer": "20", "count": 1}]
    # calibration scores {1, 2, inf, inf}, n = 4; k = ceil(5 * 0.5) = 3 -> M* = inf
    assert (doc["n_cal"], doc["n_skipped"], doc["n_pending"]) == (4, 1, 0)
    assert doc["m_star"] is None
    assert by_id["d2"]["prediction_set"] == ["3"]
    # reliability over all verified items: c1 (1), c2, c3, c4, d1 (score 1) -> 2 / (5 + 1)
    assert doc["reliability_level"] == pytest.approx(2 / 6)
    assert doc["reliability_n"] == 5
    assert 0 <= doc["reliability_lower_bound"] <= doc["reliability_level"]
    # incomplete sampling: no PASS/FAIL on partial data, although the level is below the gate
    assert doc["passed"] is None and doc["sampling_complete"] is False and doc["min_reliability"] == 0.5
    assert doc["coverage"] == 1.0 and doc["capability_gap"] == 0.0  # d1: finite score <= M* = inf
    # rule "none" never stops: the items short of K_max failed, which saves nothing (issue 11 §4; was 32%)
    assert doc["calls"] == {"made": 3, "cached": 4, "failed": 1, "saved_vs_kmax": 0.0, "batch_rounds": 0, "batched": 0}
    assert doc["usage"]["prompt_tokens"] == 3 * (4 + 5 + 3 + 3 + 1 + 3 + 2)  # every stored sample was paid
    json.dumps(doc, allow_nan=False)  # strict JSON


def test_label_overrides_reference_and_alpha_changes_m_star() -> None:
    an = _analysis({"c3": Label("c3", rank=1, source="human")})
    doc = results_document(an, alpha=0.4, header={"run_id": "r", "endpoint": "e", "model": "m", "task": {}},
                           calls=CallCounts(), delta=0.05, stopping="none")
    c3 = next(it for it in doc["items"] if it["id"] == "c3")
    assert c3["score"] == 1 and c3["verified_by"] == "human"
    # calibration scores: c1 1, c2 2, c3 1 (human), c4/c5 unverified -> n = 3, pending 2; k = ceil(4*0.6) = 3 -> M* 2
    assert (doc["n_cal"], doc["n_pending"], doc["m_star"]) == (3, 2, 2)
    assert doc["passed"] is None
    d1 = next(it for it in doc["items"] if it["id"] == "d1")
    assert d1["prediction_set"] == ["5"] and d1["samples"] == 2


# --------------------------------------------------------------------------------------------------------- report
def test_report_formats() -> None:
    an = _analysis({"c4": Label("c4", none=True, source="file")})
    doc = results_document(an, alpha=0.5, header={"run_id": "r1", "endpoint": "e", "model": "sim",
                                                  "task": {"name": "toy", "sha256": "0" * 64, "items": 7}},
                           calls=CallCounts(), delta=0.05, stopping="none")
    assert json.loads(render_report(doc, "json")) == doc
    df = pd.read_csv(io.StringIO(render_report(doc, "csv")), dtype=str, keep_default_na=False)
    assert list(df["id"]) == ["c1", "c2", "c3", "c4", "c5", "d1", "d2"]
    assert dict(zip(df["id"], df["score"]))["c3"] == "inf"
    assert dict(zip(df["id"], df["score"]))["d2"] == "unverified"
    assert items_dataframe(doc).shape[0] == 7
    md = render_report(doc, "md")
    assert "# relgate certification — toy on sim" in md and "| c4 | calibration |" in md and "M* = ∞" in md
    with pytest.raises(ValueError):
        render_report(doc, "xml")
    assert math.isfinite(doc["reliability_level"])


# ------------------------------------------------------------------------------------------ batched stopping replay
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from relgate_tui.engine.certification.analysis import used_sample_counts  # noqa: E402


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(st.lists(st.sampled_from(["a", "b", "c", "d", INVALID]), max_size=25), max_size=12),
    k_max=st.integers(1, 22),
    rule_name=st.sampled_from(["anytime", "paper", "none"]),
    delta=st.sampled_from([0.05, 0.3]),
)
def test_batched_replay_equals_the_per_item_replay(items, k_max, rule_name, delta) -> None:
    """used_sample_counts (one vectorised call for every prefix of every item) makes exactly the decisions of
    used_sample_count, and an item is complete iff it reached K_max or the rule stops at its used count."""
    from collections import Counter

    rule = get_stopping_rule(rule_name, delta)
    batched = used_sample_counts(items, rule, k_max)
    for canon, (used, complete) in zip(items, batched, strict=True):
        assert used == used_sample_count(canon, rule, k_max)
        counts = list(Counter(c for c in canon[:used] if c != INVALID).values())
        assert complete == (used >= k_max or (used > 0 and rule.should_stop(counts, used)))


@settings(max_examples=80, deadline=None)
@given(indices=st.lists(st.integers(0, 8), max_size=14), data=st.data())
def test_analysis_uses_the_contiguous_prefix_whatever_the_sample_order(indices, data) -> None:
    """Stored samples in any order, with gaps and repeats: the item is ranked over the samples of indices 0, 1, …
    up to the first gap (sorted by index), as if they had come in order."""
    texts = data.draw(st.lists(st.sampled_from("xyz"), min_size=len(indices), max_size=len(indices)))
    samples = [StoredSample("q", i, t, t, {"prompt_tokens": 1}) for i, t in zip(indices, texts, strict=True)]
    prefix = []
    for s in sorted(samples, key=lambda s: s.index):
        if s.index != len(prefix):
            break
        prefix.append(s.canonical)
    task = Task("t", "t.jsonl", "0" * 64, (TaskItem("q", "Q?"),))
    rule = get_stopping_rule("none", 0.05)
    a = analyse(task, {"q": "calibration"}, {"q": samples}, {}, canonicalize_refs=lambda it: None, rule=rule,
                k_max=20, seed=0)
    [item] = a.items
    assert item.ranked.n_samples == len(prefix) and item.samples_stored == len(samples)
    assert sorted(item.ranked.classes) == sorted(set(prefix) - {INVALID})
    assert a.usage["prompt_tokens"] == len(samples)
