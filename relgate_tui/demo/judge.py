'''The simulated judge "sim-judge" (pairwise / Likert / certification), and the reply machinery every simulated
judge shares: sampled replies in realistic surface forms with exact token log-probabilities.

Latent quality q(text) on the 1–5 scale: the bundled human mean score for that exact text and criterion when
``judge_data`` provides it (HANNA), else a hash-derived value U[1.5, 4.5]. Knobs (:class:`JudgeKnobs`):

Defaults: position_bias 0.15, noise_sd 0.5, pair_sd 0.3, direct_item_sd 0.5, direct_sd 0.4, correct_margin 1.5,
invalid_rate 0.01 (with hash qualities ~17% of 6-candidate inputs show a 3-cycle at k = 3 in both orders; on HANNA
human means ~1/3 of 5-story inputs do).

* pairwise (``pairwise_prompt``): utility(first) = q_A + ``position_bias`` + g(A, B) + ``noise_sd``·ε₁,
  utility(second) = q_B + ``noise_sd``·ε₂; verdict = the larger. g is a persistent antisymmetric pair effect
  (``pair_sd``·z for the unordered pair, same on every call) so near-equal candidates form stable cycles. So
  P(A) = Φ((q_A − q_B + position_bias + g) / (noise_sd·√2)).
* direct (``direct_prompt``): round(q + ``direct_item_sd``·z(text) + ``direct_sd``·ε) clipped to 1..5
  (z(text) persistent per text and criterion, ε per call). So P(score = k) = Φ((k + ½ − μ)/σ) − Φ((k − ½ − μ)/σ)
  with μ = q + direct_item_sd·z(text), σ = direct_sd, the end categories taking the tails. The other built-in
  direct prompts (:mod:`relgate_tui.engine.judging.geval`: score-only on 1–K, the G-Eval form) are answered on
  their scale 1–K with μ and σ mapped linearly (μ_K = 1 + (μ − 1)(K − 1)/4, σ_K = σ(K − 1)/4). The G-Eval answer
  is three reasoning lines that quote in-scale numbers ("Step 1", "3 main events"; fixed per text), then
  "Score: k" (or "Score (1-K): k", "**Score:** k"): the log-probs of the final digit carry the score distribution,
  the reasoning tokens are certain given the text.
* certification (``correctness_pairwise_prompt``): q = ``correct_margin`` if the answer's canonical class
  (``core.canon.get_canonicalizer(task.canon)``) is a reference class of the bundled item, else 0, plus a persistent
  U[0, 0.3] per answer; then as pairwise. Unknown question: hash quality.
* verification (``verification_prompt``, issues 22 and 30: "does this answer correctly answer the question?"), with a
  realistic, imperfect calibration: each answer has a persistent ease u ~ U[0, 1] (hash of question and answer); the
  judge believes the truth (the answer's canonical class is a reference class of the bundled item) with probability
  q(u) = 1 − ½(1 − u)^``verify_skill`` and the opposite otherwise (persistent hash), and states the confidence
  c(u) = 1 − ½(1 − u)^``verify_overconfidence`` in its belief: P(yes) = c for a "yes" belief, 1 − c for a "no" —
  the log-probs carry it. c ≥ q (overconfident) but ordered like q, so confident verdicts are the right ones more
  often (mean agreement 1 − ½/(1 + skill) ≈ 0.86 at the defaults; ≥ 0.9 on its 87% most confident). The reply is the
  belief (the argmax, as at temperature 0). Unknown question: truth from a hash (a coin flip).
* ``invalid_rate``: share of unparseable judge replies. Surface forms: mostly "A"/"B"/"4", sometimes "A.",
  "**A**", "Response A", "Score: 4", "4/5".

Log-probabilities: a reply is one of finitely many token sequences (each surface form × each verdict or score, and
the unparseable sentences), whose probabilities follow from the formulas above; the server reports each token's
log-prob and alternatives from that distribution (:func:`relgate_tui.demo.tokens.token_choices`). The verdict or
score token the judge sampled is therefore drawn from exactly the distribution whose log-probs it reports: "4" in
"4", " 4" in "Score: 4" (with " 1" … " 5" as alternatives), "4" in "**4**" and "4/5".
'''

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from random import Random

