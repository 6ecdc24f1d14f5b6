"""Prompt variants: the same criterion asked with differently worded prompts (issue 9 item 3).

A :class:`PromptVariant` is a name and a template per protocol. Templates are plain text with ``{{placeholders}}``
(filled by literal replacement, so braces in the data are harmless):

* both protocols: ``{{criterion}}``, ``{{definition}}`` (``"Definition of C: description\\n"``, or empty when the
  criterion has no description), ``{{description}}``, ``{{input}}``;
* pairwise: ``{{response_a}}``, ``{{response_b}}`` (A is shown first);
* direct: ``{{response}}``.

:data:`ORIGINAL` is paper 000's prompts (:mod:`~relgate_tui.engine.judging.prompts`) written as templates: filling them
gives exactly ``pairwise_prompt(...)`` / ``direct_prompt(...)`` (a test checks). A variant without a template for a
protocol uses the original one. Perturbation generators (typo, newline, paraphrase; paper 002) produce variants from
:data:`ORIGINAL`'s template texts, so they plug in as more entries of the audit's variant list.

A variant written by a model (the paraphrase, :mod:`~relgate_tui.engine.judging.paraphrase`) carries its
:class:`VariantOrigin` (the paraphraser's model, its endpoint without credentials, the seed). Its *identity* — what
a stored audit's id is derived from (:meth:`PromptVariant.identity`) — is that origin, not the text, unless the user
edited the text: so the same command finds its stored audit (and its stored paraphrase) again before anything is
asked. A *pending* variant (an origin and no template yet) stands for a paraphrase still to be written or read back
from the stored audit; an audit is never planned with one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from relgate_tui.engine.judging.prompts import LIKERT_LEGEND
from relgate_tui.errors import DataError, UserError, data_error

PAIRWISE_TEMPLATE = (
    "You are evaluating the {{criterion}} of two responses to the following input.\n"
    "{{definition}}"
    "\nInput: {{input}}\n\n"
    "Response A: {{response_a}}\n"
    "Response B: {{response_b}}\n\n"
    "Which response is better in terms of {{criterion}}?\n"
    'Answer with exactly "A" or "B". No explanation.'
)
DIRECT_TEMPLATE = (
    "You are evaluating the {{criterion}} of the following response to an input.\n"
    "{{definition}}"
    "\nInput: {{input}}\n"
    "Response: {{response}}\n\n"
    "Rate the {{criterion}} on a scale of 1-5 where:\n"
    f"{LIKERT_LEGEND}\n\n"
    "Respond with a single integer between 1 and 5.\n"
    "No explanation needed."
)
MAX_TEMPLATE_CHARS = 20_000


@dataclass(frozen=True)
class VariantOrigin:
    """Who wrote a variant: ``model`` at ``endpoint`` (credentials removed) asked with ``temperature`` and the audit's
    ``seed``; ``attempt`` retries were needed (the accepted answer's seed is ``seed + attempt``); ``edited``: the
    user changed the model's text before the audit (the text then identifies the variant)."""

    model: str
    endpoint: str
    api_key_env: str | None = None
    temperature: float = 0.0
    seed: int = 0
    attempt: int = 0
    edited: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"by": "paraphraser", "model": self.model, "endpoint": self.endpoint, "api_key_env": self.api_key_env,
                "temperature": self.temperature, "seed": self.seed, "attempt": self.attempt, "edited": self.edited}

    def identity(self) -> dict[str, Any]:
        """What identifies the request that wrote the variant (known before asking: no ``attempt``)."""
        d = self.to_json()
        d.pop("attempt")
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> VariantOrigin:
        return cls(str(d["model"]), str(d["endpoint"]), d.get("api_key_env"), float(d.get("temperature", 0.0)),
                   int(d.get("seed", 0)), int(d.get("attempt", 0)), bool(d.get("edited", False)))


@dataclass(frozen=True)
class PromptVariant:
    """A named wording of the judge prompts. ``pairwise`` / ``direct``: templates (None = the original's);
    ``origin``: the model that wrote it (None: relgate's own or the user's)."""

    name: str
    pairwise: str | None = None
    direct: str | None = None
    origin: VariantOrigin | None = None

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise UserError(f"a prompt variant name must be letters, digits, '-', '_' or '.', got {self.name!r}")
        if self.pairwise is not None and not ("{{response_a}}" in self.pairwise and "{{response_b}}" in self.pairwise):
            raise UserError(f"variant {self.name}: a pairwise template needs {{{{response_a}}}} and {{{{response_b}}}}")
        if self.direct is not None and "{{response}}" not in self.direct:
            raise UserError(f"variant {self.name}: a direct template needs {{{{response}}}}")

    def pairwise_messages(self, input_text: str, text_a: str, text_b: str, criterion: str,
                          description: str = "") -> list[dict[str, str]]:
        return _fill(self.pairwise or PAIRWISE_TEMPLATE, criterion, description,
                     input=input_text, response_a=text_a, response_b=text_b)

    def direct_messages(self, input_text: str, text: str, criterion: str, description: str = "") -> list[dict[str, str]]:
        return _fill(self.direct or DIRECT_TEMPLATE, criterion, description, input=input_text, response=text)

    @property
    def pending(self) -> bool:
        """A model-written variant whose text is not known yet (see the module docstring)."""
        return self.origin is not None and self.pairwise is None and self.direct is None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "pairwise": self.pairwise, "direct": self.direct}
        if self.origin is not None:
            d["origin"] = self.origin.to_json()
        return d

    def identity(self) -> dict[str, Any]:
        """The variant as a stored audit's id sees it: an unedited model-written text by its origin, else all of
        :meth:`to_json` (a variant without an origin hashes exactly as before origins existed)."""
        if self.origin is not None and not self.origin.edited:
            return {"name": self.name, "origin": self.origin.identity()}
        return self.to_json()

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PromptVariant:
        origin = d.get("origin")
        return cls(d["name"], d.get("pairwise"), d.get("direct"),
                   VariantOrigin.from_json(origin) if isinstance(origin, Mapping) else None)


