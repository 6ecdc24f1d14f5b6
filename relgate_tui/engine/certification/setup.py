"""Setting up a run from the TUI (SPEC §4.1–4.2): the endpoints and tasks on offer, the embedded demo, the
:class:`RunSetup` the setup screen decides, its pre-flight estimate and latency probe, and its translation into the
pipeline's :class:`~relgate_tui.engine.certification.certify.CertifyConfig` (:func:`certify_config`)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from relgate_tui.core.certification.gate_names import GateOn
from relgate_tui.engine.certification.certify import CertifyConfig

__all__ = [
    "EndpointChoice",
    "TaskChoice",
    "VerificationMode",
    "RunSetup",
    "Preflight",
    "endpoint_choices",
    "default_endpoint_index",
    "discover_endpoints",
    "list_models",
    "task_choices",
    "inspect_task",
    "REFERENCE_WORKLOAD",
    "expected_samples_per_item",
    "preflight",
    "Latency",
    "probe_latency",
    "certify_config",
]


@dataclass(frozen=True)
class EndpointChoice:
    """A model server the setup screen can offer: a discovered local server, the embedded demo (``simulated``) or
    a custom URL. ``models`` are the ids from ``/v1/models`` (empty when unknown); ``error`` says why listing
    failed. ``judge_models``: the models offered as the optional pairwise judge when they differ from ``models``
    (the demo's answer models cannot judge; its ``sim-judge`` can); empty = any of ``models``."""

    label: str
    base_url: str
    models: tuple[str, ...] = ()
    simulated: bool = False
    kind: str = "openai"
    error: str = ""
    judge_models: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskChoice:
    """A task as the setup screen shows it (bundled or loaded from a file)."""

    name: str
    n_items: int
    canon: str
    description: str = ""
    has_references: bool = True
    path: str = ""
    bundled: bool = True
    canon_source: str = ""  # why ``canon`` (issue 31 item 4): a task file's suggestion rule, in words


VerificationMode = Literal["auto", "human", "audit"]


@dataclass(frozen=True)
class RunSetup:
    """Everything the setup screen decides (the TUI twin of ``relgate certify``'s options).

    ``verification``: "auto" = items with references are verified by the canonicalized reference, the human
    checks the rest; "human" = the human verifies every calibration item (references are ignored for
    calibration, still used for validation); "audit" = like auto, plus a seeded random ``audit_fraction`` of the
    automatic verdicts is shown to the human for confirmation and disagreements are reported.
    ``n_cal`` = number of calibration items (None = half the items); ``limit`` = use only the first ``limit``
    items of a seeded permutation of the task (None = all). The gate — ``min_reliability``, ``gate_on``,
    ``confidence``, ``one_look``, ``population`` — is the run's own, written into its config.
    """

    base_url: str
    model: str
    task: str
    kind: str = "openai"
    api_key_env: str | None = None
    simulated: bool = False
    canon: str = ""
    system: str | None = None
    k_max: int = 20
    delta: float = 0.05
    stopping: str = "anytime"
    alpha: float = 0.10
    temperature: float = 0.7
    max_tokens: int | None = None
    concurrency: int = 8
    n_cal: int | None = None
    limit: int | None = None
    seed: int = 0
    verification: VerificationMode = "auto"
    audit_fraction: float = 0.20
    price_in: float | None = None
    price_out: float | None = None
    pairwise_judge_model: str | None = None
    pairwise_judge_url: str | None = None
    pairwise_judge_reps: int = 3
    verify_judge_model: str | None = None  # issue 22: the verification judge (on the answering endpoint)
    batch: float | None = None  # issue 32: sample through the Batch API at this price factor; None = direct calls
    # the run's gate (issue 37 §3: it belongs to the run, prefilled from Settings): its threshold (None: no gate),
    # basis (None: the judge-assisted bound with a verification judge, else the bound), confidence, one-look plan
    # and the judge-assisted bound's population — as relgate certify's flags of the same names
    min_reliability: float | None = None
    gate_on: GateOn | None = None
    confidence: float = 0.95
    one_look: int | None = None
    population: str = "task"


@dataclass(frozen=True)
class Preflight:
    """The pre-flight estimate: worst-case calls (items × K_max), expected calls under the chosen stopping rule
    (simulated on the reference workload mix of SPEC §8), time = expected calls × the seconds one call costs when
    measured at the run's concurrency (:func:`probe_latency`; None when not measured), and cost from the user's
    prices and the probe's token usage (None when unknown)."""

    n_items: int
    n_cal: int
    worst_calls: int
    expected_calls: int
    latency_s: float | None = None
    seconds: float | None = None
    cost: float | None = None
    note: str = ""
    calls_range: tuple[int, int] = (0, 0)  # expected calls if every item were easy / hard (issue 31 item 8)
    judge_calls: int = 0  # the verification judge's calls (one per judged item) + the pairwise judge's at most
    seconds_range: tuple[float, float] | None = None  # the time of calls_range (+ judge calls)



# ------------------------------------------------------------------------------------------------ setup helpers
def endpoint_choices(discover: Callable[[], Sequence[Any]] | None, embedded_demo: bool,
                     demo: Callable[[], EndpointChoice]) -> list[EndpointChoice]:
    """What the setup screens offer: the discovered servers, then (when ``embedded_demo``) the built-in demo's
    choice, from ``demo`` (which starts it) — a demo that fails to start is listed with its error, never fatal."""
    found = list(discover_endpoints(discover))
    if embedded_demo:
        try:
            found.append(demo())
        except Exception as exc:  # noqa: BLE001 - shown to the user
            found.append(EndpointChoice("built-in demo (failed to start)", "", simulated=True, error=str(exc)))
    return found


def default_endpoint_index(endpoints: Sequence[EndpointChoice]) -> int | None:
    """The endpoint pre-selected: the first usable real server, else the first usable one (the demo), else None."""
    usable = [i for i, e in enumerate(endpoints) if e.base_url and not e.error]
    real = [i for i in usable if not endpoints[i].simulated]
    return real[0] if real else (usable[0] if usable else None)


def discover_endpoints(discover: Callable[[], Sequence[Any]] | None = None) -> list[EndpointChoice]:
    """Model servers running on loopback (SPEC §4.2), as endpoint choices — via :mod:`engine.transport.discovery` unless a
    ``discover`` callable is injected (tests). A server that answers but cannot list models is kept, with its
    error."""
    if discover is None:
        from relgate_tui.engine.transport.discovery import discover as default_discover

        discover = default_discover
    out: list[EndpointChoice] = []
    for server in discover():
        if isinstance(server, EndpointChoice):
            out.append(server)
            continue
        name = str(getattr(server, "name", "") or getattr(server, "kind", "") or "server")
        url = str(getattr(server, "base_url", ""))
        models = tuple(str(m) for m in (getattr(server, "models", ()) or ()))
        error = str(getattr(server, "error", "") or "")
        out.append(EndpointChoice(f"{name} · {url}", url, models, error=error))
    return out


def list_models(base_url: str, api_key_env: str | None = None) -> tuple[str, ...]:
    """The model ids ``GET {base_url}/models`` lists (via :mod:`engine.transport.discovery`)."""
    from relgate_tui.engine.transport.discovery import list_models as _list_models

    return tuple(_list_models(base_url, api_key_env=api_key_env))


def task_choices() -> list[TaskChoice]:
    """The bundled tasks with their item counts and suggested canonicalizers."""
    from relgate_tui.engine.certification.tasks import bundled_tasks

    return [
        TaskChoice(
            name=t.name,
            n_items=int(t.items),
            canon=t.canon,
            description=getattr(t, "description", ""),
            has_references=t.references,
            path=str(getattr(t, "file", "")),
            bundled=True,
        )
        for t in bundled_tasks()
    ]


def inspect_task(name_or_path: str) -> TaskChoice:
    """Load a task (bundled name or file) and describe it; the loader's one-line error (``TaskError``) propagates."""
    from relgate_tui.engine.certification.tasks import load_task

    return describe_task(load_task(name_or_path), name_or_path)


def describe_task(task: Any, name_or_path: str) -> TaskChoice:
    """The :class:`TaskChoice` of a loaded task (every item of it)."""
    from relgate_tui.engine.certification.tasks import bundled_task_names

    return TaskChoice(
        name=task.name,
        n_items=len(task.items),
        canon=task.canon,
        description=task.description,
        has_references=any(item.answers for item in task.items),
        path=str(task.path),
        bundled=name_or_path in bundled_task_names(),
        canon_source=task.canon_source,
    )


# The reference workload of SPEC §8 (weights, class distributions): the pre-flight's "expected calls" assume it.
REFERENCE_WORKLOAD: tuple[tuple[float, tuple[float, ...]], ...] = (
    (0.60, (0.97, 0.02, 0.01)),
    (0.25, (0.75, 0.15, 0.10)),
    (0.15, (0.45, 0.30, 0.15, 0.10)),
)


@functools.lru_cache(maxsize=64)
def expected_samples_per_item(stopping: str, delta: float, k_max: int, profile: int | None = None) -> float:
    """Mean samples per item the stopping rule uses on :data:`REFERENCE_WORKLOAD` (seeded simulation with the
    core's :func:`~relgate_tui.core.certification.stopping.simulate_stopping`); ``profile`` i: on its i-th item kind
    alone (0 = easy … 2 = hard: the range a model's own mix falls in)."""
    import numpy as np

    from relgate_tui.core.certification.stopping import get_stopping_rule, simulate_stopping

    rule = get_stopping_rule(stopping, delta)
    rng = np.random.default_rng(0)
    mix = REFERENCE_WORKLOAD if profile is None else ((1.0, REFERENCE_WORKLOAD[profile][1]),)
    return sum(w * simulate_stopping(rule, p, k_max, 400, rng).mean_samples for w, p in mix)


def judge_calls(setup: RunSetup, task: TaskChoice, n_items: int, n_cal: int) -> int:
    """The judges' calls of a run (issue 31 item 8): the verification judge asks once per item it judges — every
    item without a reference (all of them when the task has none; a task with references: none, or the calibration
    items when they are verified by hand) —, the pairwise judge at most ``reps`` verdicts per pair of an item's top
    :data:`~relgate_tui.engine.judging.certify_judge.MAX_JUDGE_CLASSES` answers (unanimous items need none)."""
    calls = 0
    if setup.verify_judge_model:
        calls += n_items if not task.has_references else (n_cal if setup.verification == "human" else 0)
    if setup.pairwise_judge_model:
        from relgate_tui.engine.judging.certify_judge import MAX_JUDGE_CLASSES

        calls += n_items * math.comb(MAX_JUDGE_CLASSES, 2) * setup.pairwise_judge_reps
    return calls


class Latency(NamedTuple):
    """What the pre-flight probe measured (:func:`probe_latency`): ``seconds`` one answer costs at the run's
    concurrency, the mean ``prompt_tokens`` / ``completion_tokens`` of one answer, and ``judge_seconds`` one judge
    verdict costs at that concurrency (None: the run asks no judge, or its probe failed — verdicts are then timed as
    answers)."""

    seconds: float
    prompt_tokens: float
    completion_tokens: float
    judge_seconds: float | None = None
    parallel: int | None = None  # requests the probe had at once (None: not said — the run's concurrency)
    note: str = ""  # why it measured fewer at once than the run sends (the fall-back after a timeout)


def preflight(
    setup: RunSetup, task: TaskChoice, latency: Latency | tuple[float, ...] | None = None
) -> Preflight:
    """Worst-case and expected calls, time and cost of ``setup`` on ``task``. ``latency``: the :class:`Latency`
    measured by :func:`probe_latency` (or its first three fields), or None.

    time = expected answer calls × seconds per answer + judge calls × seconds per verdict (issue 31 item 8: on
    llama.cpp a verdict with log-probabilities costs 1.1–1.7 times an answer), both measured at the run's
    concurrency; the range: the same with the expected calls if every item were easy … hard."""
    n_items = min(task.n_items, setup.limit) if setup.limit else task.n_items
    if setup.n_cal is not None and setup.n_cal > n_items:
        raise ValueError(f"calibration items: {setup.n_cal} is more than the {n_items} items used")
    n_cal = setup.n_cal if setup.n_cal is not None else n_items // 2
    worst = n_items * setup.k_max
    rule = (setup.stopping, float(setup.delta), int(setup.k_max))
    expected = int(round(n_items * expected_samples_per_item(*rule)))
    low, high = (int(round(n_items * expected_samples_per_item(*rule, profile))) for profile in (0, 2))
    judged = judge_calls(setup, task, n_items, n_cal)
    seconds = cost = span = None
    if latency is not None:  # seconds per call measured at the run's concurrency (probe_latency): no division
        lat = Latency(*latency)
        verdict_s = lat.seconds if lat.judge_seconds is None else lat.judge_seconds
        seconds = expected * lat.seconds + judged * verdict_s
        span = (low * lat.seconds + judged * verdict_s, high * lat.seconds + judged * verdict_s)
        if setup.price_in is not None and setup.price_out is not None:
            per_call = lat.prompt_tokens * setup.price_in + lat.completion_tokens * setup.price_out
            cost = (expected + judged) * per_call / 1e6
    note = ("expected: the stopping rule simulated on a typical mix (60% easy, 25% medium, 15% hard items); the "
            "range: all easy … all hard")
    if setup.simulated:
        note += " · simulated endpoint: free"
    return Preflight(n_items, n_cal, worst, expected, None if latency is None else latency[0], seconds, cost, note,
                     (low, high), judged, span)


PROBE_MAX_PARALLEL = 16
PROBE_MIN_CALLS = 4
"""The probe times at least this many calls (one call of one item says little about the next: issue 31 item 8)."""


def probe_key(setup: RunSetup) -> tuple[Any, ...]:
    """What the probe's figure depends on: the endpoint, the model, the request, the task's first items, the
    concurrency it measures at, the judges. Setup measures again only when this changes (not on every keystroke of
    a field the probe does not read)."""
    return (setup.base_url, setup.kind, setup.api_key_env, setup.simulated, setup.model, setup.task, setup.system,
            setup.temperature, setup.max_tokens, probe_parallelism(setup), setup.verification,
            setup.verify_judge_model, setup.pairwise_judge_model, setup.pairwise_judge_url, setup.pairwise_judge_reps)


def probe_parallelism(setup: RunSetup) -> int:
    """How many requests the latency probe sends at once: the run's concurrency (at most 16)."""
    return max(1, min(int(setup.concurrency), PROBE_MAX_PARALLEL))


PROBE_PARALLEL_FLOOR_S = 20.0
"""The parallel stage of the probe always has at least this long (a loaded server's first answers)."""


def parallel_deadline(calls: int, one_call_s: float) -> float:
    """How long the parallel stage may take: ``calls`` answered one after another at 3 × the seconds the first
    call took (a one-slot server answers a batch in turn), never under :data:`PROBE_PARALLEL_FLOOR_S`."""
    return max(PROBE_PARALLEL_FLOOR_S, 3.0 * calls * one_call_s)


async def probe_latency(setup: RunSetup, *, deadline_s: float | None = None) -> Latency:
    """Measure the endpoint at the run's concurrency (issue 24 §2), starting at concurrency 1: a warm-up, then one
    timed call on its own; then :func:`probe_parallelism` requests at once, :data:`PROBE_MIN_CALLS` at least (the
    task's first items), within :func:`parallel_deadline` of the first call (``deadline_s`` instead when given). A
    server that answers one request at a time and slowly (a one-slot llama.cpp) does not fit its whole batch in that
    time, or times a request out: the probe then keeps its figure at concurrency 1 and says so
    (``Latency.parallel`` = 1, ``Latency.note``) instead of reporting "no answer within 60 s". The pre-flight
    multiplies the expected calls by the seconds one call costs, never divides a single latency by the concurrency.
    With a judge (issue 31 item 8), its verdicts are timed the same way, at the concurrency the answers were: the
    requests the run's judge pass sends (:func:`~relgate_tui.engine.judging.verify_judge.judge_of`, or the
    pairwise judge's), on the probe's own answers — a verdict is not an answer: a longer prompt,
    log-probabilities."""
    import asyncio

    from relgate_tui.engine.certification.tasks import load_task
    from relgate_tui.engine.transport.endpoints import RequestFailed
    from relgate_tui.engine.transport.probe import probe
    from relgate_tui.engine.transport.prompts import item_messages

    parallel = probe_parallelism(setup)
    calls = max(parallel, PROBE_MIN_CALLS)
    cfg = certify_config(setup, runs_dir=None)
    judged = bool(cfg.verify_judge_model or cfg.uses_pairwise_judge)  # then the whole task: are verdicts asked?
    n_items = calls + (1 if parallel == 1 else 2)  # + the warm-up's own item (the last), never timed
    task = load_task(setup.task) if judged else load_task(setup.task, limit=n_items)
    items = task.items[:n_items]
    prompts = [item_messages(item) for item in items]
    endpoint = cfg.endpoint_config()
    if parallel == 1:
        answers, timed, measured, note = await probe(endpoint, prompts, 1, calls), items[:calls], 1, ""
    else:  # concurrency 1 first (the first item, after the warm-up): what one call costs on its own
        first = await probe(endpoint, [prompts[0], prompts[-1]], 1, 1)
        budget = deadline_s if deadline_s is not None else parallel_deadline(calls, first.seconds)
        try:  # then the run's concurrency, on the next items
            answers = await asyncio.wait_for(probe(endpoint, prompts[1:-1], parallel, calls, warm_up=False), budget)
            timed, measured, note = items[1:-1], parallel, ""
        except (TimeoutError, RequestFailed) as exc:
            if isinstance(exc, RequestFailed) and exc.kind != "timeout":
                raise
            answers, timed, measured = first, items[:1], 1
            note = (f"{parallel} requests at once were not all answered within {budget:.3g} s: measured one at a "
                    f"time (the server seems to answer one request at a time; a run at concurrency {parallel} "
                    "waits in its queue)")
    judge_s = None
    if judged and judge_calls(setup, describe_task(task, setup.task), 1, 1):  # none when no verdict is asked
        judge_s = await _probe_judge(cfg, timed, answers.answers, measured)
    return Latency(answers.seconds, answers.prompt_tokens, answers.completion_tokens, judge_s, measured, note)


async def _probe_judge(cfg: CertifyConfig, items: Sequence[Any], answers: Sequence[str], parallel: int) -> float | None:
    """Seconds one verdict costs at the run's concurrency: the verification judge's request on each probed item and
    its answer (else the pairwise judge's first request comparing that answer with the next item's), ``len(items)``
    timed at ``parallel`` at once, after a warm-up when the judge is another model or endpoint. None when the judge
    does not answer (the estimate then times verdicts as answers; the run itself says what is wrong)."""
    from relgate_tui.engine.transport.probe import probe

    if cfg.verify_judge_model:
        from relgate_tui.engine.judging.verify_judge import config_of, judge_of, verify_messages

        vcfg = config_of(cfg)
        assert vcfg is not None
        judge = judge_of(vcfg)
        prompts = [verify_messages(item, answer) for item, answer in zip(items, answers, strict=False)]
    else:
        from relgate_tui.core.certification.ranking import RankedClasses
        from relgate_tui.engine.judging.certify_judge import judge_requests, pairwise_judge_of

        judge = pairwise_judge_of(cfg.pairwise_judge_config())
        pairs = zip(items, answers, [*answers[1:], answers[0]], strict=False)
        # the probe's answer and the next item's as the compared pair (two distinct classes, as the judge needs)
        prompts = [judge_requests(item, RankedClasses((a, b if b != a else b + " "), (1, 1), 2), reps=1)[0].messages
                   for item, a, b in pairs]
    endpoint = judge.endpoint_config()
    other = (judge.endpoint.rstrip("/"), judge.model) != (cfg.endpoint.rstrip("/"), cfg.model)
    try:
        measured = await probe(endpoint, [*prompts, prompts[0]] if other else prompts, parallel, len(prompts),
                               warm_up=other)
    except Exception:  # noqa: BLE001 - a judge that does not answer the probe: its verdicts are timed as answers
        return None
    return measured.seconds


def certify_config(setup: RunSetup, runs_dir: Path | None, cache_dir: Path | None = None) -> CertifyConfig:
    """The pipeline's :class:`~relgate_tui.engine.certification.certify.CertifyConfig` for a TUI setup (the sample cache lives in
    ``<cache_dir>/samples``, the CLI's default layout)."""
    return CertifyConfig(
        task=setup.task,
        endpoint=setup.base_url,
        model=setup.model,
        api_key_env=setup.api_key_env,
        canon=setup.canon or None,
        system=setup.system,
        temperature=setup.temperature,
        max_tokens=setup.max_tokens,
        k_max=setup.k_max,
        delta=setup.delta,
        stopping=setup.stopping,
        alpha=setup.alpha,
        n_cal=setup.n_cal,
        seed=setup.seed,
        concurrency=setup.concurrency,
        run_dir=None if runs_dir is None else str(runs_dir),
        price_in=setup.price_in,
        price_out=setup.price_out,
        limit=setup.limit,
        cache_dir=None if cache_dir is None else str(Path(cache_dir) / "samples"),
        pairwise_judge_endpoint=(setup.pairwise_judge_url or setup.base_url) if setup.pairwise_judge_model else None,
        pairwise_judge_model=setup.pairwise_judge_model or None,
        pairwise_judge_api_key_env=(setup.api_key_env if setup.pairwise_judge_model and not setup.pairwise_judge_url
                                    else None),
        pairwise_judge_reps=setup.pairwise_judge_reps,
        verify_judge_model=setup.verify_judge_model or None,
        verify_judge_api_key_env=setup.api_key_env if setup.verify_judge_model else None,
        batch=setup.batch,
        min_reliability=setup.min_reliability,
        gate_on=setup.gate_on or ("assisted" if setup.verify_judge_model else "bound"),  # relgate certify's default
        confidence=setup.confidence,
        one_look=setup.one_look,
        population=setup.population,
        verification=setup.verification,
        audit_fraction=setup.audit_fraction,
    )