from relgate_tui.demo.catalogue import ItemCatalogue, bundled_catalogue, human_quality_index
from relgate_tui.demo.forms import cumulative, pick
from relgate_tui.demo.hashing import gauss, unit
from relgate_tui.demo.items import LETTERS, SimItem, mcq_index, plain_number
from relgate_tui.demo.tokens import SimCompletion, split_tokens, token_choices
from relgate_tui.engine.judging import prompts as judge_prompts

__all__ = [
    "INVALID_GEVAL",
    "INVALID_SCORES",
    "INVALID_VERDICTS",
    "JUDGE_MODEL",
    "JudgeKnobs",
    "geval_completion",
    "judge_completion",
    "judge_reply",
    "latent_quality",
    "pair_effect",
    "score_completion",
    "score_probabilities",
    "verdict_completion",
]

JUDGE_MODEL = "sim-judge"


@dataclass(frozen=True)
class JudgeKnobs:
    """Knobs of the simulated judge (module docstring gives the model)."""

    position_bias: float = 0.15
    noise_sd: float = 0.5
    pair_sd: float = 0.3
    direct_item_sd: float = 0.5
    direct_sd: float = 0.4
    correct_margin: float = 1.5
    invalid_rate: float = 0.01
    verify_skill: float = 2.5
    verify_overconfidence: float = 4.0


def latent_quality(text: str, criterion: str, human: dict[tuple[str, str], float] | None = None) -> float:
    """The judge's latent 1–5 quality of ``text``: the human mean if known, else U[1.5, 4.5] from a hash."""
    index = human_quality_index() if human is None else human
    found = index.get((criterion.casefold(), text))
    if found is not None:
        return found
    return 1.5 + 3.0 * unit("quality", criterion.casefold(), text)


def pair_effect(text_a: str, text_b: str, scope: str, knobs: JudgeKnobs) -> float:
    """Persistent antisymmetric pair effect g(A, B) = −g(B, A) ~ N(0, pair_sd²)."""
    if text_a == text_b or knobs.pair_sd == 0.0:
        return 0.0
    low, high = sorted((text_a, text_b))
    effect = knobs.pair_sd * gauss("pair", scope, low, high)
    return effect if text_a == low else -effect


VERDICT_FORMS: tuple[tuple[str, int], ...] = (
    ("{v}", 85), ("{v}.", 5), ("**{v}**", 4), ("{noun} {v}", 3), ("Answer: {v}", 3),
)
SCORE_FORMS: tuple[tuple[str, int], ...] = (("{s}", 85), ("Score: {s}", 6), ("{s}/{k}", 5), ("**{s}**", 4))
_VERDICT_TABLE = cumulative(VERDICT_FORMS)
_SCORE_TABLE = cumulative(SCORE_FORMS)
INVALID_VERDICTS = ("Both responses are equally good.", "I cannot decide between them.")
INVALID_SCORES = ("It is decent overall.", "Somewhere between fair and good.")


# ----------------------------------------------------------------------------------------------- replies + log-probs


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def score_probabilities(mu: float, sd: float, scale: int = 5) -> tuple[float, ...]:
    """P(clip(round(mu + sd·ε), 1, scale) = k) for k = 1..scale, ε ~ N(0, 1) (sd = 0: a point mass)."""
    if sd <= 0.0:
        hit = min(scale, max(1, round(mu)))
        return tuple(1.0 if k == hit else 0.0 for k in range(1, scale + 1))
    probs = []
    for k in range(1, scale + 1):
        upper = 1.0 if k == scale else _phi((k + 0.5 - mu) / sd)
        lower = 0.0 if k == 1 else _phi((k - 0.5 - mu) / sd)
        probs.append(max(0.0, upper - lower))
    return tuple(probs)


def _completion(text: str, replies: list[tuple[str, float]]) -> SimCompletion:
    tokens = token_choices([(split_tokens(t), p) for t, p in replies], split_tokens(text))
    return SimCompletion(text, None, False, sum(t.logprob for t in tokens), tokens)


def _form_weights(forms: Sequence[tuple[str, int]]) -> list[tuple[str, float]]:
    total = float(sum(w for _, w in forms))
    return [(f, w / total) for f, w in forms]


