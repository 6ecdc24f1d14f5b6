"""Where the answer is in a model's reply (shared by ``numeric`` and ``math``, SPEC §3.1).

Priority: a JSON object's ``answer`` field; the last ``<answer>…</answer>`` tag; the last ``\\boxed{…}`` (nested
braces); the GSM8K marker ``#### x``; the last explicit answer cue ("the answer is", "Answer:", "final answer",
"result is") — unless the reply then corrects itself ("…is 16. Wait, I made an error … it's 18." → the corrected
value); the last bold ``**…**``; and otherwise the final line. A reply that refuses ("I can't answer question 5") or
stops mid-reasoning ("Then, step 2:") has no answer, whatever numbers it mentions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["Span", "after_thinking", "boxed_contents", "locate", "looks_refused", "looks_truncated"]


@dataclass(frozen=True)
class Span:
    """A located answer: its text and how it was found (``json``, ``tag``, ``boxed``, ``gsm8k``, ``cue``,
    ``correction``, ``bold`` or ``line``). ``strict`` spans are the answer and nothing else."""

    text: str
    how: str

    @property
    def strict(self) -> bool:
        return self.how in ("json", "tag", "boxed", "gsm8k")


_BOX_TOKEN = re.compile(r"\\(?:boxed|fbox)\s*\{|[{}]")


def boxed_contents(text: str) -> list[str]:
    """Contents of every ``\\boxed{…}`` / ``\\fbox{…}`` with balanced (nested) braces, in order of their start
    (one pass with a stack: linear time even when braces never close)."""
    stack: list[int] = []  # content start of an open box, or -1 for a plain brace
    found: list[tuple[int, str]] = []
    for m in _BOX_TOKEN.finditer(text):
        token = m.group(0)
        if token == "}":
            if stack:
                start = stack.pop()
                if start >= 0:
                    found.append((start, text[start : m.start()]))
        else:
            stack.append(m.end() if token != "{" else -1)
    return [content for _, content in sorted(found)]


_MAX_TRIED = 4  # the last few boxes, cues and bold spans are tried (the answer is at the end): linear time
_MAX_SEGMENT = 1_000  # characters of a cue's segment or of the final line that are read
_JSON_KEYS = ("answer", "final_answer", "finalanswer", "result", "final")
_JSON_FIELD = re.compile(
    r'"(?:final[_ ]?answer|answer|result)"\s*:\s*("(?:[^"\\]|\\.)*"|-?[\d.eE+\-/]+|null|true|false)', re.IGNORECASE
)
_TAG = re.compile(r"<(final_answer|answer)>(.*?)</\1>", re.IGNORECASE | re.DOTALL)
_GSM8K_MARK = re.compile(r"####\s*([^\n]*)")
ANSWER_CUE = re.compile(
    r"(?:final\s+answer|the\s+answer|answer|result|solution|total)\s*(?:is|:|=|would\s+be|will\s+be|should\s+be|equals)"
    r"|answer\s*[:=]|\banswer\b(?=\s*\**\s*[-+$\d])",
    re.IGNORECASE,
)
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
SENTENCE_END = re.compile(r"(?<!\d)\.(?!\d)|\.(?=\s|$)|[!?;\n]")

# a self-correction after the answer: a marker, then an admission or a new value
_CORRECTION = re.compile(
    r"(?:^|[\s.!?,;:—-])(?:wait|hold\s+on|actually|oops|hmm+|correction|no,|sorry|on\s+second\s+thought)\b[\s,:!—-]*",
    re.IGNORECASE,
)
_ADMISSION = re.compile(
    r"\b(?:mistake|error|wrong|incorrect|miscalculat\w*|recalculat\w*|forgot|double[- ]count\w*|correct(?:ed|ion)?"
    r"|should\s+be|instead|actually|it'?s\s+really|not\s+\S+\s+but)\b",
    re.IGNORECASE,
)
WEAK_CUE = re.compile(
    r"(?:\bit'?s|\bit\s+is|\bis\s+actually|\bshould\s+be|\bwould\s+be|\bmust\s+be|\bis\s+really"
    r"|\b(?:answer|total|value|result|sum)\s+is|=)\s*",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"\b(?:I\s*(?:can(?:no|['’])?t|could\s*n['’]?o?t|am\s+(?:not\s+able|unable)|['’]m\s+(?:not\s+able|unable|sorry)"
    r"|am\s+sorry|apologi[sz]e|do(?:n['’]t|\s+not)\s+(?:have\s+(?:enough|access|the)|know))"
    r"|as\s+an\s+AI|cannot\s+be\s+(?:determined|answered|solved|computed)|(?:not|in)\s*(?:enough|sufficient)\s+information"
    r"|insufficient\s+(?:information|data)|unable\s+to\s+(?:determine|answer|solve|compute|help)"
    r"|no\s+way\s+to\s+(?:determine|know))",
    re.IGNORECASE,
)
_TRUNCATED_END = re.compile(
    r"(?:[:,(\[{+*/=×-]|\\|(?:^|(?<=\s))(?:the|a|an|and|or|to|of|then|so|is|are|was|by|with|we|for|that|which|step|from|in|on"
    r"|at|be|as|if|this|these|its|our|let|now|next|first|second|finally|thus|therefore|hence"
    r"|makes?|gives?|gets?|equals|becomes?|yields?|leaves|costs?|earns?|pays?|totals?|needs?|has|have|had|get|got))\s*$",
    re.IGNORECASE,
)
# the final sentence announces an operation ("Now we multiply 5 by 4", "Next, add 12 and 7") with no result after it
_PENDING_OPERATION = re.compile(
    r"\b(?:multiply|divide|add|subtract|calculate|compute|convert|sum\s+up)\b"
    r"(?![^\n]*(?:=|\b(?:is|are|equals?|gives?|giving|gets?|getting|get|makes?|making|yields?|results?|which|so|that'?s)\b))"
    r"[^\n.!?;]*$",
    re.IGNORECASE,
)
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


def looks_refused(text: str) -> bool:
    """The reply declines or says the answer cannot be determined — in its opening or its final line, where
    refusals are made (a "we cannot divide by zero" inside reasoning is no refusal)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    where = text[:300] + "\n" + (lines[-1][-300:] if lines else "")
    return _REFUSAL.search(where) is not None


