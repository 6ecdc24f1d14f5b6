"""The direct study's built-in prompts: paper 000's score-only prompt and a G-Eval-style prompt, on a 1–K scale.

Paper 001 (§4, App. A.13 Fig. 5) asks its judges with G-Eval chain-of-thought prompts: a task introduction, the
criterion and its definition, numbered evaluation steps, the texts, then an evaluation form the judge fills in with
its score. :func:`direct_template` gives the template (``{{placeholders}}`` as in :mod:`.variants`) of either
built-in prompt for a scale 1–K (``2 ≤ K ≤ 10``):

* ``score-only`` — paper 000's direct scoring prompt. For K = 5 it is exactly
  :data:`~relgate_tui.engine.judging.variants.DIRECT_TEMPLATE` (so a default audit asks what it always asked); for
  another K the scale, the legend ("1 = Very Poor, K = Excellent") and the instruction name K.
* ``geval`` — the G-Eval form (our wording of the structure of the paper's Fig. 5)::

      You will be given one response to an input. Your task is to rate the response on one metric: {{criterion}}.
      Please read and understand these instructions carefully, and refer back to them as you work.

      Evaluation Criteria:
      {{criterion}} (1-K), from 1 (lowest) to K (highest).
      {{definition}}
      Evaluation Steps:
      1. Read the input carefully and identify what a good response to it must do.
      2. Read the response and compare it with the input, judging it only against the criterion above.
      3. Assign a {{criterion}} score from 1 to K.

      Input:
      {{input}}

      Response:
      {{response}}

      Evaluation Form: work through the evaluation steps briefly, then give your score on the last line.
      Score (1-K):

Answers are read with :func:`parse_score`: the score-only answer by paper 000's strict first-line parser
(:func:`~relgate_tui.engine.judging.prompts.parse_direct_score`), the G-Eval answer — reasoning, then the filled
form — by the score after the last cue ("Score: 4"), else a number on the last line
(:func:`~relgate_tui.core.judge_intervals.features.find_rating`, span ``"form"``), so a digit inside the reasoning
("Step 1", "3 main events") is never taken for the score. The rating token whose log-probabilities become paper
001's features is located from the same span (:data:`SPAN`).

:func:`parse_prompt` is the inverse of the built-in templates (the simulated judge uses it to answer them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from relgate_tui.core.judge_intervals.features import find_rating
from relgate_tui.engine.judging.prompts import LIKERT_LEGEND, parse_direct_score
from relgate_tui.engine.judging.variants import DIRECT_TEMPLATE
from relgate_tui.errors import UserError

SCORE_ONLY, GEVAL = "score-only", "geval"
PROMPTS = (SCORE_ONLY, GEVAL)
DEFAULT_PROMPT = SCORE_ONLY
DEFAULT_SCALE = 5
SPAN = {SCORE_ONLY: "first-line", GEVAL: "form"}  # where the rating is read (core find_rating's ``span``)
MIN_SCALE, MAX_SCALE = 2, 10


def check(prompt: str, scale: int) -> None:
    """A one-line :class:`UserError` for an unknown prompt or a scale outside 2–10."""
    if prompt not in PROMPTS:
        raise UserError(f"--prompt must be one of {', '.join(PROMPTS)}, got {prompt!r}")
    if isinstance(scale, bool) or not isinstance(scale, int) or not MIN_SCALE <= scale <= MAX_SCALE:
        raise UserError(f"--scale must be an integer from {MIN_SCALE} to {MAX_SCALE} (the scale 1–K), got {scale!r}")


def scale_values(scale: int) -> tuple[int, ...]:
    return tuple(range(1, scale + 1))


def legend(scale: int) -> str:
    return LIKERT_LEGEND if scale == 5 else f"1 = Very Poor, {scale} = Excellent"


@lru_cache(maxsize=64)
def direct_template(prompt: str, scale: int = DEFAULT_SCALE) -> str:
    """The direct template of the built-in ``prompt`` on the scale 1–``scale`` (module docstring)."""
    check(prompt, scale)
    if prompt == SCORE_ONLY:
        if scale == 5:
            return DIRECT_TEMPLATE
        return (DIRECT_TEMPLATE.replace("scale of 1-5", f"scale of 1-{scale}").replace(LIKERT_LEGEND, legend(scale))
                .replace("between 1 and 5", f"between 1 and {scale}"))
    return (
        "You will be given one response to an input. Your task is to rate the response on one metric: "
        "{{criterion}}.\n"
        "Please read and understand these instructions carefully, and refer back to them as you work.\n\n"
        "Evaluation Criteria:\n"
        f"{{{{criterion}}}} (1-{scale}), from 1 (lowest) to {scale} (highest).\n"
        "{{definition}}"
        "\nEvaluation Steps:\n"
        "1. Read the input carefully and identify what a good response to it must do.\n"
        "2. Read the response and compare it with the input, judging it only against the criterion above.\n"
        f"3. Assign a {{{{criterion}}}} score from 1 to {scale}.\n\n"
        "Input:\n{{input}}\n\n"
        "Response:\n{{response}}\n\n"
        "Evaluation Form: work through the evaluation steps briefly, then give your score on the last line.\n"
        f"Score (1-{scale}):"
    )


def parse_score(text: object, prompt: str = DEFAULT_PROMPT, scale: int = DEFAULT_SCALE) -> int | None:
    """The score of an answer to the built-in ``prompt`` (module docstring), or None when unparseable."""
    if prompt == SCORE_ONLY:
        return parse_direct_score(text, scale)
    if not isinstance(text, str):
        return None
    found = find_rating(text, scale_values(scale), span=SPAN[prompt])
    return found.score if found.reason is None else None


# ------------------------------------------------------------------------------------------------ inverse
@dataclass(frozen=True)
class BuiltinPrompt:
    """What a built-in direct prompt asks (the parts :func:`parse_prompt` recovers)."""

    prompt: str
    scale: int
    criterion: str
    description: str
    input_text: str
    text: str


@lru_cache(maxsize=64)
def _pattern(prompt: str, scale: int) -> re.Pattern[str]:
    """The template as a regex: the criterion is one line (the same text everywhere), the definition line is
    optional, the input and the response are any text (the response split at the last possible marker)."""
    template = direct_template(prompt, scale)
    out, seen, i = [], False, 0
    for m in re.finditer(r"\{\{(\w+)\}\}", template):
        out.append(re.escape(template[i:m.start()]))
        name = m.group(1)
        if name == "criterion":
            out.append(r"(?P=criterion)" if seen else r"(?P<criterion>[^\n]+?)")
            seen = True
        elif name == "definition":
            out.append(r"(?:Definition of (?P=criterion): (?P<description>[^\n]*)\n)?")
        else:
            out.append(rf"(?P<{name}>.*)")
        i = m.end()
    out.append(re.escape(template[i:]))
    return re.compile("".join(out), re.DOTALL)


def parse_prompt(messages: object) -> BuiltinPrompt | None:
    """The built-in prompt (any kind, any scale 2–10) in the last user message, or None."""
    if not isinstance(messages, (list, tuple)):
        return None
    content = next((m["content"] for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"
                    and isinstance(m.get("content"), str)), None)
    if content is None:
        return None
    for prompt, marker in ((GEVAL, _GEVAL_SCALE), (SCORE_ONLY, _SCORE_ONLY_SCALE)):
        found = marker.search(content)  # the scale first: one full match per prompt, not one per scale
        if found is None or not MIN_SCALE <= int(found.group(1)) <= MAX_SCALE:
            continue
        scale = int(found.group(1))
        m = _pattern(prompt, scale).fullmatch(content)
        if m is not None:
            return BuiltinPrompt(prompt, scale, m["criterion"], m["description"] or "", m["input"], m["response"])
    return None


_GEVAL_SCALE = re.compile(r"\nScore \(1-(\d{1,2})\):\Z")
_SCORE_ONLY_SCALE = re.compile(r"\n\nRate the [^\n]* on a scale of 1-(\d{1,2}) where:\n(?![\s\S]*\n\nRate the )")
