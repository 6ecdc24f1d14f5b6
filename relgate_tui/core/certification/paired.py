"""Paired comparison gate: is model B no worse than model A on the same items? (issue 15 §2). Pure, exact.

Each of n shared items gives a pair (A's top answer acceptable?, B's top answer acceptable?) — top-answer
correctness is the event ``score ≤ 1`` behind the reliability level (Def. 2.4). The 2×2 table::

                 B right   B wrong
      A right      n11       n10      (n10: items B lost)
      A wrong      n01       n00      (n01: items B won)

is one multinomial draw with cell probabilities p11, p10, p01, p00. The quantity of interest is the difference of
the two top-answer accuracies ``Δ = p_B − p_A = p01 − p10``; "B is worse than A by more than M" is ``Δ < −M``.

**Decisions** (``confidence`` = 0.95 by default, so each one-sided claim has error ≤ γ = (1 − confidence)/2 =
2.5%: the usual non-inferiority convention, "the two-sided 95% interval lies above −M"):

* ``not_worse`` (exit 0): H0 ``Δ ≤ −M`` rejected at level γ;
* ``worse`` (exit 1): H0 ``Δ ≥ −M`` rejected at level γ (B is worse by more than M);
* ``undecided`` (exit 3): neither.

The two claims exclude each other (the bounds below satisfy L ≤ U), so together they err with probability ≤ γ.

**Margin M = 0 — exact conditional (McNemar) test.** Given the number of discordant pairs d = n10 + n01,
n01 ~ Binomial(d, θ) with θ = p01 / (p01 + p10), whatever the other cells are; Δ ≤ 0 ⟺ θ ≤ ½. So the p-value of
"not worse" is ``P(Bin(d, ½) ≥ n01)`` and that of "worse" is ``P(Bin(d, ½) ≤ n01)``: exact conditionally on d,
hence unconditionally valid. (At M = 0 "not worse" therefore needs evidence that B is *better*; a tie never
decides.)

**Margin M > 0 — exact but conservative (Bonferroni-combined Clopper–Pearson).** The conditional test is not
exact for M > 0: ``p01 − p10 ≤ −M`` is not a statement about θ alone (it depends on the nuisance p01 + p10), and
an unconditional exact test needs a supremum over that nuisance. relgate uses instead the bounds

    L = CP_lower(n01; n, γ/2) − CP_upper(n10; n, γ/2),     U = CP_upper(n01; n, γ/2) − CP_lower(n10; n, γ/2),

where ``CP_lower(x; n, β)`` / ``CP_upper`` are the exact one-sided Clopper–Pearson bounds at error β of a binomial
proportion (n01 ~ Bin(n, p01) and n10 ~ Bin(n, p10) marginally). By the union bound
``P(L > Δ) ≤ P(CP_lower(n01) > p01) + P(CP_upper(n10) < p10) ≤ γ/2 + γ/2 = γ`` for every (p01, p10), and likewise
``P(U < Δ) ≤ γ``: valid for every sample size, conservative (it spends half the error on each cell). "not worse"
iff L > −M, "worse" iff U < −M; the p-value is the smallest γ at which the claim would be made (bisection; the
bounds are monotone in γ). [L, U] is also the reported confidence interval for Δ at every margin (at M = 0 the
decision uses the sharper McNemar test, so it can decide while the interval still contains 0).

**Items to decide.** When undecided, :func:`items_to_decide` finds the smallest n' > n at which the same
decision rule would decide if the observed proportions n10/n and n01/n stayed the same (counts rounded), or None
when no n' ≤ 10⁷ decides (the estimate sits on −M, or M = 0 with no discordant pair).

Example: B identical to A (n10 = n01 = 0) at M = 0.05: L = −CP_upper(0; n, 0.0125) = −(1 − 0.0125^{1/n}) > −0.05
iff n ≥ 86 — "not worse" with 86 items, undecided below.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from relgate_tui.core.certification.intervals import clopper_pearson_lower, clopper_pearson_upper

__all__ = [
    "PairedTable",
    "PairedTest",
    "SetSizeDifference",
    "paired_table",
    "paired_test",
    "items_to_decide",
    "MorePaired",
    "more_paired_items",
    "set_size_difference",
    "DECISIONS",
]

DECISIONS = ("not_worse", "worse", "undecided")
_MAX_N = 10_000_000


@dataclass(frozen=True)
class PairedTable:
    """The 2×2 table of paired top-answer correctness (see the module docstring)."""

    n11: int
    n10: int
    n01: int
    n00: int

    def __post_init__(self) -> None:
        for name in ("n11", "n10", "n01", "n00"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {v!r}")

    @property
    def n(self) -> int:
        return int(self.n11 + self.n10 + self.n01 + self.n00)

    @property
    def discordant(self) -> int:
        return int(self.n10 + self.n01)


def paired_table(a_correct: Sequence[bool], b_correct: Sequence[bool]) -> PairedTable:
    """Count the table from per-item correctness of A and B (same item order)."""
    a = np.asarray(a_correct, dtype=bool)
    b = np.asarray(b_correct, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("a_correct and b_correct must be 1-d and of the same length")
    return PairedTable(int(np.sum(a & b)), int(np.sum(a & ~b)), int(np.sum(~a & b)), int(np.sum(~a & ~b)))


@dataclass(frozen=True)
class PairedTest:
    """Result of :func:`paired_test`. ``difference`` = (n01 − n10)/n (B's accuracy minus A's; nan when n = 0),
    ``[lower, upper]`` its Bonferroni–Clopper–Pearson interval at ``confidence``; ``p_not_worse`` / ``p_worse`` the
    one-sided p-values of the two claims (compared with γ = (1 − confidence)/2); ``method`` names the test used."""

    table: PairedTable
    margin: float
    confidence: float
    difference: float
    lower: float
    upper: float
    p_not_worse: float
    p_worse: float
    decision: str
    method: str
    accuracy_a: float
    accuracy_b: float

    @property
    def gamma(self) -> float:
        return (1.0 - self.confidence) / 2.0


def _bounds(t: PairedTable, gamma: float) -> tuple[float, float]:
    """(L, U) with P(L > Δ) ≤ gamma and P(U < Δ) ≤ gamma (each cell bound at error gamma/2)."""
    n = t.n
    if n == 0:
        return -1.0, 1.0
    conf = 1.0 - gamma / 2.0
    lower = clopper_pearson_lower(t.n01, n, conf) - clopper_pearson_upper(t.n10, n, conf)
    upper = clopper_pearson_upper(t.n01, n, conf) - clopper_pearson_lower(t.n10, n, conf)
    return max(-1.0, lower), min(1.0, upper)


def _bonferroni_p(t: PairedTable, margin: float, side: str) -> float:
    """Smallest gamma at which the Bonferroni bound makes the claim (``side`` "not_worse": L > −M; "worse":
    U < −M); 1 when even gamma → 1 does not. Bisection: L increases and U decreases with gamma."""
    if t.n == 0:
        return 1.0

    def claims(g: float) -> bool:
        lo, hi = _bounds(t, g)
        return lo > -margin if side == "not_worse" else hi < -margin

    hi_g = 1.0 - 1e-12
    if not claims(hi_g):
        return 1.0
    lo_g = 0.0
    for _ in range(60):
        mid = (lo_g + hi_g) / 2.0
        if claims(mid):
            hi_g = mid
        else:
            lo_g = mid
    return hi_g


def paired_test(table: PairedTable, margin: float = 0.05, confidence: float = 0.95) -> PairedTest:
    """The gate's decision on ``table`` (see the module docstring for the tests and why they are valid)."""
    if not (isinstance(margin, (int, float)) and not isinstance(margin, bool) and 0.0 <= margin < 1.0):
        raise ValueError(f"the margin must be in [0, 1), got {margin!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    t = table
    gamma = (1.0 - confidence) / 2.0
    lower, upper = _bounds(t, gamma)
    n = t.n
    if margin == 0.0:
        d = t.discordant
        p_nw = float(binom.sf(t.n01 - 1, d, 0.5)) if d else 1.0  # P(Bin(d, 1/2) >= n01)
        p_w = float(binom.cdf(t.n01, d, 0.5)) if d else 1.0  # P(Bin(d, 1/2) <= n01)
        method = "exact conditional binomial on the discordant pairs (McNemar), one-sided"
    else:
        p_nw = _bonferroni_p(t, margin, "not_worse")
        p_w = _bonferroni_p(t, margin, "worse")
        method = "Bonferroni-combined exact Clopper-Pearson bounds on the two discordant cells (conservative)"
    if p_nw <= gamma:
        decision = "not_worse"
    elif p_w <= gamma:
        decision = "worse"
    else:
        decision = "undecided"
    nan = math.nan
    return PairedTest(
        table=t, margin=float(margin), confidence=float(confidence),
        difference=(t.n01 - t.n10) / n if n else nan, lower=lower, upper=upper,
        p_not_worse=min(1.0, p_nw), p_worse=min(1.0, p_w), decision=decision, method=method,
        accuracy_a=(t.n11 + t.n10) / n if n else nan, accuracy_b=(t.n11 + t.n01) / n if n else nan,
    )


def _scaled(t: PairedTable, n_new: int) -> PairedTable:
    n = t.n
    n10 = int(round(t.n10 * n_new / n))
    n01 = int(round(t.n01 * n_new / n))
    n11 = int(round(t.n11 * n_new / n))
    n11 = min(n11, n_new - n10 - n01)
    return PairedTable(max(n11, 0), n10, n01, max(n_new - n10 - n01 - max(n11, 0), 0))


def items_to_decide(table: PairedTable, margin: float = 0.05, confidence: float = 0.95) -> int | None:
    """The smallest n' ≥ n at which :func:`paired_test` decides with the observed cell proportions kept (counts
    rounded), or None when none up to 10⁷ does. Exponential then binary search (the decision is monotone in n'
    for fixed proportions up to rounding; the returned n' is checked to decide)."""
    if table.n == 0:
        return None

    def decides(m: int) -> bool:
        return paired_test(_scaled(table, m), margin, confidence).decision != "undecided"

    n = table.n
    if decides(n):
        return n
    hi = n + 1
    while hi <= _MAX_N and not decides(hi):
        hi = n + 2 * (hi - n)
    if hi > _MAX_N:
        if not decides(_MAX_N):
            return None
        hi = _MAX_N
    lo = n  # undecided at n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if decides(mid):
            hi = mid
        else:
            lo = mid
    return hi


@dataclass(frozen=True)
class MorePaired:
    """compare's honest "more paired items" (issue 33 §6): ``more`` is never larger than ``available`` (the shared
    items not yet paired, i.e. unverified in a run) and None when no count would decide; ``message`` is the line."""

    more: int | None
    message: str


def more_paired_items(table: PairedTable, available: int, margin: float = 0.05,
                      confidence: float = 0.95) -> MorePaired:
    """How many more paired items at the same rates would decide an undecided comparison, capped by ``available``
    (:func:`items_to_decide`, which keeps the observed proportions)."""
    if available < 0:
        raise ValueError(f"available must be ≥ 0, got {available!r}")
    if table.n == 0:
        return MorePaired(None, "no paired item yet")
    if paired_test(table, margin, confidence).decision != "undecided":
        return MorePaired(0, "decided")
    n_decide = items_to_decide(table, margin, confidence)
    if n_decide is None:
        return MorePaired(None, "more items at the same rates would not decide it")
    more = n_decide - table.n
    if more > available:
        left = f"only {available} shared item{'s' if available != 1 else ''} left unpaired" if available else \
            "no shared item left unpaired"
        return MorePaired(None, f"{left}: these two runs cannot decide it (≈ {more} more paired items at the same "
                                "rates would; run both on more items)")
    return MorePaired(more, f"about {more} more paired items at the same rates would decide it")


@dataclass(frozen=True)
class SetSizeDifference:
    """Prediction-set sizes of the paired items: means, mean difference B − A, and how many items got a larger /
    smaller / equal set under B. Items without a set in either run are left out (``n``)."""

    n: int
    mean_a: float
    mean_b: float
    mean_difference: float
    larger: int
    smaller: int
    equal: int


def set_size_difference(sizes_a: Sequence[float], sizes_b: Sequence[float]) -> SetSizeDifference:
    a = np.asarray(sizes_a, dtype=np.float64)
    b = np.asarray(sizes_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError("sizes_a and sizes_b must have the same length")
    ok = ~(np.isnan(a) | np.isnan(b))
    a, b = a[ok], b[ok]
    if not a.size:
        return SetSizeDifference(0, math.nan, math.nan, math.nan, 0, 0, 0)
    return SetSizeDifference(int(a.size), float(a.mean()), float(b.mean()), float((b - a).mean()),
                             int(np.sum(b > a)), int(np.sum(b < a)), int(np.sum(b == a)))
