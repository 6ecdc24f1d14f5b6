"""``relgate judge certify/apply`` with several ``--verdicts`` (a judge cascade, cheapest first): the JSON blocks,
refusals (other ids, disagreeing human labels), exit codes, ``judge apply`` tagging each item with its judge — and one
``--verdicts`` pinned by a golden document and text, exactly as before cascades existed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).parent / "golden"


def _world(n: int, seed: int, labelled: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The easy-only world: the cheap judge sure of easy items only, the strong judge of most (calibrated)."""
    rng = np.random.default_rng(seed)
    d = rng.random(n)
    c = np.array([1 - d / 2, 0.5 + 0.5 * (1 - d ** 4)])
    y = (rng.random(n) < 0.7).astype(int)
    f = np.where(rng.random(c.shape) < c, y, 1 - y)
    return np.round(np.where(f == 1, c, 1 - c), 4), y, np.arange(n) < labelled


def _files(tmp: Path, n: int = 900, seed: int = 2, labelled: int = 800, humans: tuple[int, ...] = (0, 1)
           ) -> list[Path]:
    p, y, lab = _world(n, seed, labelled)
    out = []
    for j, name in enumerate(("cheap.jsonl", "strong.jsonl")):
        rows = []
        for i in range(n):
            row: dict[str, object] = {"id": f"i{i}", "p_yes": float(p[j, i])}
            if lab[i] and j in humans:
                row["human"] = int(y[i])
            rows.append(json.dumps(row))
        (tmp / name).write_text("\n".join(rows) + "\n")
        out.append(tmp / name)
    return out


def _pinned(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("RELGATE_REGENERATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


def test_one_verdicts_file_is_exactly_as_before(tmp_path: Path, incli) -> None:
    """Golden: the JSON and the text of ``judge certify --verdicts v.jsonl`` (a relative path: the document is
    the same in any directory; the apply document's certificate file is under the data dir, written as
    ``$RELGATE_HOME``), written by the single-judge code without cascades (byte-identical, checked when pinned)."""
    p, y, lab = _world(600, 7, 500)
    rows = [json.dumps({"id": i, "p_yes": float(p[1, i]), **({"human": int(y[i])} if lab[i] else {})})
            for i in range(600)]
    (tmp_path / "v.jsonl").write_text("\n".join(rows) + "\n")
    r = incli(tmp_path, "judge", "certify", "--verdicts", "v.jsonl", "--json", "c.json")
    assert r.returncode == 0, r.stderr
    _pinned("judge_certificate_single.json", (tmp_path / "c.json").read_text())
    _pinned("judge_certificate_single.md", r.stdout)
    r = incli(tmp_path, "judge", "apply", json.loads((tmp_path / "c.json").read_text())["id"], "--verdicts",
              "v.jsonl", "--json", "a.json")
    assert r.returncode == 0, r.stderr
    _pinned("judge_apply_single.json", (tmp_path / "a.json").read_text().replace(str(tmp_path), "$RELGATE_HOME"))
    _pinned("judge_apply_single.txt", r.stdout)


def test_judge_cost_with_one_judge_is_refused_and_nothing_is_written(tmp_path: Path, incli) -> None:
    """``--judge-cost`` prices the calls a cascade saves: with one ``--verdicts`` (or ``--run``, ``--plan``) it has no
    meaning, and it is one line, exit 2, no certificate stored, no output (it was silently ignored before)."""
    (cheap, _strong) = _files(tmp_path, n=200, labelled=150)
    for source in (["--verdicts", str(cheap)], ["--run", "r1"], ["--plan", "--expect", "0.95"]):
        r = incli(tmp_path, "judge", "certify", *source, "--judge-cost", "0.5", "--json", "c.json")
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        assert "--judge-cost applies to a cascade (two or more --verdicts, or --from-run)" in lines[0]
        assert not (tmp_path / "c.json").exists() and not r.stdout
    assert not (tmp_path / "judge_certificates").exists()


def test_a_cascade_certificate_json_blocks_equal_the_core(tmp_path: Path, incli) -> None:
    from relgate_tui.core.judge_cascade import certify_cascade

    cheap, strong = _files(tmp_path, humans=(1,))  # human labels in the strong judge's file only
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(cheap), "--verdicts", str(strong), "--json", "c.json",
              "--markdown", "c.md")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "c.json").read_text())
    p, y, lab = _world(900, 2, 800)
    cas = certify_cascade(list(p), np.where(lab, y, -1))
    assert doc["verdict"] == "PASS" and doc["selective"]["threshold"] == list(cas.thresholds)
    assert doc["selective"]["coverage"] == cas.coverage and doc["selective"]["agreement_lower"] >= 0.9
    assert [s["judge"] for s in doc["cascade"]] == ["cheap.jsonl", "strong.jsonl"]
    assert [s["decided"] for s in doc["cascade"]] == [s.n_decided for s in cas.stages]
    assert doc["cascade"][0]["decided"] > 0.05 * 900 and doc["cascade"][1]["reached"] == 900 - doc["cascade"][0]["decided"]
    assert sum(s["decided"] for s in doc["cascade"]) == doc["selective"]["n_decided"]
    for s in doc["cascade"]:
        assert {"threshold", "decided", "decided_share", "agreement", "agreement_lower", "fingerprint"} <= set(s)
    saved = doc["calls_saved"]
    assert saved["judges"] == [{"judge": "strong.jsonl", "calls": 900 - doc["cascade"][0]["decided"],
                                "avoided": doc["cascade"][0]["decided"], "avoided_share": doc["cascade"][0]["decided_share"]}]
    assert saved["people"] == 900 - doc["selective"]["n_decided"] and 0 <= saved["people_unlabelled"] <= 100
    assert r.stdout.splitlines()[0] == doc["sentence"] and doc["sentence"].startswith("PASS: the cascade decides ")
    assert (tmp_path / "c.md").read_text().splitlines()[0] == doc["sentence"]
    stored = json.loads((tmp_path / "judge_certificates" / f"{doc['id']}.json").read_text())
    assert stored == doc


