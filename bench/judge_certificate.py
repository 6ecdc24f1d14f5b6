"""Judge certificate (issue 30): validity and efficiency of relgate_tui.core.judge_certificate, by simulation.

    PYTHONPATH=$PWD python bench/judge_certificate.py [--runs 2000] [--quick]

Each run draws n = 1,000 labelled items i.i.d. from a task whose human base rate is 0.70. A judge is a law of its
stated confidence c ∈ [½, 1] and of its true agreement q(c) = P(judge = human | c); the judge's verdict is the
human's with probability q(c), its P(yes) is c for a "yes" and 1 − c for a "no". Three judges:

* calibrated — c = ½ + ½·B, B ~ Beta(3, 1), q(c) = c (agreement equals stated confidence);
* overconfident — the same true agreement q = ½ + ½·B, stated c = ½ + ½·B^0.25 (always surer than it is);
* non-monotone — calibrated except a band c ∈ [0.86, 0.92) where q = 0.55 (confidently wrong items mid-way).

Truth from a population of 4,000,000 items per judge (seeded): A(t) = E[q(c) | c ≥ t] and the share with c ≥ t;
TPR = TNR = E[q] (q does not depend on the human verdict). Per run the real code is called:
``selective`` (the certificate's t̂) and ``clopper_pearson_lower`` for the TPR/TNR bounds, exactly as ``certify``.

Targets (issue 30, acceptance): the share of runs whose decided items agree with humans less than A = 0.90 in the
population ≤ δ = 0.05 (+ 2 Monte-Carlo SE); TPR/TNR lower bounds above the truth in ≤ 5% (+ 2 MC SE); efficiency —
the calibrated judge's median share decided ≥ 60% of the oracle's (the largest share whose true agreement ≥ 0.90).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from relgate_tui.core.certification.intervals import clopper_pearson_lower
from relgate_tui.core.judge_certificate import selective

N_LABELLED = 1000
BASE_RATE = 0.70
AGREEMENT = 0.90
CONFIDENCE = 0.95
DELTA = 1.0 - CONFIDENCE
POPULATION = 4_000_000


@dataclass(frozen=True)
class Judge:
    name: str
    draw: Callable[[np.random.Generator, tuple[int, ...]], tuple[np.ndarray, np.ndarray]]  # (stated c, true q)


def _calibrated(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    c = 0.5 + 0.5 * rng.beta(3.0, 1.0, shape)
    return c, c


def _overconfident(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    b = rng.beta(3.0, 1.0, shape)
    return 0.5 + 0.5 * b ** 0.25, 0.5 + 0.5 * b


def _non_monotone(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    c, q = _calibrated(rng, shape)
    return c, np.where((c >= 0.86) & (c < 0.92), 0.55, q)


JUDGES = (Judge("calibrated", _calibrated), Judge("overconfident", _overconfident),
          Judge("non-monotone", _non_monotone))


@dataclass(frozen=True)
class Truth:
    c_desc: np.ndarray  # population confidences, descending
    agree_at: np.ndarray  # A(t) at each, = mean q over the items at or above it
    e_q: float

    def agreement(self, t: float) -> float:
        k = int(np.searchsorted(-self.c_desc, -t, side="right"))
        return float(self.agree_at[k - 1])

    def share(self, t: float) -> float:
        return float(np.searchsorted(-self.c_desc, -t, side="right")) / self.c_desc.size

    def oracle_share(self, a: float) -> float:
        ok = np.nonzero(self.agree_at >= a)[0]
        return float(ok[-1] + 1) / self.c_desc.size if ok.size else 0.0


def truth(judge: Judge, seed: int) -> Truth:
    c, q = judge.draw(np.random.default_rng(seed), (POPULATION,))
    order = np.argsort(-c, kind="stable")
    c, q = c[order], q[order]
    return Truth(c, np.cumsum(q) / np.arange(1, c.size + 1), float(q.mean()))


@dataclass(frozen=True)
class Outcome:
    invalid: float
    tpr_above: float
    tnr_above: float
    median_share: float
    oracle_share: float
    none_share: float


def simulate(judge: Judge, runs: int, seed: int) -> Outcome:
    tr = truth(judge, seed + 10_000)
    rng = np.random.default_rng(seed)
    shape = (runs, N_LABELLED)
    c, q = judge.draw(rng, shape)
    human = (rng.random(shape) < BASE_RATE).astype(np.int64)
    agree = (rng.random(shape) < q).astype(np.int64)
    verdict = np.where(agree == 1, human, 1 - human)
    invalid = tpr_above = tnr_above = none = 0
    shares = np.zeros(runs)
    for r in range(runs):
        sel = selective(c[r], agree[r], c[r], AGREEMENT, CONFIDENCE)
        if sel.threshold is None:
            none += 1
        else:
            invalid += tr.agreement(sel.threshold) < AGREEMENT
            shares[r] = tr.share(sel.threshold)
        pos, neg = human[r] == 1, human[r] == 0
        tpr_above += clopper_pearson_lower(int(verdict[r][pos].sum()), int(pos.sum()), CONFIDENCE) > tr.e_q
        tnr_above += clopper_pearson_lower(int((1 - verdict[r][neg]).sum()), int(neg.sum()), CONFIDENCE) > tr.e_q
    return Outcome(invalid / runs, tpr_above / runs, tnr_above / runs, float(np.median(shares)),
                   tr.oracle_share(AGREEMENT), none / runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--quick", action="store_true", help="200 runs")
    args = ap.parse_args()
    runs = 200 if args.quick else args.runs
    se = 2 * np.sqrt(DELTA * (1 - DELTA) / runs)
    print(f"judge certificate: n = {N_LABELLED} labelled, A = {AGREEMENT}, confidence {CONFIDENCE}, {runs} runs "
          f"per judge; targets ≤ {DELTA:.3f} + 2 MC SE = {DELTA + se:.4f}")
    print(f"{'judge':<14} {'P(A(t̂) < A)':>12} {'TPR lb > truth':>15} {'TNR lb > truth':>15} "
          f"{'median share':>13} {'oracle':>7} {'ratio':>6} {'decides none':>13}")
    for i, judge in enumerate(JUDGES):
        start = time.perf_counter()
        o = simulate(judge, runs, seed=1 + i)
        ratio = o.median_share / o.oracle_share if o.oracle_share else float("nan")
        print(f"{judge.name:<14} {o.invalid:>12.4f} {o.tpr_above:>15.4f} {o.tnr_above:>15.4f} "
              f"{o.median_share:>13.3f} {o.oracle_share:>7.3f} {ratio:>6.2f} {o.none_share:>13.3f}"
              f"   ({time.perf_counter() - start:.1f} s)")
    print(f"targets: P(A(t̂) < A) ≤ {DELTA + se:.4f}; bounds above truth ≤ {DELTA + se:.4f}; "
          f"calibrated ratio ≥ 0.60")


if __name__ == "__main__":
    main()
