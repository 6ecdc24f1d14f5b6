"""Judge-vs-human agreement on the labelled items (issue 22 §3): the 2×2 table, Cohen's κ with a bootstrap
interval, and the judge's false-accept rate with an exact upper bound.

Cells (judge verdict f, human verdict Y, 1 = "the top answer is correct"): ``yes_yes`` (f = 1, Y = 1),
``yes_no`` (f = 1, Y = 0: a **false accept**), ``no_yes`` (f = 0, Y = 1: a false reject), ``no_no``.

* Cohen's κ = (p_o − p_e)/(1 − p_e), p_o the observed agreement, p_e the agreement expected from the margins
  (Cohen 1960); None when p_e = 1 (one verdict everywhere on both sides). Interval: percentile bootstrap (B = 10,000,
  seeded; the four cell counts resampled as Multinomial(n, observed shares) — exactly the i.i.d. resampling of the
  labelled pairs); no interval (``kappa_note`` says why) when every resample gives the same κ — perfect agreement
  or a constant side — since a zero-width "95%" interval would claim certainty.
* False-accept rate = yes_no / (yes_no + no_no): of the answers the humans rejected, the share the judge accepted —
  the error that inflates a judge-only reliability. Upper bound: one-sided Clopper–Pearson at ``confidence``
  (core.intervals.clopper_pearson_upper). None without a rejected answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from relgate_tui.core.certification.intervals import clopper_pearson_upper
from relgate_tui.core.review.agreement import cohen_kappa, degenerate_note

__all__ = ["Agreement", "agreement", "constant_judge"]


def constant_judge(verdicts: ArrayLike) -> str | None:
    """A warning when the judge gave ONE verdict f on every judged item (n ≥ 2; issue 31 item 7), else None.

    A constant judge carries no information about which answers are right: its κ with any human is 0 (or undefined,
    p_e = 1), and in the prediction-powered bound (core/ppi.py) the rectifier Y − f then does all the work, so the
    assisted bound is a human-only bound with extra variance — valid, but no help, and the agreement table looks
    reassuring when the humans happen to agree with the constant. Said in words, with the count."""
    f = np.asarray(verdicts, dtype=np.int64).ravel()
    if f.size < 2 or not (np.all(f == f[0])):
        return None
    word = "yes" if int(f[0]) == 1 else "no"
    return (f'the verification judge said "{word}" to all {f.size} items it judged: a constant judge tells no answer '
            "from another (κ 0 at best), so the judge-assisted bound rests on the human labels alone — check the "
            "judge (model, prompt, server) before relying on it")


@dataclass(frozen=True)
class Agreement:
    """Judge vs human on n labelled items (module docstring)."""

    yes_yes: int
    yes_no: int
    no_yes: int
    no_no: int
    kappa: float | None
    kappa_lower: float | None
    kappa_upper: float | None
    false_accept_rate: float | None
    false_accept_upper: float | None
    confidence: float
    kappa_note: str | None = None
    """Why κ has no interval although it has a value (every bootstrap resample gives the same κ)."""

    @property
    def n(self) -> int:
        return self.yes_yes + self.yes_no + self.no_yes + self.no_no

    @property
    def agreement_rate(self) -> float | None:
        return (self.yes_yes + self.no_no) / self.n if self.n else None


_EYE = np.eye(2)
_JUDGE = _EYE[[1, 1, 0, 0]]  # the judge's verdict in each cell (yes_yes, yes_no, no_yes, no_no), one-hot over (0, 1)
_HUMAN = _EYE[[1, 0, 1, 0]]  # the human's


def _kappa(counts: np.ndarray) -> np.ndarray:
    """Cohen's κ from cell counts (resamples × 4): the four cells as items weighted by their counts, through the one
    Cohen's κ of the project (:func:`relgate_tui.core.review.agreement.cohen_kappa`); nan when p_e = 1."""
    return cohen_kappa(_JUDGE, _HUMAN, np.atleast_2d(counts))


def agreement(judge: ArrayLike, human: ArrayLike, confidence: float = 0.95, n_boot: int = 10_000,
              seed: int = 0) -> Agreement:
    """The agreement of 0/1 ``judge`` and ``human`` verdicts on the same items (same order)."""
    f = np.asarray(judge)
    y = np.asarray(human)
    if f.shape != y.shape or f.ndim != 1 or (f.size and not (np.isin(f, (0, 1)).all() and np.isin(y, (0, 1)).all())):
        raise ValueError("judge and human verdicts must be two 0/1 arrays of one length")
    cells = np.array([np.sum((f == 1) & (y == 1)), np.sum((f == 1) & (y == 0)),
                      np.sum((f == 0) & (y == 1)), np.sum((f == 0) & (y == 0))], dtype=np.int64)
    n = int(cells.sum())
    kappa = lo = hi = None
    note = None
    if n:
        k = float(_kappa(cells.astype(np.float64))[0])
        if np.isfinite(k):
            kappa = k
            rng = np.random.default_rng(seed)
            boot = rng.multinomial(n, cells / n, size=n_boot).astype(np.float64)
            reps = _kappa(boot)
            reps = reps[np.isfinite(reps)]
            if reps.size:
                lo_q, hi_q = np.quantile(reps, [(1 - confidence) / 2, (1 + confidence) / 2])
                if hi_q - lo_q > 1e-12:
                    lo, hi = float(lo_q), float(hi_q)
                else:  # zero width: no interval (issue 33 §8)
                    note = degenerate_note(kappa)
    rejected = int(cells[1] + cells[3])
    far = int(cells[1]) / rejected if rejected else None
    far_up = float(clopper_pearson_upper(int(cells[1]), rejected, confidence)) if rejected else None
    return Agreement(int(cells[0]), int(cells[1]), int(cells[2]), int(cells[3]), kappa, lo, hi, far, far_up,
                     float(confidence), note)