def test_disagreeing_humans_other_items_and_bad_options_are_refused(tmp_path: Path, incli) -> None:
    cheap, strong = _files(tmp_path)
    rows = [json.loads(line) for line in strong.read_text().splitlines()]
    for row in rows[:3]:
        row["human"] = 1 - row["human"]
    strong.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(cheap), "--verdicts", str(strong), "--json", "c.json")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and r.stdout == "" and len(lines) == 3
    assert all("the human verdicts differ" in line and "cheap.jsonl says" in line for line in lines)
    assert not (tmp_path / "c.json").exists() and not (tmp_path / "judge_certificates").exists()
    strong.write_text("\n".join(json.dumps(r) for r in rows[1:]) + "\n")
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(cheap), "--verdicts", str(strong))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "lacks 1 of judge 1's items" in r.stderr
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(cheap), "--verdicts", str(cheap), "--judge-model", "m")
    assert r.returncode == 2 and "--judge-model" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = incli(tmp_path, "judge", "certify", *[x for _ in range(6) for x in ("--verdicts", str(cheap))])
    assert r.returncode == 2 and r.stderr.strip() == "relgate: error: a cascade has 2 to 5 judges, got 6"


def test_exit_codes_fail_and_not_decidable(tmp_path: Path, incli) -> None:
    few = _files(tmp_path, n=200, labelled=40)
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(few[0]), "--verdicts", str(few[1]))
    assert r.returncode == 3 and r.stdout.startswith("NOT DECIDABLE: 40 labelled items are too few")
    bad = tmp_path / "coin.jsonl"
    rng = np.random.default_rng(0)
    bad.write_text("\n".join(json.dumps({"id": f"i{i}", "p_yes": float(rng.random()), "human": int(rng.random() < 0.5)})
                             for i in range(400)) + "\n")
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(bad), "--verdicts", str(bad), "--markdown", "fail.md")
    assert r.returncode == 1 and r.stdout.startswith("FAIL: no cascade of these judges is certified")
    report = (tmp_path / "fail.md").read_text()  # nothing certified: no saving is claimed
    assert "no judge is certified: every item goes to people" in report and "avoided" not in report


