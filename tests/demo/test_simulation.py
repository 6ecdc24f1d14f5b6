"""Simulated models and judge (relgate_tui/demo): known p*, exact distributions, surface forms, judge knobs."""

from __future__ import annotations

import math
import re
import statistics
from random import Random

import pytest

from relgate_tui import demo as sim
from relgate_tui.core.canon import canonicalize_references, get_canonicalizer
from relgate_tui.core.judge.cycles import cycle_report
from relgate_tui.core.judge.tournament import PairwiseVerdict, build_tournament
from relgate_tui.core.types import INVALID
from relgate_tui.engine.certification.tasks import Task, bundled_tasks, load_task
from relgate_tui.engine.judging.data import load_audit_set
from relgate_tui.engine.judging.prompts import (
    correctness_pairwise_prompt,
    direct_prompt,
    pairwise_prompt,
    parse_direct_score,
    parse_pairwise_verdict,
)
from relgate_tui.engine.records import TaskItem
from relgate_tui.engine.transport.prompts import item_messages

IDS = [f"item-{k}" for k in range(3000)]


# ------------------------------------------------------------------------------------------------ p*


@pytest.mark.parametrize("model", sim.ANSWER_MODELS)
def test_p_star_is_deterministic_and_in_range(model: str) -> None:
    values = [sim.true_p_star(model, i) for i in IDS[:200]]
    assert values == [sim.true_p_star(model, i) for i in IDS[:200]]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert len(set(values)) > 100  # per item, not per model


def test_p_star_distributions_match_the_documented_mixtures() -> None:
    strong = [sim.true_p_star("sim-strong", i) for i in IDS]
    mid = [sim.true_p_star("sim-mid", i) for i in IDS]
    weak = [sim.true_p_star("sim-weak", i) for i in IDS]
    for name, values in (("sim-strong", strong), ("sim-mid", mid), ("sim-weak", weak)):
        # mean of a bounded variable over 3000 hashed draws: sd of the mean < 0.006
        assert abs(statistics.fmean(values) - sim.PROFILES[name].mean_p_star()) < 0.03, name
    assert 0.86 <= sum(0.95 <= v <= 0.99 for v in strong) / len(strong) <= 0.94  # documented 0.90
    assert any(v < 0.8 for v in strong)  # a few hard items
    assert 0.70 <= statistics.fmean(mid) <= 0.78
    assert 0.26 <= sum(v == 0.0 for v in weak) / len(weak) <= 0.34  # 30% unsolvable
    assert 0.40 <= statistics.fmean(weak) <= 0.50


def test_unknown_model_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown simulated model 'gpt-4'"):
        sim.true_p_star("gpt-4", "x")


# ------------------------------------------------------------------------------------------------ items


def test_sim_items_from_task_items() -> None:
    numeric = sim.sim_item_from_task_item(TaskItem("n1", "What is 1000 plus 234?", ("1,234",)), "numeric", "t")
    assert (numeric.kind, numeric.answer, numeric.operands, numeric.task) == ("numeric", "1234", ("1000", "+", "234"), "t")
    assert sim.sim_item_from_task_item(TaskItem("n2", "q", ("18.0",)), "numeric").answer == "18"
    assert sim.sim_item_from_task_item(TaskItem("n3", "q", ("-2.50",)), "numeric").answer == "-2.5"
    by_letter = sim.sim_item_from_task_item(TaskItem("m1", "q", ("C",), ("x", "y", "z")), "mcq")
    by_text = sim.sim_item_from_task_item(TaskItem("m2", "q", ("y",), ("x", "y", "z")), "mcq")
    assert (by_letter.kind, by_letter.answer, by_text.answer) == ("mcq", "C", "B")
    text = sim.sim_item_from_task_item(TaskItem("t1", "Capital of France?", ("Paris",)), "text")
    assert (text.kind, text.answer) == ("text", "Paris")
    bigbench = sim.sim_item_from_task_item(TaskItem("b1", "What is 12 times 34?", ("408",)), "numeric")
    assert bigbench.operands == ("12", "*", "34")


