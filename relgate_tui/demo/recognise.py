"""How the pool judges (:mod:`relgate_tui.demo.jury`) read a direct-scoring prompt, including perturbed ones.

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
from dataclasses import dataclass
from functools import lru_cache

from relgate_tui.demo.catalogue import CandidateInfo, candidate_index
from relgate_tui.demo.items import last_user_content
from relgate_tui.engine.judging import prompts as judge_prompts

__all__ = ["ScoringPrompt", "read_scoring_prompt", "variant_kind"]

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


def _canonical_templates(criterion: str, description: str) -> list[str]:
    criterion = criterion if criterion.strip() and "\n" not in criterion else "quality"
    out = []
    for variant in dict.fromkeys((description, "")):
        content = judge_prompts.direct_prompt("\x00input\x00", "\x00response\x00", criterion, variant)[0]["content"]
        out.append(content.replace("\x00input\x00", "{input}").replace("\x00response\x00", "{response}"))
    return out


def variant_kind(prompt: ScoringPrompt) -> str:
    """"original" (the exact ``direct_prompt``), "newline" (only whitespace differs from it), "typo" (character
    edits: ``difflib`` ratio ≥ 0.9) or "paraphrase" (anything else)."""
    if prompt.exact:
        return "original"
    return _classify(prompt.template, prompt.criterion, prompt.description)


@lru_cache(maxsize=4096)
def _classify(observed: str, criterion: str, description: str) -> str:
    best = 0.0
    for canonical in _canonical_templates(criterion, description):
        if observed == canonical:
            return "original"
        if " ".join(observed.split()) == " ".join(canonical.split()):
            return "newline"
        best = max(best, difflib.SequenceMatcher(None, observed, canonical, autojunk=False).ratio())
    return "typo" if best >= 0.9 else "paraphrase"
