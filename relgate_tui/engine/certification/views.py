"""View models of one run for the TUI screens (SPEC §5): frozen values the engine computes and the screens only
display — the live sampling table, the spot-check item and progress, the results rows and figures."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from relgate_tui.core.certification.certify import CertificationResult, CoverageCurve, coverage_curve
from relgate_tui.core.certification.conformal import prediction_set
from relgate_tui.core.types import INVALID
from relgate_tui.engine.records import canonical_prefix
from relgate_tui.engine.runs.labels import by_a_person
from relgate_tui.engine.transport.sampler import ItemDone, SampleDone, SampleFailed

if TYPE_CHECKING:
    from relgate_tui.engine.certification.analysis import Analysis, ItemAnalysis
    from relgate_tui.engine.certification.calls import CallCounts
    from relgate_tui.engine.records import StoredSample
    from relgate_tui.engine.runs.labels import Label

__all__ = [
    "ItemProgress",
    "SamplingUpdate",
    "Candidate",
    "ItemView",
    "SpotProgress",
    "ItemRow",
    "ResultsView",
    "LabelOutcome",
    "AuditDisagreement",
    "AuditSummary",
    "LiveTable",
    "reference_verdict",
    "audit_summary",
    "question_text",
    "build_item_view",
    "build_results_view",
]

@dataclass(frozen=True)
class ItemProgress:
    """One row of the live sampling table."""

    item_id: str
    role: str
    n_samples: int
    k_max: int
    leader: str | None = None
    consensus: float = 0.0
    stopped: bool = False
    done: bool = False
    failed: int = 0
    error: str = ""


@dataclass(frozen=True)
class SamplingUpdate:
    """A progress report of a sampling pass. ``items`` holds the rows that changed since the last update.
    ``saved`` = 1 − samples used / (finished items × K_max) over the finished items; ``paused`` names why
    sampling is waiting (e.g. "endpoint unreachable"), None while it runs."""

    items: tuple[ItemProgress, ...]
    items_done: int
    items_total: int
    calls_made: int
    calls_cached: int
    calls_failed: int
    samples_used: int
    saved: float
    paused: str | None = None
    errors: tuple[str, ...] = ()
    finished: bool = False
    judge_done: int = 0
    judge_total: int = 0
    judge_name: str = "pairwise"  # which judge's pass: "pairwise" | "verification" (issue 22)
    batch: str | None = None  # with --batch: the current round's progress line (issue 32), else None


# ---------------------------------------------------------------------------------------------------- spot-check
@dataclass(frozen=True)
class Candidate:
    """A ranked answer class of one item: rank r (1 = most frequent), the canonical answer, its count."""

    rank: int
    answer: str
    count: int
    share: float
    example: str = ""


@dataclass(frozen=True)
class ItemView:
    """What the spot-check screen and the item-samples modal show about one item."""

    item_id: str
    role: str
    question: str
    choices: tuple[str, ...]
    candidates: tuple[Candidate, ...]
    n_invalid: int
    n_samples: int
    references: tuple[str, ...] = ()
    auto_score: float | None = None
    label: str = ""
    audit: bool = False
    samples: tuple[tuple[str, str], ...] = ()
    tie_broken: bool = False

    def contradiction(self, *, accept: int | None = None, reject: int | None = None,
                      none: bool = False) -> str | None:
        """What a key would contradict on an audited item (None when it agrees, or the item is no audit item with a
        reference): accepting candidate ``accept`` or "none acceptable" (``none``) whose score (eq. 10.1: the rank,
        ∞ for none) differs from the reference verdict's, or rejecting ``reject``, the candidate the reference
        matches."""
        auto = self.auto_score
        if not self.audit or auto is None:
            return None
        if accept is not None:
            wrong = float(accept) != auto
        elif none:
            wrong = not math.isinf(auto)
        else:
            wrong = reject is not None and float(reject) == auto
        return f"this contradicts the reference: {reference_verdict(auto)}" if wrong else None


def reference_verdict(auto_score: float | None) -> str:
    """The automatic (reference) verdict of an item in words: which candidate matches its reference, or none."""
    if auto_score is None or math.isinf(auto_score):
        return "no candidate matches it (score ∞)"
    return f"candidate {int(auto_score)} matches it"


@dataclass(frozen=True)
class SpotProgress:
    """Live readout of a spot-check session: ``done`` of ``total`` items needing a human, ``skipped`` among them;
    the reliability level so far (Def. 2.4) over ``n`` verified items with its fixed-n Clopper–Pearson lower bound
    (valid only if the number of labels was fixed before labelling: the live panel's bound is the anytime one);
    audit counts."""

    done: int
    total: int
    skipped: int
    n: int
    reliability_level: float | None
    fixed_n_lower_bound: float | None
    confidence: float
    audited: int = 0
    disagreements: int = 0
    successes: int = 0  # verified items whose top answer is acceptable (the level's numerator)

    @property
    def by_hand(self) -> int:
        """Verified items labelled by a person (here or from a labels file), skips excluded."""
        return self.done - self.skipped

    @property
    def automatic(self) -> int:
        """Verified items whose verdict came from a reference answer (not from a person)."""
        return max(0, self.n - self.by_hand)


# ------------------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class ItemRow:
    """One row of the results item table at the current α."""

    item_id: str
    role: str
    question: str
    leader: str
    prediction_set: tuple[str, ...]
    n_classes: int
    entropy: float
    samples: int
    score: float | None
    covered: int | None  # 1 covered, 0 missed, None unknown (no reference)
    tie_broken: bool = False
    label_source: str = ""


@dataclass(frozen=True, eq=False)
class ResultsView:
    """Everything the results screen shows at one α: the core's certification result, the item rows, the coverage
    curve, samples used per item, the call counters and the audit of the run. The headline is ``result.reliability_lower_bound``
    (:attr:`headline`): the run's bound, the one its gate decides on (anytime once a person labelled); the fixed-n
    Clopper–Pearson value, where it differs, is ``result.fixed_n_lower_bound`` (:attr:`fixed_n_line`)."""

    result: CertificationResult
    rows: tuple[ItemRow, ...]
    curve: CoverageCurve
    samples_used: tuple[int, ...]
    k_max: int
    calls_made: int = 0
    calls_cached: int = 0
    calls_failed: int = 0
    n_unsampled: int = 0
    audit: AuditSummary = field(default_factory=lambda: AuditSummary())  # audit mode: the re-checked references

    @property
    def headline(self) -> float | None:
        """The run's bound (the gate's): what the plain sentence, the headline and the gate line show."""
        return self.result.reliability_lower_bound

    @property
    def fixed_n_line(self) -> str | None:
        """The fixed-n Clopper–Pearson value, once, by name and with its condition; None when it is the run's bound."""
        from relgate_tui.engine.certification.result import FIXED_N_CONDITION

        r = self.result
        if not r.bound_differs or r.fixed_n_lower_bound is None:
            return None
        return f"fixed-n Clopper–Pearson lower bound {100 * r.fixed_n_lower_bound:.1f}% ({FIXED_N_CONDITION})"