def test_apply_tags_each_item_with_its_judge_and_asks_the_strong_judge_only_the_rest(tmp_path: Path, incli) -> None:
    cheap, strong = _files(tmp_path)
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(cheap), "--verdicts", str(strong), "--json", "-")
    cert = json.loads(r.stdout)
    t1, t2 = cert["selective"]["threshold"]
    new = tmp_path / "new"
    new.mkdir()
    cheap_new, strong_new = _files(new, n=300, seed=5, labelled=0)
    cheap_rows = [json.loads(line) for line in cheap_new.read_text().splitlines()]
    sure = {r["id"] for r in cheap_rows if max(r["p_yes"], 1 - r["p_yes"]) >= t1}
    strong_rows = [json.loads(line) for line in strong_new.read_text().splitlines()]
    strong_new.write_text("\n".join(json.dumps(r) for r in strong_rows if r["id"] not in sure) + "\n")  # calls saved
    a = incli(tmp_path, "judge", "apply", cert["id"], "--verdicts", str(cheap_new), "--verdicts", str(strong_new),
              "--json", "a.json")
    assert a.returncode == 0, a.stderr
    doc = json.loads((tmp_path / "a.json").read_text())
    assert {d["id"] for d in doc["decided"] if d["stage"] == 1} == sure and len(sure) > 0
    assert all(d["judge"] == "strong.jsonl" and d["confidence"] >= t2 for d in doc["decided"] if d["stage"] == 2)
    assert doc["n_decided"] + doc["n_escalated"] == 300
    assert [b["decided"] for b in doc["by_judge"]] == [len(sure), doc["n_decided"] - len(sure)]
    conf = [e["confidence"] for e in doc["escalated"]]
    assert conf == sorted(conf) and all(c < t2 for c in conf)
    strong_new.write_text("\n".join(json.dumps(r) for r in strong_rows[:10]) + "\n")
    r = incli(tmp_path, "judge", "apply", cert["id"], "--verdicts", str(cheap_new), "--verdicts", str(strong_new))
    assert r.returncode == 2 and "lacks" in r.stderr and "items that reach it" in r.stderr
    r = incli(tmp_path, "judge", "apply", cert["id"], "--verdicts", str(cheap_new))
    assert r.returncode == 2 and "is a cascade of 2 judges" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_from_run_reads_each_runs_verification_judge_with_its_fingerprint(tmp_path: Path, incli) -> None:
    """A reference-less demo run with a verification judge (sim-judge) and spot-check labels; ``--from-run`` twice
    (the same judge as both stages: the plumbing, not the statistics) is the cascade of the runs' verdicts; a run of
    another seed (other answers) is refused in one line."""
    from relgate_tui.demo.server import DemoServer
    from relgate_tui.engine.judging import certificate as store
    from relgate_tui.engine.judging.cascade import compute_cascade

    lines = Path(__file__).resolve().parents[2].joinpath("assets", "tasks", "gsm8k.jsonl").read_text().splitlines()
    items = [json.loads(line) for line in lines][:60]
    task = tmp_path / "noref.jsonl"
    task.write_text("".join(json.dumps({"id": it["id"], "question": it["question"]}) + "\n" for it in items))
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": it["id"], "none": True}) + "\n" for it in items))  # a full prefix
    with DemoServer() as server:
        r = incli(tmp_path, "certify", "--task", str(task), "--endpoint", server.base_url, "--model", "sim-mid",
                  "--canon", "numeric", "--k-max", "4", "--seed", "3", "--quiet", "--verify-judge-model", "sim-judge",
                  "--labels", str(labels), "--json", "run.json")
        assert r.returncode in (0, 1, 3), r.stderr
        r = incli(tmp_path, "certify", "--task", str(task), "--endpoint", server.base_url, "--model", "sim-mid",
                  "--canon", "numeric", "--k-max", "4", "--seed", "4", "--quiet", "--verify-judge-model", "sim-judge",
                  "--json", "other.json")  # another seed: other answers
    assert r.returncode in (0, 1, 3), r.stderr
    run_id = json.loads((tmp_path / "run.json").read_text())["run_id"]
    other = json.loads((tmp_path / "other.json").read_text())["run_id"]
    r = incli(tmp_path, "judge", "certify", "--from-run", run_id, "--from-run", other)
    _one_line_refusal(r, "differ in their seed: a cascade's judges must judge the same answers")
    r = incli(tmp_path, "judge", "certify", "--from-run", run_id, "--from-run", run_id, "--agreement", "0.6",
              "--json", "-")
    assert r.returncode in (0, 1, 3), r.stderr
    doc = json.loads(r.stdout)
    v = store.verdicts_from_run(run_id, str(tmp_path / "runs"))[0]
    want = compute_cascade([v, v], agreement=0.6)
    assert {k: x for k, x in doc.items() if k != "id"} == want
    assert doc["n_labelled"] == sum(h is not None for h in v.human) > 0
    assert [s["fingerprint"]["model"] for s in doc["cascade"]] == ["sim-judge", "sim-judge"]
    assert [s["judge"] for s in doc["cascade"]] == ["sim-judge", "sim-judge"]
    r = incli(tmp_path, "judge", "certify", "--from-run", run_id)
    assert r.returncode == 2 and "--run RUN" in r.stderr