ORIGINAL = PromptVariant("original")


def _fill(template: str, criterion: str, description: str, **texts: str) -> list[dict[str, str]]:
    description = " ".join(description.split())
    values = {"criterion": criterion, "description": description,
              "definition": f"Definition of {criterion}: {description}\n" if description else "", **texts}
    out, i = [], 0
    while True:  # one left-to-right pass: a placeholder inside a filled-in text is never replaced again
        j = template.find("{{", i)
        if j < 0:
            out.append(template[i:])
            break
        k = template.find("}}", j)
        name = template[j + 2:k] if k > 0 else ""
        if name in values:
            out += [template[i:j], values[name]]
            i = k + 2
        else:
            out.append(template[i:j + 2])
            i = j + 2
    return [{"role": "user", "content": "".join(out)}]


def load_variant(spec: str) -> PromptVariant:
    """``NAME=FILE`` (the ``--variant`` option): FILE is a JSON object ``{"pairwise": …, "direct": …}`` or a plain
    text template, used for the protocol whose placeholders it has (``{{response}}`` → direct; ``{{response_a}}`` →
    pairwise)."""
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise UserError(f"--variant takes NAME=FILE, got {spec!r}")
    try:
        from relgate_tui.engine.runs.inputs import InputError, read_regular

        try:
            raw = read_regular(path, 4 * MAX_TEMPLATE_CHARS + 4, what="a variant template")
        except InputError as exc:
            raise data_error(path, f"cannot read the variant template ({str(exc).split(': ', 1)[-1]})") from None
        text = raw.decode("utf-8")[: MAX_TEMPLATE_CHARS + 1]
    except (OSError, UnicodeDecodeError) as exc:
        raise data_error(path, f"cannot read the variant template ({getattr(exc, 'strerror', None) or exc})") from None
    if len(text) > MAX_TEMPLATE_CHARS:
        raise data_error(path, f"a variant template is at most {MAX_TEMPLATE_CHARS} characters")
    if path.endswith(".json"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise data_error(path, f"not valid JSON ({exc.msg})", line=exc.lineno) from None
        if not isinstance(obj, dict) or not set(obj) <= {"pairwise", "direct"}:
            raise data_error(path, 'a variant file is an object with "pairwise" and/or "direct" templates')
        for key, value in obj.items():
            if not isinstance(value, str):
                raise data_error(path, "must be a string", field=key)
        try:
            return PromptVariant(name, obj.get("pairwise"), obj.get("direct"))
        except UserError as exc:
            raise DataError(f"{path}: {exc}") from None
    if "{{response_a}}" in text:
        return PromptVariant(name, pairwise=text)
    if "{{response}}" in text:
        return PromptVariant(name, direct=text)
    raise data_error(path, "a template needs {{response}} (direct) or {{response_a}} and {{response_b}} (pairwise)")


PERTURBATIONS = ("typo", "newline")


def perturbed_variants(kinds: str | list[str], *, seed: int = 42, criterion: str = "",
                       direct: str = DIRECT_TEMPLATE) -> list[PromptVariant]:
    """Paper 002's prompt perturbations of :data:`ORIGINAL` (both protocols' templates), reproducible from ``seed``:
    ``typo`` and ``newline`` (:mod:`relgate_tui.core.perturb`; the criterion's name and the rating instructions are
    never edited). The paraphrase needs a model: :mod:`~relgate_tui.engine.judging.paraphrase` (or a ``--variant``
    file). Raises :class:`UserError`."""
    from relgate_tui.core import perturb

    names = [k.strip() for k in (kinds.split(",") if isinstance(kinds, str) else kinds) if k.strip()]
    out = []
    protected = set(perturb.DEFAULT_PROTECTED) | {w for w in criterion.casefold().split() if w}
    for kind in names:
        if kind == "typo":
            pw = perturb.typo_variant(PAIRWISE_TEMPLATE, seed, protected=protected).template
            di = perturb.typo_variant(direct, seed, protected=protected).template
        elif kind == "newline":
            pw = perturb.newline_variant(PAIRWISE_TEMPLATE, seed).template
            di = perturb.newline_variant(direct, seed).template
        else:
            raise UserError(f"unknown perturbation {kind!r} (choose from {', '.join(PERTURBATIONS)}; the paraphrase "
                            "is written by a model: relgate judge audit --perturb paraphrase)")
        out.append(PromptVariant(kind, pairwise=pw, direct=di))
    return out

