"""Simulated models for the demo endpoint (SPEC §4.6): known per-item quality, realistic answers, a noisy judge.

Everything here is a pure function of a seeded :class:`random.Random` and of hashes, except the two lazily built,
process-wide indexes (:func:`bundled_catalogue`, :func:`human_quality_index`) that read the bundled tasks and the
bundled judge-audit data through ``relgate_tui.engine.tasks`` / ``prompts`` / ``judge_data``.

Answer models ("sim-strong", "sim-mid", "sim-weak")
--------------------------------------------------
For a model m and an item with id i, the *true* probability that one sampled answer is correct is
``p* = true_p_star(m, i)``, drawn once from a mixture of uniforms by hashing (m, i) — no state, no RNG:

=============  ==========================================================================  ==========  ========
model          p* mixture  (weight: range)                                                 mean p*     invalid
=============  ==========================================================================  ==========  ========
sim-strong     0.90: U[0.95, 0.99]   0.07: U[0.40, 0.80] (hard)   0.03: U[0.00, 0.10]      ≈ 0.92      1%
sim-mid        0.80: U[0.65, 0.97]   0.15: U[0.30, 0.65]          0.05: U[0.00, 0.15]      ≈ 0.72      3%
sim-weak       0.35: U[0.65, 0.97]   0.35: U[0.30, 0.65]          0.30: exactly 0 (unsolvable) ≈ 0.45   6%
=============  ==========================================================================  ==========  ========

One sample is: correct with probability p*; unparseable ("I'm not sure.", canonicalizes to INVALID) with
probability ``min(invalid, 1 − p*)``; otherwise one of the item's 1–3 *distractors* (plausible wrong answers:
numeric off-by-one / off-by-ten / adjacent-digit swap / ×10 / dropped digit; MCQ other letters), with the first
distractor getting a share U[0.5, 0.85] of the wrong mass, so on hard items the mode can be wrong. The distractor
*values* depend on the item only (models share mistakes); their count and weights on (model, item).
:func:`answer_distribution` returns the exact class distribution, so tests know every probability.

The chosen answer is then written in a random surface form (:data:`NUMERIC_FORMS`, :data:`MCQ_FORMS`): "The answer
is 42.", "#### 42", "42.0", "**42**", "I think it's 42", a line of reasoning then the number, "\\boxed{42}",
"42 (since 6 * 7)", "Answer: 42", "1,234", Unicode minus; MCQ "B", "(B)", "The answer is B.", "B. <option>",
"<option>" (only when the option text alone is unambiguous: ≥ 2 words of ≥ 3 letters, no stand-alone capital, not
contained in / containing another option), "Answer: B", "**B**". Every form keeps the answer's canonical class
(tested against the core canonicalizer on every bundled item), so p* is the probability that the *canonicalized*
sample is a reference class. Items whose content appears twice in a task are served under the first item's id.

Items are recognised by the exact content of the last user message, as produced by
``relgate_tui.engine.prompts.item_messages(item)`` for the bundled tasks (:class:`ItemCatalogue`). Unknown content:
if it contains simple arithmetic "a + b", "a - b", "a * b" (also "plus", "minus", "times") that is evaluated as the
correct answer; if it has lettered options ("A. ...", "B. ...") a hash-chosen letter is "correct"; otherwise a
hash-chosen number 1–100 is. Unknown items get the id ``unknown_item_id(content)`` and a p* like any other item.
``temperature`` / ``top_p`` are ignored: the distribution stays fixed so that p* stays known.

Simulated judge ("sim-judge")
-----------------------------
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
  (z(text) persistent per text and criterion, ε per call).
* certification (``correctness_pairwise_prompt``): q = ``correct_margin`` if the answer's canonical class
  (``core.canon.get_canonicalizer(task.canon)``) is a reference class of the bundled item, else 0, plus a persistent
  U[0, 0.3] per answer; then as pairwise. Unknown question: hash quality.
* ``invalid_rate``: share of unparseable judge replies. Surface forms: mostly "A"/"B"/"4", sometimes "A.",
  "**A**", "Response A", "Score: 4", "4/5".
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from random import Random

from relgate_tui.engine import judge_prompts

__all__ = [
    "ANSWER_MODELS",
    "JUDGE_MODEL",
    "MODEL_DESCRIPTIONS",
    "SIM_MODELS",
    "AnswerDistribution",
    "ItemCatalogue",
    "JudgeKnobs",
    "ModelProfile",
    "PROFILES",
    "SimCompletion",
    "SimItem",
    "answer_distribution",
    "bundled_catalogue",
    "distractor_values",
    "human_quality_index",
    "judge_reply",
    "render_answer",
    "request_rng",
    "sample_completion",
    "sim_item_from_task_item",
    "simulate_chat",
    "true_invalid_prob",
    "true_p_star",
    "unknown_item",
    "unknown_item_id",
]


# ----------------------------------------------------------------------------------------------- hashing helpers


def _h64(*parts: object) -> int:
    """A stable 64-bit hash of the parts (never Python's salted ``hash``)."""
    data = "\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def _units(count: int, *parts: object) -> tuple[float, ...]:
    """``count`` (≤ 8) stable uniform numbers in [0, 1) from one hash of the parts."""
    data = "\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
    digest = hashlib.blake2b(data, digest_size=8 * count).digest()
    return tuple(int.from_bytes(digest[8 * k : 8 * k + 8], "big") / 2.0**64 for k in range(count))


def _unit(*parts: object) -> float:
    """A stable uniform number in [0, 1) from the parts."""
    return _h64(*parts) / 2.0**64


def _gauss(*parts: object) -> float:
    """A stable standard normal draw from the parts (Box–Muller on two hash uniforms)."""
    u1 = max(_unit(*parts, "g1"), 1e-300)
    u2 = _unit(*parts, "g2")
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


# ----------------------------------------------------------------------------------------------- model profiles


@dataclass(frozen=True)
class ModelProfile:
    """How good a simulated model is: a mixture of uniform ranges for p* and its unparseable-answer rate."""

    name: str
    mixture: tuple[tuple[float, float, float], ...]  # (weight, low, high); weights sum to 1
    invalid: float
    description: str

    def mean_p_star(self) -> float:
        return sum(w * (lo + hi) / 2.0 for w, lo, hi in self.mixture)


PROFILES: dict[str, ModelProfile] = {
    p.name: p
    for p in (
        ModelProfile(
            "sim-strong",
            ((0.90, 0.95, 0.99), (0.07, 0.40, 0.80), (0.03, 0.00, 0.10)),
            0.01,
            "SIMULATED strong model: p* mostly 0.95-0.99, a few hard items",
        ),
        ModelProfile(
            "sim-mid",
            ((0.80, 0.65, 0.97), (0.15, 0.30, 0.65), (0.05, 0.00, 0.15)),
            0.03,
            "SIMULATED middling model: p* spread around 0.75",
        ),
        ModelProfile(
            "sim-weak",
            ((0.35, 0.65, 0.97), (0.35, 0.30, 0.65), (0.30, 0.00, 0.00)),
            0.06,
            "SIMULATED weak model: p* around 0.45, 30% of items unsolvable",
        ),
    )
}
ANSWER_MODELS: tuple[str, ...] = tuple(PROFILES)
JUDGE_MODEL = "sim-judge"
SIM_MODELS: tuple[str, ...] = ANSWER_MODELS + (JUDGE_MODEL,)
MODEL_DESCRIPTIONS: dict[str, str] = {name: p.description for name, p in PROFILES.items()} | {
    JUDGE_MODEL: "SIMULATED pairwise/Likert judge with position bias and noise",
}


def _profile(model: str) -> ModelProfile:
    try:
        return PROFILES[model]
    except KeyError:
        raise ValueError(f"unknown simulated model {model!r} (known: {', '.join(ANSWER_MODELS)})") from None


def true_p_star(model: str, item_id: str) -> float:
    """The known probability that one answer of ``model`` to item ``item_id`` is correct (see module docstring)."""
    profile = _profile(model)
    u_component, u_value = _units(2, "p_star", model, item_id)
    cumulative = 0.0
    for weight, low, high in profile.mixture:
        cumulative += weight
        if u_component < cumulative:
            return low + (high - low) * u_value
    _, low, high = profile.mixture[-1]
    return low + (high - low) * u_value


def true_invalid_prob(model: str, item_id: str) -> float:
    """Probability that one answer is unparseable: ``min(invalid_rate(model), 1 − p*)``."""
    return min(_profile(model).invalid, 1.0 - true_p_star(model, item_id))


# ----------------------------------------------------------------------------------------------- items


@dataclass(frozen=True)
class SimItem:
    """What the simulator knows about a question.

    ``answer`` is the correct value in the simulator's plain form: a number string ("1234", "-5", "2.5"), a letter
    ("B") for MCQ, or text. ``operands`` = (a, symbol, b) when the question shows simple arithmetic.
    """

    item_id: str
    kind: str  # "numeric" | "mcq" | "text"
    answer: str
    choices: tuple[str, ...] = ()
    operands: tuple[str, str, str] | None = None
    task: str = ""


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ARITH = re.compile(
    r"(?<![\w.,])(-?\d+)\s*(\+|-|\*|×|(?<=\s)x(?=\s)|plus|minus|times|multiplied by)\s*(-?\d+)(?!\w|\.\d)",
    re.IGNORECASE,
)
_OPTION_LINE = re.compile(r"^\s*\(?([A-Z])[.)]\s+(.+?)\s*$", re.MULTILINE)


def _plain_number(text: str) -> str | None:
    """A reference answer as a plain number string ("1,234" → "1234", "18.0" → "18"), or None if not a number."""
    cleaned = text.strip().replace(",", "").replace("\u2212", "-").lstrip("$").rstrip(".")
    if not cleaned:
        return None
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def _arith_operands(text: str) -> tuple[str, str, str] | None:
    match = _ARITH.search(text)
    if match is None:
        return None
    symbol = {"plus": "+", "minus": "-", "times": "*", "multiplied by": "*", "×": "*", "x": "*"}.get(
        match.group(2).lower(), match.group(2)
    )
    return match.group(1), symbol, match.group(3)


def _evaluate(operands: tuple[str, str, str]) -> str:
    a, symbol, b = int(operands[0]), operands[1], int(operands[2])
    return str(a + b if symbol == "+" else a - b if symbol == "-" else a * b)


def _mcq_index(answer: str, choices: Sequence[str]) -> int | None:
    stripped = answer.strip().strip("()").rstrip(".").strip()
    if len(stripped) == 1 and stripped.upper() in _LETTERS[: len(choices)]:
        return _LETTERS.index(stripped.upper())
    folded = answer.strip().casefold()
    for index, choice in enumerate(choices):
        if choice.strip().casefold() == folded:
            return index
    return None


def sim_item_from_task_item(item, canon: str = "", task: str = "") -> SimItem:
    """Build the simulator's view of a ``relgate_tui.engine.tasks.TaskItem`` (first reference answer is the target).

    MCQ (choices present and the reference is a letter or an option's text) → kind "mcq"; a numeric reference (or a
    "numeric" canonicalizer) → "numeric"; anything else → "text". Items without a reference get a hash-chosen one.
    """
    choices = tuple(item.choices)
    question = item.question or ""
    reference = item.answers[0] if item.answers else ""
    operands = _arith_operands(question)
    if choices and not canon.startswith("numeric"):
        index = _mcq_index(reference, choices) if reference else None
        if index is None and not reference:
            index = _h64("mcq-answer", item.id) % len(choices)
        if index is not None:
            return SimItem(item.id, "mcq", _LETTERS[index], choices, None, task)
    number = _plain_number(reference) if reference else None
    if number is None and not reference:
        number = _evaluate(operands) if operands else str(1 + _h64("number-answer", item.id) % 100)
    if number is not None and (canon.startswith("numeric") or not canon or canon == "text" or not reference):
        return SimItem(item.id, "numeric", number, choices, operands, task)
    return SimItem(item.id, "text", reference.strip(), choices, None, task)


def unknown_item_id(content: str) -> str:
    """The item id the simulator uses for a question it does not recognise."""
    return "unknown-" + hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def unknown_item(content: str) -> SimItem:
    """The simulator's view of an unrecognised question (see module docstring)."""
    item_id = unknown_item_id(content)
    operands = _arith_operands(content)
    if operands is not None:
        return SimItem(item_id, "numeric", _evaluate(operands), (), operands)
    options = _OPTION_LINE.findall(content)
    letters = "".join(letter for letter, _ in options)
    if len(options) >= 2 and _LETTERS.startswith(letters):
        choices = tuple(text for _, text in options)
        return SimItem(item_id, "mcq", _LETTERS[_h64("mcq-answer", item_id) % len(choices)], choices)
    return SimItem(item_id, "numeric", str(1 + _h64("number-answer", item_id) % 100))


# ----------------------------------------------------------------------------------------------- answer distribution


def _numeric_distractor_pool(answer: str) -> list[str]:
    if "." in answer:
        value = Decimal(answer)
        raw = [value + 1, value - 1, value * 10, value / 10, -value]
        return [format(v.normalize(), "f") for v in raw]
    value = int(answer)
    digits = str(abs(value))
    sign = "-" if value < 0 else ""
    pool = [value + 1, value - 1, value + 10, value - 10]
    for pos in range(len(digits) - 1):
        if digits[pos] != digits[pos + 1]:
            swapped = digits[:pos] + digits[pos + 1] + digits[pos] + digits[pos + 2 :]
            if not swapped.startswith("0"):
                pool.append(int(sign + swapped))
    pool.append(value * 10)
    if abs(value) >= 10:
        pool.append(int(sign + digits[:-1]))
    if abs(value) >= 100:
        pool += [value + 100, value - 100]
    return [str(v) for v in pool]


def distractor_values(item: SimItem) -> tuple[str, ...]:
    """Plausible wrong answers for the item, most plausible first (deterministic per item id)."""
    if item.kind == "mcq":
        pool = [letter for letter in _LETTERS[: len(item.choices)] if letter != item.answer]
    elif item.kind == "numeric":
        pool = _numeric_distractor_pool(item.answer)
    else:
        pool = ["I don't know", "none of the above", "it depends", "unknown"]
    unique: list[str] = []
    for value in pool:
        if value != item.answer and value not in unique:
            unique.append(value)
    Random(_h64("distractor-order", item.item_id)).shuffle(unique)
    return tuple(unique[:3])


@dataclass(frozen=True)
class AnswerDistribution:
    """Exact answer-class distribution of one (model, item): ``values[0]`` is the correct one, then distractors.

    ``probs`` sum with ``invalid`` to 1. ``cumulative`` is used to sample (invalid mass last).
    """

    values: tuple[str, ...]
    probs: tuple[float, ...]
    invalid: float
    cumulative: tuple[float, ...] = field(repr=False, default=())

    @property
    def p_star(self) -> float:
        return self.probs[0]


def answer_distribution(model: str, item: SimItem) -> AnswerDistribution:
    """The exact class distribution of ``model``'s answers to ``item`` (see module docstring)."""
    p_star = true_p_star(model, item.item_id)
    invalid = min(_profile(model).invalid, 1.0 - p_star)
    wrong = max(0.0, 1.0 - p_star - invalid)
    pool = distractor_values(item)
    u_count, u_share = _units(2, "distractors", model, item.item_id)
    count = min(len(pool), 1 + int(3 * u_count))
    values = [item.answer]
    probs = [p_star]
    if count and wrong > 0.0:
        first_share = 0.5 + 0.35 * u_share if count > 1 else 1.0
        shares = [first_share] + [(1.0 - first_share) / (count - 1)] * (count - 1) if count > 1 else [1.0]
        values += list(pool[:count])
        probs += [wrong * share for share in shares]
    elif wrong > 0.0:  # no distractor possible (e.g. a one-option MCQ): the wrong mass becomes invalid answers
        invalid += wrong
    cumulative: list[float] = []
    running = 0.0
    for prob in probs:
        running += prob
        cumulative.append(running)
    return AnswerDistribution(tuple(values), tuple(probs), invalid, tuple(cumulative))


# ----------------------------------------------------------------------------------------------- surface forms

_REASONING_LINES = (
    "Let me work through this step by step.",
    "First I combine the quantities, then I check the result.",
    "Working it out carefully, the final value is:",
    "After doing the calculation, I get the following result.",
)
NUMERIC_FORMS: tuple[tuple[str, int], ...] = (
    ("{s}", 10),
    ("The answer is {s}.", 14),
    ("#### {s}", 8),
    ("{s}.0", 5),  # integers only; otherwise plain
    ("**{s}**", 7),
    ("I think it's {s}", 7),
    ("{reasoning}\n{s}", 10),
    ("\\boxed{{{s}}}", 7),
    ("{s} (since {why})", 6),
    ("Answer: {s}", 6),
    ("The answer is {thousands}.", 4),  # |value| >= 1000 only; otherwise the plain sentence
)
MCQ_FORMS: tuple[tuple[str, int], ...] = (
    ("{L}", 14),
    ("({L})", 8),
    ("The answer is {L}.", 14),
    ("{L}. {option}", 8),
    ("{option}", 5),  # only when the option text is a unique, single-line, non-letter string
    ("Answer: {L}", 8),
    ("**{L}**", 6),
)
TEXT_FORMS: tuple[tuple[str, int], ...] = (("{s}", 3), ("{s}.", 1))
INVALID_NUMERIC = ("I'm not sure.", "I don't know the answer to this.", "Sorry, I cannot solve this problem.")
INVALID_MCQ = ("Not sure, sorry.", "Sorry, no idea.", "Hard to say, really.")


def _cumulative(forms: Sequence[tuple[str, int]]) -> tuple[tuple[str, ...], tuple[float, ...]]:
    total = float(sum(weight for _, weight in forms))
    running, cumulative = 0.0, []
    for _, weight in forms:
        running += weight / total
        cumulative.append(running)
    return tuple(f for f, _ in forms), tuple(cumulative)


_NUMERIC_TABLE = _cumulative(NUMERIC_FORMS)
_MCQ_TABLE = _cumulative(MCQ_FORMS)
_TEXT_TABLE = _cumulative(TEXT_FORMS)


def _pick(table: tuple[tuple[str, ...], tuple[float, ...]], rng: Random) -> str:
    forms, cumulative = table
    return forms[min(bisect_right(cumulative, rng.random()), len(forms) - 1)]


def _thousands(value: str) -> str | None:
    if "." in value:
        return None
    number = int(value)
    return f"{number:,}" if abs(number) >= 1000 else None


def _render_numeric(item: SimItem, value: str, rng: Random) -> str:
    form = _pick(_NUMERIC_TABLE, rng)
    if form == "{s}.0" and "." in value:
        form = "{s}"
    thousands = _thousands(value)
    if "{thousands}" in form and thousands is None:
        form = "The answer is {s}."
    if item.operands is not None:
        a, symbol, b = item.operands
        why = f"{a} {symbol} {b} = {value}" if rng.random() < 0.5 else f"{a} {symbol} {b}"
    else:
        why = "that is what the calculation gives"
    shown = value
    if value.startswith("-") and form == "The answer is {s}." and rng.random() < 0.3:
        shown = "\u2212" + value[1:]  # Unicode minus sign
    return form.format(
        s=shown, thousands=thousands, why=why, reasoning=_REASONING_LINES[int(rng.random() * len(_REASONING_LINES))]
    )


def _usable_option(item: SimItem, index: int) -> str | None:
    """The option text if answering with it alone is unambiguous: one line, at least two words of three or more
    letters, no stand-alone capital letter, and neither contains nor is contained in another option (casefolded)."""
    option = " ".join(item.choices[index].split())
    if len(re.findall(r"[^\W\d_]{3,}", option)) < 2 or re.search(r"\b[A-Z]\b", option):
        return None
    folded = option.casefold()
    for other_index, other in enumerate(item.choices):
        other = " ".join(other.split()).casefold()
        if other_index != index and other and (other in folded or folded in other):
            return None
    return option


def _render_mcq(item: SimItem, letter: str, rng: Random) -> str:
    form = _pick(_MCQ_TABLE, rng)
    if form == "{option}":  # the option text alone must identify the option
        option = _usable_option(item, _LETTERS.index(letter))
    elif "{option}" in form:  # "B. <option>": the letter identifies it; any single-line text will do
        option = " ".join(item.choices[_LETTERS.index(letter)].split()) or None
    else:
        option = ""
    if option is None:
        form = "The answer is {L}."
    return form.format(L=letter, option=option)


def render_answer(item: SimItem, value: str | None, rng: Random) -> str:
    """Write answer class ``value`` (None = an unparseable answer) in a random realistic surface form."""
    if value is None:
        if item.kind == "text":
            return ""
        pool = INVALID_MCQ if item.kind == "mcq" else INVALID_NUMERIC
        return pool[int(rng.random() * len(pool))]
    if item.kind == "mcq":
        return _render_mcq(item, value, rng)
    if item.kind == "numeric":
        return _render_numeric(item, value, rng)
    return _pick(_TEXT_TABLE, rng).format(s=value)


# ----------------------------------------------------------------------------------------------- sampling


@dataclass(frozen=True)
class SimCompletion:
    """One simulated answer: the text, its class (None = unparseable), whether correct, and log P(class)."""

    text: str
    value: str | None
    correct: bool
    logprob: float


def request_rng(model: str, content: str, seed: object, index: int, counter: int) -> Random:
    """The RNG for choice ``index`` of a request: from (model, content, seed) or, without a seed, a server counter."""
    if seed is None:
        return Random(_h64(model, content, "counter", counter, index))
    return Random(_h64(model, content, "seed", repr(seed), index))


def sample_completion(model: str, item: SimItem, rng: Random, distribution: AnswerDistribution | None = None) -> SimCompletion:
    """Sample one answer of ``model`` to ``item`` and render it."""
    dist = distribution if distribution is not None else answer_distribution(model, item)
    u = rng.random()
    index = bisect_right(dist.cumulative, u)
    if index < len(dist.values):
        value: str | None = dist.values[index]
        prob = dist.probs[index]
    else:
        value, prob = None, dist.invalid
    text = render_answer(item, value, rng)
    return SimCompletion(text, value, index == 0, math.log(max(prob, 1e-12)))


# ----------------------------------------------------------------------------------------------- catalogue


class ItemCatalogue:
    """Recognises bundled task items by user-message content (and, for the judge, by question text)."""

    def __init__(self, entries: Iterable[tuple[str, SimItem, object, object]] = (), error: str | None = None):
        # entries: (user content, sim item, Task, TaskItem)
        self.by_content: dict[str, SimItem] = {}
        self.by_question: dict[str, tuple[SimItem, object, object]] = {}
        self.error = error
        for content, sim_item, task, task_item in entries:
            self.by_content.setdefault(content, sim_item)
            self.by_question.setdefault(content, (sim_item, task, task_item))
            question = getattr(task_item, "question", "") or ""
            if question:
                self.by_question.setdefault(question, (sim_item, task, task_item))
        self._unknown: dict[str, SimItem] = {}
        self._distributions: dict[tuple[str, str], AnswerDistribution] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.by_content)

    def item_for(self, content: str) -> SimItem:
        """The bundled item with this user-message content, else :func:`unknown_item` (memoised, bounded)."""
        found = self.by_content.get(content)
        if found is not None:
            return found
        found = self._unknown.get(content)
        if found is None:
            found = unknown_item(content)
            with self._lock:
                if len(self._unknown) > 20_000:
                    self._unknown.clear()
                self._unknown[content] = found
        return found

    def distribution(self, model: str, item: SimItem) -> AnswerDistribution:
        """Memoised :func:`answer_distribution`."""
        key = (model, item.item_id)
        found = self._distributions.get(key)
        if found is None:
            found = answer_distribution(model, item)
            with self._lock:
                if len(self._distributions) > 100_000:
                    self._distributions.clear()
                self._distributions[key] = found
        return found

    @classmethod
    def from_tasks(cls, tasks: Iterable[object], item_messages) -> ItemCatalogue:
        """Index ``tasks`` (``engine.tasks.Task``) using ``item_messages(item)`` for the user content."""
        entries = []
        for task in tasks:
            canon = getattr(task, "canon", "") or ""
            name = getattr(task, "name", "")
            for task_item in task.items:
                messages = item_messages(task_item)
                content = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), None)
                if isinstance(content, str):
                    entries.append((content, sim_item_from_task_item(task_item, canon, name), task, task_item))
        return cls(entries)