@pytest.mark.parametrize(
    ("content", "kind", "answer"),
    [
        ("What is 6 * 7?", "numeric", "42"),
        ("Compute 12 plus 30.", "numeric", "42"),
        ("What is 50 - 8?", "numeric", "42"),
        ("What is 6 × 7?", "numeric", "42"),
        ("What is 21 multiplied by 2?", "numeric", "42"),
        ("Which colour?\nA. red\nB. green\nC. blue\nAnswer with the letter.", "mcq", None),
    ],
)
def test_unknown_questions(content: str, kind: str, answer: str | None) -> None:
    item = sim.unknown_item(content)
    assert item.kind == kind and item.item_id == sim.unknown_item_id(content)
    if answer is not None:
        assert item.answer == answer
    else:
        assert item.choices == ("red", "green", "blue") and item.answer in "ABC"


def test_unknown_question_without_arithmetic_gets_a_short_number() -> None:
    answers = {sim.unknown_item(f"Tell me about topic {word}").answer for word in "abcdefghij"}
    assert all(1 <= int(a) <= 100 for a in answers) and len(answers) > 3


# ------------------------------------------------------------------------------------------------ distributions


def _items() -> list[sim.SimItem]:
    items = []
    for k in range(60):
        items.append(sim.SimItem(f"num-{k}", "numeric", str(100 + 37 * k)))
        items.append(sim.SimItem(f"mcq-{k}", "mcq", "ABCD"[k % 4], ("w", "x", "y", "z")))
    return items


@pytest.mark.parametrize("model", sim.ANSWER_MODELS)
def test_answer_distribution_is_exact_and_coherent(model: str) -> None:
    for item in _items():
        dist = sim.answer_distribution(model, item)
        assert dist.values[0] == item.answer and dist.p_star == sim.true_p_star(model, item.item_id)
        assert math.isclose(sum(dist.probs) + dist.invalid, 1.0, abs_tol=1e-12)
        assert math.isclose(dist.invalid, sim.true_invalid_prob(model, item.item_id), abs_tol=1e-12) or len(dist.values) == 1
        distractors = dist.values[1:]
        assert len(set(distractors)) == len(distractors) and item.answer not in distractors
        assert set(distractors) <= set(sim.distractor_values(item)) and len(sim.distractor_values(item)) <= 3
        if item.kind == "mcq":
            assert set(distractors) <= set("ABCD")


def test_numeric_distractors_are_plausible_mistakes() -> None:
    item = sim.SimItem("x", "numeric", "579")
    plausible = {"578", "580", "569", "589", "759", "597", "5790", "57", "479", "679"}
    assert set(sim.distractor_values(item)) <= plausible


def test_modes_can_be_wrong_on_hard_items() -> None:
    wrong_modes = 0
    for item_id in IDS[:400]:
        dist = sim.answer_distribution("sim-weak", sim.SimItem(item_id, "numeric", "42"))
        wrong_modes += max(range(len(dist.probs)), key=dist.probs.__getitem__) != 0
    assert wrong_modes > 100  # unsolvable items alone are ~30%


@pytest.mark.parametrize("model", ["sim-mid", "sim-weak"])
def test_sampling_frequencies_match_the_distribution(model: str) -> None:
    item = sim.SimItem("freq-item", "numeric", "1234")
    dist = sim.answer_distribution(model, item)
    rng = Random(7)
    n = 6000
    counts: dict[str | None, int] = {}
    for _ in range(n):
        value = sim.sample_completion(model, item, rng, dist).value
        counts[value] = counts.get(value, 0) + 1
    expected = dict(zip(dist.values, dist.probs)) | {None: dist.invalid}
    for value, prob in expected.items():
        sd = math.sqrt(prob * (1 - prob) / n)
        assert abs(counts.get(value, 0) / n - prob) <= 5 * sd + 1e-9, (value, prob)


def test_correct_rate_over_many_items_matches_mean_p_star() -> None:
    rng = Random(3)
    items = [sim.SimItem(i, "numeric", "77") for i in IDS[:2000]]
    correct = sum(sim.sample_completion("sim-mid", item, rng).correct for item in items)
    expected = sum(sim.true_p_star("sim-mid", item.item_id) for item in items)
    assert abs(correct - expected) <= 5 * math.sqrt(2000 * 0.25)


