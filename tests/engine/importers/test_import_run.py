"""``relgate import``: an imported log becomes a certified run like any other (issue 15 §1 acceptance)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.core.canon import get_canonicalizer
from relgate_tui.core.certification.intervals import clopper_pearson_lower
from relgate_tui.core.certification.ranking import rank_classes
from relgate_tui.core.types import INVALID
from relgate_tui.engine.certification.analysis import item_rng, split_items
from relgate_tui.engine.certification.certify import CertifyConfig
from relgate_tui.engine.certification.pipeline import run_certify
from relgate_tui.engine.importers import load_log
from relgate_tui.engine.importers.run import ImportOptions, import_log
from relgate_tui.engine.runs.listing import list_runs, open_run

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "imports"
LM_ADDITION = next((FIX / "lm_eval" / "addition").glob("samples_*.jsonl"))


def _demo_server_class() -> type:
    from relgate_tui.demo import DemoServer

    return DemoServer


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(args)
    return rc, capsys.readouterr().err


def test_real_lm_eval_log_reproduces_resps0_and_certify_numbers(tmp_path: Path, capsys) -> None:
    out = tmp_path / "doc.json"
    rc, err = _cli(["import", "lm-eval", str(LM_ADDITION), "--run-dir", str(tmp_path / "runs"), "--json", str(out),
                    "--seed", "3"], capsys)
    assert rc == 0, err
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["calls"]["made"] == 0 and doc["k_max"] == 5 and doc["stopping"] == "none"
    imp = doc["imported_from"]
    assert imp["endpoint"].startswith("http://127.0.0.1:") and doc["endpoint"] == "http://imported.invalid/v1"
    assert imp["tool"] == "lm-eval" and imp["k"] == 5 and imp["temperature"] == 0.7 and imp["seed"] is None
    assert [f["sha256"] for f in imp["files"]][0] and imp["flags"] == {} and imp["n_flagged"] == 0

    # item by item: the classes and counts of canonicalizing resps[0] directly
    canon = get_canonicalizer("numeric")
    rows = [json.loads(line) for line in LM_ADDITION.read_text(encoding="utf-8").splitlines() if line.strip()]
    first: dict[str, dict] = {}
    for r in rows:
        first.setdefault(str(r["doc"]["id"]), r)  # issue 24 §1: an item is named by its document's own id
    for entry in doc["items"]:
        direct = Counter(canon(a) for a in first[entry["id"]]["resps"][0])
        invalid = direct.pop(INVALID, 0)
        assert {c["answer"]: c["count"] for c in entry["classes"]} == dict(direct)
        assert entry["invalid"] == invalid and entry["samples"] == 5
        assert entry["doc_hash"] == first[entry["id"]]["doc_hash"]

    # the reliability level and bound of Def. 2.4 computed from scratch on the same samples
    top_ok = 0
    for item_id, r in first.items():
        ranked = rank_classes([canon(a) for a in r["resps"][0]], item_rng(3, item_id))
        top_ok += ranked.classes[0] == canon(r["target"])
    n = len(first)
    assert doc["reliability_n"] == n
    assert doc["reliability_level"] == pytest.approx(top_ok / (n + 1), abs=1e-12)
    assert doc["reliability_lower_bound"] == pytest.approx(clopper_pearson_lower(top_ok, n, 0.95), abs=1e-12)
    cal, _ = split_items(list(first), None, 3)
    assert sorted(e["id"] for e in doc["items"] if e["role"] == "calibration") == sorted(cal)

    # a run like any other: listed, reopened offline by the TUI's session, same numbers
    runs = list_runs(tmp_path / "runs")
    assert len(runs) == 1 and runs[0].task == "relgate_addition" and runs[0].status == "complete"
    from relgate_tui.engine.certification.session import Session

    session = Session.open(runs[0].path)
    try:
        assert session.sampling_complete and session.n_items == n
        again = session.document()
        assert again["reliability_level"] == doc["reliability_level"]
        assert again["m_star"] == doc["m_star"]
    finally:
        session.close()


def test_import_equals_certify_on_the_same_samples(tmp_path: Path) -> None:
    """certify a bundled task on the demo server, hand its stored samples to the generic importer: same document."""
    with _demo_server_class()() as server:
        cfg = CertifyConfig(task="bigbench-3digit-addition", endpoint=server.base_url, model="sim-weak", k_max=4,
                            stopping="none", limit=24, n_cal=12, seed=5, run_dir=str(tmp_path / "certify"),
                            cache_dir=str(tmp_path / "cache"))
        outcome = run_certify(cfg)
    certified = outcome.document
    store = open_run(outcome.run_path)
    from relgate_tui.engine.certification.tasks import load_task

    task = {it.id: it for it in load_task("bigbench-3digit-addition").items}
    samples = tmp_path / "samples.jsonl"
    with samples.open("w", encoding="utf-8") as f:
        for item_id, stored in store.samples_by_item().items():
            it = task[item_id]
            f.write(json.dumps({"id": item_id, "question": it.question, "acceptable_answers": list(it.answers),
                                "samples": [s.text for s in stored]}) + "\n")
    log = load_log("samples", samples)
    imported = import_log(log, ImportOptions(n_cal=12, seed=5, run_dir=str(tmp_path / "runs"))).document
    for key in ("reliability_level", "reliability_lower_bound", "reliability_n", "m_star", "n_cal", "coverage",
                "avg_set_size"):
        assert imported[key] == certified[key], key
    assert imported["calls"]["made"] == 0 and certified["calls"]["made"] > 0
    by_id = {e["id"]: e for e in certified["items"]}
    for e in imported["items"]:
        c = by_id[e["id"]]
        assert (e["role"], e["classes"], e["score"], e["prediction_set"]) == (
            c["role"], c["classes"], c["score"], c["prediction_set"])


def test_flags_in_document_and_summary(tmp_path: Path, capsys) -> None:
    seeded = next((FIX / "lm_eval" / "addition_seeded").glob("samples_*.jsonl"))
    out = tmp_path / "doc.json"
    rc, err = _cli(["import", "lm-eval", str(seeded), "--run-dir", str(tmp_path), "--json", str(out)], capsys)
    assert rc == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    flagged = [e for e in doc["items"] if e.get("flags")]
    assert flagged and all(e["flags"] == ["fixed_seed"] for e in flagged)
    assert doc["imported_from"]["flags"] == {"fixed_seed": len(flagged)}
    assert "fixed_seed" in err and "no self-consistency signal" in err

    rc, err = _cli(["import", "lm-eval", str(FIX / "lm_eval" / "mmlu_loglik"), "--run-dir", str(tmp_path),
                    "--json", str(out)], capsys)
    assert rc == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert all(e["flags"] == ["loglikelihood_mc"] for e in doc["items"])
    assert all(c["answer"] in "ABCD" for e in doc["items"] for c in e["classes"])


@pytest.mark.parametrize("source, path", [
    ("inspect", FIX / "inspect" / "addition_zstd.eval"),
    ("inspect", FIX / "inspect" / "addition_deflate.eval"),
    ("inspect", FIX / "inspect" / "mmlu.json"),
    ("inspect", FIX / "inspect" / "addition_unfinished.eval"),
    ("lm-eval", FIX / "lm_eval_array" / "sim-mid_relgate_addition.jsonl"),
])
def test_every_fixture_imports(tmp_path: Path, capsys, source: str, path: Path) -> None:
    out = tmp_path / "doc.json"
    rc, err = _cli(["import", source, str(path), "--run-dir", str(tmp_path), "--json", str(out)], capsys)
    assert rc == 0, err
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["calls"]["made"] == 0 and doc["items"]


def test_reimport_reuses_the_run_and_keeps_labels(tmp_path: Path, capsys) -> None:
    args = ["import", "lm-eval", str(LM_ADDITION), "--run-dir", str(tmp_path), "--quiet"]
    assert _cli(args, capsys)[0] == 0
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "add3-0001", "none": true}\n', encoding="utf-8")  # the document's own id
    assert _cli(args + ["--labels", str(labels)], capsys)[0] == 0
    assert _cli(args, capsys)[0] == 0
    runs = list_runs(tmp_path)
    assert len(runs) == 1
    store = open_run(runs[0].path)
    assert store.current_labels()["add3-0001"].none
    assert len(store.samples()) == 60  # 12 items x 5, written once


def test_gate_exit_code(tmp_path: Path, capsys) -> None:
    rc, _ = _cli(["import", "lm-eval", str(LM_ADDITION), "--run-dir", str(tmp_path), "--quiet",
                  "--min-reliability", "0.99"], capsys)
    assert rc == 1


def test_errors_leave_nothing_in_the_run_store(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    bad_labels = tmp_path / "labels.jsonl"
    bad_labels.write_text('{"id": "add3-0001", "rank": 9}\n', encoding="utf-8")  # fails after the samples are written
    rc, err = _cli(["import", "lm-eval", str(LM_ADDITION), "--run-dir", str(runs), "--labels", str(bad_labels)],
                   capsys)
    assert rc == 2 and "rank 9" in err and err.count("\n") == 1
    results = next((FIX / "lm_eval" / "addition").glob("results_*.json"))
    rc, err = _cli(["import", "lm-eval", str(results), "--run-dir", str(runs)], capsys)
    assert rc == 2 and "results file" in err and err.count("\n") == 1
    assert list(runs.iterdir()) == []  # no run, no temporary directory


def test_untrusted_names_are_shown_without_control_characters(tmp_path: Path, capsys) -> None:
    p = tmp_path / "evil.jsonl"
    p.write_text(json.dumps({"id": "q1", "question": "2+2?", "answer": "4", "samples": ["4", "4"],
                             "model": "m\x1b[31m\u202eRED [bold]x[/bold]"}) + "\n", encoding="utf-8")
    rc, err = _cli(["import", "samples", str(p), "--run-dir", str(tmp_path / "runs")], capsys)
    assert rc == 0
    assert "\x1b" not in err and "\u202e" not in err and "[bold]x[/bold]" in err  # no markup parsing either
