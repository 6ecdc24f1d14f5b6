"""The verification judge of a certification run (issue 22 §1): after sampling, an LLM judge is asked, for every
sampled item without a reference answer, whether the item's top answer correctly answers the question.

The top answer shown is a representative text of the leading class: the item's first stored sample (lowest index)
whose canonical class is the rank-1 class, cut to :data:`MAX_ANSWER_CHARS`. An item with no valid answer class has
no top answer: its verdict is "no" (an INVALID top answer is never acceptable) and nothing is asked. The judge gets
:func:`~relgate_tui.engine.judging.prompts.verification_prompt` (question and answer only — never a human label), at
temperature 0 with ``top_logprobs`` requested; the verdict f ∈ {0, 1} is the strict parse of its reply
(:func:`~relgate_tui.engine.judging.prompts.parse_yes_no`; an unparseable reply or a failed request counts as f = 0
and is counted apart — any rule that does not look at the labels keeps the bound valid), and P(yes) is
p(yes)/(p(yes) + p(no)) over the first token's alternatives when the server returned log-probabilities.

Requests go through the judging platform's :func:`~relgate_tui.engine.judging.ask` (cache — a rerun or a resume
after a kill costs zero calls —, retries, bounded concurrency, endpoint-down pause), one request per item keyed
``("verify", item id)``. The verdicts are stored with the run (``verify_verdicts.json``) and copied into the
results' ``judge_assisted`` block (:mod:`relgate_tui.engine.certification.assisted`), so the bound can be recomputed from
the results file alone.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from relgate_tui.core.redact import public_url
from relgate_tui.engine.judging.certify_judge import JudgeCalls, JudgeCertifyError, JudgeProgress, judge_question
from relgate_tui.engine.judging.prompts import parse_yes_no, verification_prompt
from relgate_tui.engine.records import TaskItem

__all__ = ["MAX_ANSWER_CHARS", "VerifyJudgeConfig", "config_of", "check_options", "judge_of", "verify_messages",
           "Verdict", "top_answer_text", "ask_verify_judge_async", "verdicts_document", "verdicts_from_document", "p_yes_from_logprobs", "failures_note"]

MAX_ANSWER_CHARS = 4000
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TOP_LOGPROBS = 5


@dataclass(frozen=True)
class VerifyJudgeConfig:
    """``--verify-judge-model`` / ``--verify-judge-endpoint`` (default: the answering endpoint) /
    ``--verify-judge-api-key-env`` (a variable's NAME, never the key). Shares the run's seed, timeout, concurrency,
    endpoint-down wait and sample cache."""

    endpoint: str
    model: str
    api_key_env: str | None = None
    timeout_s: float = 60.0
    concurrency: int = 8
    seed: int = 0
    max_down_s: float = 120.0
    cache_dir: str | None = None

    def validate(self) -> VerifyJudgeConfig:
        if not isinstance(self.endpoint, str) or not re.match(r"^https?://", self.endpoint):
            raise JudgeCertifyError("--verify-judge-endpoint must be an http(s) URL such as http://127.0.0.1:8080/v1, "
                                    f"got {self.endpoint!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise JudgeCertifyError("--verify-judge-model is required for a verification judge")
        if self.api_key_env is not None and not _ENV_NAME.match(self.api_key_env):
            raise JudgeCertifyError("--verify-judge-api-key-env takes the NAME of an environment variable, not the key")
        return self

    def identity(self) -> dict[str, Any]:
        """What makes stored verdicts reusable (the key is never part of it)."""
        return {"prompt": "verify-v1", "endpoint": public_url(self.endpoint.rstrip("/")), "model": self.model,
                "seed": self.seed}


def config_of(cfg: Any) -> VerifyJudgeConfig | None:
    """The verification judge of a :class:`~relgate_tui.engine.certification.certify.CertifyConfig` (None without
    ``verify_judge_model``); it shares the run's seed, timeout, concurrency, endpoint-down wait and sample cache, and
    the answering endpoint unless ``verify_judge_endpoint`` is given."""
    if cfg.verify_judge_model is None:
        return None
    return VerifyJudgeConfig(
        endpoint=cfg.verify_judge_endpoint or cfg.endpoint, model=cfg.verify_judge_model,
        api_key_env=cfg.verify_judge_api_key_env, timeout_s=cfg.timeout_s, concurrency=cfg.concurrency,
        seed=cfg.seed, max_down_s=cfg.max_down_s, cache_dir=cfg.cache_dir)


def check_options(cfg: Any) -> None:
    """Raise :class:`~relgate_tui.errors.CertifyError` (one line) for verification-judge options that cannot work."""
    from relgate_tui.errors import CertifyError

    judge = config_of(cfg)
    if judge is None and cfg.gate_on in ("assisted", "best"):
        raise CertifyError(f"--gate-on {cfg.gate_on} needs a verification judge (--verify-judge-model)")
    if judge is None:
        if cfg.verify_judge_endpoint is not None or cfg.verify_judge_api_key_env is not None:
            raise CertifyError("--verify-judge-endpoint / --verify-judge-api-key-env need --verify-judge-model")
        return
    try:
        judge.validate()
    except JudgeCertifyError as exc:
        raise CertifyError(str(exc)) from None


def judge_of(cfg: VerifyJudgeConfig) -> Any:
    """The :class:`~relgate_tui.engine.judging.Judge` a verification pass asks (temperature 0, a short yes/no answer
    with the first token's log-probabilities) — also what the pre-flight times (engine/certification/setup.py)."""
    from relgate_tui.engine.judging.ask import Judge

    return Judge(cfg.endpoint, cfg.model, cfg.api_key_env, 0.0, 8, top_logprobs=_TOP_LOGPROBS,
                 timeout_s=float(cfg.timeout_s))


def verify_messages(item: TaskItem, answer: str) -> tuple[dict[str, str], ...]:
    """The verification request's messages: is ``answer`` a correct answer to ``item``'s question?"""
    return tuple(verification_prompt(judge_question(item), answer))


@dataclass(frozen=True)
class Verdict:
    """The judge's verdict on one item's top answer: ``f`` (1 = correct), ``p_yes`` (None without log-probs) and
    ``status``: "ok", "unparseable", "failed" (the request was given up) or "no_answer" (no valid top answer)."""

    f: int
    p_yes: float | None
    status: str


def top_answer_text(samples: Sequence[Any], top_class: str) -> str | None:
    """The first stored sample's raw text (lowest index) whose canonical class is ``top_class``, cut to
    :data:`MAX_ANSWER_CHARS`."""
    for s in sorted(samples, key=lambda s: s.index):
        if s.canonical == top_class:
            return str(s.text)[:MAX_ANSWER_CHARS]
    return None


def p_yes_from_logprobs(tokens: Any) -> float | None:
    """p(yes)/(p(yes) + p(no)) from the first non-blank generated token's alternatives (case and spaces ignored),
    None when there are no log-probabilities or neither word is among them."""
    if not tokens:
        return None
    for tok in tokens:
        if tok.token.strip():
            yes = no = 0.0
            for alt, lp in (tok.top or ((tok.token, tok.logprob),)):
                word = alt.strip().casefold()
                if word == "yes":
                    yes += math.exp(lp)
                elif word == "no":
                    no += math.exp(lp)
            return yes / (yes + no) if yes + no > 0 else None
    return None


async def ask_verify_judge_async(
    items: Sequence[TaskItem],
    top_answers: Mapping[str, str | None],
    cfg: VerifyJudgeConfig,
    *,
    cache: Any = None,
    on_progress: Callable[[JudgeProgress], None] | None = None,
    on_sampler: Callable[[Any], None] | None = None,
) -> tuple[dict[str, Verdict], JudgeCalls]:
    """Ask the judge about every item of ``items`` listed in ``top_answers`` (item id → top answer text, None = no
    valid top answer: verdict "no", not asked). Returns the verdict per item and the call counts. Raises
    :class:`~relgate_tui.engine.judging.certify_judge.JudgeCertifyError` (one line) when the judge cannot be reached."""
    from relgate_tui.engine.judging import Answer, AskCalls, AskFailed, EndpointState, Request, ask
    from relgate_tui.engine.judging.ask import check_reachable, uncached
    from relgate_tui.engine.judging.certify_judge import _open_cache as open_cache
    from relgate_tui.errors import EndpointError

    cfg.validate()
    judge = judge_of(cfg)
    verdicts: dict[str, Verdict] = {}
    requests: list[Any] = []
    for item in items:
        if item.id not in top_answers:
            continue
        answer = top_answers[item.id]
        if answer is None:
            verdicts[item.id] = Verdict(0, None, "no_answer")
            continue
        requests.append(Request(("verify", item.id), verify_messages(item, answer)))
    if not requests:
        return verdicts, JudgeCalls()
    own_cache = cache is None
    if own_cache:
        cache = open_cache(cfg)  # type: ignore[arg-type]  # reads only cache_dir
    calls = AskCalls()
    try:
        if uncached(judge, requests, 1, cfg.seed, cache):
            if cfg.api_key_env and not os.environ.get(cfg.api_key_env):
                raise JudgeCertifyError(f"the verification judge's API key variable {cfg.api_key_env} is not set "
                                        "(or empty)")
            try:
                await check_reachable(judge)
            except EndpointError as exc:
                raise JudgeCertifyError(f"cannot reach the verification judge endpoint {exc}") from None
        done, total = 0, len(requests)
        sampler: list[Any] = []

        def keep(s: Any) -> None:
            sampler.append(s)
            if on_sampler is not None:
                on_sampler(s)

        try:
            async for event in ask(judge, requests, reps=1, seed=cfg.seed, cache=cache, concurrency=cfg.concurrency,
                                   max_down_s=cfg.max_down_s, calls=calls, on_sampler=keep):
                message = None
                if isinstance(event, Answer):
                    f = parse_yes_no(event.text)
                    verdicts[event.key[1]] = Verdict(int(f or 0), p_yes_from_logprobs(event.logprobs),
                                                     "ok" if f is not None else "unparseable")
                    done += 1
                elif isinstance(event, AskFailed) and event.final:
                    verdicts[event.key[1]] = Verdict(0, None, "failed")
                    done += 1
                    message = f"verification judge, item {event.key[1]}: {event.kind}: {event.message}"
                elif isinstance(event, EndpointState):
                    message = f"verification judge: {event.message}"
                else:
                    continue
                if on_progress is not None and sampler:
                    t = sampler[0].totals
                    on_progress(JudgeProgress(min(done, total), total, t.made, t.cached, t.failed, message))
        except EndpointError as exc:
            raise JudgeCertifyError(f"verification judge: {str(exc).split(': ', 1)[-1]}") from None
    finally:
        if own_cache:
            cache.close()
    for request in requests:  # a request that ended without an event (cancelled) has no verdict: "failed"
        verdicts.setdefault(request.key[1], Verdict(0, None, "failed"))
    return verdicts, JudgeCalls(calls.made, calls.cached, calls.failed, calls.retries, calls.prompt_tokens,
                                calls.completion_tokens)


def failures_note(block: Mapping[str, Any]) -> str | None:
    """The line a summary owes its reader when some of the judge's "no" verdicts are no verdicts at all (issue 29
    N15): requests given up on (a non-JSON or oversized response, a timeout) and replies that are neither yes nor no.
    They count as f = 0 — a rule blind to the labels, so the bound stays valid and can only be lower — but they are
    counted failures, never the judge's opinion. None when every verdict was a real one."""
    failed = int(block.get("n_judge_failed") or 0)
    unparseable = int(block.get("n_judge_unparseable") or 0)
    if not failed and not unparseable:
        return None
    n = int(block.get("n_judged") or 0)
    parts = []
    if failed:
        parts.append(f"{failed} of {n} verification-judge requests failed")
    if unparseable:
        parts.append(f"{unparseable} repl{'y was' if unparseable == 1 else 'ies were'} neither yes nor no")
    return (" and ".join(parts) + ": not verdicts, counted as 'no' (the assisted bound can only be lower)"
            + ("; rerun the same command to ask the failed ones again" if failed else ""))


def verdicts_document(cfg: VerifyJudgeConfig, verdicts: Mapping[str, Verdict]) -> dict[str, Any]:
    """What the run store keeps (``verify_verdicts.json``): the judge's identity and per item [f, p_yes, status]."""
    return {"judge": cfg.identity(), "items": {k: [v.f, v.p_yes, v.status] for k, v in verdicts.items()}}


def verdicts_from_document(doc: Mapping[str, Any] | None, cfg: VerifyJudgeConfig) -> dict[str, Verdict] | None:
    """The verdicts of :func:`verdicts_document` back; None when missing, malformed or made by another judge."""
    if not isinstance(doc, Mapping) or doc.get("judge") != cfg.identity() or not isinstance(doc.get("items"), Mapping):
        return None
    out: dict[str, Verdict] = {}
    for item_id, row in doc["items"].items():
        if not (isinstance(row, list) and len(row) == 3 and row[0] in (0, 1) and not isinstance(row[0], bool)
                and (row[1] is None or (isinstance(row[1], (int, float)) and not isinstance(row[1], bool)
                                        and 0.0 <= row[1] <= 1.0))
                and row[2] in ("ok", "unparseable", "failed", "no_answer")):
            return None
        out[str(item_id)] = Verdict(int(row[0]), None if row[1] is None else float(row[1]), str(row[2]))
    return out