# ------------------------------------------------------------------------------------------------ surface forms


def _decode_numeric(text: str) -> str | None:
    """A reference reading of the simulator's numeric forms (independent of the simulator's code)."""
    line = text.strip().splitlines()[-1].strip()
    line = re.sub(r"\s*\(since [^)]*\)$", "", line)
    line = line.replace("**", "").replace("\u2212", "-")
    match = re.fullmatch(
        r"(?:The answer is |#### |Answer: |I think it's |\\boxed\{)?(-?[\d,]+(?:\.\d+)?)\}?\.?", line
    )
    if match is None:
        return None
    number = match.group(1).replace(",", "")
    return number[:-2] if number.endswith(".0") else number


def test_numeric_forms_keep_the_value_and_are_varied() -> None:
    rng = Random(11)
    seen_forms = set()
    for value in ["42", "7", "-15", "1234", "98765", "2.5"]:
        item = sim.SimItem("f-" + value, "numeric", value, operands=("6", "*", "7"))
        for _ in range(300):
            text = sim.render_answer(item, value, rng)
            assert _decode_numeric(text) == value, text
            seen_forms.add(re.sub(r"[-\d.,\u2212]+", "N", text))
    assert {"The answer is N", "#### N", "**N**", "I think it's N", "\\boxed{N}", "N (since N * N)", "N"} <= {
        f.rstrip(".") for f in seen_forms
    }
    assert any("\n" in f for f in seen_forms)  # reasoning then the number
    assert any("," in sim.render_answer(sim.SimItem("t", "numeric", "98765"), "98765", Random(s)) for s in range(200))


def test_mcq_forms_keep_the_letter() -> None:
    item = sim.SimItem("q", "mcq", "B", ("Paris", "London", "Rome, the eternal city", "Berlin"))
    rng = Random(5)
    texts = {sim.render_answer(item, "C", rng) for _ in range(400)}
    assert {"C", "(C)", "The answer is C.", "C. Rome, the eternal city", "Rome, the eternal city", "Answer: C", "**C**"} == texts
    short = {sim.render_answer(item, "A", Random(s)) for s in range(300)}
    assert "A. Paris" in short and "Paris" not in short  # a one-word option alone is too ambiguous to use


def test_mcq_option_text_form_skipped_when_ambiguous() -> None:
    item = sim.SimItem("q", "mcq", "A", ("The same thing", "the same thing", "Something else", "Vitamin A deficiency"))
    texts = {sim.render_answer(item, "A", Random(s)) for s in range(300)}
    assert "The same thing" not in texts and "A. The same thing" in texts
    contained = sim.SimItem("q", "mcq", "C", ("Some birds fly", "Nothing at all", "Some birds fly south"))
    assert "Some birds fly south" not in {sim.render_answer(contained, "C", Random(s)) for s in range(300)}
    letters = {sim.render_answer(item, "D", Random(s)) for s in range(300)}
    assert "Vitamin A deficiency" not in letters and "D. Vitamin A deficiency" in letters


def test_invalid_answers_carry_no_answer_token() -> None:
    rng = Random(2)
    for _ in range(100):
        numeric = sim.render_answer(sim.SimItem("q", "numeric", "5"), None, rng)
        assert not re.search(r"\d", numeric)
        mcq = sim.render_answer(sim.SimItem("q", "mcq", "A", tuple("abcdefghijk")), None, rng)
        assert not re.search(r"(?<![\w'])[A-Z](?![\w'])", mcq), mcq
    assert sim.render_answer(sim.SimItem("q", "text", "Paris"), None, rng) == ""