_CATALOGUE: ItemCatalogue | None = None
_CATALOGUE_LOCK = threading.Lock()


def _load_bundled_catalogue() -> ItemCatalogue:
    try:
        from relgate_tui.engine.prompts import item_messages
        from relgate_tui.engine.tasks import bundled_tasks, load_task
    except ImportError as exc:
        return ItemCatalogue(error=f"bundled tasks unavailable: {exc}")
    try:
        tasks = []
        for bundled in bundled_tasks():
            tasks.append(load_task(getattr(bundled, "name", bundled)))
        return ItemCatalogue.from_tasks(tasks, item_messages)
    except Exception as exc:  # the demo must keep serving (with unknown-question answers) if a task fails to load
        return ItemCatalogue(error=f"bundled tasks failed to load: {exc}")


def bundled_catalogue() -> ItemCatalogue:
    """The process-wide catalogue of bundled task items (built once, on first use). ``.error`` says why if empty."""
    global _CATALOGUE
    if _CATALOGUE is None:
        with _CATALOGUE_LOCK:
            if _CATALOGUE is None:
                _CATALOGUE = _load_bundled_catalogue()
    return _CATALOGUE


# ----------------------------------------------------------------------------------------------- judge


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


_HUMAN: dict[tuple[str, str], float] | None = None
_HUMAN_LOCK = threading.Lock()