def score_completion(rng: Random, mu: float, sd: float, invalid_rate: float, scale: int = 5) -> SimCompletion:
    """A direct-scoring reply: unparseable with probability ``invalid_rate``, else
    ``clip(round(mu + sd·ε), 1, scale)`` in a surface form, with its exact token log-probs.

    Draw order (kept so that seeded answers never change): invalid?, [which invalid sentence], ε, surface form."""
    probs = score_probabilities(mu, sd, scale)
    replies = [(t, invalid_rate / len(INVALID_SCORES)) for t in INVALID_SCORES]
    replies += [
        (form.format(s=k, k=scale), (1.0 - invalid_rate) * w * p)
        for form, w in _form_weights(SCORE_FORMS)
        for k, p in zip(range(1, scale + 1), probs, strict=True)
    ]
    if rng.random() < invalid_rate:
        return _completion(INVALID_SCORES[int(rng.random() * len(INVALID_SCORES))], replies)
    score = round(mu + sd * rng.gauss(0.0, 1.0))
    text = pick(_SCORE_TABLE, rng).format(s=min(scale, max(1, score)), k=scale)
    return _completion(text, replies)


GEVAL_FORMS: tuple[tuple[str, int], ...] = (("Score: {s}", 85), ("Score (1-{k}): {s}", 10), ("**Score:** {s}", 5))
_GEVAL_TABLE = cumulative(GEVAL_FORMS)
INVALID_GEVAL = "I cannot settle on a single score."
_GEVAL_VERDICTS = ("loses the thread more than once", "is mostly easy to follow", "holds together well")


def geval_reasoning(criterion: str, text: str, mu: float, scale: int) -> str:
    """The fixed reasoning of a G-Eval answer: three steps quoting in-scale numbers (never the score's cue)."""
    events = 2 + int(unit("geval-events", criterion.casefold(), text) * 3)
    verdict = _GEVAL_VERDICTS[min(2, max(0, int(3 * (mu - 1) / max(1, scale - 1))))]
    return (f"Step 1: The input sets the task; a good response must follow it.\n"
            f"Step 2: The response has {events} main events and {verdict}.\n"
            f"Step 3: Weighing step 2 against the {criterion} criterion.\n")


def geval_completion(rng: Random, reasoning: str, mu: float, sd: float, invalid_rate: float,
                     scale: int) -> SimCompletion:
    """A G-Eval answer (module docstring); draw order: invalid?, ε, surface form."""
    probs = score_probabilities(mu, sd, scale)
    replies = [(reasoning + INVALID_GEVAL, invalid_rate)]
    replies += [(reasoning + form.format(s=k, k=scale), (1.0 - invalid_rate) * w * p)
                for form, w in _form_weights(GEVAL_FORMS) for k, p in zip(range(1, scale + 1), probs, strict=True)]
    if rng.random() < invalid_rate:
        return _completion(reasoning + INVALID_GEVAL, replies)
    score = min(scale, max(1, round(mu + sd * rng.gauss(0.0, 1.0))))
    return _completion(reasoning + pick(_GEVAL_TABLE, rng).format(s=score, k=scale), replies)


def verdict_completion(utility_a: float, utility_b: float, rng: Random, knobs: JudgeKnobs, noun: str) -> SimCompletion:
    """A pairwise reply: "A" when q_A + bias + noise·ε₁ ≥ q_B + noise·ε₂, in a surface form, with its log-probs."""
    margin = utility_a + knobs.position_bias - utility_b
    if knobs.noise_sd > 0.0:
        p_a = _phi(margin / (knobs.noise_sd * math.sqrt(2.0)))
    else:
        p_a = 1.0 if margin >= 0.0 else 0.0
    invalid_rate = knobs.invalid_rate
    replies = [(t, invalid_rate / len(INVALID_VERDICTS)) for t in INVALID_VERDICTS]
    replies += [
        (form.format(v=v, noun=noun), (1.0 - invalid_rate) * w * p)
        for form, w in _form_weights(VERDICT_FORMS)
        for v, p in (("A", p_a), ("B", 1.0 - p_a))
    ]
    if rng.random() < invalid_rate:
        return _completion(INVALID_VERDICTS[int(rng.random() * len(INVALID_VERDICTS))], replies)
    first = utility_a + knobs.position_bias + knobs.noise_sd * rng.gauss(0.0, 1.0)
    second = utility_b + knobs.noise_sd * rng.gauss(0.0, 1.0)
    text = pick(_VERDICT_TABLE, rng).format(v="A" if first >= second else "B", noun=noun)
    return _completion(text, replies)


