"""Issue 37 §1–§2: a run's result is the typed :class:`RunResult`; its ``to_json`` is today's document byte for byte
and one name means one number.

The goldens ``tests/engine/golden/result_*_v1.json`` were written by the code before ``RunResult`` (schema 1, no
``schema`` key) from two fixture runs built here the same way (``tests/tui/runfixtures.py``, no server): one whose
every verdict came from a reference answer, one labelled by a person (a labels file, one "none" in ten).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relgate_tui.engine.certification.calls import CallCounts
from relgate_tui.engine.certification.certify import open_prepared
from relgate_tui.engine.certification.finish import finish
from relgate_tui.engine.certification.result import FIXED_N_CONDITION, SCHEMA, RunResult, read_result
from relgate_tui.engine.runs.store import Label, RunStore
from tests.tui.runfixtures import stored_run

GOLDEN = Path(__file__).parent.parent / "golden"


def _dumps(doc: dict) -> str:
    """As the run store writes ``results.json`` (one line, the C encoder)."""
    return json.dumps(doc, indent=None, ensure_ascii=False, allow_nan=False) + "\n"


def _golden(name: str) -> tuple[str, dict]:
    text = (GOLDEN / f"result_{name}_v1.json").read_text()
    return text, json.loads(text)


_PATHS: dict[str, Path] = {}


def _finished(tmp: Path, name: str, *, labelled: bool) -> RunResult:
    path = stored_run(tmp / name, verification="human" if labelled else "auto")
    _PATHS[name] = path
    p = open_prepared(path)
    try:
        labels = []
        if labelled:
            a = finish(p, calls=CallCounts(0, 0, 0), write=False).analysis
            for i, it in enumerate(x for x in a.items if x.role == "calibration"):
                labels.append(Label(it.item_id, rank=1 if i % 10 else None, none=not (i % 10), source="file"))
        return finish(p, calls=CallCounts(3, 1, 0), labels=labels, gate=0.6, write=True)
    finally:
        p.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    tmp = tmp_path_factory.mktemp("golden")
    return {"reference_only": _finished(tmp, "reference_only", labelled=False),
            "labelled": _finished(tmp, "labelled", labelled=True)}


def _same_version(doc: dict, golden: dict) -> dict:
    return {**doc, "relgate_version": golden["relgate_version"]}  # the goldens outlive a version bump


def test_reference_only_document_is_todays_byte_for_byte(runs: dict[str, RunResult]) -> None:
    text, golden = _golden("reference_only")
    doc = runs["reference_only"].to_json()
    assert doc["schema"] == SCHEMA and list(doc)[0] == "schema"
    assert _dumps(_same_version({k: v for k, v in doc.items() if k != "schema"}, golden)) == text
    r = runs["reference_only"]
    assert r.watch == "once" and r.fixed_n_lower_bound is None and r.fixed_n_line is None
    assert r.reliability_lower_bound == r.gate.lower_bound == golden["reliability_lower_bound"]


def test_labelled_document_names_the_gates_bound_and_the_fixed_n_one_apart(runs: dict[str, RunResult]) -> None:
    """Fails on the code before: its ``reliability_lower_bound`` was the fixed-n Clopper–Pearson bound (75.5%) beside a
    gate decided on the anytime bound (69.3%)."""
    _, golden = _golden("labelled")
    r = runs["labelled"]
    doc = r.to_json()
    assert golden["reliability_lower_bound"] != golden["gate"]["lower_bound"]  # the bug the goldens hold
    assert doc["reliability_lower_bound"] == doc["gate"]["lower_bound"] == golden["gate"]["lower_bound"]
    assert doc["reliability_watch"] == "anytime"
    assert doc["reliability_lower_bound_fixed_n"] == golden["reliability_lower_bound"]
    changed = {"schema", "reliability_lower_bound", "reliability_watch", "reliability_lower_bound_fixed_n"}
    assert {k: v for k, v in _same_version(doc, golden).items() if k not in changed} == \
        {k: v for k, v in golden.items() if k not in changed}
    assert r.bound_name == "95% anytime lower bound" and r.gate.basis_label == r.bound_name
    assert r.fixed_n_line is not None and FIXED_N_CONDITION in r.fixed_n_line
    assert r.core is not None and r.core.reliability_lower_bound == r.reliability_lower_bound


@pytest.mark.parametrize("name", ["reference_only", "labelled"])
def test_both_layouts_round_trip_byte_for_byte(name: str, runs: dict[str, RunResult]) -> None:
    text, golden = _golden(name)
    assert _dumps(RunResult.from_json(golden).to_json()) == text  # schema 1 stays schema 1
    new = runs[name]
    again = RunResult.from_json(new.to_json())
    assert _dumps(again.to_json()) == _dumps(new.to_json())
    assert (again.reliability_lower_bound, again.fixed_n_lower_bound, again.watch) == (
        new.reliability_lower_bound, new.fixed_n_lower_bound, new.watch)


def test_a_schema_1_file_is_read_as_the_run_decided(runs: dict[str, RunResult]) -> None:
    """An old labelled ``results.json``: the run's bound is its gate's (anytime), the fixed-n value kept apart."""
    _, golden = _golden("labelled")
    old = RunResult.from_json(golden)
    assert old.schema == 1 and old.watch == "anytime"
    assert old.reliability_lower_bound == golden["gate"]["lower_bound"]
    assert old.fixed_n_lower_bound == golden["reliability_lower_bound"]
    assert old.gate is not None and old.gate.summary() == golden["gate"]["summary"]


def test_read_result_is_the_written_result(runs: dict[str, RunResult]) -> None:
    for name, r in runs.items():
        back = read_result(RunStore(_PATHS[name]))
        assert back is not None and back.to_json() == r.to_json() and back.core is None
        assert back.reliability_lower_bound == r.reliability_lower_bound


def test_a_malformed_document_reads_as_absent_fields_never_a_crash() -> None:
    from relgate_tui.errors import DataError

    odd = {"run_id": 7, "reliability_level": "high", "items": [3, {"id": 5, "classes": "x", "score": "1"}],
           "gate": {"threshold": "0.8"}, "calls": [], "judge_assisted": {"lower_bound": 0.7, "agreement": 1},
           "pairwise_judge": {"rankings": 1}, "imported_from": {"flags": [], "files": [1]}, "task": "t"}
    r = RunResult.from_json(odd)
    assert (r.run_id, r.reliability_level, r.gate, r.judge, r.calls.made) == ("", None, None, None, 0)
    assert [(it.id, it.classes, it.score) for it in r.items] == [("", (), None)]
    assert r.assisted is not None and r.assisted.lower_bound == 0.7 and r.imported is not None
    with pytest.raises(DataError, match="newer"):
        RunResult.from_json({"schema": SCHEMA + 1})
    with pytest.raises(DataError):
        RunResult.from_json([])  # type: ignore[arg-type]
