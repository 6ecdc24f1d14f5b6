"""A reviewer's verdict on one item and how an item's labels become its final label (issue 21 §5).

A verdict is a short code: ``"1"``, ``"2"``, … (the accepted candidate's rank), ``"none"`` (no candidate is
acceptable: rank score ∞, eq. 10.1) or ``"skip"``. Agreement is measured on the nominal label "accepted rank r |
none acceptable" — a skip is a missing value there (:mod:`.agreement`).

**Finalisation.** An item is *final* when its R labels all say the same thing, or when an adjudicator decided it.
Otherwise, once it has its R labels, it is *disputed*; with fewer it is *pending* (not final, not disputed).

* ``strict`` (the default): a disputed item that is not adjudicated counts as a miss — its final label is ``none``
  (score ∞), so an unresolved disagreement can only lower the reliability level and raise M*, never flatter them.
* ``majority`` (R odd): the label more than half the item's reviewers gave; a disputed item without such a label
  (three different verdicts from three reviewers) still counts as a miss, as under strict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["POLICIES", "NONE", "SKIP", "verdict_code", "parse_verdict", "Finalised", "finalise"]

POLICIES = ("strict", "majority")
NONE, SKIP = "none", "skip"


def verdict_code(*, rank: int | None = None, none: bool = False, skip: bool = False) -> str:
    """The code of exactly one of ``rank`` (≥ 1), ``none``, ``skip``."""
    if (rank is not None) + bool(none) + bool(skip) != 1:
        raise ValueError("give exactly one of rank, none, skip")
    if rank is not None:
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            raise ValueError(f"rank must be an integer >= 1, got {rank!r}")
        return str(rank)
    return NONE if none else SKIP


def parse_verdict(code: object) -> tuple[int | None, bool, bool]:
    """``(rank, none, skip)`` of a verdict code; ValueError for anything else."""
    if code == NONE:
        return None, True, False
    if code == SKIP:
        return None, False, True
    if isinstance(code, str) and code.isdigit() and code[0] != "0" and len(code) <= 6:
        return int(code), False, False
    raise ValueError(f"not a verdict: {str(code)[:40]!r}")


@dataclass(frozen=True)
class Finalised:
    """The outcome of :func:`finalise`: ``final`` item → verdict code (agreed, adjudicated or settled by the
    policy), the ``disputed`` items (R labels that differ, in item order; adjudicated ones excluded), those of them
    the policy ``counted_as_misses`` (final label ``none`` only because nobody settled them), the ``adjudicated`` and
    the ``pending`` items (fewer than R labels, no adjudication)."""

    policy: str
    final: Mapping[str, str]
    disputed: tuple[str, ...]
    counted_as_misses: tuple[str, ...]
    adjudicated: tuple[str, ...]
    pending: tuple[str, ...]


def finalise(items: tuple[str, ...] | list[str], labels: Mapping[str, Mapping[str, str]], per_item: int,
             adjudicated: Mapping[str, str], policy: str = "strict") -> Finalised:
    """Final labels of ``items`` from ``labels`` (item → reviewer → verdict code) and the adjudicators' decisions
    under ``policy`` (see the module docstring). ``majority`` needs an odd ``per_item``."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if per_item < 1:
        raise ValueError(f"per_item must be >= 1, got {per_item}")
    if policy == "majority" and per_item % 2 == 0:
        raise ValueError(f"--policy majority needs an odd number of reviewers per item (this session has {per_item})")
    final: dict[str, str] = {}
    disputed: list[str] = []
    misses: list[str] = []
    adjudged: list[str] = []
    pending: list[str] = []
    for item in items:
        if item in adjudicated:
            final[item] = adjudicated[item]
            adjudged.append(item)
            continue
        given = list((labels.get(item) or {}).values())
        if len(given) < per_item:
            pending.append(item)
            continue
        counts = Counter(given)
        if len(counts) == 1:
            final[item] = given[0]
            continue
        disputed.append(item)
        top, n_top = counts.most_common(1)[0]
        if policy == "majority" and 2 * n_top > len(given):
            final[item] = top
        else:
            final[item] = NONE
            misses.append(item)
    return Finalised(policy, final, tuple(disputed), tuple(misses), tuple(adjudged), tuple(pending))