def _items_of(obj: object, *names: str) -> list:
    for name in names:
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if value is not None:
            return list(value.values()) if isinstance(value, dict) and name != "scores" else list(value)
    return []


def _field(obj: object, *names: str) -> object:
    for name in names:
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if value is not None:
            return value
    return None


def _load_human_quality() -> dict[tuple[str, str], float]:
    try:
        from relgate_tui.engine import judge_data
    except ImportError:
        return {}
    index: dict[tuple[str, str], float] = {}
    try:
        for bundled in judge_data.bundled_audit_sets():
            name = bundled if isinstance(bundled, str) else _field(bundled, "name")
            audit = judge_data.load_audit_set(name)
            for audit_input in _items_of(audit, "inputs", "items"):
                for candidate in _items_of(audit_input, "candidates"):
                    text = _field(candidate, "text")
                    scores = _field(candidate, "scores", "human_scores", "human")
                    if not isinstance(text, str) or not isinstance(scores, dict):
                        continue
                    for criterion, value in scores.items():
                        if isinstance(value, (int, float)) and not math.isnan(value):
                            index.setdefault((str(criterion).casefold(), text), float(value))
    except Exception:  # human scores are an optional refinement; the hash quality is the documented fallback
        return index
    return index


def human_quality_index() -> dict[tuple[str, str], float]:
    """{(criterion casefolded, candidate text): human mean score} from the bundled judge-audit sets (built once)."""
    global _HUMAN
    if _HUMAN is None:
        with _HUMAN_LOCK:
            if _HUMAN is None:
                _HUMAN = _load_human_quality()
    return _HUMAN


