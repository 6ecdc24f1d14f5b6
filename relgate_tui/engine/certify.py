"""The certification pipeline (SPEC §3–4, issue 5 items 3, 6, 7): task → samples → ranking → verification → results.

Phases (each usable on its own; the CLI runs them all through :func:`run_certify`, the TUI calls them one by one):

1. :func:`prepare` — validate the :class:`CertifyConfig`, load the task, resolve the canonicalizer, split the items
   (:func:`split_items`: a seeded permutation of the sorted ids — never file order), open or resume the run
   (:class:`~relgate_tui.engine.runstore.RunStore`; the run id is a hash of everything that determines the samples,
   so the same command resumes the same run).
2. :func:`sample_run` — sample every item through the sampler (bounded concurrency, retries, sequential stopping,
   K_max cap), resuming from the run store and the request cache; each completed sample is appended to the run
   before the sampler can issue that item's next request.
3. Verification — automatic from the task's references (canonicalized by the same canonicalizer as the samples),
   and/or verdicts from a labels file (:func:`parse_labels_file`, :func:`apply_labels`; persisted in the run store,
   fsync per verdict, applied idempotently so a rerun after a crash converges to the same labels) or from the TUI.
   A human/file verdict on an item takes precedence over its reference verdict.
4. :func:`analyse` → :class:`Analysis` (per-item ranking with a seeded generator per item, scores, the core's
   :class:`~relgate_tui.core.certify.CertificationInput`), then :func:`results_document` at any α — the JSON of
   issue 5 item 7 (no timing fields, so an identical run gives an identical document apart from ``calls``, which
   by definition describes the invocation).

Samples used per item: the stored samples are read in index order and the stopping rule (the same rule and
canonicalizer the sampler used) is replayed on them, capped at K_max; samples beyond the stopping point (requests
already in flight when the rule fired) are stored and counted as paid, but not used. The results are therefore a
function of the stored samples only — independent of concurrency, completion order and of where a crash happened.

Crash-test seam: when the environment variable ``RELGATE_CRASH_AFTER_LABELS=N`` is set, the process SIGKILLs itself
right after persisting the N-th label event of the invocation (used by ``tests/engine/test_crash_resume.py`` to
land a kill mid-labelling deterministically; it has no other effect).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import signal
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from relgate_tui import __version__
from relgate_tui.core import certify as core_certify
from relgate_tui.core.conformal import prediction_set
from relgate_tui.core.ranking import RankedClasses, rank_classes
from relgate_tui.core.readouts import readout_json
from relgate_tui.core.redact import public_url
from relgate_tui.core.types import INVALID
from relgate_tui.engine.runstore import Label, RunStore, StoredSample

__all__ = [
    "CertifyError",
    "CertifyConfig",
    "CallCounts",
    "Prepared",
    "ItemAnalysis",
    "Analysis",
    "CertifyOutcome",
    "split_items",
    "item_rng",
    "used_sample_count",
    "parse_labels_file",
    "apply_labels",
    "prepare",
    "sample_run",
    "SamplingProgress",
    "sampling_job",
    "make_sampler",
    "open_cache",
    "check_reachable",
    "analyse",
    "results_document",
    "run_certify",
    "CRASH_AFTER_LABELS_ENV",
]

CRASH_AFTER_LABELS_ENV = "RELGATE_CRASH_AFTER_LABELS"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
STOPPING_CHOICES = ("anytime", "paper", "none")


class CertifyError(ValueError):
    """A user-facing pipeline error (bad option, bad labels file, unreachable endpoint …). One-line message."""


# ------------------------------------------------------------------------------------------------------------ config
@dataclass(frozen=True)
class CertifyConfig:
    """Everything ``relgate certify`` takes (issue 5 item 7). ``canon`` None = the task's suggested canonicalizer;
    ``n_cal`` None = half the items (rounded down); ``limit`` None = every item (else the first ``limit`` items of
    the task file); ``max_tokens`` None = the server's default; ``min_reliability`` None = no gate; prices are per
    million tokens. ``api_key_env`` is the NAME of an environment variable, never the key."""

    task: str
    endpoint: str
    model: str
    api_key_env: str | None = None
    canon: str | None = None
    system: str | None = None
    temperature: float = 0.7
    max_tokens: int | None = None
    k_max: int = 20
    delta: float = 0.05
    stopping: str = "anytime"
    alpha: float = 0.10
    n_cal: int | None = None
    seed: int = 0
    concurrency: int = 8
    labels: str | None = None
    min_reliability: float | None = None
    gate_on: str = "bound"  # "bound" (lower confidence bound, default) | "level"
    run_dir: str | None = None
    price_in: float | None = None
    price_out: float | None = None
    limit: int | None = None
    confidence: float = 0.95
    timeout_s: float = 60.0
    max_down_s: float = 120.0
    cache_dir: str | None = None
    pairwise_judge_endpoint: str | None = None
    pairwise_judge_model: str | None = None
    pairwise_judge_api_key_env: str | None = None
    pairwise_judge_reps: int = 3

    @property
    def uses_pairwise_judge(self) -> bool:
        return self.pairwise_judge_endpoint is not None or self.pairwise_judge_model is not None

    def pairwise_judge_config(self) -> Any:
        """The :class:`~relgate_tui.engine.judge_certify.PairwiseJudgeConfig` of the optional pairwise judge (None
        without one). It shares the run's seed, timeout, concurrency, endpoint-down wait and sample cache."""
        if not self.uses_pairwise_judge:
            return None
        from relgate_tui.engine.judge_certify import PairwiseJudgeConfig

        return PairwiseJudgeConfig(
            endpoint=self.pairwise_judge_endpoint or "", model=self.pairwise_judge_model or "",
            api_key_env=self.pairwise_judge_api_key_env, reps=self.pairwise_judge_reps, timeout_s=self.timeout_s,
            concurrency=self.concurrency, seed=self.seed, max_down_s=self.max_down_s, cache_dir=self.cache_dir)

    def endpoint_config(self) -> Any:
        """The sampler's :class:`~relgate_tui.engine.endpoints.EndpointConfig` (OpenAI-compatible chat)."""
        from relgate_tui.engine.endpoints import EndpointConfig

        return EndpointConfig(
            base_url=self.endpoint,
            model=self.model,
            kind="openai",
            api_key_env=self.api_key_env,
            system=self.system,
            temperature=float(self.temperature),
            max_tokens=self.max_tokens,
            timeout_s=float(self.timeout_s),
        )

    def validate(self) -> CertifyConfig:
        """Raise :class:`CertifyError` (one line) for an option value that cannot work; return self."""

        def bad(msg: str) -> None:
            raise CertifyError(msg)

        if not self.task or not str(self.task).strip():
            bad("--task is required (a bundled task name or a .jsonl/.csv file; `relgate tasks` lists them)")
        if not self.endpoint or not re.match(r"^https?://", self.endpoint):
            bad(f"--endpoint must be an http(s) URL such as http://127.0.0.1:8080/v1, got {self.endpoint!r}")
        if not self.model or not self.model.strip():
            bad("--model is required")
        if self.api_key_env is not None and not _ENV_NAME.match(self.api_key_env):
            bad("--api-key-env takes the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself")
        if not (_is_number(self.temperature) and 0.0 <= self.temperature <= 2.0):
            bad(f"--temperature must be in [0, 2], got {self.temperature!r}")
        if self.max_tokens is not None and not (_is_int(self.max_tokens) and self.max_tokens >= 1):
            bad(f"--max-tokens must be a positive integer, got {self.max_tokens!r}")
        if not (_is_int(self.k_max) and 1 <= self.k_max <= 1000):
            bad(f"--k-max must be an integer in [1, 1000], got {self.k_max!r}")
        if not (_is_number(self.delta) and 0.0 < self.delta < 1.0):
            bad(f"--delta must be in (0, 1), got {self.delta!r}")
        if self.stopping not in STOPPING_CHOICES:
            bad(f"--stopping must be one of {', '.join(STOPPING_CHOICES)}, got {self.stopping!r}")
        if not (_is_number(self.alpha) and 0.0 < self.alpha < 1.0):
            bad(f"--alpha must be in (0, 1), got {self.alpha!r}")
        if self.n_cal is not None and not (_is_int(self.n_cal) and self.n_cal >= 0):
            bad(f"--n-cal must be a non-negative integer, got {self.n_cal!r}")
        if not _is_int(self.seed) or self.seed < 0:
            bad(f"--seed must be a non-negative integer, got {self.seed!r}")
        if not (_is_int(self.concurrency) and 1 <= self.concurrency <= 1024):
            bad(f"--concurrency must be an integer in [1, 1024], got {self.concurrency!r}")
        if self.min_reliability is not None and not (
            _is_number(self.min_reliability) and 0.0 <= self.min_reliability <= 1.0
        ):
            bad(f"--min-reliability must be in [0, 1], got {self.min_reliability!r}")
        if self.gate_on not in core_certify.GATE_ON_CHOICES:
            bad(f"--gate-on must be 'bound' or 'level', got {self.gate_on!r}")
        for name, price in (("--price-in", self.price_in), ("--price-out", self.price_out)):
            if price is not None and not (_is_number(price) and price >= 0 and math.isfinite(price)):
                bad(f"{name} must be a non-negative number (price per million tokens), got {price!r}")
        if (self.price_in is None) != (self.price_out is None):
            bad("give both --price-in and --price-out (prices per million input/output tokens)")
        if self.limit is not None and not (_is_int(self.limit) and self.limit >= 1):
            bad(f"--limit must be a positive integer, got {self.limit!r}")
        if not (_is_number(self.confidence) and 0.0 < self.confidence < 1.0):
            bad(f"the confidence level must be in (0, 1), got {self.confidence!r}")
        if not (_is_number(self.timeout_s) and self.timeout_s > 0):
            bad(f"the request timeout must be positive, got {self.timeout_s!r}")
        if not (_is_number(self.max_down_s) and self.max_down_s >= 0):
            bad(f"the endpoint-down wait must be non-negative, got {self.max_down_s!r}")
        if self.uses_pairwise_judge:
            if not self.pairwise_judge_endpoint:
                bad("--pairwise-judge-model needs --pairwise-judge-endpoint (the judge's base URL)")
            if not self.pairwise_judge_model or not self.pairwise_judge_model.strip():
                bad("--pairwise-judge-endpoint needs --pairwise-judge-model (the judge model's name)")
            from relgate_tui.engine.judge_certify import JudgeCertifyError

            try:
                self.pairwise_judge_config().validate()
            except JudgeCertifyError as exc:
                raise CertifyError(str(exc)) from None
        return self

    def public_dict(self) -> dict[str, Any]:
        """The config as stored in the run manifest (no secret: only the key's variable name; endpoint URLs without
        userinfo or credential-looking query parameters, :func:`relgate_tui.core.redact.public_url`)."""
        out = asdict(self)
        for name in ("endpoint", "pairwise_judge_endpoint"):
            if isinstance(out.get(name), str):
                out[name] = public_url(out[name])
        return out


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and math.isfinite(x)


