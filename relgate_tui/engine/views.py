"""View models of one run for the TUI screens (SPEC §5): frozen values the engine computes and the screens only
display — the live sampling table, the spot-check item and progress, the results rows and figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from relgate_tui.core.certify import CertificationResult, CoverageCurve

__all__ = [
    "GateBasis",
    "ItemProgress",
    "SamplingUpdate",
    "Candidate",
    "ItemView",
    "SpotProgress",
    "ItemRow",
    "ResultsView",
    "LabelOutcome",
]

GateBasis = Literal["level", "lower_bound"]


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


@dataclass(frozen=True)
class SpotProgress:
    """Live readout of a spot-check session: ``done`` of ``total`` items needing a human, ``skipped`` among them;
    the reliability level so far (Def. 2.4) with its lower bound over ``n`` verified items; audit counts."""

    done: int
    total: int
    skipped: int
    n: int
    reliability_level: float | None
    reliability_lower_bound: float | None
    confidence: float
    audited: int = 0
    disagreements: int = 0


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
    curve, samples used per item and the call counters of the run."""

    result: CertificationResult
    rows: tuple[ItemRow, ...]
    curve: CoverageCurve
    samples_used: tuple[int, ...]
    k_max: int
    calls_made: int = 0
    calls_cached: int = 0
    calls_failed: int = 0
    audited: int = 0
    disagreements: int = 0
    n_unsampled: int = 0


@dataclass(frozen=True)
class LabelOutcome:
    """What :meth:`Session.label` persisted, and whether it disagrees with the automatic (reference) verdict of an
    audited item."""

    item_id: str
    kind: str  # "rank" | "none" | "skip"
    rank: int | None
    disagrees: bool = False