def test_forms_round_trip_through_the_core_canonicalizer() -> None:
    """p* is defined after canonicalization: every rendered class must canonicalize to itself."""
    numeric = get_canonicalizer("numeric")
    mcq = get_canonicalizer("mcq")
    rng = Random(9)
    for value in ["42", "-15", "1234", "98765", "2.5"]:
        item = sim.SimItem("c-" + value, "numeric", value, operands=("6", "*", "7"))
        for _ in range(200):
            text = sim.render_answer(item, value, rng)
            assert numeric(text, ()) == numeric(value, ()), text
        assert numeric(sim.render_answer(item, None, rng), ()) == INVALID
    choices = ("Paris is the one", "London, surely", "Rome, the eternal city", "Berlin in the north")
    item = sim.SimItem("c-mcq", "mcq", "B", choices)
    for _ in range(300):
        letter = "ABCD"[int(rng.random() * 4)]
        assert mcq(sim.render_answer(item, letter, rng), choices) == letter
    assert mcq(sim.render_answer(item, None, rng), choices) == INVALID


def _bundled() -> list[tuple[Task, TaskItem, str]]:
    out = []
    for bundled in bundled_tasks():
        task = load_task(bundled.name)
        out += [(task, item, item_messages(item)[-1]["content"]) for item in task.items]
    return out


def test_bundled_catalogue_recognises_every_bundled_item() -> None:
    catalogue = sim.bundled_catalogue()
    assert catalogue.error is None
    bundled = _bundled()
    assert len(catalogue) == len({content for _, _, content in bundled}) >= 1000
    first_with_content: dict[str, str] = {}
    for task, item, content in bundled:
        first_with_content.setdefault(content, item.id)  # a few MMLU questions appear twice: the first id serves
    for task, item, content in bundled:
        found = catalogue.item_for(content)
        assert (found.item_id, found.task) == (first_with_content[content], task.name)
        assert found.kind == ("mcq" if task.canon == "mcq" else "numeric"), (task.name, item.id)
        if found.kind == "mcq":
            assert found.choices == item.choices and found.answer in "ABCDEFGHIJ"[: len(item.choices)]


def test_rendered_classes_canonicalize_as_intended_on_bundled_items() -> None:
    """On every bundled item: correct renderings land in the canonicalized references, distractors outside them
    (and valid), unparseable ones on INVALID. Precondition: the canonicalizer reads the item's bare letters as
    themselves (items where it does not are counted; see the DEMO report for the two known MMLU items)."""
    catalogue = sim.bundled_catalogue()
    rng = Random(4)
    unreadable, failures = [], []
    for task, item, content in _bundled():
        canon = get_canonicalizer(task.canon)
        if item.choices and any(canon(letter, item.choices) != letter for letter in "ABCDEFGHIJ"[: len(item.choices)]):
            unreadable.append(item.id)
            continue
        if not item.answers:  # a task without references (arithmetic-unreferenced): nothing to land in
            continue
        references = canonicalize_references(canon, item.answers, item.choices)
        sim_item = catalogue.item_for(content)
        values = (sim_item.answer,) + sim.distractor_values(sim_item)
        for index, value in enumerate(values + (None,)):
            for _ in range(3):
                text = sim.render_answer(sim_item, value, rng)
                got = canon(text, item.choices)
                if value is None:
                    ok = got == INVALID
                elif index == 0:
                    ok = got in references
                else:
                    ok = got not in references and got != INVALID
                if not ok:
                    failures.append((item.id, value, text, got, sorted(references)))
    assert failures == []
    assert len(unreadable) <= 3, unreadable


def test_human_scores_come_from_the_bundled_hanna_set() -> None:
    audit = load_audit_set("hanna")
    candidate = audit.inputs[0].candidates[0]
    criterion, score = next(iter(candidate.human.items()))
    assert sim.latent_quality(candidate.text, criterion) == score
    assert sim.latent_quality(candidate.text, criterion.upper()) == score  # criterion names are case-insensitive
    assert len(sim.human_quality_index()) >= 1000


def test_request_rng_is_deterministic_per_seed_and_index() -> None:
    item = sim.SimItem("d", "numeric", "10")

    def texts(seed, counter):
        return [sim.sample_completion("sim-weak", item, sim.request_rng("sim-weak", "q", seed, i, counter)).text for i in range(40)]

    assert texts(5, 1) == texts(5, 99)  # with a seed the counter does not matter
    assert texts(5, 1) != texts(6, 1)
    assert texts(None, 1) == texts(None, 1) and texts(None, 1) != texts(None, 2)


