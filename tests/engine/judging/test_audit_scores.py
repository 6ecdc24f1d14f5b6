"""Papers 001–003 on a stored audit (issues 12–14): ``engine/judging/as_scores.py`` and the ``--audit`` option of
``judge-intervals``, ``judge-irt`` and ``jury``.

One seeded direct audit of three simulated judges × two prompt variants × 2 repetitions runs against the demo server
once per module; the server is stopped before anything is read, so every test below also shows that reading an audit
makes no model call.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.demo import DemoServer
from relgate_tui.engine.judging import direct, list_audits
from relgate_tui.engine.judging.as_scores import audit_scores
from relgate_tui.engine.judging.data import load_audit_set
from relgate_tui.engine.judging.variants import DIRECT_TEMPLATE
from relgate_tui.engine.transport import logprobs as lp
from relgate_tui.errors import DataError

JUDGES = ("sim-judge-long", "sim-judge-short", "sim-judge-sensitive")
VARIANTS = ("original", "strict")
N_INPUTS, N_CANDIDATES = 12, 5


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("audit_home")
    variant = home / "strict.txt"
    variant.write_text(DIRECT_TEMPLATE.replace("{{definition}}", "Definition of {{criterion}}: {{description}} "
                                                                 "Be strict.\n"))
    with pytest.MonkeyPatch.context() as mp, DemoServer() as demo:
        mp.setenv("RELGATE_HOME", str(home))
        rc = main(["judge-audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", demo.base_url,
                   "--model", JUDGES[0], "--judge", f"model={JUDGES[1]}", "--judge", f"model={JUDGES[2]}",
                   "--variant", f"strict={variant}", "--protocol", "direct", "--reps", "2", "--top-logprobs", "5",
                   "--inputs", str(N_INPUTS), "--candidates", str(N_CANDIDATES), "--seed", "1",
                   "--json", str(home / "audit.json")])
    assert rc == 0
    return home  # the demo server is closed from here on


@pytest.fixture()
def audit_dir(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RELGATE_HOME", str(home))
    (summary,) = list_audits(home / "audits")
    return Path(summary.path)


def _stored(path: Path) -> list[dict]:
    return [json.loads(x) for x in (path / "answers.jsonl").read_text().splitlines()]


def test_rows_are_repetition_0_of_every_direct_answer_with_texts_and_human_scores(audit_dir: Path) -> None:
    res = audit_scores(audit_dir.name)  # by id, under $RELGATE_HOME/audits
    table = res.table
    assert res.audit_id == audit_dir.name and table.judges() == list(JUDGES) and table.variants() == list(VARIANTS)
    assert table.criteria() == ["Coherence"]
    stored = _stored(audit_dir)
    first = {(a["judge"], tuple(a["key"])): a for a in stored if a["rep"] == 0}
    second = {(a["judge"], tuple(a["key"])): a for a in stored if a["rep"] == 1}
    assert len(first) == len(second) == len(JUDGES) * len(VARIANTS) * N_INPUTS * N_CANDIDATES
    # the counts, recomputed from the raw answers file
    parsed = {k: direct.parse(a["text"]) for k, a in first.items()}
    lps = {k: direct.score_logprobs(lp.from_json(a["logprobs"])) for k, a in first.items()}
    unparseable = [k for k, s in parsed.items() if s is None]
    dropped = [k for k in unparseable if lps[k] is None]
    assert unparseable, "the demo judges answer in prose now and then: the audit must contain unparseable answers"
    assert (res.answers, res.unparseable, res.dropped, res.missing) == (len(first), len(unparseable), len(dropped), 0)
    assert len(table) == len(first) - len(dropped)
    assert f"{len(unparseable)} unparseable" in res.summary()
    data = load_audit_set("hanna")
    texts = {(i.id, c.id): (i.input, c.text, c.human["Coherence"]) for i in data.inputs for c in i.candidates}
    for (judge, key), answer in first.items():
        _, variant, input_id, cand_id = key
        row = table.get(f"{input_id}/{cand_id}", judge, "Coherence", variant)
        if (judge, key) in dropped:
            assert row is None
            continue
        assert row is not None
        assert row.score == parsed[(judge, key)]
        assert row.logprobs is not None and dict(row.logprobs) == lps[(judge, key)]
        assert (row.input, row.output, row.human) == texts[(input_id, cand_id)] and row.source == "hanna"
    # repetition 0, never the mean: some repetitions differ, and the table follows repetition 0 there
    differ = [k for k in first if parsed[k] is not None and direct.parse(second[k]["text"]) not in (None, parsed[k])]
    assert differ
    assert len(table.ids()) == N_INPUTS * N_CANDIDATES and all("/" in i for i in table.ids())


def test_unparseable_missing_and_changed_answers_are_counted(audit_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(audit_dir, copy)
    lines = _stored(copy)
    rep0 = [i for i, a in enumerate(lines) if a["rep"] == 0 and direct.parse(a["text"]) is not None]
    lines[rep0[0]]["text"], lines[rep0[0]]["logprobs"] = "no idea", None  # unparseable, no log-probs: no row
    # unparseable although its log-probs spell a score: no parsed score, so no rating token either (one locator)
    lines[rep0[1]]["text"] = "hmm"
    del lines[rep0[2]]  # never stored: missing
    (copy / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in lines))
    base, res = audit_scores(audit_dir), audit_scores(copy)  # by directory
    assert res.unparseable == base.unparseable + 2 and res.dropped == base.dropped + 2
    assert res.missing == 1 and res.answers == base.answers - 1 and len(res.table) == len(base.table) - 3
    hmm = lines[rep0[1]]
    assert res.table.get("/".join(hmm["key"][2:]), hmm["judge"], "Coherence", hmm["key"][1]) is None
    # every answer without a rating token is counted with its reason, and the summary names them
    added = {r: n - base.no_rating_token.get(r, 0) for r, n in res.no_rating_token.items()}
    added = {r: n for r, n in added.items() if n}
    assert added == {"no log-probabilities returned": 1,
                     "unparseable answer: the strict parser reads no score on its first line": 1}
    total = sum(res.no_rating_token.values())
    assert f"{total} items without a rating token: " in res.summary()
    assert res.to_json()["no_rating_token"] == res.no_rating_token and res.to_json()["scale"] == [1, 5]


def test_audits_that_cannot_give_scores_are_one_line_errors(audit_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such stored audit"):
        audit_scores("audit-nope")
    changed = tmp_path / "changed"
    shutil.copytree(audit_dir, changed)
    manifest = json.loads((changed / "manifest.json").read_text())
    manifest["data"]["sha256"] = "0" * 64
    (changed / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DataError, match="has changed since the audit"):
        audit_scores(changed)
    manifest["spec"]["protocol"] = "pairwise"
    manifest["spec"]["reps"] = 3  # pairwise audits ask an odd number of verdicts per pair (paper 000)
    (changed / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DataError, match="need direct"):
        audit_scores(changed)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_judge_intervals_on_an_audit(audit_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(capsys, "judge-intervals", "--audit", audit_dir.name, "--judge", "sim-judge-long",
                        "--variant", "strict", "--methods", "cqr,ordinal-aps", "--seeds", "3", "--json", "-")
    assert rc == 0, err
    doc = json.loads(out)
    rows = audit_scores(audit_dir).table.select(judge="sim-judge-long", variant="strict").rows
    usable = [r for r in rows if r.logprobs and r.human is not None]
    assert (doc["judge"], doc["variant"], doc["criterion"]) == ("sim-judge-long", "strict", "Coherence")
    assert doc["n_items"] == len(usable) >= 55 and doc["dropped_rows"] == len(rows) - len(usable)
    assert doc["audit"]["id"] == audit_dir.name and "scores_file" not in doc
    assert set(doc["methods"]) == {"cqr", "ordinal-aps"}
    assert all(0.0 <= m["coverage_mean"] <= 1.0 for m in doc["methods"].values())
    assert "unparseable" in err and "stored answers" in err


def test_judge_irt_on_an_audit_uses_its_prompt_variants(audit_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(capsys, "judge-irt", "--audit", str(audit_dir), "--judge", "sim-judge-sensitive",
                        "--prior", "map", "--json", "-")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["audit"]["id"] == audit_dir.name and "ratings_file" not in doc
    assert doc["judge"] == "sim-judge-sensitive" and set(doc["variants"]) == set(VARIANTS)
    assert doc["n_samples"] >= 55 and doc["c_v"] is not None and doc["rho"] is not None


def test_jury_on_an_audit_with_several_judges(audit_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(capsys, "jury", "--audit", audit_dir.name, "--splits", "2", "--search", "1", "--json", "-")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["audit"]["id"] == audit_dir.name and "scores_file" not in doc
    assert doc["n_items"] == N_INPUTS * N_CANDIDATES and doc["judges"] == list(JUDGES)
    assert {f"judge:{j}" for j in JUDGES} | {"jury", "average-all"} <= set(doc["methods"])
    assert "logprob" in doc["feature_groups"]  # the audit's log-probs became the entropy feature


@pytest.mark.parametrize("argv", [
    ("jury", "--splits", "2"),
    ("jury", "--scores", "x.jsonl", "--audit", "a"),
    ("judge-irt",),
    ("judge-irt", "--ratings", "x.jsonl", "--audit", "a"),
    ("judge-intervals", "--scores", "x.jsonl", "--audit", "a"),
])
def test_exactly_one_source_or_a_one_line_error(argv: tuple[str, ...], audit_dir: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(capsys, *argv)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "exactly one of" in err


def test_judge_intervals_on_an_audit_without_log_probs_says_how_to_get_them(
        audit_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "no_lp"
    shutil.copytree(audit_dir, copy)
    lines = [a | {"logprobs": None} for a in _stored(copy)]  # as stored by judges asked without top_logprobs
    (copy / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in lines))
    assert audit_scores(copy).without_logprobs == len(audit_scores(copy).table) > 0
    rc, out, err = _run(capsys, "judge-intervals", "--audit", str(copy), "--judge", "sim-judge-long")
    assert rc == 2 and out == "" and "--top-logprobs" in err and "error" in err.splitlines()[-1]
    # judge-irt needs parsed scores only: the same audit still runs
    rc, out, err = _run(capsys, "judge-irt", "--audit", str(copy), "--judge", "sim-judge-long", "--quiet",
                        "--json", "-")
    assert rc == 0, err
    assert json.loads(out)["n_samples"] >= 55
