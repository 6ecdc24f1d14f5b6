"""How the simulated judges (``sim-judge``, :mod:`relgate_tui.demo.jury`'s pool) read a direct-scoring prompt,
including perturbed ones (:func:`read_pairwise_prompt` reads perturbed pairwise prompts the same way).

Order of attempts:

1. **Exact**: :func:`relgate_tui.engine.judging.prompts.parse_direct_prompt` (the prompt ``direct_prompt`` builds).
2. **Known text**: the longest candidate text of the bundled judge-audit sets (HANNA) that occurs verbatim in the
   last user message; its input is the data set's input; the criterion is the data set's criterion named in the
   message (case-insensitive; else the closest word by ``difflib``, so a typo in the name still works).
3. **Markers**: the text after the last line starting with "Response:" / "Output:" / "Story:" / "Summary:" up to
   the next blank line (or the end), the input after "Input:" / "Source:" / "Context:" up to that line, the
   criterion from "evaluating the X of" / "Rate the X" / "Evaluate the X" (else "quality").

The scale is read from "scale of 1-K", "from 1 to K" or "between 1 and K" (2 ≤ K ≤ 10; default 5). The *template*
is the message with the input and the response replaced by ``{input}`` and ``{response}``; :func:`variant_kind`
compares it with the template ``direct_prompt`` would build for the same criterion, so a judge can tell the original
prompt from a typo / newline / paraphrase variant of it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from relgate_tui.demo.catalogue import CandidateInfo, candidate_index
from relgate_tui.demo.items import last_user_content
from relgate_tui.engine.judging import prompts as judge_prompts

__all__ = ["ScoringPrompt", "pairwise_variant_kind", "read_pairwise_prompt", "read_scoring_prompt", "variant_kind"]

_SCALE = re.compile(r"(?:scale\s+(?:of|from)\s+1\s*(?:-|–|to)\s*|from\s+1\s+to\s+|between\s+1\s+and\s+)(\d{1,2})\b",
                    re.IGNORECASE)
_RESPONSE_LINE = re.compile(r"^(?:response|output|story|summary|answer)\s*:[ \t]*", re.IGNORECASE | re.MULTILINE)
_INPUT_LINE = re.compile(r"^(?:input|source|context|prompt|article)\s*:[ \t]*", re.IGNORECASE | re.MULTILINE)
_CRITERION = re.compile(r"(?:evaluating\s+the\s+(.+?)\s+of\b|\b(?:rate|evaluate|assess|score)\s+the\s+([^\n.,:]+?)\s+(?:of|on)\b)",
                        re.IGNORECASE)
_MIN_KNOWN_TEXT = 20


@dataclass(frozen=True)
class ScoringPrompt:
    """What a direct-scoring prompt asks: the criterion, the texts, the scale, and its template."""

    criterion: str
    description: str
    input_text: str
    text: str
    scale: int
    template: str
    exact: bool


def _scale(content: str) -> int:
    match = _SCALE.search(content)
    if match is None:
        return 5
    value = int(match.group(1))
    return value if 2 <= value <= 10 else 5


def _template(content: str, input_text: str, text: str) -> str:
    template = content.replace(text, "{response}") if text else content
    return template.replace(input_text, "{input}") if input_text.strip() else template


def _known_text(content: str) -> tuple[str, CandidateInfo] | None:
    best: tuple[str, CandidateInfo] | None = None
    for text, info in list(candidate_index().items()):  # a copy: add_audit_data may grow the index meanwhile
        if len(text) >= _MIN_KNOWN_TEXT and (best is None or len(text) > len(best[0])) and text in content:
            best = (text, info)
    return best


def _criterion_of(content: str, info: CandidateInfo) -> tuple[str, str]:
    folded = content.casefold()
    named = [(folded.find(key), name, description) for key, (name, description) in info.criteria.items() if key in folded]
    if named:
        _, name, description = min(named)
        return name, description
    words = re.findall(r"[^\W\d_]{4,}", folded[:600])
    for word in words:
        close = difflib.get_close_matches(word, list(info.criteria), n=1, cutoff=0.8)
        if close:
            return info.criteria[close[0]]
    return next(iter(info.criteria.values()), ("quality", ""))


def _marked(content: str) -> tuple[str, str, str] | None:
    """(criterion, input, response) from the markers of the module docstring, or None."""
    responses = list(_RESPONSE_LINE.finditer(content))
    if not responses:
        return None
    start = responses[-1].end()
    end = content.find("\n\n", start)
    text = content[start : end if end >= 0 else len(content)]
    input_text = ""
    inputs = [m for m in _INPUT_LINE.finditer(content) if m.end() <= responses[-1].start()]
    if inputs:
        input_text = content[inputs[-1].end() : responses[-1].start()].rstrip("\n")
    criterion_match = _CRITERION.search(content)
    criterion = next((g for g in criterion_match.groups() if g), "quality") if criterion_match else "quality"
    return criterion.strip(), input_text, text


def read_scoring_prompt(messages: object) -> ScoringPrompt | None:
    """The direct-scoring request in ``messages`` (module docstring), or None if it is not one."""
    exact = judge_prompts.parse_direct_prompt(messages)
    content = last_user_content(messages)
    if not content:
        return None
    if exact is not None:
        return ScoringPrompt(exact.criterion, exact.description, exact.input_text, exact.text, 5,
                             _template(content, exact.input_text, exact.text), True)
    known = _known_text(content)
    if known is not None:
        text, info = known
        criterion, description = _criterion_of(content, info)
        input_text = info.input_text if info.input_text in content else ""
        return ScoringPrompt(criterion, description, input_text, text, _scale(content),
                             _template(content, input_text, text), False)
    marked = _marked(content)
    if marked is None or not marked[2].strip():
        return None
    criterion, input_text, text = marked
    return ScoringPrompt(criterion, "", input_text, text, _scale(content), _template(content, input_text, text), False)


_PAIR_MARK = {side: re.compile(rf"^[^\W\d_]{{3,14}}[ \t]+{side}[ \t]*:[ \t]*", re.MULTILINE) for side in "AB"}


def read_pairwise_prompt(messages: object) -> judge_prompts.PairwisePrompt | None:
    """The pairwise-preference request in ``messages``: the exact prompt ``pairwise_prompt`` builds, else a
    perturbed one (typo / newline / paraphrase of it) read by its "<word> A:" / "<word> B:" lines — the word may
    carry a typo. A's text runs up to B's line; B's text is the longest known candidate text it starts with, else
    it runs up to the next blank line. The criterion is read as for direct scoring. None if it is not one."""
    exact = judge_prompts.parse_pairwise_prompt(messages)
    if exact is not None:
        return _known_ends(exact)
    content = last_user_content(messages)
    if not content or judge_prompts.parse_correctness_prompt(messages) is not None:
        return None  # "which answer is correct?" has its own reader
    mark_a = next(iter(_PAIR_MARK["A"].finditer(content)), None)
    if mark_a is None:
        return None
    marks_b = [m for m in _PAIR_MARK["B"].finditer(content) if m.start() > mark_a.end()]
    if not marks_b:
        return None
    mark_b = marks_b[-1]
    text_a = content[mark_a.end() : mark_b.start()].rstrip("\n")
    rest = content[mark_b.end() :]
    known_b = [t for t in candidate_index() if rest.startswith(t)]
    if known_b:
        text_b = max(known_b, key=len)
    else:
        end = rest.find("\n\n")
        text_b = rest[: end if end >= 0 else len(rest)]
    if not text_a.strip() or not text_b.strip():
        return None
    info = candidate_index().get(text_a) or candidate_index().get(text_b)
    if info is not None:
        criterion, description = _criterion_of(content, info)
        input_text = info.input_text if info.input_text in content else ""
    else:
        found = _CRITERION.search(content)
        criterion = next((g for g in found.groups() if g), "quality").strip() if found else "quality"
        description = ""
        inputs = [m for m in _INPUT_LINE.finditer(content) if m.end() <= mark_a.start()]
        input_text = content[inputs[-1].end() : mark_a.start()].strip("\n") if inputs else ""
    return judge_prompts.PairwisePrompt(input_text, text_a, text_b, criterion, description)


def _known_ends(prompt: judge_prompts.PairwisePrompt) -> judge_prompts.PairwisePrompt:
    """A newline variant can leave an extra line break at the end of a response: a text that is a known candidate
    once its surrounding line breaks are dropped is read as that candidate."""
    index = candidate_index()

    def known(text: str) -> str:
        bare = text.strip("\n")
        return bare if text not in index and bare in index else text

    a, b = known(prompt.text_a), known(prompt.text_b)
    return prompt if (a, b) == (prompt.text_a, prompt.text_b) else replace(prompt, text_a=a, text_b=b)


def _canonical_templates(criterion: str, description: str) -> list[str]:
    criterion = criterion if criterion.strip() and "\n" not in criterion else "quality"
    out = []
    for variant in dict.fromkeys((description, "")):
        content = judge_prompts.direct_prompt("\x00input\x00", "\x00response\x00", criterion, variant)[0]["content"]
        out.append(content.replace("\x00input\x00", "{input}").replace("\x00response\x00", "{response}"))
    return out


def pairwise_variant_kind(prompt: judge_prompts.PairwisePrompt, messages: object) -> str:
    """:func:`variant_kind` for a pairwise prompt: "original", "newline", "typo" or "paraphrase" against the
    prompt ``pairwise_prompt`` builds for the same criterion."""
    content = last_user_content(messages) or ""
    observed = content
    for text, mark in ((prompt.text_a, "\x00a\x00"), (prompt.text_b, "\x00b\x00"), (prompt.input_text, "\x00i\x00")):
        if text.strip():
            observed = observed.replace(text, mark)
    criterion = prompt.criterion if prompt.criterion.strip() and "\n" not in prompt.criterion else "quality"
    try:
        canonical = [judge_prompts.pairwise_prompt("\x00i\x00", "\x00a\x00", "\x00b\x00", criterion, d)[0]["content"]
                     for d in dict.fromkeys((prompt.description, ""))]
    except ValueError:  # a criterion relgate's prompts cannot carry: not one of its prompts
        return "paraphrase"
    return _closest(observed, tuple(canonical))


def variant_kind(prompt: ScoringPrompt) -> str:
    """"original" (the exact ``direct_prompt``), "newline" (only whitespace differs from it), "typo" (character
    edits: ``difflib`` ratio ≥ 0.9) or "paraphrase" (anything else)."""
    if prompt.exact:
        return "original"
    return _classify(prompt.template, prompt.criterion, prompt.description)


@lru_cache(maxsize=4096)
def _classify(observed: str, criterion: str, description: str) -> str:
    return _closest(observed, tuple(_canonical_templates(criterion, description)))


@lru_cache(maxsize=1024)  # a pure function of its strings; the ratio is the costly part (a judge sees one prompt often)
def _closest(observed: str, canonicals: tuple[str, ...]) -> str:
    best = 0.0
    for canonical in canonicals:
        if observed == canonical:
            return "original"
        if " ".join(observed.split()) == " ".join(canonical.split()):
            return "newline"
        best = max(best, difflib.SequenceMatcher(None, observed, canonical, autojunk=False).ratio())
    return "typo" if best >= 0.9 else "paraphrase"
