"""A thin engine-side facade for the TUI's phased work on one run (SPEC §5).

The TUI never does statistics or HTTP itself: it calls this module, which is built only from the engine and the
core (run store, sampling pipeline, tasks, discovery, demo server, report; core ranking/certify). Nothing here
re-implements their math or their JSON.

Settings of the UI itself (gate threshold, confidence, audit fraction, theme) are kept in a small JSON file by
:func:`load_ui_settings` / :func:`save_ui_settings`.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "UISettings",
    "load_ui_settings",
    "save_ui_settings",
    "EndpointChoice",
    "TaskChoice",
    "RunSetup",
    "Preflight",
    "ItemProgress",
    "SamplingUpdate",
    "Candidate",
    "ItemView",
    "SpotProgress",
    "ItemRow",
    "ResultsView",
]

GateBasis = Literal["level", "lower_bound"]


# ------------------------------------------------------------------------------------------------------ settings
@dataclass(frozen=True)
class UISettings:
    """Preferences of the TUI.

    ``gate``: the reliability threshold for PASS/FAIL on the results screen (None = no gate); ``gate_basis``:
    compare the reliability level ("level", the paper's gate) or its lower confidence bound ("lower_bound");
    ``confidence``: level of the one-sided Clopper–Pearson bound; ``audit_fraction``: share of automatically
    verified calibration items shown for human confirmation in audit mode; ``theme``: Textual theme name.
    """

    gate: float | None = 0.90
    gate_basis: GateBasis = "level"
    confidence: float = 0.95
    audit_fraction: float = 0.20
    theme: str = "textual-dark"

    def __post_init__(self) -> None:
        if self.gate is not None and not (isinstance(self.gate, (int, float)) and 0.0 <= self.gate <= 1.0):
            raise ValueError(f"settings: the gate threshold must be in [0, 1], got {self.gate!r}")
        if self.gate_basis not in ("level", "lower_bound"):
            raise ValueError(f"settings: gate_basis must be 'level' or 'lower_bound', got {self.gate_basis!r}")
        if not (isinstance(self.confidence, (int, float)) and 0.5 <= self.confidence < 1.0):
            raise ValueError(f"settings: confidence must be in [0.5, 1), got {self.confidence!r}")
        if not (isinstance(self.audit_fraction, (int, float)) and 0.0 < self.audit_fraction <= 1.0):
            raise ValueError(f"settings: the audit fraction must be in (0, 1], got {self.audit_fraction!r}")
        if not isinstance(self.theme, str):
            raise ValueError("settings: theme must be a string")


def load_ui_settings(path: str | os.PathLike[str]) -> UISettings:
    """Read the settings file; a missing file gives the defaults, a bad one raises ValueError (one line)."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return UISettings()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{p}: unreadable settings file ({exc.__class__.__name__}); using the defaults") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{p}: the settings file must hold a JSON object; using the defaults")
    known = {f.name for f in fields(UISettings)}
    return UISettings(**{k: v for k, v in raw.items() if k in known})


def save_ui_settings(path: str | os.PathLike[str], settings: UISettings) -> None:
    """Write the settings atomically (temp file + rename)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(settings), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, p)


# --------------------------------------------------------------------------------------------------------- setup
@dataclass(frozen=True)
class EndpointChoice:
    """A model server the setup screen can offer: a discovered local server, the embedded demo (``simulated``) or
    a custom URL. ``models`` are the ids from ``/v1/models`` (empty when unknown); ``error`` says why listing
    failed."""

    label: str
    base_url: str
    models: tuple[str, ...] = ()
    simulated: bool = False
    kind: str = "openai"
    error: str = ""


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


VerificationMode = Literal["auto", "human", "audit"]


@dataclass(frozen=True)
class RunSetup:
    """Everything the setup screen decides (the TUI twin of ``relgate certify``'s options).

    ``verification``: "auto" = items with references are verified by the canonicalized reference, the human
    checks the rest; "human" = the human verifies every calibration item (references are ignored for
    calibration, still used for validation); "audit" = like auto, plus a seeded random ``audit_fraction`` of the
    automatic verdicts is shown to the human for confirmation and disagreements are reported.
    ``n_cal`` = number of calibration items (None = half the items); ``limit`` = use only the first ``limit``
    items of a seeded permutation of the task (None = all).
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


@dataclass(frozen=True)
class Preflight:
    """The pre-flight estimate: worst-case calls (items × K_max), expected calls under the chosen stopping rule
    (simulated on the reference workload mix of SPEC §8), time from a measured latency and the concurrency, and cost
    from the user's prices and the probe's token usage (None when unknown)."""

    n_items: int
    n_cal: int
    worst_calls: int
    expected_calls: int
    latency_s: float | None = None
    seconds: float | None = None
    cost: float | None = None
    note: str = ""


# ------------------------------------------------------------------------------------------------------ sampling
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

    result: Any  # relgate_tui.core.certify.CertificationResult
    rows: tuple[ItemRow, ...]
    curve: Any  # relgate_tui.core.certify.CoverageCurve
    samples_used: tuple[int, ...]
    k_max: int
    calls_made: int = 0
    calls_cached: int = 0
    calls_failed: int = 0
    audited: int = 0
    disagreements: int = 0
    n_unsampled: int = 0


def _finite_or_none(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)