# ------------------------------------------------------------------------------------------------ catalogue


def _item_messages(item: TaskItem) -> list[dict]:
    return [{"role": "user", "content": f"Question: {item.question}\nGive the final answer."}]


def _catalogue() -> sim.ItemCatalogue:
    task = Task(
        name="t",
        path="t.jsonl",
        sha256="0" * 64,
        items=(TaskItem("a", "What is 2 + 2?", ("4",)), TaskItem("b", "Pick one", ("B",), ("x", "y"))),
        canon="numeric",
    )
    return sim.ItemCatalogue.from_tasks([task], _item_messages)


def test_catalogue_recognises_items_by_user_content() -> None:
    catalogue = _catalogue()
    assert len(catalogue) == 2
    found = catalogue.item_for("Question: What is 2 + 2?\nGive the final answer.")
    assert (found.item_id, found.answer, found.task) == ("a", "4", "t")
    assert catalogue.item_for("What is 2 + 2?").item_id.startswith("unknown-")  # the question alone is not the prompt
    assert catalogue.by_question["What is 2 + 2?"][0] is found  # the judge may use the bare question
    assert catalogue.distribution("sim-mid", found) is catalogue.distribution("sim-mid", found)


def test_simulate_chat_uses_the_catalogue_and_is_deterministic() -> None:
    catalogue = _catalogue()
    messages = [{"role": "system", "content": "Be brief."}] + _item_messages(TaskItem("a", "What is 2 + 2?", ("4",)))
    first = sim.simulate_chat("sim-strong", messages, 3, 4, 1, catalogue, sim.JudgeKnobs())
    again = sim.simulate_chat("sim-strong", messages, 3, 4, 2, catalogue, sim.JudgeKnobs())
    assert [c.text for c in first] == [c.text for c in again] and len(first) == 4
    values = {c.value for c in sim.simulate_chat("sim-strong", messages, 0, 100, 1, catalogue, sim.JudgeKnobs())}
    assert "4" in values


# ------------------------------------------------------------------------------------------------ judge


def _verdict(messages, seed: int, knobs=sim.JudgeKnobs(), catalogue=None) -> str | None:
    rng = sim.request_rng(sim.JUDGE_MODEL, messages[-1]["content"], seed, 0, 0)  # as the server seeds it
    return parse_pairwise_verdict(sim.judge_reply(messages, rng, knobs, catalogue or sim.ItemCatalogue()))


def test_judge_position_bias_on_equal_candidates() -> None:
    """Same text shown twice: P(A) = Φ(b / (σ√2)) = Φ(0.15 / 0.707) ≈ 0.584."""
    messages = pairwise_prompt("Prompt", "Identical story.", "Identical story.", "Coherence", "")
    verdicts = [_verdict(messages, s) for s in range(4000)]
    valid = [v for v in verdicts if v is not None]
    share_a = valid.count("A") / len(valid)
    expected = 0.5 * (1 + math.erf(0.15 / (0.5 * math.sqrt(2)) / math.sqrt(2)))
    assert abs(share_a - expected) < 0.03
    assert 0.002 < verdicts.count(None) / len(verdicts) < 0.025  # invalid_rate 1%
    unbiased = sim.JudgeKnobs(position_bias=0.0, invalid_rate=0.0)
    share_unbiased = [_verdict(messages, s, unbiased) for s in range(4000)].count("A") / 4000
    assert abs(share_unbiased - 0.5) < 0.03


def test_judge_prefers_the_better_text_in_both_orders() -> None:
    knobs = sim.JudgeKnobs(pair_sd=0.0, invalid_rate=0.0)
    texts = [f"candidate story number {k}" for k in range(40)]
    quality = {t: sim.latent_quality(t, "Coherence", {}) for t in texts}
    best = max(texts, key=quality.get)
    worst = min(texts, key=quality.get)
    assert quality[best] - quality[worst] > 2.0
    forward = [_verdict(pairwise_prompt("p", best, worst, "Coherence", ""), s, knobs) for s in range(300)]
    backward = [_verdict(pairwise_prompt("p", worst, best, "Coherence", ""), s, knobs) for s in range(300)]
    assert forward.count("A") > 290 and backward.count("B") > 290


