"""The TUI's engine facade (relgate_tui.engine.certification.session): settings file, pre-flight, verification modes, labels,
reopening runs, export — on runs stored without any server."""

from __future__ import annotations

import json
import math

import pytest

from relgate_tui.engine.certification.session import Session
from relgate_tui.engine.certification.setup import RunSetup, TaskChoice, expected_samples_per_item, preflight
from relgate_tui.engine.runs.store import RunStore
from relgate_tui.tui.settings_file import UISettings, load_ui_settings, save_ui_settings
from tests.tui.runfixtures import UNREACHABLE, stored_run


def test_settings_round_trip_and_one_line_errors(tmp_path):
    path = tmp_path / "s.json"
    assert load_ui_settings(path) == UISettings()  # missing file: defaults
    s = UISettings(gate=0.8, gate_on="bound", confidence=0.9, audit_fraction=0.5, theme="nord")
    save_ui_settings(path, s)
    assert load_ui_settings(path) == s
    # a file from before `gate_on` keeps working: its gate_basis is read once, with a note, and saved as gate_on
    path.write_text('{"gate": 0.7, "gate_basis": "level"}')
    old = load_ui_settings(path)
    assert old.gate_on == "level" and old.gate == 0.7 and "gate_basis" in (old.note or "")
    path.write_text('{"gate_basis": "lower_bound"}')
    assert load_ui_settings(path).gate_on == "bound"
    save_ui_settings(path, load_ui_settings(path))
    assert json.loads(path.read_text())["gate_on"] == "bound" and "gate_basis" not in path.read_text()
    assert load_ui_settings(path).note is None
    path.write_text('{"gate_basis": "median"}')
    with pytest.raises(ValueError, match="gate_basis"):
        load_ui_settings(path)
    path.write_text('{"gate": 2}')
    with pytest.raises(ValueError, match="gate threshold") as err:
        load_ui_settings(path)
    assert "\n" not in str(err.value)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        load_ui_settings(path)


def test_preflight_counts_time_and_cost():
    task = TaskChoice("t", n_items=200, canon="numeric")
    setup = RunSetup(base_url=UNREACHABLE, model="m", task="t", k_max=20, concurrency=10, price_in=1.0,
                     price_out=2.0, limit=100, n_cal=40)
    pf = preflight(setup, task, latency=(0.5, 100.0, 10.0))
    assert (pf.n_items, pf.n_cal, pf.worst_calls) == (100, 40, 2000)
    per_item = expected_samples_per_item("anytime", 0.05, 20)
    assert 1 <= per_item < 20 and pf.expected_calls == round(100 * per_item)
    # the latency is measured at the run's concurrency (issue 24 §2: probe_latency sends that many calls at once),
    # so the time is expected calls × seconds per call — never a single call's latency divided by the concurrency
    assert pf.seconds == pytest.approx(pf.expected_calls * 0.5)
    assert pf.cost == pytest.approx(pf.expected_calls * (100 * 1.0 + 10 * 2.0) / 1e6)
    # "none" never stops early; "paper" cannot stop before k = 21 at δ = 0.05, so saves nothing at K_max = 20
    assert expected_samples_per_item("none", 0.05, 20) == 20
    assert expected_samples_per_item("paper", 0.05, 20) == 20
    assert preflight(setup, task).seconds is None and preflight(setup, task).cost is None
    with pytest.raises(ValueError, match="calibration items"):
        preflight(RunSetup(base_url=UNREACHABLE, model="m", task="t", n_cal=500), task)


def test_human_mode_ignores_references_for_calibration_only(tmp_path):
    session = Session.open(stored_run(tmp_path / "runs", verification="human"))
    cal, dep = session.prepared.calibration_ids, session.prepared.deployment_ids
    assert session.pending_items() == list(cal)  # every calibration item waits for a human, in split order
    res = session.results(0.1).result
    assert res.n == 0 and res.n_pending == len(cal)
    assert res.n_with_reference == len(dep)  # deployment items still validated by their references
    session.close()


