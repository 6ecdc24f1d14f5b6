"""What every stopping rule shares, and the rule that never stops, without numpy.

:class:`StoppingRule` (the protocol), :func:`check_delta`, :func:`summarise_counts`, :class:`BatchRule` (the level
and ``should_stop`` through the rule's vectorised ``should_stop_batch``) and :class:`NoStopping` (``"none"``: every
item uses the full budget K_max). :mod:`relgate_tui.core.certification.stopping` holds the rules that do stop, their
registry ``get_stopping_rule`` and the simulations, and re-exports these names. They live here, importing numpy
only inside the functions that compute with it, so that a run with the ``none`` rule samples before numpy is loaded
(it loads during the run: :mod:`relgate_tui.engine.certification.run_start`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

__all__ = ["BatchRule", "NoStopping", "StoppingRule", "check_delta", "summarise_counts"]


@runtime_checkable
class StoppingRule(Protocol):
    """A sequential stopping rule: ``should_stop`` is True when the current leader is certified as the mode."""

    name: str
    delta: float

    def should_stop(self, counts: Sequence[int], n_samples: int) -> bool: ...


# ----------------------------------------------------------------------------------------------------------------
# input checks and count summaries


def check_delta(delta: float) -> float:
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}") from None
    if not 0.0 < value < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return value


def summarise_counts(counts: Sequence[int], n_samples: int) -> tuple[int, int, int]:
    """(leader count, runner-up count, number of classes seen) after validating the inputs."""
    values = [int(c) for c in counts]
    if any(c < 0 for c in values):
        raise ValueError(f"class counts must be non-negative, got {list(counts)!r}")
    n_samples = int(n_samples)
    if n_samples < sum(values):
        raise ValueError(f"n_samples ({n_samples}) is smaller than the sum of the class counts ({sum(values)})")
    seen = sorted((c for c in values if c > 0), reverse=True)
    leader = seen[0] if seen else 0
    runner_up = seen[1] if len(seen) > 1 else 0
    return leader, runner_up, len(seen)


@dataclass(frozen=True)
class BatchRule:
    """What every rule shares: the level ``delta`` (checked) and ``should_stop`` on one item's counts, which
    summarises them and asks the rule's vectorised ``should_stop_batch``."""

    delta: float = 0.05

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_delta(self.delta))

    def should_stop(self, counts: Sequence[int], n_samples: int) -> bool:
        import numpy as np  # loaded by the rules that use this (a run with the "none" rule samples without it)

        leader, runner_up, n_seen = summarise_counts(counts, n_samples)
        return bool(self.should_stop_batch(np.array([leader]), np.array([runner_up]), np.array([n_seen]), n_samples)[0])

    def should_stop_batch(
        self, leader: np.ndarray, runner_up: np.ndarray, n_seen: np.ndarray, n_samples: np.ndarray | int,
        leader_order: np.ndarray | None = None,
    ) -> np.ndarray:
        raise NotImplementedError


@dataclass(frozen=True)
class NoStopping(BatchRule):
    """Never stops early: every item uses the full budget K_max."""

    name: str = field(default="none", init=False)

    def should_stop(self, counts: Sequence[int], n_samples: int) -> bool:
        summarise_counts(counts, n_samples)
        return False

    def should_stop_batch(
        self, leader: np.ndarray, runner_up: np.ndarray, n_seen: np.ndarray, n_samples: np.ndarray | int,
        leader_order: np.ndarray | None = None,
    ) -> np.ndarray:
        import numpy as np

        return np.zeros(np.shape(leader), dtype=bool)
