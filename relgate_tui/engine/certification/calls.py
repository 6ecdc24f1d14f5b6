"""What one invocation cost in calls (:class:`CallCounts`): the sampler's and the judges' totals as a run's result
reports them. A module of its own that imports nothing, so the pipeline counts a run's calls without loading the
statistics (numpy, :mod:`relgate_tui.engine.certification.analysis`) before the run's first request.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CallCounts"]


@dataclass
class CallCounts:
    """Calls of one invocation (issue 5 item 7): ``made`` = requests answered (each paid, used or not), ``cached`` =
    samples served from the cache or the run store, ``failed`` = requests that failed after retries."""

    made: int = 0
    cached: int = 0
    failed: int = 0
    batch_rounds: int = 0  # issue 32: rounds sent through a Batch API (0 = direct calls)
    batched: int = 0  # requests submitted in batches
    failure_reasons: tuple[tuple[str, int], ...] = ()  # issue 42: Batch API failed lines by reason, most first