# ----------------------------------------------------------------------------------------------- sim-judge


def _canonical_classes(task: object, task_item: object, answer_a: str, answer_b: str) -> tuple[bool, bool] | None:
    """Whether each answer's canonical class is a reference class (None if the canonicalizer is unavailable)."""
    try:
        from relgate_tui.core.canon import get_canonicalizer
        from relgate_tui.core.types import INVALID
    except ImportError:
        return None
    canon = get_canonicalizer(getattr(task, "canon", "") or "text")
    choices = tuple(getattr(task_item, "choices", ()) or ())
    references = {canon(a, choices) for a in getattr(task_item, "answers", ())} - {INVALID}
    if not references:  # a task without references (arithmetic-unreferenced): the simulator's own answer decides
        return None
    return canon(answer_a, choices) in references, canon(answer_b, choices) in references


def _plain_match(sim_item: SimItem, answer: str) -> bool:
    """Fallback correctness check (when ``core.canon`` is unavailable) with the simulator's own normalisation."""
    if sim_item.kind == "mcq":
        index = mcq_index(answer, sim_item.choices)
        return index is not None and LETTERS[index] == sim_item.answer
    if sim_item.kind == "numeric":  # the last number in the text
        numbers = re.findall(r"-?\d[\d,]*(?:\.\d+)?", answer.replace("\u2212", "-"))
        return bool(numbers) and plain_number(numbers[-1]) == sim_item.answer
    return answer.strip().casefold() == sim_item.answer.casefold()


def correctness_completion(
    prompt: judge_prompts.CorrectnessPrompt, rng: Random, knobs: JudgeKnobs, catalogue: ItemCatalogue | None
) -> SimCompletion:
    """The reply to a certification prompt ("which answer is correct?"; module docstring)."""
    a, b = prompt.answer_a, prompt.answer_b
    found = (catalogue or bundled_catalogue()).by_question.get(prompt.question)
    if found is None:
        q_a = latent_quality(a, "correctness:" + prompt.question, {})
        q_b = latent_quality(b, "correctness:" + prompt.question, {})
    else:
        sim_item, task, task_item = found
        verdicts = _canonical_classes(task, task_item, a, b)
        if verdicts is None:
            verdicts = (_plain_match(sim_item, a), _plain_match(sim_item, b))
        q_a = knobs.correct_margin * verdicts[0] + 0.3 * unit("answer-quality", prompt.question, a)
        q_b = knobs.correct_margin * verdicts[1] + 0.3 * unit("answer-quality", prompt.question, b)
    g = pair_effect(a, b, "correctness:" + prompt.question, knobs)
    return verdict_completion(q_a + g, q_b, rng, knobs, "Answer")


_YES_NO_FORMS: tuple[tuple[str, int], ...] = (("{v}", 6), ("{v}.", 3), ("**{v}**", 1))


def verification_completion(
    prompt: judge_prompts.VerificationPrompt, rng: Random, knobs: JudgeKnobs, catalogue: ItemCatalogue | None
) -> SimCompletion:
    """The reply to a verification prompt ("yes"/"no"; module docstring)."""
    found = (catalogue or bundled_catalogue()).by_question.get(prompt.question)
    if found is None:
        truth = unit("verify-truth", prompt.question, prompt.answer) < 0.5
    else:
        sim_item, task, task_item = found
        verdicts = _canonical_classes(task, task_item, prompt.answer, prompt.answer)
        truth = _plain_match(sim_item, prompt.answer) if verdicts is None else verdicts[0]
    ease = unit("verify-ease", prompt.question, prompt.answer)
    right = unit("verify-belief", prompt.question, prompt.answer) < 1.0 - 0.5 * (1.0 - ease) ** knobs.verify_skill
    believes = truth if right else not truth
    stated = 1.0 - 0.5 * (1.0 - ease) ** knobs.verify_overconfidence
    p_yes = stated if believes else 1.0 - stated
    invalid_rate = knobs.invalid_rate
    replies = [(t, invalid_rate / len(INVALID_VERDICTS)) for t in INVALID_VERDICTS]
    replies += [(form.format(v=v), (1.0 - invalid_rate) * w * p)
                for form, w in _form_weights(_YES_NO_FORMS) for v, p in (("Yes", p_yes), ("No", 1.0 - p_yes))]
    if rng.random() < invalid_rate:
        return _completion(INVALID_VERDICTS[int(rng.random() * len(INVALID_VERDICTS))], replies)
    return _completion(pick(_YES_NO_TABLE, rng).format(v="Yes" if believes else "No"), replies)