def _one_line_refusal(r, text: str) -> None:  # type: ignore[no-untyped-def]
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and text in lines[0], r.stderr


def test_a_cascade_certificate_is_tamper_evident_and_nothing_is_applied(tmp_path: Path, incli) -> None:
    """As a single judge's: the id is the content's digest; an edit (with or without a recomputed id), a FAIL, a
    threshold outside [½, 1] or thresholds that are not the last passed step are each one line, and no output."""
    from relgate_tui.engine.judging.certificate_doc import content_id

    cheap, strong = _files(tmp_path)
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(cheap), "--verdicts", str(strong), "--json", "-")
    cert = json.loads(r.stdout)
    stored = tmp_path / "judge_certificates" / f"{cert['id']}.json"
    assert cert["id"] == content_id(json.loads(stored.read_text()))
    assert all(s["fingerprint"] == {k: None for k in s["fingerprint"]} for s in cert["cascade"])  # every judge's
    apply = ("--verdicts", str(cheap), "--verdicts", str(strong), "--json", "a.json")

    def forged(name: str, t1: float, recompute: bool = True) -> Path:
        raw = json.loads(stored.read_text())
        raw["result"]["thresholds"][0] = raw["selective"]["threshold"][0] = raw["cascade"][0]["threshold"] = t1
        if recompute:
            raw["id"] = content_id(raw)
        path = tmp_path / name
        path.write_text(json.dumps(raw))
        return path

    t1 = cert["selective"]["threshold"][0]
    edited = json.loads(stored.read_text())
    edited["result"]["thresholds"][0] = 0.3
    stored_copy = stored.read_text()
    stored.write_text(json.dumps(edited))
    _one_line_refusal(incli(tmp_path, "judge", "apply", cert["id"], *apply), "does not match its id")
    stored.write_text(stored_copy)
    _one_line_refusal(incli(tmp_path, "judge", "apply", str(forged("low.json", 0.3)), *apply),
                      "judge 1's threshold 0.3 is outside [0.5, 1]")
    _one_line_refusal(incli(tmp_path, "judge", "apply", str(forged("other.json", min(1.0, t1 + 0.01))), *apply),
                      "not the last step its sequence passed")
    _one_line_refusal(incli(tmp_path, "judge", "apply", str(forged("same.json", 0.3, recompute=False)), *apply),
                      "does not match its id")
    _one_line_refusal(incli(tmp_path, "judge", "apply", cert["id"], "--verdicts", str(cheap)),
                      "is a cascade of 2 judges")
    bad = tmp_path / "coin.jsonl"
    rng = np.random.default_rng(0)
    bad.write_text("\n".join(json.dumps({"id": f"i{i}", "p_yes": float(rng.random()), "human": int(rng.random() < 0.5)})
                             for i in range(400)) + "\n")
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(bad), "--verdicts", str(bad), "--json", "-")
    assert r.returncode == 1
    _one_line_refusal(incli(tmp_path, "judge", "apply", json.loads(r.stdout)["id"], "--verdicts", str(bad),
                            "--verdicts", str(bad), "--json", "a.json"), "is FAIL, not PASS")
    assert not (tmp_path / "a.json").exists()