def test_auto_mode_has_nothing_pending_and_audit_selection_is_seeded(tmp_path):
    auto = Session.open(stored_run(tmp_path / "runs", verification="auto", model="a"))
    assert auto.pending_items() == [] and auto.results(0.1).result.n == 20
    auto.close()
    first = Session.open(stored_run(tmp_path / "runs", verification="audit", model="b"))
    ids = first.audit_ids
    assert len(ids) == 4 and set(ids) <= set(first.prepared.calibration_ids)  # 20% of 20
    assert first.pending_items() == list(ids)
    path = first.path
    first.close()
    again = Session.open(path)
    assert again.audit_ids == ids and again.verification == "audit"
    manifest = RunStore(path).manifest
    assert manifest["tui"]["audit_items"] == list(ids)
    again.close()


def test_labels_are_validated_persisted_and_undone(tmp_path):
    session = Session.open(stored_run(tmp_path / "runs"))
    assert session.undo() is None  # nothing to undo
    item = session.pending_items()[0]
    n = session.item_view(item).candidates
    with pytest.raises(ValueError, match="rank"):
        session.label(item, rank=len(n) + 1)
    with pytest.raises(ValueError, match="unknown item"):
        session.label("no-such-item", none=True)
    out = session.label(item, none=True)
    assert out.kind == "none" and not out.disagrees
    assert math.isinf(RunStore(session.path).current_labels()[item].score)
    assert item not in session.pending_items()
    assert session.spot_progress().done == 1
    assert session.undo() == item
    assert item in session.pending_items() and item not in RunStore(session.path).current_labels()
    session.close()


def test_incremental_analysis_matches_a_full_recompute(tmp_path):
    session = Session.open(stored_run(tmp_path / "runs"))
    for i, item in enumerate(session.pending_items()):
        session.label(item, rank=1) if i % 3 else session.label(item, none=True) if i % 2 else session.label(
            item, skip=True)
    fast = session.results(0.15).result
    session.analysis(refresh=True)
    full = session.results(0.15).result
    assert (fast.n, fast.n_skipped, fast.m_star, fast.reliability_level, fast.reliability_lower_bound) == (
        full.n, full.n_skipped, full.m_star, full.reliability_level, full.reliability_lower_bound)
    session.close()


def test_a_run_opens_from_its_own_items_after_its_task_file_changed_and_refuses_non_runs(tmp_path):
    task = tmp_path / "items.jsonl"
    task.write_text("".join(f'{{"id": "q{i}", "question": "What is {i} + 1?", "answer": "{i + 1}"}}\n'
                            for i in range(12)))
    session = Session.create(RunSetup(base_url=UNREACHABLE, model="m", task=str(task), n_cal=6),
                             runs_dir=tmp_path / "runs")
    path = session.path
    session.close()
    task.write_text(task.read_text() + '{"id": "q99", "question": "What is 1 + 1?", "answer": "2"}\n')
    reopened = Session.open(path)  # from the run's items.jsonl: the 12 items it was made with
    assert reopened.n_items == 12 and reopened.path == path and reopened.prepared.task.sha256 != ""
    reopened.close()
    task.unlink()  # moved away: still opens
    assert Session.open(path).n_items == 12
    with pytest.raises(ValueError, match="not a relgate run"):
        Session.open(tmp_path)


def test_export_formats_land_in_the_run_folder(tmp_path):
    session = Session.open(stored_run(tmp_path / "runs", verification="auto"))
    before_results, before_status = RunStore(session.path).read_results(), RunStore(session.path).status
    paths = {fmt: session.export(fmt, alpha=0.2, gate=0.5) for fmt in ("json", "csv", "md")}
    assert all(p.parent == session.path / "exports" and p.is_file() for p in paths.values())
    doc = json.loads(paths["json"].read_text())
    assert doc["alpha"] == 0.2 and doc["min_reliability"] == 0.5
    # the session only viewed the run: its results.json and status are untouched
    assert RunStore(session.path).read_results() == before_results
    assert RunStore(session.path).status == before_status
    with pytest.raises(ValueError, match="format"):
        session.export("xlsx")
    session.close()