@dataclass(frozen=True)
class LabelOutcome:
    """What :meth:`Session.label` persisted, and whether it disagrees with the automatic (reference) verdict of an
    audited item."""

    item_id: str
    kind: str  # "rank" | "none" | "skip"
    rank: int | None
    disagrees: bool = False


@dataclass(frozen=True)
class AuditDisagreement:
    """An audited item whose verdict by a person differs from its reference verdict: both verdicts in words, and
    whether the label was kept over the spot-check's warning (stored with it: ``Label.overrides_reference``)."""

    item_id: str
    verdict: str  # "rank 1" | "none acceptable"
    reference: str  # "candidate 2 matches it" | "no candidate matches it (score ∞)"
    overrode: bool

    def describe(self) -> str:
        kept = "; kept over the warning" if self.overrode else ""
        return f"{self.item_id}: you {self.verdict}, reference: {self.reference}{kept}"


@dataclass(frozen=True)
class AuditSummary:
    """The audit of a run's reference verdicts: ``audited`` items with a person's verdict (skips excluded) and those
    of them that disagree with the reference."""

    audited: int = 0
    disagreements: tuple[AuditDisagreement, ...] = ()

    def line(self, limit: int = 3) -> str | None:
        """The disagreeing items by name (at most ``limit``, then how many more); None when there are none."""
        if not self.disagreements:
            return None
        shown = "; ".join(d.describe() for d in self.disagreements[:limit])
        more = len(self.disagreements) - limit
        return (f"audit: {len(self.disagreements)} of {self.audited} disagree with the reference — {shown}"
                + (f"; and {more} more" if more > 0 else ""))



