"""A judge audit: several judges × prompt variants × the pairwise and/or direct study (issue 9 items 2–4).

:class:`AuditSpec` holds every setting; :func:`plan_audit` loads the data and lists the requests (the same for every
judge); :func:`run_audit` is an async generator that asks each judge in turn through :func:`~.ask.ask`, yields a
:class:`JudgeProgress` per answer (progress is per judge) and :class:`AuditNote` for failures and endpoint changes,
and ends with :class:`AuditFinished` carrying the typed :class:`~.results.AuditResult`. The CLI runs it with
``asyncio.run``; the TUI iterates it in an ``@work`` worker and stops it by cancelling the worker.

With a :class:`~.store.AuditStore`, every answer is appended to the store as it arrives and answers already stored
are never asked again (resume after a kill); the result is written there at the end.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from relgate_tui.engine.judging import direct, geval, pairwise
from relgate_tui.engine.judging.ask import (
    Answer,
    AskCalls,
    AskFailed,
    EndpointState,
    Judge,
    Key,
    Request,
    ask,
    check_reachable,
    uncached,
)
from relgate_tui.engine.judging.data import AuditInput, AuditSet, load_audit_set
from relgate_tui.engine.judging.results import AuditResult, StudyCell
from relgate_tui.engine.judging.variants import ORIGINAL, PromptVariant
from relgate_tui.errors import DataError, EndpointError, UserError

PROTOCOLS = ("pairwise", "direct", "both")
LIKERT_PROTOCOLS = ("single", "mean")


@dataclass(frozen=True)
class AuditSpec:
    """Every setting of an audit. ``inputs`` / ``candidates``: how many to use (a seeded choice; None = all).
    ``reps``: verdicts per pair (odd, paper 000's k) and scores per candidate; ``likert_protocol``: ŷ of the direct
    study ("single" = the paper's one score, "mean" = mean of the reps scores)."""

    data: str
    criterion: str
    judges: tuple[Judge, ...]
    variants: tuple[PromptVariant, ...] = (ORIGINAL,)
    protocol: str = "pairwise"
    reps: int = 3
    inputs: int | None = None
    candidates: int | None = None
    alpha: float = 0.10
    seed: int = 0
    concurrency: int = 8
    max_down_s: float = 120.0
    likert_protocol: str = "single"
    prompt: str = geval.DEFAULT_PROMPT  # the direct study's built-in prompt (score-only | geval), scale 1–``scale``
    scale: int = geval.DEFAULT_SCALE

    def validate(self) -> AuditSpec:
        if not self.judges:
            raise UserError("an audit needs at least one judge")
        labels = [j.label for j in self.judges]
        if len(set(labels)) != len(labels):
            raise UserError(f"judge names must differ (got {', '.join(labels)}); name them with name=")
        names = [v.name for v in self.variants]
        if not names or len(set(names)) != len(names):
            raise UserError("prompt variant names must be distinct (and there must be at least one)")
        if self.protocol not in PROTOCOLS:
            raise UserError(f"--protocol must be one of {', '.join(PROTOCOLS)}, got {self.protocol!r}")
        if not (isinstance(self.reps, int) and 1 <= self.reps <= 50):
            raise UserError(f"--reps must be an integer in [1, 50], got {self.reps!r}")
        if self.protocol in ("pairwise", "both") and self.reps % 2 == 0:
            raise UserError(f"--reps must be odd for pairwise judging (k verdicts per pair, majority wins; "
                            f"paper 000 uses 3), got {self.reps}")
        if self.likert_protocol not in LIKERT_PROTOCOLS:
            raise UserError(f"--likert-protocol must be one of {', '.join(LIKERT_PROTOCOLS)}, "
                            f"got {self.likert_protocol!r}")
        geval.check(self.prompt, self.scale)
        for name, value in (("--inputs", self.inputs), ("--candidates", self.candidates)):
            low = 2 if name == "--candidates" else 1
            if value is not None and not (isinstance(value, int) and value >= low):
                raise UserError(f"{name} must be an integer ≥ {low}, got {value!r}")
        if not 0.0 < self.alpha < 1.0:
            raise UserError(f"--alpha must be in (0, 1), got {self.alpha!r}")
        if not (isinstance(self.concurrency, int) and 1 <= self.concurrency <= 1024):
            raise UserError(f"--concurrency must be an integer in [1, 1024], got {self.concurrency!r}")
        return self

    def to_json(self) -> dict[str, Any]:
        return {"data": self.data, "criterion": self.criterion, "judges": [j.to_json() for j in self.judges],
                "variants": [v.to_json() for v in self.variants], "protocol": self.protocol, "reps": self.reps,
                "inputs": self.inputs, "candidates": self.candidates, "alpha": self.alpha, "seed": self.seed,
                "concurrency": self.concurrency, "max_down_s": self.max_down_s,
                "likert_protocol": self.likert_protocol,
                # only when not the default, so the ids of audits stored before these options stay the same
                **({"prompt": self.prompt} if self.prompt != geval.DEFAULT_PROMPT else {}),
                **({"scale": self.scale} if self.scale != geval.DEFAULT_SCALE else {})}

    def identity(self) -> dict[str, Any]:
        """What a stored audit's id is derived from: :meth:`to_json` without the run-time knobs (concurrency,
        max_down_s) and with each variant's :meth:`~.variants.PromptVariant.identity` (so an unedited model-written
        paraphrase is identified by who wrote it, and the same command finds its audit before asking anything)."""
        d = self.to_json()
        d.pop("concurrency", None)
        d.pop("max_down_s", None)
        d["variants"] = [v.identity() for v in self.variants]
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> AuditSpec:
        return cls(data=d["data"], criterion=d["criterion"], judges=tuple(Judge.from_json(j) for j in d["judges"]),
                   variants=tuple(PromptVariant.from_json(v) for v in d["variants"]),
                   protocol=d["protocol"], reps=d["reps"], inputs=d.get("inputs"), candidates=d.get("candidates"),
                   alpha=d["alpha"], seed=d["seed"], concurrency=d.get("concurrency", 8),
                   max_down_s=d.get("max_down_s", 120.0), likert_protocol=d.get("likert_protocol", "single"),
                   prompt=d.get("prompt", geval.DEFAULT_PROMPT), scale=d.get("scale", geval.DEFAULT_SCALE))


def select(audit: AuditSet, n_inputs: int | None, n_candidates: int | None, seed: int) -> list[AuditInput]:
    """A seeded choice of inputs (by sorted id) and, within each, of candidates (kept in data order)."""
    rng = random.Random(seed)
    inputs = sorted(audit.inputs, key=lambda i: i.id)
    if n_inputs is not None and n_inputs < len(inputs):
        inputs = sorted(rng.sample(inputs, n_inputs), key=lambda i: i.id)
    out = []
    for inp in inputs:
        cands = list(inp.candidates)
        if n_candidates is not None and n_candidates < len(cands):
            keep = set(rng.sample(range(len(cands)), n_candidates))
            cands = [c for i, c in enumerate(cands) if i in keep]
        out.append(replace(inp, candidates=tuple(cands)))
    return out


@dataclass(frozen=True)
class AuditPlan:
    """What an audit asks: the data set, the chosen inputs, the criterion's spelling and description, and the
    requests (per variant and protocol; the same for every judge)."""

    spec: AuditSpec
    audit_set: AuditSet
    criterion: str
    description: str
    inputs: tuple[AuditInput, ...]
    requests: tuple[Request, ...]

    def reps_of(self, request: Request) -> int:
        """Answers per request: 1 per pairwise verdict (each is its own request), ``reps`` per direct score."""
        return 1 if request.key[0] == pairwise.KIND else self.spec.reps

    @property
    def answers_per_judge(self) -> int:
        return sum(self.reps_of(r) for r in self.requests)


def planned_answers(inputs: Sequence[AuditInput], protocol: str, reps: int, n_variants: int = 1) -> dict[str, int]:
    """Answers per judge, per protocol: pairwise = C(m, 2) pairs × reps verdicts (odd k, seeded random orders) per
    input of m candidates; direct = m × reps (times the number of prompt variants)."""
    out = {}
    if protocol in ("pairwise", "both"):
        out["pairwise"] = sum(math.comb(len(i.candidates), 2) * reps for i in inputs) * n_variants
    if protocol in ("direct", "both"):
        out["direct"] = sum(len(i.candidates) * reps for i in inputs) * n_variants
    return out


def planned_requests(inputs: Sequence[AuditInput], protocol: str, reps: int, n_variants: int = 1) -> dict[str, int]:
    """Requests per judge, per protocol — what the results' calls made + cached count: pairwise asks each of its
    C(m, 2) × reps verdicts as a request of its own (each repetition shows the pair in its own seeded order);
    direct asks each of the m candidates once for all its ``reps`` scores (the sampler asks ``n = reps`` in one
    call; a server that returns one choice whatever ``n`` says — llama.cpp — is then asked once per score, and the
    calls are :func:`planned_answers`' count)."""
    out = dict(planned_answers(inputs, protocol, reps, n_variants))
    if "direct" in out:
        out["direct"] //= max(1, reps)
    return out


def plan_audit(spec: AuditSpec) -> AuditPlan:
    spec.validate()
    for v in spec.variants:
        if v.pending:
            raise UserError(f"prompt variant {v.name}: its text has not been written yet (ask the paraphraser first: "
                            "engine.judging.paraphrase.resolve_paraphrases)")
    try:
        audit_set = load_audit_set(spec.data)
        criterion = audit_set.criterion_name(spec.criterion)
    except ValueError as exc:  # AuditDataError (judge_data) words the file, line and field
        raise DataError(str(exc)) from None
    description = audit_set.criteria.get(criterion, "")
    inputs = tuple(select(audit_set, spec.inputs, spec.candidates, spec.seed))
    reqs: list[Request] = []
    for variant in spec.variants:
        if spec.protocol in ("pairwise", "both"):
            reqs += pairwise.requests(inputs, criterion, description, variant, k=spec.reps, seed=spec.seed)
        if spec.protocol in ("direct", "both"):
            reqs += direct.requests(inputs, criterion, description, variant,
                                    geval.direct_template(spec.prompt, spec.scale))
    return AuditPlan(spec, audit_set, criterion, description, inputs, tuple(reqs))


# ------------------------------------------------------------------------------------------------------ events
@dataclass(frozen=True)
class JudgeProgress:
    """One judge's progress: answers received (or given up on) of all planned, and its calls so far."""

    judge: str
    done: int
    total: int
    made: int = 0
    cached: int = 0
    failed: int = 0


@dataclass(frozen=True)
class AuditNote:
    """A message worth showing: a request that failed for good, the endpoint going down or coming back."""

    judge: str
    message: str


@dataclass(frozen=True)
class AuditFinished:
    result: AuditResult


AuditEvent = JudgeProgress | AuditNote | AuditFinished


@dataclass
class _Collected:
    """Every answer of every judge: ``answers[judge][key][rep]``."""

    answers: dict[str, dict[Key, dict[int, Answer]]] = field(default_factory=dict)
    calls: dict[str, AskCalls] = field(default_factory=dict)

    def add(self, a: Answer) -> None:
        self.answers.setdefault(a.judge, {}).setdefault(a.key, {})[a.rep] = a

    def held(self, judge: str) -> dict[Key, int]:
        """Contiguous repetitions 0..m−1 held per key."""
        out = {}
        for key, reps in self.answers.get(judge, {}).items():
            m = 0
            while m in reps:
                m += 1
            out[key] = m
        return out


async def run_audit(spec: AuditSpec, *, store: Any = None, cache: Any = None,
                    transport: Any = None) -> AsyncIterator[AuditEvent]:
    """Run the audit (see the module docstring). ``store``: an open :class:`~.store.AuditStore` of this spec;
    ``cache``: a :class:`~relgate_tui.engine.transport.cache.SampleCache` (None = no request cache)."""
    plan = plan_audit(spec)
    started = time.perf_counter()
    got = _Collected()
    if store is not None:
        for a in store.answers():
            got.add(a)
    total = plan.answers_per_judge
    for judge in spec.judges:
        name = judge.label
        held = got.held(name)
        calls = got.calls.setdefault(name, AskCalls())
        done = sum(min(held.get(r.key, 0), plan.reps_of(r)) for r in plan.requests)
        yield JudgeProgress(name, done, total, calls.made, calls.cached, calls.failed)
        groups: dict[int, list[Request]] = {}  # answers per request -> its requests (pairwise 1, direct reps)
        for r in plan.requests:
            groups.setdefault(plan.reps_of(r), []).append(r)
        missing = {n: [r for r in rs if held.get(r.key, 0) < n] for n, rs in groups.items()}
        if any(ms and uncached(judge, ms, n, spec.seed, cache) for n, ms in missing.items()):  # about to pay
            if judge.api_key_env and not os.environ.get(judge.api_key_env):
                raise UserError(f"judge {name}: the API key variable {judge.api_key_env} is not set (or empty)")
            try:
                await check_reachable(judge)
            except EndpointError as exc:
                raise EndpointError(f"judge {name}: cannot reach {exc}") from None
        live = AskCalls()  # the calls of this judge's finished ask passes (ask() adds each pass when it ends)
        try:
            for reps, group in groups.items():
                sampler: list[Any] = []
                async for event in ask(judge, group, reps=reps, seed=spec.seed, cache=cache,
                                       concurrency=spec.concurrency, max_down_s=spec.max_down_s, held=held,
                                       calls=live, transport=transport, on_sampler=sampler.append):
                    if isinstance(event, Answer):
                        if store is not None:
                            store.append(event)
                        got.add(event)
                        done += 1
                    elif isinstance(event, AskFailed):
                        retry = "" if event.final else f" (attempt {event.attempt}, retrying)"
                        yield AuditNote(name, f"{'/'.join(event.key[2:])} answer {event.rep + 1}: {event.kind}: "
                                              f"{event.message}{retry}")
                        if not event.final:
                            continue
                        done += reps - event.rep
                    elif isinstance(event, EndpointState):
                        yield AuditNote(name, event.message)
                        continue
                    else:
                        continue
                    t = sampler[0].totals
                    yield JudgeProgress(name, min(done, total), total, calls.made + live.made + t.made,
                                        calls.cached + live.cached + t.cached, calls.failed + live.failed + t.failed)
        finally:
            calls.add(live)
    ordered = {j: {k: [reps[r] for r in sorted(reps)] for k, reps in by_key.items()} for j, by_key in got.answers.items()}
    # the analysis (exact MFAS per input) is CPU work: off the event loop, so a TUI stays responsive and a
    # cancellation returns at once
    result = await asyncio.to_thread(analyse, plan, ordered, got.calls, time.perf_counter() - started)
    if store is not None:
        store.write_results(result)
    yield AuditFinished(result)


def analyse(plan: AuditPlan, answers: Mapping[str, Mapping[Key, Sequence[Answer]]],
            calls: Mapping[str, AskCalls], wall_seconds: float = 0.0) -> AuditResult:
    """The typed result from every judge's answers (by key, in repetition order). Pure given its inputs: a stored
    audit reopened offline gives the same numbers."""
    spec = plan.spec
    cells = []
    for judge in spec.judges:
        by_key = answers.get(judge.label, {})
        for variant in spec.variants:
            pw = di = None
            if spec.protocol in ("pairwise", "both"):
                parsed = {k: [pairwise.parse(a.text) for a in v] for k, v in by_key.items() if k[0] == pairwise.KIND}
                pw = pairwise.analyse(plan.inputs, variant.name, parsed, plan.criterion, k=spec.reps, seed=spec.seed)
            if spec.protocol in ("direct", "both"):
                keys = [k for k in by_key if k[:2] == (direct.KIND, variant.name)]
                scores = {k: [direct.parse(a.text, spec.prompt, spec.scale) for a in by_key[k]] for k in keys}
                found = {k: [direct.locate(a.logprobs, a.text, spec.prompt, spec.scale) for a in by_key[k]]
                         for k in keys}
                lps = {k: [x.logprobs for x in v] for k, v in found.items()}
                rows = direct.candidates_of(plan.inputs, variant.name, scores, plan.criterion, lps)
                di = direct.analyse(rows, spec.alpha, spec.seed, spec.likert_protocol, spec.scale,
                                    direct.rating_reasons(found))
            cells.append(StudyCell(judge.label, variant.name, pw, di))
    c = calls or {}
    return AuditResult(
        data=plan.audit_set.name, criterion=plan.criterion, protocol=spec.protocol, reps=spec.reps, seed=spec.seed,
        alpha=spec.alpha, n_inputs=len(plan.inputs), candidates_per_input=tuple(len(i.candidates) for i in plan.inputs),
        judges=tuple(j.to_json() for j in spec.judges), cells=tuple(cells),
        calls={j.label: c.get(j.label, AskCalls()).to_json() for j in spec.judges}, wall_seconds=wall_seconds)