def latent_quality(text: str, criterion: str, human: dict[tuple[str, str], float] | None = None) -> float:
    """The judge's latent 1–5 quality of ``text``: the human mean if known, else U[1.5, 4.5] from a hash."""
    index = human_quality_index() if human is None else human
    found = index.get((criterion.casefold(), text))
    if found is not None:
        return found
    return 1.5 + 3.0 * _unit("quality", criterion.casefold(), text)


def _pair_effect(text_a: str, text_b: str, scope: str, knobs: JudgeKnobs) -> float:
    """Persistent antisymmetric pair effect g(A, B) = −g(B, A) ~ N(0, pair_sd²)."""
    if text_a == text_b or knobs.pair_sd == 0.0:
        return 0.0
    low, high = sorted((text_a, text_b))
    effect = knobs.pair_sd * _gauss("pair", scope, low, high)
    return effect if text_a == low else -effect


_VERDICT_FORMS = _cumulative((("{v}", 85), ("{v}.", 5), ("**{v}**", 4), ("{noun} {v}", 3), ("Answer: {v}", 3)))
_SCORE_FORMS = _cumulative((("{s}", 85), ("Score: {s}", 6), ("{s}/5", 5), ("**{s}**", 4)))
INVALID_VERDICTS = ("Both responses are equally good.", "I cannot decide between them.")
INVALID_SCORES = ("It is decent overall.", "Somewhere between fair and good.")