# --------------------------------------------------------------------------------------------------------- building
class LiveTable:
    """The sampling screen's live table during a pass: per item, the classes counted so far (from the stored
    samples, then each sampler event), its last error and whether it finished (stopped early or not)."""

    def __init__(self, items: Sequence[Any], roles: Mapping[str, str], k_max: int,
                 stored: Mapping[str, Sequence[StoredSample]]) -> None:
        self.roles, self.k_max = roles, k_max
        self.counts: dict[str, Counter[str]] = {}
        self.n_samples: dict[str, int] = {}
        for item in items:
            prefix = canonical_prefix(stored.get(item.id, ()))
            self.counts[item.id] = Counter(c for c in prefix if c != INVALID)
            self.n_samples[item.id] = len(prefix)
        self.errors: dict[str, str] = {}
        self.finished: dict[str, bool] = {}  # item → stopped early

    def apply(self, event: Any) -> str | None:
        """Count a sampler event (sample done, failed for good, item done); the id of the row that changed."""
        if isinstance(event, SampleDone):
            self.n_samples[event.item_id] += 1
            if event.canonical != INVALID:
                self.counts[event.item_id][event.canonical] += 1
        elif isinstance(event, SampleFailed):
            if not event.final:
                return None
            self.errors[event.item_id] = event.error_kind
        elif isinstance(event, ItemDone):
            self.finished[event.item_id] = event.stopped_early
        else:
            return None
        return str(event.item_id)

    def row(self, item_id: str) -> ItemProgress:
        c, n = self.counts[item_id], self.n_samples[item_id]
        leader, top = c.most_common(1)[0] if c else (None, 0)
        return ItemProgress(item_id, self.roles.get(item_id, ""), min(n, self.k_max), self.k_max, leader,
                            top / n if n else 0.0, stopped=self.finished.get(item_id, False),
                            done=item_id in self.finished, error=self.errors.get(item_id, ""))



def question_text(item: Any) -> str:
    """The question of a task item: its ``question``, else the last user message."""
    if item.question:
        return str(item.question)
    for message in reversed(item.messages or ()):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def build_item_view(item: Any, role: str, a: ItemAnalysis | None, samples: Sequence[StoredSample],
                    label: Label | None, *, audit: bool = False) -> ItemView:
    """What the spot-check screen and the item-samples modal show about one item (its analysis ``a``)."""
    examples: dict[str, str] = {}
    for s in samples:
        examples.setdefault(s.canonical, s.text)
    candidates: tuple[Candidate, ...] = ()
    n_invalid = n_samples = 0
    tie = False
    if a is not None:
        ranked = a.ranked
        candidates = tuple(
            Candidate(r, cls, cnt, share, examples.get(cls, ""))
            for r, (cls, cnt, share) in enumerate(zip(ranked.classes, ranked.counts, ranked.shares, strict=True),
                                                  start=1)
        )
        n_invalid, n_samples, tie = ranked.n_invalid, ranked.n_samples, ranked.tie_broken
    label_text = ""
    if label is not None:
        label_text = {"rank": f"rank {label.rank}", "none": "none acceptable", "skip": "skipped"}[label.kind]
        label_text += f" ({label.source})"
    return ItemView(
        item_id=item.id,
        role=role,
        question=question_text(item),
        choices=tuple(item.choices),
        candidates=candidates,
        n_invalid=n_invalid,
        n_samples=n_samples,
        references=tuple(item.answers),
        auto_score=None if a is None else a.reference_score,
        label=label_text,
        audit=audit,
        samples=tuple((s.text, s.canonical) for s in samples),
        tie_broken=tie,
    )