# ------------------------------------------------------------------------------------------------- splits and rngs
def split_items(item_ids: Sequence[str], n_cal: int | None, seed: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(calibration ids, deployment ids): the first ``n_cal`` (default ``len // 2``) positions of a seeded
    permutation of the items sorted by id (:func:`relgate_tui.core.certify.split_permutations`) — a function of the
    id set and the seed only, never of file order (SPEC §3.6). Each part keeps the permutation's order."""
    ids = [str(i) for i in item_ids]
    n = len(ids)
    if n_cal is None:
        n_cal = n // 2
    if not 0 <= n_cal <= n:
        raise CertifyError(f"--n-cal must be between 0 and the number of items ({n}), got {n_cal}")
    if n == 0:
        return (), ()
    perm = core_certify.split_permutations(n, 1, seed, ids)[0]
    order = [ids[i] for i in perm]
    return tuple(order[:n_cal]), tuple(order[n_cal:])


def item_rng(seed: int, item_id: str) -> np.random.Generator:
    """The generator that breaks ranking ties of one item: seeded by (run seed, SHA-256 of the item id), so ties are
    reproducible per item and independent of item order and of every other item."""
    h = int.from_bytes(hashlib.sha256(item_id.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng([int(seed), h])


def used_sample_count(canonicals: Sequence[str], rule: Any, k_max: int) -> int:
    """How many of an item's samples (canonical classes in index order) the run uses: the first k at which
    ``rule.should_stop(counts, k)`` holds (counts of the non-INVALID classes seen among the first k), else
    ``min(len, k_max)``. Replays the sampler's decision on the stored samples (see the module docstring)."""
    counts: dict[str, int] = {}
    limit = min(len(canonicals), k_max)
    for k in range(1, limit + 1):
        c = canonicals[k - 1]
        if c != INVALID:
            counts[c] = counts.get(c, 0) + 1
        if k < k_max and rule.should_stop(list(counts.values()), k):
            return k
    return limit


# ---------------------------------------------------------------------------------------------------------- labels
def parse_labels_file(path: str | os.PathLike[str], known_ids: Sequence[str] | None = None) -> list[Label]:
    """Read a labels file: JSONL, one verdict per line — ``{"id": ..., "rank": 1|2|...}``, ``{"id": ..., "none":
    true}`` or ``{"id": ..., "skip": true}`` (blank lines ignored). Raises :class:`CertifyError` naming the file and
    line for bad JSON, a missing/unknown/duplicate id, or not exactly one valid verdict. Nothing is written here."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise CertifyError(f"{p}: labels file not found") from None
    except OSError as exc:
        raise CertifyError(f"{p}: cannot read the labels file ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CertifyError(f"{p}: the labels file is not UTF-8") from None
    known = set(known_ids) if known_ids is not None else None
    out: list[Label] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{p}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CertifyError(f"{where}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise CertifyError(f"{where}: expected a JSON object like {{\"id\": \"q1\", \"rank\": 1}}")
        item = obj.get("id")
        if isinstance(item, (int, float)) and not isinstance(item, bool):
            item = str(item)
        if not isinstance(item, str) or not item:
            raise CertifyError(f"{where}: field 'id' is missing or not a string")
        unknown_keys = sorted(set(obj) - {"id", "rank", "none", "skip"})
        if unknown_keys:
            raise CertifyError(f"{where}: unknown field {unknown_keys[0]!r} (use one of rank, none, skip)")
        given = [k for k in ("rank", "none", "skip") if k in obj]
        if len(given) != 1:
            raise CertifyError(f"{where}: give exactly one of 'rank', 'none', 'skip' for item {item!r}")
        kind = given[0]
        value = obj[kind]
        if kind == "rank":
            if not _is_int(value) or value < 1:
                raise CertifyError(f"{where}: field 'rank' must be an integer >= 1, got {value!r}")
            label = Label(item, rank=int(value), source="file")
        else:
            if value is not True:
                raise CertifyError(f"{where}: field {kind!r} must be true, got {value!r}")
            label = Label(item, none=kind == "none", skip=kind == "skip", source="file")
        if known is not None and item not in known:
            raise CertifyError(f"{where}: item {item!r} is not in the task")
        if item in seen:
            raise CertifyError(f"{where}: item {item!r} already labelled on line {seen[item]}")
        seen[item] = lineno
        out.append(label)
    return out


def check_label_ranks(labels: Sequence[Label], n_classes: Mapping[str, int], source: str = "labels") -> None:
    """Every ranked verdict must name an existing candidate: rank ≤ the item's number of ranked classes."""
    for lab in labels:
        if lab.rank is not None and lab.rank > n_classes.get(lab.item, 0):
            have = n_classes.get(lab.item, 0)
            raise CertifyError(
                f"{source}: item {lab.item!r} has {have} candidate answer{'s' if have != 1 else ''}, "
                f"so rank {lab.rank} does not exist (use none if no candidate is acceptable)"
            )


def apply_labels(store: RunStore, labels: Sequence[Label]) -> int:
    """Persist the verdicts that differ from the ones in effect (one fsync'd event each); return how many were
    written. Idempotent: applying the same labels again writes nothing, so a rerun after a kill mid-way finishes
    the job and ends in the same state."""
    crash_after = _crash_after()
    current = store.current_labels()
    written = 0
    for lab in labels:
        have = current.get(lab.item)
        if have is not None and have.same_verdict(lab):
            continue
        store.append_label(lab)
        current[lab.item] = lab
        written += 1
        if crash_after is not None and written >= crash_after:
            os.kill(os.getpid(), signal.SIGKILL)
    return written


def _crash_after() -> int | None:
    value = os.environ.get(CRASH_AFTER_LABELS_ENV, "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


# -------------------------------------------------------------------------------------------------------- analysis
@dataclass(frozen=True)
class ItemAnalysis:
    """One item of a run: role, its ranked classes over the used samples, the verdict behind its score."""

    item_id: str
    role: str  # "calibration" | "deployment"
    ranked: RankedClasses
    samples_stored: int
    score: float | None  # rank score; inf = none acceptable; None = not verified (or skipped)
    verified_by: str | None  # "reference" | "file" | "human" | None
    skipped: bool
    acceptable_fraction: float | None
    has_reference: bool
    reference_score: float | None  # the reference verdict even when a human/file label overrides it
    complete: bool = True  # False: fewer than K_max samples and no stop (requests failed); rerun to retry
    stopped_early: bool = False  # the stopping rule ended sampling before K_max (only these save calls)
    first_sample_acceptable: bool | None = None  # unbiased single-sample accuracy (core/certify.py)

    @property
    def record(self) -> core_certify.ItemRecord:
        return core_certify.ItemRecord(
            item_id=self.item_id,
            n_classes=self.ranked.n_classes,
            samples_used=self.ranked.n_samples,
            score=self.score,
            skipped=self.skipped,
            acceptable_fraction=self.acceptable_fraction,
            entropy=self.ranked.entropy,
            tie_broken=self.ranked.tie_broken,
            stopped_early=self.stopped_early,
            first_sample_acceptable=self.first_sample_acceptable,
            cumulative_shares=tuple(self.ranked.cumulative_shares),
        )


@dataclass(frozen=True, eq=False)
class Analysis:
    """Everything the results need; :func:`results_document` turns it into JSON at any α (cheap)."""

    items: tuple[ItemAnalysis, ...]
    input: core_certify.CertificationInput
    k_max: int
    usage: Mapping[str, int] = field(default_factory=dict)

    def results(self, alpha: float, confidence: float = 0.95, gate: float | None = None, gate_on: str = "bound"):
        return core_certify.compute_results(self.input, alpha, confidence, gate, gate_basis=gate_on)  # type: ignore[arg-type]


def analyse(
    task: Any,
    roles: Mapping[str, str],
    samples_by_item: Mapping[str, Sequence[StoredSample]],
    labels: Mapping[str, Label],
    *,
    canonicalize_refs: Callable[[Any], set[str] | None],
    rule: Any,
    k_max: int,
    seed: int,
) -> Analysis:
    """Rank every item of ``task`` (in file order) over its used samples, verify it (label, else reference) and
    build the core input. ``roles`` maps item id → "calibration"/"deployment"; ``canonicalize_refs(item)`` returns
    the item's acceptable canonical classes, or None when it has no reference."""
    from relgate_tui.core.scores import acceptable_fraction, rank_score

    analysed: list[ItemAnalysis] = []
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    for item in task.items:
        role = roles.get(item.id)
        if role is None:
            continue
        stored = sorted(samples_by_item.get(item.id, ()), key=lambda s: s.index)
        # only a contiguous prefix of indices counts (a crash can leave a gap that the resume fills)
        prefix: list[StoredSample] = []
        for expected, s in enumerate(stored):
            if s.index != expected:
                break
            prefix.append(s)
        for s in stored:
            usage["prompt_tokens"] += int(s.usage.get("prompt_tokens", 0) or 0)
            usage["completion_tokens"] += int(s.usage.get("completion_tokens", 0) or 0)
        canon = [s.canonical for s in prefix]
        used = used_sample_count(canon, rule, k_max)
        stopped = 0 < used < k_max and rule.should_stop(
            list(Counter(c for c in canon[:used] if c != INVALID).values()), used)
        complete = used >= k_max or stopped
        ranked = rank_classes(canon[:used], item_rng(seed, item.id))
        acceptable = canonicalize_refs(item)
        ref_score = rank_score(ranked, acceptable) if acceptable is not None else None
        frac = acceptable_fraction(ranked, acceptable) if acceptable is not None and ranked.n_samples else None
        label = labels.get(item.id)
        score: float | None
        if label is not None:
            score, verified_by, skipped = label.score, label.source, label.skip
        elif ref_score is not None:
            score, verified_by, skipped = ref_score, "reference", False
        else:
            score, verified_by, skipped = None, None, False
        analysed.append(
            ItemAnalysis(item.id, role, ranked, len(stored), score, verified_by, skipped, frac,
                         acceptable is not None, ref_score, complete, stopped,
                         (canon[0] in acceptable) if acceptable is not None and canon else None)
        )
    cal = [a.record for a in analysed if a.role == "calibration"]
    dep = []
    for a in analysed:
        if a.role == "deployment":
            rec = a.record
            if a.skipped:  # a skipped deployment item is simply unverified
                rec = replace(rec, skipped=False, score=None)
            dep.append(rec)
    inp = core_certify.build_input(cal, dep, k_max)
    return Analysis(tuple(analysed), inp, k_max, usage)


# ---------------------------------------------------------------------------------------------------- results JSON
@dataclass
class CallCounts:
    """Calls of one invocation (issue 5 item 7): ``made`` = requests answered (each paid, used or not), ``cached`` =
    samples served from the cache or the run store, ``failed`` = requests that failed after retries."""

    made: int = 0
    cached: int = 0
    failed: int = 0


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _score_json(score: float) -> int | None:
    return None if math.isinf(score) else int(score)


def _proportion_json(p: Any) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"estimate": _num(p.estimate), "lower": _num(p.lower), "upper": _num(p.upper),
            "successes": p.successes, "n": p.n}


def results_document(
    analysis: Analysis,
    *,
    alpha: float,
    header: Mapping[str, Any],
    calls: CallCounts,
    delta: float,
    stopping: str,
    confidence: float = 0.95,
    gate: float | None = None,
    prices: tuple[float, float] | None = None,
    gate_on: str = "bound",
) -> dict[str, Any]:
    """The result document of issue 5 item 7 (plus a few extra, clearly named fields). ``header`` supplies
    ``run_id``, ``endpoint``, ``model`` and ``task`` ({name, sha256, items})."""
    res = analysis.results(alpha, confidence, gate, gate_on)
    m_star = res.m_star
    items_json = []
    for a in analysis.items:
        entry: dict[str, Any] = {
            "id": a.item_id,
            "role": a.role,
            "samples": a.ranked.n_samples,
            "invalid": a.ranked.n_invalid,
            "classes": [{"answer": c, "count": n} for c, n in zip(a.ranked.classes, a.ranked.counts)],
        }
        if a.score is not None:
            entry["score"] = _score_json(a.score)
        entry["prediction_set"] = list(prediction_set(a.ranked, m_star))
        entry["verified_by"] = a.verified_by
        if a.skipped:
            entry["skipped"] = True
        if a.samples_stored > a.ranked.n_samples:
            entry["samples_stored"] = a.samples_stored
        if not a.complete:
            entry["incomplete"] = True
        items_json.append(entry)
    has_ref = res.n_with_reference > 0
    usage = dict(analysis.usage)
    cost = None
    if prices is not None:
        cost = (usage.get("prompt_tokens", 0) * prices[0] + usage.get("completion_tokens", 0) * prices[1]) / 1e6
    return {
        "relgate_version": __version__,
        "run_id": header["run_id"],
        "endpoint": header["endpoint"],
        "model": header["model"],
        "task": dict(header["task"]),
        "alpha": float(alpha),
        "delta": float(delta),
        "stopping": stopping,
        "k_max": analysis.k_max,
        "n_cal": res.n,
        "n_skipped": res.n_skipped,
        "n_pending": res.n_pending,
        "n_incomplete": sum(1 for a in analysis.items if not a.complete),
        "reliability_level": res.reliability_level,
        "reliability_lower_bound": res.reliability_lower_bound,
        "reliability_n": res.reliability_n,
        "confidence": res.confidence,
        "m_star": None if math.isinf(m_star) else int(m_star),
        "calibration_message": res.calibration_message,
        "coverage": _num(res.coverage.estimate) if has_ref else None,
        "conditional_coverage": _num(res.conditional_coverage.estimate) if has_ref else None,
        "capability_gap": _num(res.capability_gap.estimate) if has_ref else None,
        "avg_set_size": _num(res.average_set_size) if res.n_deployment else None,
        "validation": {
            "n_with_reference": res.n_with_reference,
            "coverage": _proportion_json(res.coverage),
            "conditional_coverage": _proportion_json(res.conditional_coverage),
            "capability_gap": _proportion_json(res.capability_gap),
            "mode_accuracy": _proportion_json(res.mode_accuracy),
            "single_sample_accuracy": _proportion_json(res.single_sample_accuracy),
        },
        "calls": {
            "made": calls.made,
            "cached": calls.cached,
            "failed": calls.failed,
            "saved_vs_kmax": res.calls_saved,
        },
        "samples_used": res.samples_used,
        "tie_rate": _num(res.tie_rate),
        "usage": {**usage, "cost": cost},
        "min_reliability": gate,
        "gate_on": res.gate_on,
        "passed": res.passed,
        **readout_json(res, analysis.input, alpha),
        "items": items_json,
    }


# -------------------------------------------------------------------------------------------------------- pipeline
@dataclass
class Prepared:
    """A validated config with its task, canonicalizer, stopping rule, split and open run store."""

    config: CertifyConfig
    task: Any
    items: tuple[Any, ...]
    canon_spec: str
    canonicalizer: Callable[[str, Sequence[str]], str]
    rule: Any
    calibration_ids: tuple[str, ...]
    deployment_ids: tuple[str, ...]
    store: RunStore
    file_labels: list[Label] = field(default_factory=list)

    @property
    def roles(self) -> dict[str, str]:
        return {**{i: "calibration" for i in self.calibration_ids}, **{i: "deployment" for i in self.deployment_ids}}

    @property
    def header(self) -> dict[str, Any]:
        return {
            "run_id": self.store.run_id,
            "endpoint": public_url(self.config.endpoint),
            "model": self.config.model,
            "task": {"name": self.task.name, "sha256": self.task.sha256, "items": len(self.items)},
        }

    def close(self) -> None:
        self.store.close()


@dataclass
class CertifyOutcome:
    """What :func:`run_certify` returns: the result document, its exit code (0 pass / no gate, 1 below the gate) and
    the run's directory."""

    document: dict[str, Any]
    exit_code: int
    run_path: Path
    calls: CallCounts


def run_identity(cfg: CertifyConfig, task: Any, canon_spec: str) -> dict[str, Any]:
    """The fields that determine the samples (the run id hashes them; see runstore's module docstring)."""
    return {
        "task_sha256": task.sha256,
        "limit": cfg.limit,
        "endpoint": public_url(cfg.endpoint.rstrip("/")),
        "model": cfg.model,
        "system": cfg.system,
        "temperature": float(cfg.temperature),
        "max_tokens": cfg.max_tokens,
        "k_max": cfg.k_max,
        "stopping": cfg.stopping,
        "delta": float(cfg.delta),
        "canon": canon_spec,
        "seed": cfg.seed,
    }


def prepare(cfg: CertifyConfig) -> Prepared:
    """Phase 1: validate, load the task and the labels file (nothing is written before both are known to be good),
    resolve the canonicalizer and the stopping rule, split the items, open or resume the run."""
    from relgate_tui.core.canon import get_canonicalizer
    from relgate_tui.core.stopping import get_stopping_rule
    from relgate_tui.engine.paths import runs_dir
    from relgate_tui.engine.tasks import load_task

    cfg.validate()
    task = load_task(cfg.task)
    items = tuple(task.items[: cfg.limit] if cfg.limit else task.items)
    if not items:
        raise CertifyError(f"task {task.name!r} has no items")
    canon_spec = cfg.canon or task.canon
    canonicalizer = get_canonicalizer(canon_spec)
    rule = get_stopping_rule(cfg.stopping, cfg.delta)
    ids = [it.id for it in items]
    if cfg.n_cal is not None and cfg.n_cal > len(ids):
        raise CertifyError(f"--n-cal {cfg.n_cal} is larger than the number of items ({len(ids)})")
    cal_ids, dep_ids = split_items(ids, cfg.n_cal, cfg.seed)
    file_labels = parse_labels_file(cfg.labels, ids) if cfg.labels else []
    identity = run_identity(cfg, task, canon_spec)
    info = {
        "task": {"name": task.name, "path": str(task.path), "sha256": task.sha256, "items": len(items)},
        "model": cfg.model,
        "endpoint": public_url(cfg.endpoint),
        "seed": cfg.seed,
        "config": cfg.public_dict(),
    }
    store = RunStore.create_or_open(runs_dir(cfg.run_dir), identity, label=f"{task.name} {cfg.model}", info=info)
    return Prepared(cfg, task, items, canon_spec, canonicalizer, rule, cal_ids, dep_ids, store, file_labels)


def reference_classes(prepared: Prepared) -> Callable[[Any], set[str] | None]:
    """``item → acceptable canonical classes`` (references through the run's canonicalizer,
    :func:`relgate_tui.core.canon.canonicalize_references`), None without a usable reference."""
    from relgate_tui.core.canon import canonicalize_references

    cache: dict[str, set[str] | None] = {}

    def refs(item: Any) -> set[str] | None:
        if item.id not in cache:
            acceptable = (
                set(canonicalize_references(prepared.canonicalizer, item.answers, item.choices))
                if item.answers else set()
            )
            # a reference the canonicalizer cannot parse verifies nothing: the item stays unverified (counted as
            # pending), rather than being scored as a miss
            cache[item.id] = acceptable or None
        return cache[item.id]

    return refs


def analyse_prepared(prepared: Prepared) -> Analysis:
    """Phase 4 on a prepared run: read samples and labels back from the run store and analyse."""
    cfg = prepared.config
    return analyse(
        replace(prepared.task, items=prepared.items),
        prepared.roles,
        prepared.store.samples_by_item(),
        prepared.store.current_labels(),
        canonicalize_refs=reference_classes(prepared),
        rule=prepared.rule,
        k_max=cfg.k_max,
        seed=cfg.seed,
    )


@dataclass(frozen=True)
class SamplingProgress:
    """What :func:`sample_run` reports to its callback after every sampler event (the CLI's progress line)."""

    total_items: int
    done_items: int
    made: int
    cached: int
    failed: int
    samples_used: int
    message: str | None = None  # a notable event: endpoint down/up, an item that failed for good


def open_cache(cfg: CertifyConfig) -> Any:
    """The diskcache of completed samples: ``cfg.cache_dir`` or ``<cache dir>/samples`` (see engine/paths.py)."""
    from relgate_tui.engine.cache import SampleCache
    from relgate_tui.engine.paths import cache_dir

    path = Path(cfg.cache_dir) if cfg.cache_dir else cache_dir() / "samples"
    try:
        return SampleCache(path)
    except OSError as exc:
        raise CertifyError(f"cannot open the sample cache {path}: {exc.strerror or exc}") from None


def sampling_job(prepared: Prepared) -> Any:
    """The sampler's :class:`~relgate_tui.engine.sampler.SamplingJob` for the run: every item, the run's
    canonicalizer and stopping rule, K_max, seed, and the samples already stored (the resume)."""
    from relgate_tui.engine.sampler import SamplingJob

    cfg = prepared.config
    return SamplingJob(
        items=prepared.items,
        canonicalizer=prepared.canonicalizer,
        rule=prepared.rule,
        k_max=cfg.k_max,
        seed=cfg.seed,
        existing=prepared.store.samples_by_item(),
    )


def make_sampler(prepared: Prepared, cache: Any = None, **kwargs: Any) -> Any:
    """A :class:`~relgate_tui.engine.sampler.Sampler` that persists every completed sample into the run store
    (one whole-line write each, before the item's next request)."""
    from relgate_tui.engine.sampler import Sampler

    cfg = prepared.config
    store = prepared.store
    kwargs.setdefault("max_down_s", cfg.max_down_s)
    return Sampler(
        cfg.endpoint_config(),
        concurrency=cfg.concurrency,
        cache=cache,
        persist=lambda sample: store.append_samples([sample]),
        **kwargs,
    )


def _needs_network(prepared: Prepared, job: Any, cache: Any) -> bool:
    """True when some item still needs a sample that neither the run store nor the cache holds."""
    from relgate_tui.engine.endpoints import request_fingerprint, sample_seed
    from relgate_tui.engine.prompts import item_messages

    cfg = prepared.config
    endpoint = cfg.endpoint_config()
    for item in prepared.items:
        canon = []
        for s in sorted(job.existing.get(item.id, ()), key=lambda s: s.index):
            if s.index != len(canon):
                break
            canon.append(s.canonical)
        used = used_sample_count(canon, prepared.rule, cfg.k_max)
        if used < len(canon) or used >= cfg.k_max:
            continue
        counts = [c for c in Counter(x for x in canon if x != INVALID).values()]
        if canon and prepared.rule.should_stop(counts, len(canon)):
            continue
        index = len(canon)
        fp = request_fingerprint(endpoint, item_messages(item), index, sample_seed(cfg.seed, item.id, index))
        if cache is None or cache.get(fp) is None:
            return True
    return False


def check_reachable(cfg: CertifyConfig, attempts: int = 3) -> None:
    """Fail fast (one line) when nothing answers HTTP at the endpoint: ``GET <base>/models`` up to ``attempts``
    times with a short backoff. Any HTTP status counts as reachable (the sampler handles the rest)."""
    import time

    import httpx

    from relgate_tui.engine.httpread import status_of_sync

    url = cfg.endpoint.rstrip("/") + "/models"
    endpoint = cfg.endpoint_config()
    last = ""
    for attempt in range(attempts):
        try:
            with httpx.Client(trust_env=False, timeout=min(10.0, cfg.timeout_s)) as client:
                status_of_sync(client, url, endpoint.headers(), min(10.0, cfg.timeout_s))  # the body is never read
            return
        except httpx.TimeoutException:
            last = "timed out"
        except httpx.HTTPError as exc:
            last = f"{type(exc).__name__}"
        if attempt + 1 < attempts:
            time.sleep(0.25 * 2**attempt)
    raise CertifyError(f"cannot reach the endpoint {public_url(cfg.endpoint)} ({last} after {attempts} attempts); is the server "
                       "running?")


def sample_run(
    prepared: Prepared, on_progress: Callable[[SamplingProgress], None] | None = None, *, cache: Any = None
) -> CallCounts:
    """Phase 2: sample every item, resuming from the run store and the cache (blocking; the CLI's path). Returns the
    invocation's call counts. Raises :class:`CertifyError` when the endpoint cannot be reached or stays down longer
    than ``max_down_s`` (completed samples are kept: the same command resumes)."""
    from relgate_tui.engine.sampler import (
        EndpointDown,
        EndpointUnreachable,
        EndpointUp,
        ItemDone,
        SampleFailed,
        run_sampling,
    )

    own_cache = cache is None
    if own_cache:
        cache = open_cache(prepared.config)
    try:
        job = sampling_job(prepared)
        if _needs_network(prepared, job, cache):
            key_env = prepared.config.api_key_env
            if key_env and not os.environ.get(key_env):
                raise CertifyError(f"--api-key-env {key_env}: that environment variable is not set (or empty)")
            check_reachable(prepared.config)
        sampler = make_sampler(prepared, cache)
        total = len(prepared.items)
        done = 0

        def on_event(event: Any) -> None:
            nonlocal done
            message = None
            if isinstance(event, ItemDone):
                done += 1
                if event.failed:
                    message = f"item {event.item_id}: sampling failed after {event.n_samples} samples (kept)"
            elif isinstance(event, SampleFailed) and (event.final or event.wait_s >= 5):
                message = f"item {event.item_id} sample {event.index}: {event.error_kind}: {event.message}"
            elif isinstance(event, EndpointDown):
                message = event.message
            elif isinstance(event, EndpointUp):
                message = f"endpoint back after {event.down_seconds:.1f} s; sampling resumed"
            elif on_progress is None:
                return
            if on_progress is not None:
                t = sampler.totals
                on_progress(SamplingProgress(total, done, t.made, t.cached, t.failed, t.samples_used, message))

        try:
            totals = run_sampling(sampler, job, on_event)
        except EndpointUnreachable as exc:
            raise CertifyError(str(exc)) from None
        finally:
            prepared.store.sync_samples()
        return CallCounts(totals.made, totals.cached, totals.failed)
    finally:
        if own_cache:
            cache.close()


def run_certify(cfg: CertifyConfig, on_progress: Callable[[SamplingProgress], None] | None = None,
                on_judge_progress: Callable[[Any], None] | None = None) -> CertifyOutcome:
    """All phases, as ``relgate certify`` runs them. Writes ``results.json`` in the run; returns the document.

    With a pairwise judge (``cfg.pairwise_judge_endpoint``), the judge is asked after the analysis
    (:func:`relgate_tui.engine.judge_certify.judge_prepared_run`, progress to ``on_judge_progress``) and the
    document gains its ``pairwise_judge`` section: both rankings' reliability side by side and the cycle data."""
    prepared = prepare(cfg)
    try:
        prepared.store.set_status("sampling")
        calls = sample_run(prepared, on_progress)
        prepared.store.set_status("sampled")
        analysis = analyse_prepared(prepared)
        if prepared.file_labels:
            n_classes = {a.item_id: a.ranked.n_classes for a in analysis.items}
            check_label_ranks(prepared.file_labels, n_classes, str(cfg.labels))
            if apply_labels(prepared.store, prepared.file_labels):
                analysis = analyse_prepared(prepared)
        doc = results_document(
            analysis,
            alpha=cfg.alpha,
            header=prepared.header,
            calls=calls,
            delta=cfg.delta,
            stopping=cfg.stopping,
            confidence=cfg.confidence,
            gate=cfg.min_reliability,
            prices=(cfg.price_in, cfg.price_out) if cfg.price_in is not None else None,
            gate_on=cfg.gate_on,
        )
        judge_cfg = cfg.pairwise_judge_config()
        if judge_cfg is not None:
            from relgate_tui.engine.judge_certify import JudgeCertifyError, judge_prepared_run

            prepared.store.set_status("judging")
            try:
                doc["pairwise_judge"] = judge_prepared_run(
                    prepared, analysis, judge_cfg, alpha=cfg.alpha, confidence=cfg.confidence,
                    gate=cfg.min_reliability, on_progress=on_judge_progress)
            except JudgeCertifyError as exc:
                raise CertifyError(str(exc)) from None
        prepared.store.write_results(doc)
        prepared.store.set_status("complete")
        exit_code = 1 if doc["passed"] is False else 0
        return CertifyOutcome(doc, exit_code, prepared.store.path, calls)
    finally:
        prepared.close()