def _pairwise_verdict(utility_a: float, utility_b: float, rng: Random, knobs: JudgeKnobs, noun: str) -> str:
    if rng.random() < knobs.invalid_rate:
        return INVALID_VERDICTS[int(rng.random() * len(INVALID_VERDICTS))]
    first = utility_a + knobs.position_bias + knobs.noise_sd * rng.gauss(0.0, 1.0)
    second = utility_b + knobs.noise_sd * rng.gauss(0.0, 1.0)
    return _pick(_VERDICT_FORMS, rng).format(v="A" if first >= second else "B", noun=noun)


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
    return canon(answer_a, choices) in references, canon(answer_b, choices) in references


def _plain_match(sim_item: SimItem, answer: str) -> bool:
    """Fallback correctness check (when ``core.canon`` is unavailable) with the simulator's own normalisation."""
    if sim_item.kind == "mcq":
        index = _mcq_index(answer, sim_item.choices)
        return index is not None and _LETTERS[index] == sim_item.answer
    if sim_item.kind == "numeric":  # the last number in the text
        numbers = re.findall(r"-?\d[\d,]*(?:\.\d+)?", answer.replace("\u2212", "-"))
        return bool(numbers) and _plain_number(numbers[-1]) == sim_item.answer
    return answer.strip().casefold() == sim_item.answer.casefold()