_YES_NO_TABLE = cumulative(_YES_NO_FORMS)

UNRECOGNISED = "I am a simulated judge: send me a prompt built by relgate_tui.engine.judging.prompts."


def judge_completion(
    messages: object, rng: Random, knobs: JudgeKnobs, catalogue: ItemCatalogue | None = None
) -> SimCompletion:
    """The simulated judge's reply to a judge prompt built by :mod:`judge_prompts`, with token log-probs."""
    from relgate_tui.demo import recognise  # typo / newline variants of relgate's own prompts too

    pairwise = recognise.read_pairwise_prompt(messages)
    if pairwise is not None and recognise.pairwise_variant_kind(pairwise, messages) == "paraphrase":
        pairwise = None  # sim-judge reads relgate's prompts and their typo / newline variants, nothing else
    if pairwise is not None:
        scope = pairwise.criterion.casefold()
        q_a = latent_quality(pairwise.text_a, pairwise.criterion)
        q_b = latent_quality(pairwise.text_b, pairwise.criterion)
        g = pair_effect(pairwise.text_a, pairwise.text_b, scope, knobs)
        return verdict_completion(q_a + g, q_b, rng, knobs, "Response")
    direct = judge_prompts.parse_direct_prompt(messages)
    if direct is not None:
        quality = latent_quality(direct.text, direct.criterion)
        persistent = knobs.direct_item_sd * gauss("direct", direct.criterion.casefold(), direct.text)
        return score_completion(rng, quality + persistent, knobs.direct_sd, knobs.invalid_rate)
    from relgate_tui.engine.judging import geval  # the other built-in direct prompts (G-Eval, scale 1–K)

    builtin = geval.parse_prompt(messages)
    if builtin is not None:
        quality = latent_quality(builtin.text, builtin.criterion)
        mu5 = quality + knobs.direct_item_sd * gauss("direct", builtin.criterion.casefold(), builtin.text)
        stretch = (builtin.scale - 1) / 4.0
        mu, sd = 1.0 + (mu5 - 1.0) * stretch, knobs.direct_sd * stretch
        if builtin.prompt == geval.GEVAL:
            reasoning = geval_reasoning(builtin.criterion, builtin.text, mu, builtin.scale)
            return geval_completion(rng, reasoning, mu, sd, knobs.invalid_rate, builtin.scale)
        return score_completion(rng, mu, sd, knobs.invalid_rate, builtin.scale)
    correctness = judge_prompts.parse_correctness_prompt(messages)
    if correctness is not None:
        return correctness_completion(correctness, rng, knobs, catalogue)
    verification = judge_prompts.parse_verification_prompt(messages)
    if verification is not None:
        return verification_completion(verification, rng, knobs, catalogue)
    scoring = recognise.read_scoring_prompt(messages)  # a typo / newline variant of the direct prompt
    if scoring is not None and recognise.variant_kind(scoring) in ("newline", "typo"):
        quality = latent_quality(scoring.text, scoring.criterion)
        mu5 = quality + knobs.direct_item_sd * gauss("direct", scoring.criterion.casefold(), scoring.text)
        stretch = (scoring.scale - 1) / 4.0
        return score_completion(rng, 1.0 + (mu5 - 1.0) * stretch, knobs.direct_sd * stretch, knobs.invalid_rate,
                                scoring.scale)
    return SimCompletion(UNRECOGNISED, None, False, -0.05)


def judge_reply(messages: object, rng: Random, knobs: JudgeKnobs, catalogue: ItemCatalogue | None = None) -> str:
    """The simulated judge's reply text (:func:`judge_completion` without the log-probs)."""
    return judge_completion(messages, rng, knobs, catalogue).text