def audit_summary(audit_ids: Sequence[str], by_id: Mapping[str, ItemAnalysis],
                  labels: Mapping[str, Label]) -> AuditSummary:
    """The audit of ``audit_ids``: which of them a person verified (skips excluded) and which of those verdicts
    differ from the reference's (score, eq. 10.1, ≠ the reference score)."""
    audited = 0
    disagreements = []
    for item_id in audit_ids:
        a = by_id.get(item_id)
        if a is None or not by_a_person(a.verified_by) or a.skipped:
            continue
        audited += 1
        if a.reference_score is None or a.score == a.reference_score:
            continue
        label = labels.get(item_id)
        verdict = ("none acceptable" if a.score is None or math.isinf(a.score) else f"rank {int(a.score)}")
        disagreements.append(AuditDisagreement(item_id, verdict, reference_verdict(a.reference_score),
                                               label is not None and label.overrides_reference))
    return AuditSummary(audited, tuple(disagreements))


def build_results_view(a: Analysis, items: Mapping[str, Any], alpha: float, *, gate: float | None,
                       gate_on: str, confidence: float, curve_alphas: Sequence[float] | None,
                       calls: CallCounts, audit: AuditSummary,
                       assisted: Callable[[float], float] | None = None, one_look: int | None = None) -> ResultsView:
    """Every number of the results screen at ``alpha`` (:meth:`Analysis.results`, the core's ``compute_results``
    with the one gate rule; sub-millisecond). ``assisted``: the judge-assisted bound for the "assisted"/"best" gates.
    Unsampled items keep their row ("not sampled"; no score, no coverage)."""
    res = a.results(alpha, confidence, gate, gate_on, assisted, one_look=one_look)
    dep_index = {item_id: i for i, item_id in enumerate(a.input.deployment_ids)}
    rows = []
    for ia in a.items:
        pset = prediction_set(ia.ranked, res.m_star)
        covered: int | None
        if ia.role == "deployment" and ia.item_id in dep_index:
            c = int(res.deployment_covered[dep_index[ia.item_id]])
            covered = None if c < 0 else c
        elif ia.score is None or ia.role == "deployment":
            covered = None
        else:
            covered = int(math.isfinite(ia.score) and ia.score <= res.m_star)
        rows.append(ItemRow(
            item_id=ia.item_id,
            role=ia.role,
            question=question_text(items[ia.item_id])[:200],
            leader=ia.ranked.leader or "",
            prediction_set=pset,
            n_classes=ia.ranked.n_classes,
            entropy=ia.ranked.entropy,
            samples=ia.ranked.n_samples,
            score=ia.score,
            covered=covered,
            tie_broken=ia.ranked.tie_broken,
            label_source=("not sampled" if not ia.sampled else "skipped" if ia.skipped else ia.verified_by or
                          # a deployment item is never labelled: without a reference it stays unverified, it is not
                          # waiting for anyone (issue 31 item 21)
                          ("pending" if ia.role == "calibration" else "no reference")),
        ))
    alphas = curve_alphas if curve_alphas is not None else [round(0.01 * i, 2) for i in range(1, 51)]
    return ResultsView(
        result=res,
        rows=tuple(rows),
        curve=coverage_curve(a.input, alphas),
        samples_used=tuple(int(x) for x in a.input.samples_used),
        k_max=a.k_max,
        calls_made=calls.made,
        calls_cached=calls.cached,
        calls_failed=calls.failed,
        n_unsampled=a.n_not_sampled,
        audit=audit,
    )