def judge_reply(messages: object, rng: Random, knobs: JudgeKnobs, catalogue: ItemCatalogue | None = None) -> str:
    """The simulated judge's reply to a judge prompt built by :mod:`judge_prompts` (module docstring)."""
    pairwise = judge_prompts.parse_pairwise_prompt(messages)
    if pairwise is not None:
        scope = pairwise.criterion.casefold()
        q_a = latent_quality(pairwise.text_a, pairwise.criterion)
        q_b = latent_quality(pairwise.text_b, pairwise.criterion)
        g = _pair_effect(pairwise.text_a, pairwise.text_b, scope, knobs)
        return _pairwise_verdict(q_a + g, q_b, rng, knobs, "Response")
    direct = judge_prompts.parse_direct_prompt(messages)
    if direct is not None:
        if rng.random() < knobs.invalid_rate:
            return INVALID_SCORES[int(rng.random() * len(INVALID_SCORES))]
        quality = latent_quality(direct.text, direct.criterion)
        persistent = knobs.direct_item_sd * _gauss("direct", direct.criterion.casefold(), direct.text)
        score = round(quality + persistent + knobs.direct_sd * rng.gauss(0.0, 1.0))
        return _pick(_SCORE_FORMS, rng).format(s=min(5, max(1, score)))
    correctness = judge_prompts.parse_correctness_prompt(messages)
    if correctness is not None:
        a, b = correctness.answer_a, correctness.answer_b
        found = (catalogue or bundled_catalogue()).by_question.get(correctness.question)
        if found is None:
            q_a = latent_quality(a, "correctness:" + correctness.question, {})
            q_b = latent_quality(b, "correctness:" + correctness.question, {})
        else:
            sim_item, task, task_item = found
            verdicts = _canonical_classes(task, task_item, a, b)
            if verdicts is None:
                verdicts = (_plain_match(sim_item, a), _plain_match(sim_item, b))
            q_a = knobs.correct_margin * verdicts[0] + 0.3 * _unit("answer-quality", correctness.question, a)
            q_b = knobs.correct_margin * verdicts[1] + 0.3 * _unit("answer-quality", correctness.question, b)
        g = _pair_effect(a, b, "correctness:" + correctness.question, knobs)
        return _pairwise_verdict(q_a + g, q_b, rng, knobs, "Answer")
    return "I am a simulated judge: send me a prompt built by relgate_tui.engine.judge_prompts."


# ----------------------------------------------------------------------------------------------- one request


def _last_user_content(messages: Sequence[dict]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):  # OpenAI content parts
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def simulate_chat(
    model: str,
    messages: Sequence[dict],
    seed: object,
    n: int,
    counter: int,
    catalogue: ItemCatalogue,
    knobs: JudgeKnobs,
) -> list[SimCompletion]:
    """The ``n`` completions of one chat request (deterministic given model, user content, seed and index)."""
    content = _last_user_content(messages)
    if model == JUDGE_MODEL:
        return [
            SimCompletion(judge_reply(messages, request_rng(model, content, seed, i, counter), knobs, catalogue), None, False, -0.05)
            for i in range(n)
        ]
    item = catalogue.item_for(content)
    distribution = catalogue.distribution(model, item)
    return [
        sample_completion(model, item, request_rng(model, content, seed, i, counter), distribution) for i in range(n)
    ]