def test_near_equal_candidates_produce_cycles() -> None:
    """Majority tournaments over k = 3 repetitions in both orders: some inputs have 3-cycles, most none
    (default knobs, hash qualities: about 17% of 6-candidate inputs have a cycle)."""
    knobs = sim.JudgeKnobs()
    rhos = []
    for prompt_index in range(40):
        candidates = [f"input {prompt_index} story {k}" for k in range(6)]
        verdicts = []
        for i, first in enumerate(candidates):
            for second in candidates[i + 1 :]:
                for a, b in ((first, second), (second, first)):
                    for rep in range(3):
                        verdict = _verdict(pairwise_prompt(f"input {prompt_index}", a, b, "Surprise", ""), rep, knobs)
                        winner = a if verdict == "A" else b if verdict == "B" else INVALID
                        verdicts.append(PairwiseVerdict(a, b, winner))
        rhos.append(cycle_report(build_tournament(verdicts, candidates)).rho)
    with_cycle = sum(rho > 0 for rho in rhos)
    assert 2 <= with_cycle <= 20
    # without noise, pair effect or bias the judge is a consistent comparator: never a cycle
    exact = sim.JudgeKnobs(position_bias=0.0, noise_sd=1e-9, pair_sd=0.0, invalid_rate=0.0)
    for prompt_index in range(5):
        candidates = [f"input {prompt_index} story {k}" for k in range(6)]
        verdicts = []
        for a in candidates:
            for b in candidates:
                if a != b:
                    verdict = _verdict(pairwise_prompt("i", a, b, "Surprise", ""), 0, exact)
                    verdicts.append(PairwiseVerdict(a, b, a if verdict == "A" else b))
        assert cycle_report(build_tournament(verdicts, candidates)).rho == 0.0


def test_human_scores_drive_the_latent_quality() -> None:
    human = {("coherence", "good story"): 4.7, ("coherence", "bad story"): 1.3}
    assert sim.latent_quality("good story", "Coherence", human) == 4.7
    assert 1.5 <= sim.latent_quality("other story", "Coherence", human) <= 4.5


def test_direct_scores_track_quality() -> None:
    knobs = sim.JudgeKnobs(invalid_rate=0.0)
    texts = [f"a response text {k}" for k in range(200)]
    errors = []
    for text in texts:
        reply = sim.judge_reply(direct_prompt("in", text, "Fluency", "Reads well."), Random(len(errors)), knobs)
        score = parse_direct_score(reply)
        assert score is not None and 1 <= score <= 5, reply
        errors.append(score - sim.latent_quality(text, "Fluency", {}))
    assert abs(statistics.fmean(errors)) < 0.25
    assert statistics.fmean(abs(e) for e in errors) < 1.0  # sd of the judge error ≈ 0.64 + rounding


def test_correctness_judge_prefers_the_reference_answer() -> None:
    catalogue = _catalogue()
    question = "Question: What is 2 + 2?\nGive the final answer."
    knobs = sim.JudgeKnobs(invalid_rate=0.0)
    right_first = [_verdict(correctness_pairwise_prompt(question, "4", "5"), s, knobs, catalogue) for s in range(400)]
    right_second = [_verdict(correctness_pairwise_prompt(question, "5", "The answer is 4."), s, knobs, catalogue) for s in range(400)]
    assert right_first.count("A") > 360 and right_second.count("B") > 340
    bare = [_verdict(correctness_pairwise_prompt("What is 2 + 2?", "3", "4"), s, knobs, catalogue) for s in range(400)]
    assert bare.count("B") > 340


def test_judge_reply_to_other_prompts_is_unparseable() -> None:
    reply = sim.judge_reply([{"role": "user", "content": "What is 2 + 2?"}], Random(0), sim.JudgeKnobs(), sim.ItemCatalogue())
    assert parse_pairwise_verdict(reply) is None and parse_direct_score(reply) is None
