"""Judge cascade: validity and coverage of relgate_tui.core.judge_cascade, by simulation.

    PYTHONPATH=$PWD python bench/judge_cascade.py [--runs 300] [--smoke]

An item has a difficulty d ~ U(0, 1) and a human verdict (base rate 0.70). A judge is a law of its stated
confidence c and of its chance of being right q (its verdict is the human's with probability q, independently of the
other judge given d). The strong judge is the same in every world: c₂ = q₂ = 0.5 + 0.5(1 − d⁴) (calibrated: its
P(right) is its confidence). The cheap judge:

* easy-only — sure of easy items only: c₁ = q₁ = 1 − d/2 (calibrated); the acceptance world;
* overconfident — q₁ = 1 − d/2, but on half the items (at random) it states c₁ = 1 − u/20, u ~ U(0, 1): sure
  (≥ 0.95) whatever the item, right three times in four there;
* worse than chance — c₁ = 1 − d/2 but q₁ = 0.4 everywhere;
* strong overconfident — the cheap judge of easy-only, and a strong judge that states 0.5 + 0.5(1 − d⁴) but is
  right with 0.5 + 0.5(1 − d^1.5) (the path's label-free score of each vector is too optimistic here).

Truth from a population of 400,000 items per world (seeded): A(t) = the mean of the deciding judge's q over the
items the cascade decides, and its share decided. Per run the real code (:func:`cascade_of`, :func:`selective`) is
called on n labelled items (all of them labelled) at A = 0.90, 95% confidence and its default cost κ. Compared:
the cheap and the strong judge alone (the single-judge certificate), a per-stage split (each judge certified on the
items reaching it at δ/2, the union's agreement is then ≥ A with probability ≥ 1 − δ) and the oracle (the largest
share any threshold pair decides with A(t) ≥ 0.90 in the population).

Targets: the share of runs whose cascade agrees with humans less than 0.90 in the population ≤ δ = 0.05 + 2 MC SE;
acceptance (easy-only world, 1,000 labels, medians): the cascade decides ≥ 90% of what the strong judge alone decides
and the cheap judge decides ≥ 10% of items. ``--smoke``: a few runs, no targets checked.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from relgate_tui.core.judge_cascade import COST, cascade_of, route
from relgate_tui.core.judge_certificate import selective

AGREEMENT = 0.90
CONFIDENCE = 0.95
DELTA = 1.0 - CONFIDENCE
BASE_RATE = 0.70
POPULATION = 200_000

Draw = Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]  # (c: 2 × n, q: 2 × n)


def _strong(d: np.ndarray) -> np.ndarray:
    return 0.5 + 0.5 * (1.0 - d ** 4)


def easy_only(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    d = rng.random(n)
    c1 = 1.0 - d / 2.0
    return np.array([c1, _strong(d)]), np.array([c1, _strong(d)])


def overconfident(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    d, u, loud = rng.random(n), rng.random(n), rng.random(n) < 0.5
    q1 = 1.0 - d / 2.0
    return np.array([np.where(loud, 1.0 - u / 20.0, q1), _strong(d)]), np.array([q1, _strong(d)])


def worse_than_chance(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    d = rng.random(n)
    return np.array([1.0 - d / 2.0, _strong(d)]), np.array([np.full(n, 0.4), _strong(d)])


def strong_overconfident(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    d = rng.random(n)
    return np.array([1.0 - d / 2.0, _strong(d)]), np.array([1.0 - d / 2.0, 0.5 + 0.5 * (1.0 - d ** 1.5)])


WORLDS: dict[str, Draw] = {"easy-only": easy_only, "overconfident": overconfident,
                           "worse than chance": worse_than_chance, "strong overconfident": strong_overconfident}


@dataclass(frozen=True)
class Truth:
    c: np.ndarray
    q: np.ndarray

    def of(self, thresholds: tuple[float | None, ...]) -> tuple[float, float, float]:
        """(A(t), share decided, share decided by the cheap judge) in the population."""
        d = route(self.c, thresholds)
        dec = d >= 0
        if not dec.any():
            return 1.0, 0.0, 0.0
        return float(self.q[d[dec], np.nonzero(dec)[0]].mean()), float(dec.mean()), float(np.mean(d == 0))

    def oracle(self, a: float, grid: int = 200) -> float:
        """The largest share a threshold pair decides with A(t) ≥ a (cheap thresholds on a quantile grid)."""
        order = np.argsort(-self.c[1], kind="stable")
        best = 0.0
        for t1 in [None, *np.quantile(self.c[0], np.linspace(1.0, 0.0, grid + 1)[1:])]:
            cheap = np.zeros(self.c.shape[1], dtype=bool) if t1 is None else self.c[0] >= t1
            k1, q1 = int(cheap.sum()), float(self.q[0][cheap].sum())
            rest = ~cheap[order]
            cum_n = k1 + np.cumsum(rest)
            cum_q = q1 + np.cumsum(np.where(rest, self.q[1][order], 0.0))
            ok = cum_q >= a * cum_n
            share = max(float(cum_n[ok].max()) if ok.any() else 0.0, float(k1) if q1 >= a * k1 else 0.0)
            best = max(best, share / self.c.shape[1])
        return best


def truth(draw: Draw, seed: int, size: int = POPULATION) -> Truth:
    c, q = draw(np.random.default_rng(seed), size)
    return Truth(c, q)


def labelled(draw: Draw, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(confidences 2 × n, verdicts 2 × n, human verdicts) of n labelled items."""
    c, q = draw(rng, n)
    y = (rng.random(n) < BASE_RATE).astype(np.int64)
    f = np.where(rng.random(q.shape) < q, y, 1 - y)
    return c, f, y