_LIST_MARKER = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*•]|step\s+\d+[.:)]?)\s*$", re.IGNORECASE)


def looks_truncated(line: str) -> bool:
    """The final line stops mid-thought: a trailing colon, comma, operator, function word or object-less verb, a
    bare list marker ("2."), or a final sentence that announces an operation and gives no result."""
    line = line.rstrip(" *_`")
    if _TRUNCATED_END.search(line) is not None or _LIST_MARKER.match(line) is not None:
        return True
    last = SENTENCE_END.split(line)[-1] if not line.endswith((".", "!", "?")) else ""
    return _PENDING_OPERATION.search(last) is not None


def after_thinking(text: str) -> str | None:
    """The reply without its reasoning block: the text after the last ``</think>``; None when a ``<think>`` block
    never closes (the reasoning was cut off before any answer); the text itself when there is no block."""
    closes = list(_THINK_CLOSE.finditer(text))
    opens = list(_THINK_OPEN.finditer(text))
    if opens and (not closes or opens[-1].start() > closes[-1].start()):
        return None
    return text[closes[-1].end() :] if closes else text


def _json_answer(text: str) -> str | None:
    start = text.find("{")
    if start < 0 or '"' not in text:
        return None
    candidate = text[start : text.rfind("}") + 1]
    try:
        obj = json.loads(candidate) if candidate else None
    except (ValueError, RecursionError):
        obj = None
    if isinstance(obj, dict):
        for key in obj:
            if str(key).strip().lower().replace(" ", "_") in _JSON_KEYS:
                value = obj[key]
                return None if value is None or isinstance(value, (dict, list)) else str(value)
        return None
    fields = list(_JSON_FIELD.finditer(text))
    if not fields:
        return None
    m = fields[-1]
    raw = m.group(1)
    if raw.startswith('"'):
        try:
            return str(json.loads(raw))
        except ValueError:
            return raw.strip('"')
    return None if raw in ("null", "true", "false") else raw


def correction_tail(text: str, after: int) -> str | None:
    """The text after the last self-correction that follows position ``after``, when there is one."""
    last = None
    for m in _CORRECTION.finditer(text, after):
        last = m
    if last is None:
        return None
    tail = text[last.end() :]
    marker = last.group(0).strip(" \t\n.,;:!?—-").lower()
    if marker.startswith(("actually", "correction", "no")) or _ADMISSION.search(tail):
        return tail
    return None


def locate(text: str) -> list[Span]:
    """Candidate answer spans of a cleaned, LaTeX-rewritten reply, best first (see the module docstring). The
    caller takes the first span it can read. The final line is a candidate only when the reply neither refuses
    nor stops mid-thought; a reply whose reasoning block never closes has no candidate."""
    spans: list[Span] = []
    answer_part = after_thinking(text)
    if answer_part is None:
        return []
    text = answer_part
    value = _json_answer(text)
    if value is not None:
        return [Span(value, "json")]
    tags = _TAG.findall(text)
    if tags:
        return [Span(tags[-1][1], "tag")]
    for content in reversed(boxed_contents(text)[-_MAX_TRIED:]):
        spans.append(Span(content, "boxed"))
    marks = _GSM8K_MARK.findall(text)
    if marks:
        spans.append(Span(marks[-1], "gsm8k"))
    cues = list(ANSWER_CUE.finditer(text))[-_MAX_TRIED:]
    for cue in reversed(cues):
        rest = text[cue.end() : cue.end() + _MAX_SEGMENT].lstrip(" :*\t")
        end = SENTENCE_END.search(rest)
        segment = rest[: end.start()] if end else rest
        tail = correction_tail(text, cue.end() + (end.end() if end else len(rest)))
        if tail is not None:
            spans.extend(_correction_spans(tail))
        spans.append(Span(segment.replace("**", " "), "cue"))
    for bold in reversed(_BOLD.findall(text)[-_MAX_TRIED:]):
        spans.append(Span(bold, "bold"))
    if looks_refused(text):
        return spans
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines and not looks_truncated(lines[-1]):
        spans.append(Span(lines[-1][-_MAX_SEGMENT:], "line"))
    return spans


def _correction_spans(tail: str) -> list[Span]:
    cues = list(WEAK_CUE.finditer(tail))
    out = []
    for cue in reversed(cues):
        rest = tail[cue.end() :]
        end = SENTENCE_END.search(rest)
        out.append(Span(rest[: end.start()] if end else rest, "correction"))
    lines = [ln for ln in tail.splitlines() if ln.strip()]
    if lines:
        out.append(Span(lines[-1], "line"))
    return out