def test_cascade_outputs_are_behind_the_store_guard_and_apply_names_its_certificate(tmp_path: Path, incli) -> None:
    cheap, strong = _files(tmp_path)
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(cheap), "--verdicts", str(strong), "--json", "-")
    cert = json.loads(r.stdout)
    stored = tmp_path / "judge_certificates" / f"{cert['id']}.json"
    before = stored.read_bytes()
    for out in ("--json", "--markdown"):
        _one_line_refusal(incli(tmp_path, "judge", "certify", "--verdicts", str(cheap), "--verdicts", str(strong),
                                out, str(stored)), "judge certificates' store")
    _one_line_refusal(incli(tmp_path, "judge", "apply", cert["id"], "--verdicts", str(cheap), "--verdicts",
                            str(strong), "--json", str(stored)), "judge certificates' store")
    assert stored.read_bytes() == before
    mine = tmp_path / "mine.json"
    mine.write_bytes(before)
    r = incli(tmp_path, "judge", "apply", str(mine), "--verdicts", str(cheap), "--verdicts", str(strong), "--json",
              str(mine))
    assert r.returncode == 2 and "refusing to write over an input file" in r.stderr and mine.read_bytes() == before
    r = incli(tmp_path, "judge", "apply", str(mine), "--verdicts", str(cheap), "--verdicts", str(strong), "--json",
              "a.json")
    assert r.returncode == 0 and json.loads((tmp_path / "a.json").read_text())["certificate_file"] == str(mine)


def test_shifted_items_are_not_decided_by_the_cascade_and_one_line_says_why(tmp_path: Path, incli) -> None:
    cheap, strong = _files(tmp_path)
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(cheap), "--verdicts", str(strong), "--json", "-")
    cert = json.loads(r.stdout)
    lo, hi = cert["selective"]["coverage_lower"], cert["selective"]["coverage_upper"]
    assert hi < 0.98  # the certified share: 100% of 300 shifted items is out of line with it
    new = []
    for name in ("cheap_new.jsonl", "strong_new.jsonl"):
        (tmp_path / name).write_text("".join(json.dumps({"id": f"s{i}", "p_yes": 0.995}) + "\n" for i in range(300)))
        new += ["--verdicts", str(tmp_path / name)]
    r = incli(tmp_path, "judge", "apply", cert["id"], *new, "--json", "a.json")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "a.json").read_text())
    warn = [line for line in r.stderr.splitlines() if "outside the certificate's coverage" in line]
    assert len(warn) == 1 and "the cascade would decide 100.0% of these items" in warn[0]
    assert doc["n_decided"] == 0 and doc["decided"] == [] and doc["n_escalated"] == 300
    assert doc["shift_note"] and doc["coverage_interval"] == [lo, hi]
    assert r.stdout.startswith(f"certificate {cert['id']}: the cascade decides 0 of 300 items")


def test_the_pooled_decided_items_get_the_per_class_and_random_sample_checks(tmp_path: Path, incli) -> None:
    """Per-class agreement on all the items the cascade decides (exact lower bounds), and a file labelled easy-first
    (sorted by the strong judge's confidence) is not a random sample: NOT DECIDABLE, named, instead of PASS."""
    cheap, strong = _files(tmp_path)
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(cheap), "--verdicts", str(strong), "--json", "-")
    doc = json.loads(r.stdout)
    yes, no = doc["decided_yes"], doc["decided_no"]
    assert r.returncode == 0 and yes["n"] + no["n"] == doc["selective"]["n_decided_labelled"] and no["n"] > 0
    assert yes["successes"] + no["successes"] == doc["result"]["n_agree"] and 0 < no["lower"] <= no["value"]
    assert not any("random sample" in w for w in doc["warnings"])
    rows = [[json.loads(line) for line in f.read_text().splitlines()] for f in (cheap, strong)]
    order = sorted(range(len(rows[1])), key=lambda i: -max(rows[1][i]["p_yes"], 1 - rows[1][i]["p_yes"]))
    for f, rs in zip((cheap, strong), rows, strict=True):
        f.write_text("".join(json.dumps(rs[i]) + "\n" for i in order))  # sorted most confident first
    r = incli(tmp_path, "judge", "certify", "--verdicts", str(cheap), "--verdicts", str(strong), "--json", "-")
    doc = json.loads(r.stdout)
    assert r.returncode == 3 and doc["verdict"] == "NOT DECIDABLE"
    assert doc["sentence"].startswith("NOT DECIDABLE: the labelled items do not look like a random sample: ")