def per_stage(c: np.ndarray, f: np.ndarray, y: np.ndarray) -> tuple[float | None, float | None]:
    """Each judge certified on its own on the items reaching it, at δ/2 each (the per-stage split)."""
    agree = (f == y).astype(np.int64)
    conf = 1.0 - DELTA / 2.0
    t1 = selective(c[0], agree[0], c[0], AGREEMENT, conf).threshold
    rest = np.ones(y.size, dtype=bool) if t1 is None else c[0] < t1
    t2 = selective(c[1][rest], agree[1][rest], c[1][rest], AGREEMENT, conf).threshold if rest.any() else None
    return t1, t2


@dataclass(frozen=True)
class Row:
    world: str
    n: int
    invalid: float
    se: float
    cascade: float
    cheap_share: float
    cheap_alone: float
    strong_alone: float
    per_stage: float
    oracle: float
    none_share: float


def simulate(name: str, n: int, runs: int, seed: int, tr: Truth) -> Row:
    rng = np.random.default_rng(seed)
    res = np.zeros((runs, 5))
    invalid = none = 0
    for r in range(runs):
        c, f, y = labelled(WORLDS[name], rng, n)
        cas = cascade_of(c, f, y, AGREEMENT, CONFIDENCE, COST)
        a, share, cheap = tr.of(cas.thresholds)
        invalid += cas.route != "none" and a < AGREEMENT
        none += cas.route == "none"
        agree = (f == y).astype(np.int64)
        alone = [selective(c[j], agree[j], c[j], AGREEMENT, CONFIDENCE).threshold for j in (0, 1)]
        res[r] = (share, cheap, tr.of((alone[0], None))[1], tr.of((None, alone[1]))[1],
                  tr.of(per_stage(c, f, y))[1])
    med = np.median(res, axis=0)
    p = invalid / runs
    return Row(name, n, p, float(np.sqrt(DELTA * (1 - DELTA) / runs)), float(med[0]), float(med[1]), float(med[2]),
               float(med[3]), float(med[4]), tr.oracle(AGREEMENT, 20 if runs < 10 else 200), none / runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=38)
    ap.add_argument("--smoke", action="store_true", help="a few runs at 300 labels, no targets checked")
    args = ap.parse_args()
    runs = 3 if args.smoke else args.runs
    sizes = (300,) if args.smoke else (300, 1000)
    start = time.time()
    print(f"judge cascade: A = {AGREEMENT}, confidence {CONFIDENCE}, cost κ = {COST}, {runs} runs per row "
          f"(medians of the share of all items decided; truth from {20_000 if args.smoke else POPULATION:,} items)")
    print(f"{'world':<20} {'n':>5} {'invalid':>8} {'target':>7} {'cascade':>8} {'cheap':>6} {'cheap α':>8} "
          f"{'strong α':>9} {'δ/2 each':>9} {'oracle':>7}")
    rows = []
    for w, name in enumerate(WORLDS):
        tr = truth(WORLDS[name], 10_000 + w, 20_000 if args.smoke else POPULATION)
        for n in sizes:
            row = simulate(name, n, runs, args.seed + 100 * w + n, tr)
            rows.append(row)
            print(f"{name:<20} {n:>5} {row.invalid:>8.3f} {DELTA + 2 * row.se:>7.3f} {row.cascade:>8.3f} "
                  f"{row.cheap_share:>6.3f} {row.cheap_alone:>8.3f} {row.strong_alone:>9.3f} {row.per_stage:>9.3f} "
                  f"{row.oracle:>7.3f}")
    print("(cheap = share decided by the cheap judge = the strong judge's calls saved; 'cheap α' / 'strong α' = that "
          "judge certified alone; 'δ/2 each' = the per-stage split)")
    acc = next((r for r in rows if r.world == "easy-only" and r.n == 1000), None)
    if acc is not None:
        ratio = acc.cascade / acc.strong_alone if acc.strong_alone else 0.0
        print(f"acceptance (easy-only, 1,000 labels): cascade / strong alone {ratio:.3f} (target ≥ 0.90); cheap judge "
              f"decides {acc.cheap_share:.3f} of items (target ≥ 0.10)")
    if not args.smoke:
        ok = all(r.invalid <= DELTA + 2 * r.se for r in rows)
        ok &= acc is not None and acc.cascade >= 0.9 * acc.strong_alone and acc.cheap_share >= 0.10
        print("targets met" if ok else "TARGETS MISSED")
    print(f"({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
