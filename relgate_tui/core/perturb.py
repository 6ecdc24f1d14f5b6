"""Prompt perturbations of a judge's criterion prompt (paper 002, §3.3 and App. B), reproducible from a seed.

- **typo**: ``n_words`` words (default 5) each get one character-level typo: two adjacent, different letters swapped
  — the paper's fallback edit, and the edit of every example it lists ("task → tsak", "only → onyl", "JSON → SJON").
  The paper chooses the words with the highest final-layer attention of Qwen3-8B; relgate has no local attention
  model, so it draws them uniformly (seeded) among the eligible words: alphabetic words of at least 4 letters outside
  placeholders (``{…}``), outside the rating and answer instructions (any line that mentions a score, rating or
  scale, says how to answer — answer, reply, respond, exactly — or holds a digit: ``Answer with exactly "A" or "B"``
  stays as written) and not in the protected keywords (the criterion name, "json", "format", "score", …).
- **newline**: up to ``n_breaks`` (default 3) extra line breaks inserted at seeded sentence or line boundaries outside
  placeholders (§3.3 "sentence-level line breaks"; App. B "up to three positions").
- **paraphrase** needs a language model (a configurable endpoint); :func:`paraphrase_instruction` words the request and
  :func:`check_paraphrase` checks that the answer kept every placeholder and the rating instructions.

Every variant is a pure function of (template, seed): the same audit always sends the same prompts.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

PLACEHOLDER = re.compile(r"\{[^{}\n]*\}")
_BRACED = re.compile(r"\{+[^{}\n]*\}+")
WORD = re.compile(r"[A-Za-z]{4,}")
RATING_LINE = re.compile(r"\b(score|scores|rating|rate|scale|answer|reply|respond|exactly)\b|\d", re.IGNORECASE)
DEFAULT_PROTECTED = frozenset({"json", "format", "score", "rating", "scale", "output", "answer", "only"})
VARIANT_KINDS = ("original", "typo", "newline", "paraphrase")


@dataclass(frozen=True)
class PromptVariant:
    """A named prompt template and what was changed to make it (for display and the stored audit)."""

    name: str
    template: str
    edits: tuple[str, ...] = ()


def _protected_spans(template: str) -> list[tuple[int, int]]:
    spans = [m.span() for m in PLACEHOLDER.finditer(template)]
    pos = 0
    for line in template.split("\n"):
        if RATING_LINE.search(line):
            spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def _inside(i: int, j: int, spans: list[tuple[int, int]]) -> bool:
    return any(i < e and s < j for s, e in spans)


def typo_variant(template: str, seed: int = 42, n_words: int = 5,
                 protected: frozenset[str] | set[str] = DEFAULT_PROTECTED) -> PromptVariant:
    """The typo variant: one adjacent-letter swap in each of ``n_words`` seeded eligible words."""
    rng = random.Random(f"typo:{seed}")
    spans = _protected_spans(template)
    keep = {w.casefold() for w in protected}
    eligible = [m for m in WORD.finditer(template)
                if not _inside(m.start(), m.end(), spans) and m.group().casefold() not in keep
                and len(set(m.group())) > 1]
    chosen = sorted(rng.sample(eligible, min(n_words, len(eligible))), key=lambda m: m.start())
    out, last, edits = [], 0, []
    for m in chosen:
        word = m.group()
        pairs = [k for k in range(len(word) - 1) if word[k] != word[k + 1]]
        k = rng.choice(pairs)
        typo = word[:k] + word[k + 1] + word[k] + word[k + 2:]
        out.append(template[last:m.start()] + typo)
        last = m.end()
        edits.append(f"{word} → {typo}")
    out.append(template[last:])
    return PromptVariant("typo", "".join(out), tuple(edits))


def newline_variant(template: str, seed: int = 42, n_breaks: int = 3) -> PromptVariant:
    """The newline variant: up to ``n_breaks`` extra line breaks at seeded sentence/line boundaries."""
    rng = random.Random(f"newline:{seed}")
    spans = [m.span() for m in PLACEHOLDER.finditer(template)]
    boundaries = [m.end() for m in re.finditer(r"[.!?](?=\s)|\n", template) if not _inside(m.start(), m.end(), spans)]
    chosen = sorted(rng.sample(boundaries, min(n_breaks, len(boundaries))))
    out, last = [], 0
    for b in chosen:
        out.append(template[last:b] + "\n")
        last = b
    out.append(template[last:])
    text = "".join(out)
    lines = [template[:b].count("\n") + 1 for b in chosen]
    return PromptVariant("newline", text, tuple(f"extra line break after line {n}" for n in lines))


def paraphrase_instruction(template: str, n_words: int = 5) -> str:
    """The request sent to the paraphrasing model (App. B: replace a few verbs/adjectives by synonyms only)."""
    return ("Rewrite the evaluation instructions below. Replace exactly "
            f"{n_words} verbs or adjectives by synonyms that keep the part of speech and the meaning. Change nothing "
            "else: keep every placeholder in curly braces, every number, the rating scale and the output format "
            "exactly as they are. Reply with the rewritten instructions only.\n\n" + template)


def check_paraphrase(template: str, paraphrase: str) -> str | None:
    """Why ``paraphrase`` cannot stand in for ``template`` (a lost or added placeholder, changed rating
    instructions), or ``None`` when it can. Placeholders are compared with all their braces (``{{criterion}}`` is
    not ``{criterion}``: a template filled by literal ``{{name}}`` replacement would leave the latter as text)."""
    if sorted(_BRACED.findall(template)) != sorted(_BRACED.findall(paraphrase)):
        return "the paraphrase changed the placeholders"
    if re.findall(r"\d+", template) != re.findall(r"\d+", paraphrase):
        return "the paraphrase changed the numbers of the rating scale"
    if not paraphrase.strip():
        return "the paraphrase is empty"
    return None


def standard_variants(template: str, seed: int = 42, paraphrase: str | None = None) -> tuple[PromptVariant, ...]:
    """original, typo, newline (and paraphrase when one is given and passes :func:`check_paraphrase`)."""
    variants = [PromptVariant("original", template), typo_variant(template, seed), newline_variant(template, seed)]
    if paraphrase is not None:
        problem = check_paraphrase(template, paraphrase)
        if problem:
            raise ValueError(problem)
        variants.append(PromptVariant("paraphrase", paraphrase, ("written by the paraphrasing model",)))
    return tuple(variants)
