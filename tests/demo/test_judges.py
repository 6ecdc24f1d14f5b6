"""Simulated judges over loopback: log-probs consistent with the sampled score, item-dependent reliability of the
pool, the perturbation-sensitive judge (relgate_tui/demo/judge.py, jury.py, recognise.py)."""

from __future__ import annotations

import math
from collections import Counter

import httpx
import pytest

from relgate_tui.demo import DemoServer, JudgeKnobs, item_features, reliability
from relgate_tui.demo.jury import POOL_JUDGES, pool_completion
from relgate_tui.demo.recognise import read_scoring_prompt, variant_kind
from relgate_tui.engine.judging.data import load_audit_set
from relgate_tui.engine.judging.prompts import (
    direct_prompt,
    pairwise_prompt,
    parse_direct_score,
    parse_pairwise_verdict,
)

CRITERION = "Coherence"


@pytest.fixture(scope="module")
def hanna():
    return load_audit_set("hanna")


@pytest.fixture(scope="module")
def client():
    with DemoServer() as server, httpx.Client(base_url=server.base_url, timeout=30) as c:
        yield c


def _ask(client, model: str, messages: list[dict], seed: object = 0, n: int = 1, top: int = 20, **extra) -> list[dict]:
    body = {"model": model, "messages": messages, "seed": seed, "n": n, "logprobs": True, "top_logprobs": top, **extra}
    response = client.post("/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return response.json()["choices"]


def _direct(hanna, i: int, j: int, template: str | None = None) -> list[dict]:
    item = hanna.inputs[i]
    description = hanna.criteria[CRITERION]
    if template is None:
        return direct_prompt(item.input, item.candidates[j].text, CRITERION, description)
    return [{"role": "user", "content": template.replace("{input}", item.input).replace("{response}", item.candidates[j].text)}]


def _rating_position(choice: dict) -> tuple[int, dict]:
    """The index and entry of the token that carries the parsed score (the first digit token)."""
    for index, entry in enumerate(choice["logprobs"]["content"]):
        if entry["token"].strip().isdigit():
            return index, entry
    raise AssertionError(f"no rating token in {choice['message']['content']!r}")


def _score_probs(entry: dict, scale: int = 5) -> dict[int, float]:
    """The scale-token probabilities at the rating position, renormalised over the scale (softmax of the log-probs):
    the judge's score distribution whatever the surface form ("4", "Score: 4", "**4**", "4/5")."""
    raw = {int(t["token"]): math.exp(t["logprob"]) for t in entry["top_logprobs"] if t["token"].strip().isdigit()}
    total = sum(raw.values())
    return {k: raw.get(k, 0.0) / total for k in range(1, scale + 1)}


# ------------------------------------------------------------------------------------------------ log-probs


@pytest.mark.parametrize("model", ["sim-judge", *POOL_JUDGES])
def test_direct_logprobs_are_consistent_with_the_reply(client, hanna, model) -> None:
    for i in range(3):
        for choice in _ask(client, model, _direct(hanna, i, 2 * i), seed=i, n=40):
            entries = choice["logprobs"]["content"]
            assert "".join(e["token"] for e in entries) == choice["message"]["content"]
            for entry in entries:
                top = {t["token"]: t["logprob"] for t in entry["top_logprobs"]}
                assert top[entry["token"]] == entry["logprob"]  # the sampled token's log-prob is its listed one
                assert sum(math.exp(lp) for lp in top.values()) <= 1.0 + 1e-9
                assert list(top.values()) == sorted(top.values(), reverse=True) and len(top) <= 20
                assert bytes(entry["bytes"]) == entry["token"].encode()
            score = parse_direct_score(choice["message"]["content"])
            if score is not None:
                _, entry = _rating_position(choice)
                assert int(entry["token"]) == score


@pytest.mark.parametrize("model", ["sim-judge", "sim-judge-long"])
def test_sampled_scores_follow_the_reported_distribution(client, hanna, model) -> None:
    """The rating token is drawn from the distribution whose log-probs are reported: 1,280 seeded replies to one item
    match the reported score probabilities within 0.05 (binomial sd ≤ 0.014)."""
    messages = _direct(hanna, 4, 3)
    counts: Counter[int] = Counter()
    reported: dict[int, float] | None = None
    for seed in range(10):
        for choice in _ask(client, model, messages, seed=seed, n=128):
            score = parse_direct_score(choice["message"]["content"])
            if score is None:
                continue
            counts[score] += 1
            index, entry = _rating_position(choice)
            if index == 0 and reported is None:
                reported = _score_probs(entry)
    assert reported is not None
    total = sum(counts.values())
    assert total > 1200
    for k in range(1, 6):
        assert abs(counts[k] / total - reported[k]) < 0.05, (k, counts, reported)


def test_top_logprobs_is_honoured_and_validated(client, hanna) -> None:
    (choice,) = _ask(client, "sim-judge-short", _direct(hanna, 0, 0), top=2)
    assert all(len(e["top_logprobs"]) <= 2 for e in choice["logprobs"]["content"])
    (plain,) = _ask(client, "sim-judge-short", _direct(hanna, 0, 0), top=0)
    assert all(e["top_logprobs"] == [] for e in plain["logprobs"]["content"])
    bad = client.post("/chat/completions", json={"model": "sim-judge", "messages": _direct(hanna, 0, 0), "top_logprobs": 21})
    assert bad.status_code == 400 and "top_logprobs" in bad.json()["error"]["message"]


def test_pairwise_verdict_logprobs(client, hanna) -> None:
    item = hanna.inputs[1]
    messages = pairwise_prompt(item.input, item.candidates[0].text, item.candidates[1].text, CRITERION)
    for model in ("sim-judge", "sim-judge-long"):
        for choice in _ask(client, model, messages, seed=5, n=20):
            verdict = parse_pairwise_verdict(choice["message"]["content"])
            letters = [e for e in choice["logprobs"]["content"] if e["token"].strip() in ("A", "B")]
            if verdict is not None:
                assert letters[0]["token"].strip() == verdict
                top = {t["token"].strip(): t["logprob"] for t in letters[0]["top_logprobs"]}
                assert {"A", "B"} <= set(top)


# ------------------------------------------------------------------------------------------------ reliability


def test_reliability_is_the_documented_function_of_item_features() -> None:
    short, long = "word " * 100, "word " * 300
    assert item_features("It might be 42, perhaps 43.") == item_features("It might be 42, perhaps 43.")
    features = item_features("It might be 42, perhaps 43. I think so.")
    assert (features.words, features.numbers, features.hedges) == (9, 2, 3)
    assert reliability("sim-judge-long", long) > 0.99 and reliability("sim-judge-long", short) < 0.01
    assert reliability("sim-judge-short", short) > 0.99 and reliability("sim-judge-short", long) < 0.01
    assert reliability("sim-judge-numbers", "no digits here") == pytest.approx(0.15)
    assert reliability("sim-judge-numbers", "one 1 digit") == pytest.approx(1 - 0.85 * math.exp(-1))
    assert reliability("sim-judge-hedges", "plain text") == pytest.approx(0.95)
    assert reliability("sim-judge-hedges", "maybe so") == pytest.approx(0.05 + 0.9 * math.exp(-0.6))
    assert reliability("sim-judge-sensitive", short) == reliability("sim-judge-sensitive", long) == 0.7


def test_pool_judges_are_reliable_where_designed(client, hanna) -> None:
    """Over loopback on HANNA: the long-text judge errs less on long stories than on short ones, the short-text judge
    the other way round (mean |judge − human| per group, one seeded reply per story)."""
    errors: dict[tuple[str, bool], list[float]] = {}
    for i in range(0, 96, 3):
        item = hanna.inputs[i]
        for candidate in item.candidates:
            messages = direct_prompt(item.input, candidate.text, CRITERION, hanna.criteria[CRITERION])
            is_long = len(candidate.text.split()) > 200
            for model in ("sim-judge-long", "sim-judge-short"):
                (choice,) = _ask(client, model, messages, seed=1, top=0)
                score = parse_direct_score(choice["message"]["content"])
                if score is not None:
                    errors.setdefault((model, is_long), []).append(abs(score - candidate.human[CRITERION]))
    mean = {key: sum(v) / len(v) for key, v in errors.items()}
    assert all(len(v) >= 60 for v in errors.values())
    assert mean[("sim-judge-long", True)] + 0.3 < mean[("sim-judge-long", False)]
    assert mean[("sim-judge-short", False)] + 0.3 < mean[("sim-judge-short", True)]


def test_existing_sim_judge_ignores_unknown_prompt_formats(client, hanna) -> None:
    template = "Evaluate the Coherence of this story on a scale of 1-10.\n\nStory: {response}\n\nAnswer with a number."
    (old,) = _ask(client, "sim-judge", _direct(hanna, 0, 0, template))
    (pool,) = _ask(client, "sim-judge-long", _direct(hanna, 0, 0, template))
    assert parse_direct_score(old["message"]["content"]) is None  # sim-judge: unchanged, exact prompts only
    score = int(pool["message"]["content"].split("/")[0].replace("Score:", "").strip(" *"))
    assert 1 <= score <= 10  # the pool reads other prompts and scales (here 1-10)


# ------------------------------------------------------------------------------------------------ perturbations


def _variants(client, hanna) -> dict[str, str]:
    original = direct_prompt("{input}", "{response}", CRITERION, hanna.criteria[CRITERION])[0]["content"]
    (paraphrased,) = _ask(client, "sim-paraphraser", [{"role": "user", "content": original}], seed=1, top=0)
    return {
        "original": original,
        "typo": original.replace("evaluating", "evaluatnig").replace("Respond", "Repsond"),
        "newline": original.replace(" of the following", "\nof the following").replace("Rate the", "Rate\n\nthe"),
        "paraphrase": paraphrased["message"]["content"],
    }


def _expected_score(choice: dict) -> float:
    _, entry = _rating_position(choice)
    return sum(k * p for k, p in _score_probs(entry).items())


def test_variant_kinds_are_recognised(client, hanna) -> None:
    for kind, template in _variants(client, hanna).items():
        prompt = read_scoring_prompt(_direct(hanna, 2, 1, template))
        assert prompt is not None and prompt.criterion == CRITERION and prompt.text == hanna.inputs[2].candidates[1].text
        assert variant_kind(prompt) == kind


def test_sensitive_judge_shifts_under_perturbations_and_the_others_do_not(client, hanna) -> None:
    """Mean expected score (from the rating-token log-probs) over 30 stories per variant: the sensitive judge drops
    under typo (−0.8) and newline (−0.5) and rises under paraphrase; sim-judge-long reports the same distribution."""
    variants = _variants(client, hanna)
    means: dict[tuple[str, str], float] = {}
    for model in ("sim-judge-sensitive", "sim-judge-long"):
        for kind, template in variants.items():
            values = []
            for i in range(30):
                choices = _ask(client, model, _direct(hanna, i, i % 11, template), seed=0, n=3)
                rated = [c for c in choices if parse_direct_score(c["message"]["content"]) is not None]
                values.append(_expected_score(rated[0]))
            means[(model, kind)] = sum(values) / len(values)
    sensitive = {kind: means[("sim-judge-sensitive", kind)] for kind in variants}
    assert sensitive["typo"] < sensitive["original"] - 0.4
    assert sensitive["newline"] < sensitive["original"] - 0.2
    assert sensitive["paraphrase"] > sensitive["original"] + 0.2
    stable = [means[("sim-judge-long", kind)] for kind in variants]
    assert max(stable) - min(stable) < 1e-6  # the same distribution (up to the 1e-9 log-prob floor)


def test_pool_completion_is_deterministic_per_rng() -> None:
    from random import Random

    messages = direct_prompt("Write.", "A short story about 3 cats.", CRITERION, "")
    first = pool_completion("sim-judge-numbers", messages, Random(4), JudgeKnobs())
    again = pool_completion("sim-judge-numbers", messages, Random(4), JudgeKnobs())
    assert first == again and first.tokens


def test_extra_judge_data_teaches_the_judges_human_scores(tmp_path, capsys) -> None:
    """``DemoServer(judge_data=[FILE])`` / ``relgate demo-server --judge-data FILE``: stories unknown to the bundled
    sets get their file's human scores as latent quality (good stories score high, bad ones low)."""
    import json

    from relgate_tui.demo import main

    good = [f"A carefully told story number {k} about a lighthouse keeper and her patient dog." for k in range(8)]
    bad = [f"Story {k} story story the the keeper dog dog lighthouse lighthouse end end." for k in range(8)]
    row = {"id": "X1", "input": "Write about a lighthouse.", "criteria": {"Fluency": "how fluent the story is"},
           "candidates": [{"id": f"g{k}", "text": t, "human": {"Fluency": 5.0}} for k, t in enumerate(good)]
           + [{"id": f"b{k}", "text": t, "human": {"Fluency": 1.0}} for k, t in enumerate(bad)]}
    path = tmp_path / "extra.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with DemoServer(judge_data=[str(path)]) as server, httpx.Client(base_url=server.base_url, timeout=30) as c:
        def mean_score(texts: list[str]) -> float:
            scores = []
            for text in texts:
                messages = direct_prompt(row["input"], text, "Fluency", "how fluent the story is")
                (choice,) = _ask(c, "sim-judge-short", messages, seed=0, top=0)
                scores.append(parse_direct_score(choice["message"]["content"]) or 3)
            return sum(scores) / len(scores)

        assert mean_score(good) > 4.0 > 2.0 > mean_score(bad)
    assert main(["--judge-data", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "missing.jsonl" in err and err.count("\n") == 1
