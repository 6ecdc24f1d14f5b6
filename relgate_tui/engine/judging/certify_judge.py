"""The optional pairwise judge inside certification (issue 4 item 3; paper 000 §3.1 applied to answer classes).

For every item with at least two observed answer classes, the judge is shown the item's question and two of its top
candidate classes (the ``max_classes`` ≤ 6 most frequent, in frequency order) and asked "which answer is correct?"
(:func:`~relgate_tui.engine.judging.prompts.correctness_pairwise_prompt`) under paper 000's protocol
(:mod:`relgate_tui.core.judge.protocol`, issue 11 §2): every pair gets an **odd** number k = ``reps`` of verdicts
(default 3, paper 000 §3.1 "k = 3"), each with its presentation order drawn by a fair seeded coin
(:func:`~relgate_tui.core.judge.plan_pairwise` from the run seed and the item id). Per item:

* the majority tournament of the verdicts (:func:`relgate_tui.core.judge.build_tournament`): k odd, so every pair
  with k valid verdicts has a winner; a pair left without a strict majority by unparseable replies has no edge
  (it is not re-asked here), its directed 3-cycles and ρ(x) = #cycles / #decided triples
  (:func:`~relgate_tui.core.judge.transitivity_report`; = paper eq. 1's #cycles / C(n, 3) when every pair is
  decided). A judge that always picks the first-shown answer therefore gets a uniformly random majority per pair
  and ρ ≈ 1/4 (the random baseline) instead of looking perfectly transitive; it is caught by
  :func:`~relgate_tui.core.judge.position_consistency` (flag ``position_only``);
* the **judge ranking**: the exact weighted-MFAS order of the compared classes (CP-SAT, minimising the total margin
  of reversed verdicts; among orders of equal cost the frequency order decides — MFAS ``priority``), followed by
  the classes beyond the top ``max_classes`` in frequency order;
* the **judge-rank nonconformity score** s_J(x) = the rank, in the judge ranking, of the first acceptable class
  (+∞ when no observed class is acceptable) — the same construction as the frequency rank score (paper 004
  eq. 10.1) with the judge's order in place of the frequency order.

s_J is calibrated with the *same* labels as the frequency score (:mod:`relgate_tui.core.certification.certify`), so the results
show the reliability level 1 − α* = #{s ≤ 1}/(n + 1), its Clopper–Pearson bound and M* for both rankings side by
side. Which classes are acceptable comes from the item's verdict:

* a reference (automatic verification): the canonicalized reference classes — exact;
* a human or labels-file verdict "rank r is acceptable": the frequency-rank-r class is acceptable and ranks 1..r−1
  were rejected; classes below rank r were never looked at and are treated as **not acceptable**. s_J is then an
  upper bound of the true judge score, so the judge's reliability is, if anything, under-reported (conservative);
* "none acceptable": s_J = +∞ as well; "skip": skipped for both rankings.

Conformal validity of the judge ranking needs only that the judge's order of an item depends on the item (its
question and its samples) and not on its label — true here — so calibration and deployment items are exchangeable
as for the frequency score (paper 004 §6).

Requests go through the judging platform's :func:`~relgate_tui.engine.judging.ask` (the sampler underneath: cache —
a rerun costs zero calls —, retries, bounded concurrency, endpoint-down pause), one request per verdict keyed
``("correct", item, first, second, index)`` (index = the verdict's number within its pair), asked once, with a
per-answer seed derived from the run seed and that key.

Entry points for the pipeline and the TUI:

* :func:`ask_pairwise_judge` / :func:`ask_pairwise_judge_async` — ask only (needs the ranked classes, not the
  labels; the TUI can run it right after sampling); :func:`judge_item` — the per-item tournament, cycles and judge
  ranking; :func:`judgement_section` — combine judgements with the labels at any α;
* :func:`judge_calls_needed` — the pre-flight number of judge answers.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from relgate_tui.core import judge as cj
from relgate_tui.core.certification.ranking import RankedClasses
from relgate_tui.core.redact import public_url
from relgate_tui.core.types import INVALID
from relgate_tui.engine.judging.prompts import correctness_pairwise_prompt, parse_pairwise_verdict
from relgate_tui.engine.records import TaskItem

__all__ = [
    "MAX_JUDGE_CLASSES", "JudgeCertifyError", "PairwiseJudgeConfig", "JudgeProgress", "JudgeCalls", "ItemJudgement",
    "judge_question", "compared_classes", "judge_plan", "judge_requests", "judge_calls_needed", "item_verdicts",
    "judge_item", "judge_rank_score", "acceptable_from_verdict", "pairwise_judge_of", "ask_pairwise_judge_async",
    "ask_pairwise_judge", "judge_items",
    "verdicts_document", "verdicts_from_document",
]

MAX_JUDGE_CLASSES = 6
"""At most this many top candidate classes per item are compared (issue 4 item 3)."""

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_REQUEST_KIND = "correct"


class JudgeCertifyError(ValueError):
    """A user-facing error of the pairwise judge (bad option, unreachable judge endpoint). One-line message."""


# ------------------------------------------------------------------------------------------------------ config
@dataclass(frozen=True)
class PairwiseJudgeConfig:
    """The pairwise judge of a certification run (``--pairwise-judge-endpoint/--pairwise-judge-model``). ``reps``:
    k, the odd number of verdicts per pair (paper 000 protocol, each with a seeded random presentation order); ``max_classes``: top classes compared per item (2..6); ``seed``: the run
    seed (per-request seeds derive from it); ``cache_dir`` None = ``<cache dir>/samples`` (certification's cache).
    ``api_key_env`` is the NAME of an environment variable, never the key."""

    endpoint: str
    model: str
    api_key_env: str | None = None
    reps: int = 3
    max_classes: int = MAX_JUDGE_CLASSES
    temperature: float = 0.7
    max_tokens: int | None = 16
    timeout_s: float = 60.0
    concurrency: int = 8
    seed: int = 0
    max_down_s: float = 120.0
    cache_dir: str | None = None

    def validate(self) -> PairwiseJudgeConfig:
        """Raise :class:`JudgeCertifyError` (one line) for an option value that cannot work; return self."""

        def bad(message: str) -> None:
            raise JudgeCertifyError(message)

        if not isinstance(self.endpoint, str) or not re.match(r"^https?://", self.endpoint):
            bad("--pairwise-judge-endpoint must be an http(s) URL such as http://127.0.0.1:8080/v1, "
                f"got {self.endpoint!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            bad("--pairwise-judge-model is required with --pairwise-judge-endpoint")
        if self.api_key_env is not None and not _ENV_NAME.match(self.api_key_env):
            bad("the judge's API key option takes the NAME of an environment variable, not the key itself")
        if not (_is_int(self.reps) and 1 <= self.reps <= 50):
            bad(f"judge repetitions must be an integer in [1, 50], got {self.reps!r}")
        if self.reps % 2 == 0:
            bad(f"--pairwise-judge-reps must be odd (paper 000: every pair needs a majority winner), got {self.reps}")
        if not (_is_int(self.max_classes) and 2 <= self.max_classes <= MAX_JUDGE_CLASSES):
            bad(f"judge classes per item must be an integer in [2, {MAX_JUDGE_CLASSES}], got {self.max_classes!r}")
        if not (_is_number(self.temperature) and 0.0 <= self.temperature <= 2.0):
            bad(f"judge temperature must be in [0, 2], got {self.temperature!r}")
        if self.max_tokens is not None and not (_is_int(self.max_tokens) and self.max_tokens >= 1):
            bad(f"judge max tokens must be a positive integer, got {self.max_tokens!r}")
        if not (_is_number(self.timeout_s) and self.timeout_s > 0):
            bad(f"judge request timeout must be positive, got {self.timeout_s!r}")
        if not (_is_int(self.concurrency) and 1 <= self.concurrency <= 1024):
            bad(f"judge concurrency must be an integer in [1, 1024], got {self.concurrency!r}")
        if not (_is_int(self.seed) and self.seed >= 0):
            bad(f"seed must be a non-negative integer, got {self.seed!r}")
        if not (_is_number(self.max_down_s) and self.max_down_s >= 0):
            bad(f"the endpoint-down wait must be non-negative, got {self.max_down_s!r}")
        return self

    def endpoint_config(self) -> Any:
        from relgate_tui.engine.transport.endpoints import EndpointConfig

        return EndpointConfig(self.endpoint, self.model, api_key_env=self.api_key_env,
                              temperature=float(self.temperature), max_tokens=self.max_tokens,
                              timeout_s=float(self.timeout_s))

    def public_dict(self) -> dict[str, Any]:
        return {"endpoint": public_url(self.endpoint), "model": self.model, "api_key_env": self.api_key_env,
                "reps": self.reps,
                "max_classes": self.max_classes, "temperature": self.temperature, "max_tokens": self.max_tokens}


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and math.isfinite(x)


# ------------------------------------------------------------------------------------------------------ requests
def judge_question(item: TaskItem) -> str:
    """The text the model was asked (the last user message of ``item_messages(item)``: an MCQ keeps its lettered
    options), shown to the judge as the question."""
    from relgate_tui.engine.transport.prompts import item_messages

    for message in reversed(item_messages(item)):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return item.question


def compared_classes(ranked: RankedClasses, max_classes: int = MAX_JUDGE_CLASSES) -> tuple[str, ...]:
    """The top ``max_classes`` classes in frequency order (INVALID is never a ranked class)."""
    return tuple(ranked.classes[:max_classes])


def _request_key(item_id: str, ask: cj.PlannedAsk) -> tuple[str, ...]:
    return (_REQUEST_KIND, item_id, ask.first, ask.second, str(ask.index))


def judge_plan(item_id: str, compared: Sequence[str], reps: int = 3, seed: int = 0) -> cj.PairwisePlan:
    """The protocol's asks for one item: every pair of ``compared`` × ``reps`` (odd) verdicts, each with its seeded
    random presentation order (:func:`relgate_tui.core.judge.plan_pairwise` with the run seed and the item id)."""
    return cj.plan_pairwise(compared, k=reps, seed=seed, input_id=item_id)


def judge_requests(item: TaskItem, ranked: RankedClasses, max_classes: int = MAX_JUDGE_CLASSES, reps: int = 3,
                   seed: int = 0) -> list[Any]:
    """One :class:`~relgate_tui.engine.judging.Request` per planned verdict (asked once), keyed
    ``("correct", item_id, first, second, index)``: C(m, 2) · ``reps`` requests for m compared classes. Empty when
    fewer than two classes were observed."""
    from relgate_tui.engine.judging import Request

    compared = compared_classes(ranked, max_classes)
    if len(compared) < 2:
        return []
    question = judge_question(item)
    return [Request(_request_key(item.id, a), tuple(correctness_pairwise_prompt(question, a.first, a.second)))
            for a in judge_plan(item.id, compared, reps, seed).asks]


def judge_calls_needed(ranked_by_item: Mapping[str, RankedClasses], max_classes: int = MAX_JUDGE_CLASSES,
                       reps: int = 3) -> int:
    """Judge answers a run needs (cached or not): Σ over items of C(min(m, max_classes), 2) · reps."""
    return sum(math.comb(min(r.n_classes, max_classes), 2) * reps for r in ranked_by_item.values())


def item_verdicts(item_id: str, compared: Sequence[str], answers: Mapping[tuple[str, ...], Sequence[str]],
                  reps: int = 3, seed: int = 0) -> list[cj.PairwiseVerdict]:
    """The verdicts collected for one item under its plan: parsed answers "A" (first shown is correct), "B" or
    INVALID; a planned verdict that got no answer (a failed request) is simply absent."""
    verdicts = []
    for a in judge_plan(item_id, compared, reps, seed).asks:
        for v in answers.get(_request_key(item_id, a), ()):
            winner = a.first if v == "A" else a.second if v == "B" else INVALID
            verdicts.append(cj.PairwiseVerdict(a.first, a.second, winner))
    return verdicts


# ------------------------------------------------------------------------------------------------------ per item
@dataclass(frozen=True)
class ItemJudgement:
    """The judge's view of one item. ``order`` ranks *every* observed class (best first): the MFAS order of the
    ``compared`` classes, then the rest in frequency order. ``mfas`` is None when fewer than two classes were
    compared (no request was made; ``order`` is the frequency order)."""

    item_id: str
    frequency_order: tuple[str, ...]
    compared: tuple[str, ...]
    verdicts: tuple[cj.PairwiseVerdict, ...]
    tournament: cj.Tournament
    cycles: cj.TransitivityReport
    mfas: cj.MfasResult | None
    order: tuple[str, ...]

    @property
    def judged(self) -> bool:
        return len(self.compared) >= 2

    def score(self, acceptable: Collection[str]) -> float:
        """s_J = :func:`judge_rank_score` of this item's judge order."""
        return judge_rank_score(self.order, acceptable)

    def prediction_set(self, m_star: float) -> tuple[str, ...]:
        """The top-M* classes of the judge order (every observed class when M* = ∞)."""
        return self.order if math.isinf(m_star) else self.order[: int(m_star)]


def judge_rank_score(order: Sequence[str], acceptable: Collection[str]) -> float:
    """Rank (1-based, as a float) of the first acceptable class in ``order``; +∞ when none is (paper 004 eq. 10.1
    with the judge's order). INVALID is never acceptable."""
    if isinstance(acceptable, str):
        raise TypeError("acceptable must be a collection of class strings, not a single string")
    wanted = set(acceptable) - {INVALID}
    for rank, cls in enumerate(order, start=1):
        if cls in wanted:
            return float(rank)
    return math.inf


def judge_item(item_id: str, ranked: RankedClasses, verdicts: Sequence[cj.PairwiseVerdict],
               max_classes: int = MAX_JUDGE_CLASSES, mfas_time_limit_s: float = 10.0) -> ItemJudgement:
    """Tournament, 3-cycles (ρ over decided triples, :func:`~relgate_tui.core.judge.transitivity_report`) and
    MFAS-repaired judge ranking of one item (pure). The compared classes enter the tournament in frequency order
    and the MFAS ``priority`` is that order, so orders of equal cost — including those differing only across an
    unresolved pair (no valid majority) — keep the more frequent class first (the documented certification
    choice, deterministic, instead of the audit's seeded random tie-break)."""
    compared = compared_classes(ranked, max_classes)
    tournament = cj.build_tournament(verdicts, compared)
    cycles = cj.transitivity_report(tournament)
    if len(compared) >= 2:
        # ties between orders of equal cost keep the frequency order (the tournament's nodes are in that order)
        mfas = cj.mfas_exact(tournament, time_limit_s=mfas_time_limit_s, priority=range(len(compared)))
        head = tuple(mfas.ranking.order)
    else:
        mfas, head = None, compared
    order = head + tuple(ranked.classes[len(compared):])
    return ItemJudgement(item_id, tuple(ranked.classes), compared, tuple(verdicts), tournament, cycles, mfas, order)


def acceptable_from_verdict(ranked: RankedClasses, verified_by: str | None, score: float | None, skipped: bool,
                            reference: Collection[str] | None) -> set[str] | None:
    """Which classes count as acceptable for the judge score, from the item's verdict (module docstring): the
    reference classes; for a human/file rank r, the frequency-rank-r class only; "none" → ∅ (score ∞); None when
    the item is skipped or not verified."""
    if skipped or score is None or verified_by is None:
        return None
    if verified_by == "reference":
        return set(reference or ())
    if math.isinf(score):
        return set()
    rank = int(score)
    return {ranked.classes[rank - 1]} if 1 <= rank <= ranked.n_classes else set()


# ------------------------------------------------------------------------------------------------------ asking
@dataclass(frozen=True)
class JudgeProgress:
    """``done`` of ``total`` judge answers (parsed replies, cached or new, or requests that failed for good)."""

    done: int
    total: int
    made: int
    cached: int
    failed: int
    message: str | None = None


@dataclass(frozen=True)
class JudgeCalls:
    made: int = 0
    cached: int = 0
    failed: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _verdict_class(text: str, choices: Sequence[str] = ()) -> str:
    return parse_pairwise_verdict(text) or INVALID


def _open_cache(cfg: PairwiseJudgeConfig) -> Any:
    from pathlib import Path

    from relgate_tui.engine.runs.paths import cache_dir
    from relgate_tui.engine.transport.cache import SampleCache

    path = Path(cfg.cache_dir) if cfg.cache_dir else cache_dir() / "samples"
    try:
        return SampleCache(path)
    except OSError as exc:
        raise JudgeCertifyError(f"cannot open the sample cache {path}: {exc.strerror or exc}") from None


def pairwise_judge_of(cfg: PairwiseJudgeConfig) -> Any:
    """The :class:`~relgate_tui.engine.judging.Judge` a pairwise pass asks — also what the pre-flight times."""
    from relgate_tui.engine.judging.ask import Judge

    return Judge(cfg.endpoint, cfg.model, cfg.api_key_env, float(cfg.temperature), cfg.max_tokens,
                 timeout_s=float(cfg.timeout_s))


async def ask_pairwise_judge_async(
    items: Sequence[TaskItem],
    ranked_by_item: Mapping[str, RankedClasses],
    cfg: PairwiseJudgeConfig,
    *,
    cache: Any = None,
    on_progress: Callable[[JudgeProgress], None] | None = None,
    on_sampler: Callable[[Any], None] | None = None,
) -> tuple[dict[str, list[cj.PairwiseVerdict]], JudgeCalls]:
    """Ask the judge about every item of ``items`` that has ≥ 2 ranked classes in ``ranked_by_item`` (paper 000's
    protocol: every pair × ``cfg.reps`` verdicts with seeded random orders, each asked once) through the sampler; returns the verdicts per item id and the call counts. The API-key variable
    and the endpoint are checked first when some answer is not cached. ``on_sampler`` receives the sampler (pause /
    resume from the TUI). Raises :class:`JudgeCertifyError` (one line) when the judge cannot be reached."""
    from relgate_tui.engine.judging import Answer, AskCalls, AskFailed, EndpointState, ask
    from relgate_tui.engine.judging.ask import check_reachable, uncached
    from relgate_tui.errors import EndpointError

    cfg.validate()
    judge = pairwise_judge_of(cfg)
    compared: dict[str, tuple[str, ...]] = {}
    requests: list[Any] = []
    for item in items:
        ranked = ranked_by_item.get(item.id)
        if ranked is None or ranked.n_classes < 2:
            continue
        compared[item.id] = compared_classes(ranked, cfg.max_classes)
        requests += judge_requests(item, ranked, cfg.max_classes, cfg.reps, cfg.seed)
    if not requests:
        return {item_id: [] for item_id in compared}, JudgeCalls()
    own_cache = cache is None
    if own_cache:
        cache = _open_cache(cfg)
    try:
        if uncached(judge, requests, 1, cfg.seed, cache):
            if cfg.api_key_env and not os.environ.get(cfg.api_key_env):
                raise JudgeCertifyError(f"the judge's API key variable {cfg.api_key_env} is not set (or empty)")
            try:
                await check_reachable(judge)
            except EndpointError as exc:
                raise JudgeCertifyError(f"cannot reach the pairwise judge endpoint {exc}") from None  # URL public
        indexed: dict[tuple[str, ...], list[tuple[int, str]]] = {r.key: [] for r in requests}
        total, done = len(requests), 0
        sampler: list[Any] = []
        calls = AskCalls()

        def keep(s: Any) -> None:
            sampler.append(s)
            if on_sampler is not None:
                on_sampler(s)

        try:
            async for event in ask(judge, requests, reps=1, seed=cfg.seed, cache=cache,
                                   concurrency=cfg.concurrency, max_down_s=cfg.max_down_s, calls=calls,
                                   on_sampler=keep):
                message = None
                if isinstance(event, Answer):
                    indexed[event.key].append((event.rep, _verdict_class(event.text)))
                    done += 1
                elif isinstance(event, AskFailed) and event.final:
                    done += 1 - len(indexed[event.key])  # this verdict gets no answer
                    message = (f"judge {event.key[1]}: {event.key[2]} vs {event.key[3]} verdict "
                               f"{int(event.key[4]) + 1}: "
                               f"{event.kind}: {event.message}")
                elif isinstance(event, EndpointState):
                    message = (f"pairwise judge: {event.message}" if event.down
                               else f"pairwise judge {event.message}")
                else:
                    continue
                if on_progress is not None:
                    t = sampler[0].totals
                    on_progress(JudgeProgress(min(done, total), total, t.made, t.cached, t.failed, message))
        except EndpointError as exc:
            raise JudgeCertifyError(f"pairwise judge: {str(exc).split(': ', 1)[-1]}") from None
        judge_calls = JudgeCalls(calls.made, calls.cached, calls.failed, calls.retries, calls.prompt_tokens,
                                 calls.completion_tokens)
    finally:
        if own_cache:
            cache.close()
    answers = {k: [c for _, c in sorted(v)] for k, v in indexed.items()}
    return ({item_id: item_verdicts(item_id, classes, answers, cfg.reps, cfg.seed)
             for item_id, classes in compared.items()},
            judge_calls)


def ask_pairwise_judge(
    items: Sequence[TaskItem],
    ranked_by_item: Mapping[str, RankedClasses],
    cfg: PairwiseJudgeConfig,
    *,
    cache: Any = None,
    on_progress: Callable[[JudgeProgress], None] | None = None,
) -> tuple[dict[str, list[cj.PairwiseVerdict]], JudgeCalls]:
    """Blocking :func:`ask_pairwise_judge_async` (the CLI pipeline)."""
    return asyncio.run(ask_pairwise_judge_async(items, ranked_by_item, cfg, cache=cache, on_progress=on_progress))


def judge_items(ranked_by_item: Mapping[str, RankedClasses], verdicts_by_item: Mapping[str, Sequence[cj.PairwiseVerdict]],
                max_classes: int = MAX_JUDGE_CLASSES) -> dict[str, ItemJudgement]:
    """:func:`judge_item` for every item (items without verdicts keep their frequency order)."""
    return {item_id: judge_item(item_id, ranked, verdicts_by_item.get(item_id, ()), max_classes)
            for item_id, ranked in ranked_by_item.items()}


def verdicts_document(cfg: PairwiseJudgeConfig, verdicts_by_item: Mapping[str, Sequence[cj.PairwiseVerdict]]
                      ) -> dict[str, Any]:
    """What the run store keeps (``judge_verdicts.json``): the judge's identity and, per item, its verdicts as
    ``[first, second, winner]`` (winner = INVALID for an unparseable reply)."""
    return {"judge": _judge_identity(cfg),
            "items": {item_id: [[v.first, v.second, v.winner] for v in vs] for item_id, vs in verdicts_by_item.items()}}


def _judge_identity(cfg: PairwiseJudgeConfig) -> dict[str, Any]:
    # "protocol": verdicts stored by the earlier both-orders design are not reused (asked again, cache permitting)
    return {"protocol": "paper000", "endpoint": public_url(cfg.endpoint.rstrip("/")), "model": cfg.model,
            "reps": cfg.reps,
            "max_classes": cfg.max_classes, "temperature": cfg.temperature, "seed": cfg.seed}


def verdicts_from_document(doc: Mapping[str, Any] | None, cfg: PairwiseJudgeConfig
                           ) -> dict[str, list[cj.PairwiseVerdict]] | None:
    """The verdicts of :func:`verdicts_document` back, or None when ``doc`` is missing, malformed or was made by a
    different judge configuration (then the judge must be asked again — the cache makes repeats free)."""
    if not isinstance(doc, Mapping) or doc.get("judge") != _judge_identity(cfg):
        return None
    items = doc.get("items")
    if not isinstance(items, Mapping):
        return None
    out: dict[str, list[cj.PairwiseVerdict]] = {}
    for item_id, rows in items.items():
        if not isinstance(rows, list) or not all(isinstance(r, list) and len(r) == 3 and
                                                 all(isinstance(x, str) for x in r) for r in rows):
            return None
        out[str(item_id)] = [cj.PairwiseVerdict(*r) for r in rows]
    return out
