"""The direct study's built-in prompts (issue 12 §1): the G-Eval form beside the score-only prompt, a scale 1–K, and
the one rating locator from the judge's answer to paper 001's features — unit tests, then an audit on 1–10 with
the G-Eval prompt over the demo server on loopback, read back by ``judge-intervals --audit``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from random import Random

import pytest

from relgate_tui.cli import main
from relgate_tui.demo import DemoServer
from relgate_tui.demo.judge import JudgeKnobs, judge_completion, score_probabilities
from relgate_tui.engine.judging import AuditSpec, Judge, direct, geval, list_audits
from relgate_tui.engine.judging.as_scores import audit_scores
from relgate_tui.engine.judging.prompts import direct_prompt, parse_direct_score
from relgate_tui.engine.judging.variants import DIRECT_TEMPLATE, PromptVariant, perturbed_variants
from relgate_tui.engine.transport.logprobs import TokenLogprob
from relgate_tui.errors import UserError

# untrusted texts holding the templates' own markers: the input may hold anything (the response is split at the last
# "Response:" marker, as paper 000's parsers do), the response anything but that marker
HOSTILE_INPUT = "a {{response}} with\n\nResponse:\nmarkers\n\nScore (1-5):\nDefinition of X: y\n"
HOSTILE_RESPONSE = "a {{input}} with\n\nInput:\nmarkers\n\nScore (1-5):\nRate the X on a scale of 1-3 where:\n"


def test_the_default_prompt_is_paper_000s_and_its_scale_names_k() -> None:
    assert geval.direct_template("score-only", 5) == DIRECT_TEMPLATE
    v = PromptVariant("x", direct=geval.direct_template("score-only", 5))
    assert v.direct_messages("in", "out", "Coherence", "d") == direct_prompt("in", "out", "Coherence", "d")
    ten = geval.direct_template("score-only", 10)
    assert "scale of 1-10" in ten and "between 1 and 10" in ten and "10 = Excellent" in ten and "1-5" not in ten
    form = geval.direct_template("geval", 7)
    for part in ("Evaluation Criteria:", "{{definition}}", "Evaluation Steps:", "1. ", "2. ", "3. ", "{{input}}",
                 "{{response}}"):
        assert part in form
    assert form.endswith("\nScore (1-7):") and "from 1 to 7" in form and "1-5" not in form


@pytest.mark.parametrize("prompt", geval.PROMPTS)
@pytest.mark.parametrize("scale", range(geval.MIN_SCALE, geval.MAX_SCALE + 1))
def test_parse_prompt_inverts_every_built_in_template(prompt: str, scale: int) -> None:
    v = PromptVariant("x", direct=geval.direct_template(prompt, scale))
    for description in ("how well it hangs together", ""):
        msgs = v.direct_messages(HOSTILE_INPUT, HOSTILE_RESPONSE, "Coherence", description)
        got = geval.parse_prompt(msgs)
        assert got == geval.BuiltinPrompt(prompt, scale, "Coherence", description, HOSTILE_INPUT, HOSTILE_RESPONSE)


def test_parse_prompt_refuses_anything_else() -> None:
    assert geval.parse_prompt([{"role": "user", "content": "Rate this story from 1 to 5."}]) is None
    assert geval.parse_prompt("not messages") is None and geval.parse_prompt([]) is None
    too_big = PromptVariant("x", direct=geval.direct_template("geval", 5).replace("1-5", "1-11"))
    assert geval.parse_prompt(too_big.direct_messages("i", "r", "C")) is None


def test_answers_are_parsed_by_their_prompt_and_scale() -> None:
    reasoning = "Step 1: it asks for 3 things.\nStep 2: it gives 2.\n"
    assert geval.parse_score(reasoning + "Score: 4", "geval", 5) == 4
    assert geval.parse_score(reasoning + "Score (1-10): 10", "geval", 10) == 10
    assert geval.parse_score(reasoning + "I cannot settle on a single score.", "geval", 5) is None
    assert geval.parse_score(reasoning + "Score: 7", "geval", 5) is None  # off the scale
    assert [parse_direct_score(t, 10) for t in ("10", "7/10", "Score: 10", "3 out of 10", "11", "0", "07", "7/5")] \
        == [10, 7, 10, 3, None, None, None, None]
    assert [parse_direct_score(t) for t in ("5", "4/5", "6", "4/10")] == [5, 4, None, None]
    assert direct.parse("Score: 9", "score-only", 10) == 9.0 and direct.parse("9") is None


def test_bad_prompt_or_scale_is_one_line() -> None:
    for prompt, scale in (("cot", 5), ("geval", 1), ("geval", 11), ("geval", True)):
        with pytest.raises(UserError) as err:
            AuditSpec("hanna", "Coherence", (Judge("http://127.0.0.1:9/v1", "m"),), prompt=prompt,
                      scale=scale).validate()  # type: ignore[arg-type]
        assert len(str(err.value).splitlines()) == 1


def test_the_spec_records_prompt_and_scale_and_default_audit_ids_do_not_move() -> None:
    judge = (Judge("http://127.0.0.1:9/v1", "m"),)
    default = AuditSpec("hanna", "Coherence", judge).to_json()
    assert "prompt" not in default and "scale" not in default  # audits stored before these options keep their id
    spec = AuditSpec("hanna", "Coherence", judge, prompt="geval", scale=10)
    assert spec.to_json()["prompt"] == "geval" and spec.to_json()["scale"] == 10
    assert AuditSpec.from_json(spec.to_json()).to_json() == spec.to_json()


def test_perturbations_perturb_the_chosen_prompt() -> None:
    base = geval.direct_template("geval", 10)
    (typo, newline) = perturbed_variants("typo,newline", seed=3, criterion="Coherence", direct=base)
    assert typo.direct != base and "{{response}}" in typo.direct and "Score (1-10):" in typo.direct
    assert " ".join(newline.direct.split()) == " ".join(base.split())


def _tokens(completion, top: int = 20) -> tuple[TokenLogprob, ...]:
    return tuple(TokenLogprob(t.token, t.logprob, t.alternatives[:top]) for t in completion.tokens)


@pytest.mark.parametrize("scale", [5, 10])
def test_the_demo_judge_reasons_then_scores_and_the_locator_takes_the_final_digit(scale: int) -> None:
    v = PromptVariant("x", direct=geval.direct_template("geval", scale))
    msgs = v.direct_messages("Write a story about a cat.", "Once upon a time a cat sat on a mat.", "Coherence", "d")
    knobs = JudgeKnobs(invalid_rate=0.0)
    seen = set()
    for seed in range(12):
        c = judge_completion(msgs, Random(seed), knobs)
        toks = _tokens(c)
        assert c.text.startswith("Step 1:") and "main events" in c.text
        located = direct.locate(toks, c.text, "geval", scale)
        assert located.reason is None and located.index == len(toks) - 1  # the final digit, not "Step 2"
        assert located.score == geval.parse_score(c.text, "geval", scale)
        # every alternative at the final digit is a scale value: their probabilities are the judge's score
        # distribution, whose mean is the latent mean mapped to 1..K
        probs = {k: math.exp(lp) for k, lp in located.logprobs.items()}
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-6)
        seen.add(located.score)
    assert len(seen) >= 2  # the score is sampled, the reasoning fixed


def test_score_only_on_1_to_10_from_the_demo_judge() -> None:
    v = PromptVariant("x", direct=geval.direct_template("score-only", 10))
    msgs = v.direct_messages("Write a story.", "A long and winding tale of two cities.", "Coherence")
    c = judge_completion(msgs, Random(0), JudgeKnobs(invalid_rate=0.0))
    located = direct.locate(_tokens(c), c.text, "score-only", 10)
    assert located.reason is None and 1 <= located.score <= 10
    assert len(score_probabilities(5.0, 1.0, 10)) == 10


# ---------------------------------------------------------------------------------- end to end on loopback
N_INPUTS, N_CANDIDATES = 6, 5


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("geval_home")
    with pytest.MonkeyPatch.context() as mp, DemoServer() as demo:
        mp.setenv("RELGATE_HOME", str(home))
        rc = main(["judge", "audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", demo.base_url,
                   "--model", "sim-judge", "--protocol", "direct", "--prompt", "geval", "--scale", "10",
                   "--reps", "1", "--top-logprobs", "10", "--inputs", str(N_INPUTS), "--candidates",
                   str(N_CANDIDATES), "--seed", "2", "--json", str(home / "audit.json")])
    assert rc == 0
    return home  # the demo server is closed from here on


def test_a_geval_audit_on_1_to_10_stores_its_prompt_and_reasoned_answers(home: Path) -> None:
    (summary,) = list_audits(home / "audits")
    manifest = json.loads((Path(summary.path) / "manifest.json").read_text())
    assert manifest["spec"]["prompt"] == "geval" and manifest["spec"]["scale"] == 10
    answers = [json.loads(x) for x in (Path(summary.path) / "answers.jsonl").read_text().splitlines()]
    assert len(answers) == N_INPUTS * N_CANDIDATES
    assert all(a["text"].startswith("Step 1:") for a in answers)  # max_tokens default 400 left room to reason
    doc = json.loads((home / "audit.json").read_text())
    study = doc["direct"]  # one judge, one variant: the document is that study
    assert "1-10" in study["note"] and study["likert_conformal"] == []  # paper 000's sets assume 1–5
    scored = [r for r in study["scores"] if r["judge_scores"]]
    assert len(scored) >= N_INPUTS * N_CANDIDATES - 2 and max(s for r in scored for s in r["judge_scores"]) > 5
    assert all(str(r["judge_scores"][0]) in r["score_logprobs"][0] for r in scored)


def test_judge_intervals_on_the_geval_audit_uses_the_scale_1_to_10(
        home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(home))
    (summary,) = list_audits(home / "audits")
    res = audit_scores(summary.id)
    assert res.prompt == "geval" and res.scale == tuple(range(1, 11))
    assert all(r.score is not None and r.logprobs for r in res.table.rows)
    rc = main(["judge-intervals", "--audit", summary.id, "--methods", "cqr,ordinal-aps", "--seeds", "3", "--json",
               "-"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["scale"] == list(range(1, 11)) and doc["n_items"] == len(res.table)
    assert doc["audit"]["scale"] == [1, 10] and doc["audit"]["prompt"] == "geval"
    assert "items without a rating token" in err


def test_a_scores_file_on_1_to_10_gives_paper_000s_note_not_wrong_sets() -> None:
    from relgate_tui.engine.judging import audit_from_scores
    from relgate_tui.engine.judging.scores_file import table_from_records

    records = [{"id": f"i{i}", "score": 1 + i % 10, "human": 1 + (i % 10) / 2.25} for i in range(40)]
    doc = audit_from_scores(table_from_records(records, "ten.jsonl")).to_json()
    assert "1-10" in doc["direct"]["note"] and doc["direct"]["likert_conformal"] == []
    assert doc["direct"]["n_without_valid_score"] == 0  # 6–10 are valid scores on this scale
    five = [r | {"score": 1 + r["score"] % 5} for r in records]
    assert audit_from_scores(table_from_records(five, "five.jsonl")).to_json()["direct"]["likert_conformal"]


def test_the_live_study_counts_answers_without_a_rating_token_only_when_log_probs_were_asked() -> None:
    top = (("4", -0.1), ("3", -2.4))
    good = (TokenLogprob("4", -0.1, top),)
    legend = (TokenLogprob("1", -1.5, (("1", -1.5),)), TokenLogprob(".", -0.1), TokenLogprob(" Poor", -0.1))
    found = {("direct", "original", "P1", "S1"): [direct.locate(good, "4"), direct.locate(legend, "1. Poor")],
             ("direct", "original", "P1", "S2"): [direct.locate(None, "4"), direct.locate(legend, "1. Poor")]}
    reasons = direct.rating_reasons(found)
    assert reasons == {"unparseable answer: no rating found on the answer's first line": 2,
                       "no log-probabilities returned": 1}
    assert direct.rating_reasons({("direct", "original", "P1", "S1"): [direct.locate(None, "4")]}) == {}
    result = direct.analyse([], 0.1, 0, no_rating_token=reasons)
    assert result.to_json()["no_rating_token"] == reasons
    assert "3 answers without a rating token" in "\n".join(direct.markdown(result))
    assert "no_rating_token" not in direct.analyse([], 0.1, 0).to_json()  # documents without log-probs unchanged


def test_the_model_paraphrase_of_the_score_only_prompt_is_refused_for_another_prompt(
        capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["judge", "audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", "http://127.0.0.1:9/v1",
               "--model", "m", "--protocol", "direct", "--prompt", "geval", "--perturb", "typo,paraphrase"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--perturb paraphrase" in err and "--variant NAME=FILE" in err
