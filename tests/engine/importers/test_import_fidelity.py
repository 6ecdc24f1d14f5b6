"""Imports as faithful as the tools, on logs written by the real inspect_ai 0.3.285 and lm_eval 0.4.13
(``tests/fixtures/imports/regenerate_fidelity.sh`` and ``regenerate.sh``; README there): Inspect's invalidated
samples are left out, counted and noted; samples that hit a limit are noted; every choice is read when
``num_choices`` > 1 (K = epochs × choices, said); the tool's own headline figure is a note under the tool's name for
it; and no note guesses a cause ("replayed from a response cache")."""

from __future__ import annotations

import json
from pathlib import Path

from relgate_tui.engine.importers import assign_flags, load_log
from relgate_tui.engine.importers.model import FLAG_REASONS

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "imports"


def _doc(name: str) -> dict:
    return json.loads((FIX / "inspect" / name).read_text())


def test_inspect_invalidated_samples_are_left_out_counted_and_noted() -> None:
    doc = _doc("addition_invalidated.json")
    invalid = {(s["id"], s["epoch"]) for s in doc["samples"] if s.get("invalidation")}
    assert doc["invalidated"] is True and len(invalid) == 2  # written by inspect_ai.log.invalidate_samples
    log = load_log("inspect", FIX / "inspect" / "addition_invalidated.json")
    by_id = {it.id: it for it in log.items}
    for sid, _epoch in invalid:  # the one epoch left of that sample, not two
        assert len(by_id[sid].samples) == 1
    kept = [s for s in doc["samples"] if not s.get("invalidation")]
    assert sum(len(it.samples) for it in log.items) == len(kept) == 14
    assert "2 samples invalidated in Inspect (invalidate_samples, reason: grader bug): left out" in log.notes


def test_inspect_limit_hits_are_noted() -> None:
    doc = _doc("addition_limit.json")
    assert all(s["limit"]["type"] == "message" for s in doc["samples"])
    log = load_log("inspect", FIX / "inspect" / "addition_limit.json")
    assert any(n.startswith("8 samples hit a limit (8 × message limit 1)") for n in log.notes), log.notes
    assert all(it.samples == ("",) for it in log.items)  # no answer: an invalid answer, counted as such


def test_inspect_every_choice_is_read_and_k_is_said() -> None:
    doc = _doc("addition_choices.json")
    assert {len(s["output"]["choices"]) for s in doc["samples"]} == {3}
    log = load_log("inspect", FIX / "inspect" / "addition_choices.json")
    assert {len(it.samples) for it in log.items} == {2 * 3}
    first = next(s for s in doc["samples"] if s["epoch"] == 1)
    item = next(it for it in log.items if it.id == first["id"])
    assert item.samples[:3] == tuple(c["message"]["content"] for c in first["output"]["choices"])
    assert "every choice of a sample read (num_choices = 3): K = 2 epochs × 3 choices = 6" in log.notes


def test_the_tools_own_headline_is_shown_under_its_name() -> None:
    doc = _doc("addition_choices.json")
    acc = doc["results"]["scores"][0]["metrics"]["accuracy"]["value"]
    log = load_log("inspect", FIX / "inspect" / "addition_choices.json")
    assert f"Inspect's own score — match: accuracy {acc:.3f}, stderr " in " ".join(log.notes)
    assert "2 epochs reduced by mean" in " ".join(log.notes)  # Inspect's default reducer, named
    (samples,) = (FIX / "lm_eval" / "addition").glob("samples_*.jsonl")
    lm = load_log("lm-eval", samples)
    (results,) = (FIX / "lm_eval" / "addition").glob("results_*.json")
    figures = json.loads(results.read_text())["results"]["relgate_addition"]
    note = next(n for n in lm.notes if n.startswith("lm-eval's own score — "))
    assert f"exact_match,strict-match {figures['exact_match,strict-match']:.3f}" in note
    assert f"exact_match,maj@5 {figures['exact_match,maj@5']:.3f}" in note and "stderr" not in note


def test_no_note_guesses_a_cause() -> None:
    assert "replayed from a response cache" not in FLAG_REASONS["identical_repeats"]
    log = assign_flags(load_log("inspect", FIX / "inspect" / "addition_choices.json"))
    assert not any("majority-vote" in n for n in log.notes)
