"""The paraphrase prompt variant, written by a language model (paper 002 §3.3, App. B; issue 13 §1).

Paper 002 perturbs the judge's criterion prompt three ways; the third, the *paraphrase*, replaces a few verbs and
adjectives by synonyms and needs a language model. Here the model is a configurable **paraphraser** — a
:class:`~.ask.Judge` (endpoint, model, the NAME of its API-key variable; temperature 0 by default, so the same
request gets the same text) asked through :func:`~.ask.ask`, the one way relgate asks a model: the request cache
serves a second ask at no cost, faults and retries are the sampler's.

:func:`write_paraphrase` asks for the paraphrase of each template the audit uses (pairwise and/or direct,
:data:`~.variants.PAIRWISE_TEMPLATE` / :data:`~.variants.DIRECT_TEMPLATE`) with
:func:`~relgate_tui.core.perturb.paraphrase_instruction`. Each reply is cleaned (:func:`clean`: terminal escape,
control and bidi characters removed, one surrounding code fence or triple quote unwrapped, outer blank space trimmed)
and accepted only if :func:`problem` finds nothing: a bounded size, every ``{{placeholder}}`` kept with its braces and
the numbers of the rating scale unchanged (:func:`~relgate_tui.core.perturb.check_paraphrase`). When a reply fails, the
templates are asked again with the next seed (``seed + 1``, …) — at most :data:`ATTEMPTS` times in all — at
temperature ``max(t, RETRY_TEMPERATURE)``: at temperature 0 a deterministic server would only repeat the rejected
text, so a retry must be allowed to sample. After the last attempt the error is one line naming the template and
why. The paper prompts the paraphraser once and does not say what happens to a paraphrase that damages the
placeholders or the scale; rejecting it is the only reading under which every variant still measures the same
criterion on the same scale (its premise for the IRT items).

The result is a :class:`~.variants.PromptVariant` named ``paraphrase`` carrying its :class:`~.variants.VariantOrigin`
(the paraphraser's model, its endpoint without credentials, the seed, the attempt). A stored audit keeps the text and
the origin in its manifest; :func:`resolve_paraphrase` gives a resumed audit the stored text without asking again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from relgate_tui.core.perturb import check_paraphrase, paraphrase_instruction
from relgate_tui.core.redact import public_url
from relgate_tui.core.text import counted, one_line, strip_controls
from relgate_tui.engine.judging.ask import Answer, AskCalls, AskFailed, Judge, Request, ask, check_reachable, uncached
from relgate_tui.engine.judging.variants import (
    DIRECT_TEMPLATE,
    MAX_TEMPLATE_CHARS,
    PAIRWISE_TEMPLATE,
    PromptVariant,
    VariantOrigin,
)
from relgate_tui.errors import EndpointError, UserError

NAME = "paraphrase"
ATTEMPTS = 3
RETRY_TEMPERATURE = 0.7
MAX_TOKENS = 1024
TEMPLATES = {"pairwise": PAIRWISE_TEMPLATE, "direct": DIRECT_TEMPLATE}


def paraphraser(endpoint: str, model: str, api_key_env: str | None = None, temperature: float = 0.0,
                timeout_s: float = 60.0) -> Judge:
    """The paraphraser as a :class:`~.ask.Judge`: room for a whole template in its reply (``max_tokens``
    :data:`MAX_TOKENS`), no log-probabilities."""
    return Judge(endpoint, model, api_key_env, temperature, MAX_TOKENS, 0, timeout_s, name="paraphraser")


def origin(judge: Judge, seed: int, attempt: int = 0, edited: bool = False) -> VariantOrigin:
    """Who writes the paraphrase: the model, its endpoint without credentials, the temperature and seed."""
    return VariantOrigin(judge.model, public_url(judge.endpoint).rstrip("/"), judge.api_key_env,
                         float(judge.temperature), seed, attempt, edited)


def pending(judge: Judge, seed: int) -> PromptVariant:
    """The paraphrase still to be written (or read back from a stored audit) by :func:`resolve_paraphrase`."""
    return PromptVariant(NAME, origin=origin(judge, seed))


def kinds_of(protocol: str) -> tuple[str, ...]:
    """The templates an audit of ``protocol`` uses (the paraphrase leaves the others as the original's)."""
    return ("pairwise", "direct") if protocol == "both" else (protocol,)


def writes_for(protocol: str, prompt: str, scale: int) -> bool:
    """Whether the model paraphrase can be a variant of an audit of ``protocol`` whose direct study asks ``prompt`` on
    1–``scale``: it rewrites :data:`TEMPLATES` (paper 000's prompts, the direct one score-only on 1–5), so a direct
    study on another built-in prompt or scale needs the user's own paraphrase of that prompt. The one rule the CLI
    and the judge setup both apply (each words the refusal for its own inputs)."""
    from relgate_tui.engine.judging import geval

    return protocol == "pairwise" or (prompt, scale) == (geval.DEFAULT_PROMPT, geval.DEFAULT_SCALE)


def clean(text: str) -> str:
    """The reply as a template: control/bidi characters removed, one surrounding code fence or triple quote
    unwrapped, outer blank lines and spaces trimmed."""
    text = strip_controls(text).strip()
    if text.startswith("```") and text.endswith("```") and len(text) > 6:
        first_line, _, rest = text[3:-3].partition("\n")
        text = (rest if first_line.strip().isidentifier() or not first_line.strip() else text[3:-3]).strip()
    elif text.startswith('"""') and text.endswith('"""') and len(text) > 6:
        text = text[3:-3].strip()
    return text


def max_chars(template: str) -> int:
    """The longest acceptable paraphrase of ``template``: twice its length plus 500, at most a template's limit."""
    return min(MAX_TEMPLATE_CHARS, 2 * len(template) + 500)


def problem(kind: str, text: str) -> str | None:
    """Why ``text`` (already :func:`clean`) cannot be the ``kind`` template's paraphrase, or None."""
    template = TEMPLATES[kind]
    if len(text) > max_chars(template):
        return f"is {len(text):,} characters long (at most {max_chars(template):,})"
    why = check_paraphrase(template, text)
    if why:
        return why.removeprefix("the paraphrase ")
    return None


def edited_variant(texts: Mapping[str, str], written: PromptVariant | None = None) -> PromptVariant:
    """The paraphrase variant from (possibly edited) template texts, e.g. the TUI's text areas; ``written``: the
    model's variant they started from (its origin is kept, marked edited when a text differs). Raises
    :class:`UserError` with one line naming the template and the problem."""
    cleaned = {kind: clean(text) for kind, text in texts.items()}
    for kind, text in cleaned.items():
        why = problem(kind, text)
        if why:
            raise UserError(f"the {kind} paraphrase {why}")
    made = None
    if written is not None and written.origin is not None:
        changed = any(cleaned[k] != getattr(written, k) for k in cleaned)
        made = replace(written.origin, edited=written.origin.edited or changed)
    return PromptVariant(NAME, cleaned.get("pairwise"), cleaned.get("direct"), made)


@dataclass(frozen=True)
class Paraphrased:
    """A paraphrase ready for the audit. ``source``: ``"asked"`` (written now; ``calls.cached`` counts the answers
    the request cache served) or ``"stored"`` (read back from the stored audit: nothing asked); ``rejected``: why
    earlier attempts were refused."""

    variant: PromptVariant
    source: str
    calls: AskCalls
    rejected: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """What the CLI prints, every line cleaned of control and bidi characters (a stored manifest may have been
        edited by hand)."""
        o = self.variant.origin
        who = f"{one_line(o.model, 80)} at {one_line(o.endpoint, 200)}, seed {o.seed + o.attempt}" if o else "a file"
        how = ("stored with the audit: not asked again" if self.source == "stored"
               else f"{counted(self.calls.made, 'call')}, {self.calls.cached} from the cache")
        out = [f"paraphrase by {who} ({how}):"]
        out += [f"  ! attempt {i + 1} rejected: {why}" for i, why in enumerate(self.rejected)]
        for kind in ("pairwise", "direct"):
            text = getattr(self.variant, kind)
            if text is not None:
                out.append(f"  --- {kind} template ---")
                out += [f"  {line}" for line in strip_controls(text).split("\n")]
        return out


async def write_paraphrase(judge: Judge, *, protocol: str = "both", seed: int = 0, cache: Any = None,
                           attempts: int = ATTEMPTS, transport: Any = None) -> Paraphrased:
    """Ask ``judge`` (a :func:`paraphraser`) for the paraphrase of the templates ``protocol`` uses (module
    docstring). Raises :class:`UserError` (no usable paraphrase after ``attempts``) or
    :class:`~relgate_tui.errors.EndpointError` (a request failed for good, the endpoint is down or unreachable)."""
    kinds = kinds_of(protocol)
    calls = AskCalls()
    rejected: list[str] = []
    for attempt in range(attempts):
        asked = judge if attempt == 0 else replace(judge, temperature=max(judge.temperature, RETRY_TEMPERATURE))
        requests = [Request((NAME, kind), ({"role": "user", "content": paraphrase_instruction(TEMPLATES[kind])},))
                    for kind in kinds]
        if uncached(asked, requests, 1, seed + attempt, cache):  # about to pay: fail fast, in one line
            if asked.api_key_env and not os.environ.get(asked.api_key_env):
                raise UserError(f"paraphraser {asked.model}: the API key variable {asked.api_key_env} is not set")
            try:
                await check_reachable(asked)
            except EndpointError as exc:
                raise EndpointError(f"paraphraser {asked.model}: cannot reach {exc}") from None
        texts: dict[str, str] = {}
        async for event in ask(asked, requests, reps=1, seed=seed + attempt, cache=cache, calls=calls,
                               transport=transport):
            if isinstance(event, Answer):
                texts[event.key[1]] = clean(event.text)
            elif isinstance(event, AskFailed) and event.final:
                message = event.message.splitlines()[0] if event.message else ""
                raise EndpointError(f"paraphraser {asked.model}: {event.kind}: {message}")
        problems = [f"the {kind} paraphrase {problem(kind, texts[kind]) if kind in texts else 'got no answer'}"
                    for kind in kinds if kind not in texts or problem(kind, texts[kind])]
        if not problems:
            variant = PromptVariant(NAME, texts.get("pairwise"), texts.get("direct"), origin(judge, seed, attempt))
            return Paraphrased(variant, "asked", calls, tuple(rejected))
        rejected.append(problems[0])
    raise UserError(f"paraphraser {judge.model} wrote no usable paraphrase in {attempts} attempts (seeds {seed}–"
                    f"{seed + attempts - 1}); the last: {rejected[-1]}. Write one by hand: --variant paraphrase=FILE")


def stored_variants(spec: Any, audits_root: Path | None) -> dict[str, PromptVariant]:
    """The variants of the stored audit of ``spec`` under ``audits_root`` (read without a lock), by name; empty when
    there is none (or it is unreadable: the audit's own open reports that)."""
    if audits_root is None:
        return {}
    from relgate_tui.engine.judging.store import MANIFEST, AuditStore, audit_id
    from relgate_tui.errors import DataError

    path = audits_root / audit_id(spec)
    if not (path / MANIFEST).is_file():
        return {}
    try:
        return {v.name: v for v in AuditStore.open(path).spec().variants}
    except DataError:
        return {}


async def resolve_paraphrase(spec: Any, judge: Judge | None, *, audits_root: Path | None = None, cache: Any = None,
                             transport: Any = None) -> tuple[Any, Paraphrased | None]:
    """``spec`` (an :class:`~.audit.AuditSpec`) with its model-written paraphrase filled in: the stored audit's text
    when the audit is stored under ``audits_root`` (never asked again; this also wins over a text written anew for
    the same origin, so a resumed audit keeps asking with the prompts it started with), else written by ``judge``
    (the pending variant's paraphraser). Returns the spec and what was done (None: no model-written variant)."""
    ours = [v for v in spec.variants if v.name == NAME and v.origin is not None and not v.origin.edited]
    if not ours:
        return spec, None
    wanted = ours[0]
    stored = stored_variants(spec, audits_root).get(NAME)
    if (stored is not None and not stored.pending and stored.origin is not None
            and stored.identity() == wanted.identity()):
        done = Paraphrased(stored, "stored", AskCalls())
    elif not wanted.pending:
        return spec, None  # written already (the TUI's text areas), not stored yet
    elif judge is None:
        raise UserError("the paraphrase variant needs a paraphraser (--paraphraser model=NAME)")
    else:
        done = await write_paraphrase(judge, protocol=spec.protocol, seed=wanted.origin.seed if wanted.origin else 0,
                                      cache=cache, transport=transport)
    variants = tuple(done.variant if v is wanted else v for v in spec.variants)
    return replace(spec, variants=variants), done


def file_text(variant: PromptVariant, path: str) -> str:
    """The paraphrase as a ``--variant paraphrase=FILE`` file: a JSON object ``{"pairwise": …, "direct": …}`` for a
    ``.json`` path, else the one template as plain text (a plain-text file holds one template: with both protocols,
    give a ``.json`` path). Raises :class:`UserError`."""
    import json

    texts = {k: getattr(variant, k) for k in ("pairwise", "direct") if getattr(variant, k) is not None}
    if path.endswith(".json"):
        return json.dumps(texts, ensure_ascii=False, indent=2) + "\n"
    if len(texts) != 1:
        raise UserError(f"{path}: the paraphrase has {len(texts)} templates (pairwise and direct): give a .json file")
    return next(iter(texts.values()))
