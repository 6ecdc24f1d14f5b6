"""Judge certificate (issues 30, 41): validity, the planner's odds and efficiency of the shipped procedure, by simulation.

    PYTHONPATH=$PWD python bench/judge_certificate.py [--runs 1000] [--smoke]

**Validity in ten worlds.** A world is a law of the judge's stated confidence c ∈ [½, 1] and its true agreement
q = P(judge = human | item); the human verdict has base rate 0.70 (0.95 in "5% no"). Per run n labelled items
(n = 30, 100, 300, 1,000) are drawn and the shipped ``selective`` (the certificate's t̂) is called; the run errs when
the population's agreement on the items with c ≥ t̂ — from 2,000,000 items per world, seeded — is below A = 0.90.
Target: error ≤ δ = 0.05 + 2 Monte-Carlo SE. Worlds: calibrated (c = ½ + ½B, B ~ Beta(3, 1), q = c), overconfident
(c = ½ + ½B^¼, q = ½ + ½B), underconfident (c = ½ + ½B², q = ½ + ½B), a bad band in the middle (q = 0.55 on
c ∈ [0.86, 0.92)), a bad band at the top (q = 0.6 on c ≥ 0.97), heavy ties (c rounded to 0.05), agreement just below
A (q = 0.89, c ~ U(½, 1) uninformative: every decision errs), 5% "no" (the judge agrees on 40% of the "no" items),
a 0/1 judge (c = 1, q = 0.92: one candidate), and the planner's step (q = 0.97 on the top 30% of c, 0.70 below).

**Within-input dependence.** 100 inputs × 10 pairs; the pairs of an input share its confidence (± 0.02) and an
agreement offset u ~ N(0, 0.15); q = clip(0.92 + u), so the population's agreement is 0.892 < A everywhere and every
decision errs. The shipped unit (one pair drawn per input, ``one_per_group``) against pairs taken as independent.

**The planner** (``plan_labels``, exact P(PASS) of the whole procedure): its claimed P(PASS) at the n it names for
probability ½ and 0.9 against the share of simulated runs of the shipped procedure that PASS (``selective`` and the
min-coverage rule), in two worlds (c ~ U(½, 1); agreement e on the top C share, e_below under it), and the old
planner's README figures (177 and 481 labels in the issue's premise). Target: |claimed − simulated| ≤ 3 SE.

**Efficiency.** The median share of items decided at n = 300 against the oracle (the largest share whose true
agreement ≥ A) and a Trust-or-Escalate fixed-sequence baseline (Jung et al. 2025: thresholds 0.99, 0.98, …, 0.50
fixed in advance, the exact binomial test at each, stop at the first failure; a threshold with fewer than 30 items
at or above it is skipped, not tested).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import bdtrc

from relgate_tui.core.judge_certificate import selective
from relgate_tui.core.judge_certificate_checks import one_per_group
from relgate_tui.core.judge_certificate_plan import MIN_ITEMS, pass_probability, plan_labels

A, CONFIDENCE = 0.90, 0.95
DELTA = 1.0 - CONFIDENCE
SIZES = (30, 100, 300, 1000)
POPULATION = 2_000_000
TOE_GRID = np.round(np.arange(0.99, 0.495, -0.01), 2)

Draw = Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray, np.ndarray]]  # (c, q, human)


def _human(rng: np.random.Generator, n: int, base: float = 0.70) -> np.ndarray:
    return (rng.random(n) < base).astype(np.int64)


def _b(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.beta(3.0, 1.0, n)


def _calibrated(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c = 0.5 + 0.5 * _b(rng, n)
    return c, c, _human(rng, n)


def _over(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    b = _b(rng, n)
    return 0.5 + 0.5 * b ** 0.25, 0.5 + 0.5 * b, _human(rng, n)


def _under(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    b = _b(rng, n)
    return 0.5 + 0.5 * b ** 2, 0.5 + 0.5 * b, _human(rng, n)


def _band_mid(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c, q, y = _calibrated(rng, n)
    return c, np.where((c >= 0.86) & (c < 0.92), 0.55, q), y


def _band_top(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c, q, y = _calibrated(rng, n)
    return c, np.where(c >= 0.97, 0.6, q), y


def _ties(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c, q, y = _calibrated(rng, n)
    return np.round(c * 20) / 20, q, y


def _just_below(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return rng.uniform(0.5, 1.0, n), np.full(n, 0.89), _human(rng, n)


def _rare_no(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c = 0.5 + 0.5 * _b(rng, n)
    y = _human(rng, n, 0.95)
    return c, np.where(y == 1, np.minimum(1.0, c + 0.03), 0.4), y


def _binary(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.ones(n), np.full(n, 0.92), _human(rng, n)


def _step(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c = rng.uniform(0.5, 1.0, n)
    return c, np.where(c >= 0.85, 0.97, 0.70), _human(rng, n)


WORLDS: dict[str, Draw] = {"calibrated": _calibrated, "overconfident": _over, "underconfident": _under,
                           "bad band, middle": _band_mid, "bad band, top": _band_top, "heavy ties": _ties,
                           "just below A": _just_below, "5% no": _rare_no, "0/1 judge": _binary,
                           "planner's step": _step}


@dataclass(frozen=True)
class Truth:
    c_desc: np.ndarray
    agree_at: np.ndarray  # A(t) at each population item, descending c (ties: the last of a tie holds its value)

    def agreement(self, t: float) -> float:
        k = int(np.searchsorted(-self.c_desc, -t, side="right"))
        return float(self.agree_at[k - 1]) if k else 1.0

    def share(self, t: float) -> float:
        return float(np.searchsorted(-self.c_desc, -t, side="right")) / self.c_desc.size

    def oracle(self) -> float:
        # only shares at the end of a tie can be decided
        last = np.r_[self.c_desc[1:] != self.c_desc[:-1], True]
        ok = np.nonzero((self.agree_at >= A) & last)[0]
        return float(ok[-1] + 1) / self.c_desc.size if ok.size else 0.0


def truth(draw: Draw, seed: int, size: int) -> Truth:
    c, q, _ = draw(np.random.default_rng(seed), size)
    order = np.argsort(-c, kind="stable")
    c, q = c[order], q[order]
    return Truth(c, np.cumsum(q) / np.arange(1, c.size + 1))


def toe_threshold(c: np.ndarray, z: np.ndarray) -> float | None:
    """Trust-or-Escalate's fixed sequence (module docstring)."""
    t_hat = None
    for t in TOE_GRID:
        above = c >= t
        n, k = int(above.sum()), int(z[above].sum())
        if n < MIN_ITEMS:
            continue  # too few items to pass at all: not tested
        if k == 0 or bdtrc(k - 1, n, A) > DELTA:
            break
        t_hat = float(t)
    return t_hat


def validity(runs: int, seed: int) -> None:
    se = 2 * np.sqrt(DELTA * (1 - DELTA) / runs)
    print(f"\nvalidity: P(true agreement on the decided items < {A}) per world and n ({runs} runs each; target ≤ "
          f"{DELTA + se:.4f} = δ + 2 SE)")
    print(f"{'world':<18}" + "".join(f"{'n = ' + str(n):>10}" for n in SIZES) + f"{'worst':>9}  {'ok':>3}")
    for w, (name, draw) in enumerate(WORLDS.items()):
        tr = truth(draw, 10_000 + w, POPULATION)
        rng = np.random.default_rng(seed + w)
        rates = []
        for n in SIZES:
            bad = 0
            for _ in range(runs):
                c, q, _y = draw(rng, n)
                z = (rng.random(n) < q).astype(np.int64)
                s = selective(c, z, c, A, CONFIDENCE)
                bad += s.threshold is not None and tr.agreement(s.threshold) < A
            rates.append(bad / runs)
        worst = max(rates)
        print(f"{name:<18}" + "".join(f"{r:>10.4f}" for r in rates) + f"{worst:>9.4f}  {'yes' if worst <= DELTA + se else 'NO':>3}")


def clustered(runs: int, seed: int) -> None:
    g, k = 100, 10
    groups = np.repeat(np.arange(g), k)
    idx = one_per_group(groups, np.ones(g * k, dtype=bool))
    rng = np.random.default_rng(seed)
    unit = pairs = 0
    for _ in range(runs):
        c = np.repeat(rng.uniform(0.5, 1.0, g), k) + rng.normal(0.0, 0.02, g * k)
        z = (rng.random(g * k) < np.clip(0.92 + np.repeat(rng.normal(0.0, 0.15, g), k), 0, 1)).astype(np.int64)
        unit += selective(c[idx], z[idx], c, A, CONFIDENCE).threshold is not None
        pairs += selective(c, z, c, A, CONFIDENCE).threshold is not None
    se = 2 * np.sqrt(DELTA * (1 - DELTA) / runs)
    print(f"\nwithin-input dependence (100 inputs × 10 pairs, sd 0.15; every decision errs; {runs} runs; target ≤ "
          f"{DELTA + se:.4f})")
    print(f"  the input as unit (shipped, one pair per input)  {unit / runs:.4f}  "
          f"{'yes' if unit / runs <= DELTA + se else 'NO'}")
    print(f"  pairs as independent items (before issue 41)      {pairs / runs:.4f}  "
          f"{'yes' if pairs / runs <= DELTA + se else 'NO'}")


def _simulated_pass(n: int, e: float, below: float, cover: float, runs: int, rng: np.random.Generator) -> float:
    passed = 0
    for _ in range(runs):
        c = rng.uniform(0.5, 1.0, n)
        rank = np.argsort(np.argsort(-c))
        z = (rng.random(n) < np.where(rank < np.ceil(cover * n), e, below)).astype(np.int64)
        s = selective(c, z, c, A, CONFIDENCE)
        passed += s.threshold is not None and (s.coverage.value or 0.0) >= cover
    return passed / runs


def planner(runs: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    print(f"\nthe planner: claimed P(PASS) against the shipped procedure simulated ({runs} runs; target |Δ| ≤ 3 SE)")
    print(f"{'world (e on the top C, below)':<34}{'target':>7}{'labels':>8}{'claimed':>9}{'simulated':>10}"
          f"{'3 SE':>7}  ok")
    for e, below, cover in ((0.97, 0.70, 0.30), (0.97, 0.60, 0.50)):
        plan = plan_labels(A, e, cover, CONFIDENCE, expect_below=below)
        for target, n, claimed in ((0.5, plan.n_half, plan.p_half), (0.9, plan.n_ninety, plan.p_ninety)):
            label = f"e {e}, C {cover}, below {below}"
            if n is None or claimed is None:
                print(f"{label:<34}{target:>7}{'—':>8}   never (P(PASS) ≤ {plan.ceiling:.3f})")
                continue
            sim = _simulated_pass(n, e, below, cover, runs, rng)
            tol = 3 * np.sqrt(claimed * (1 - claimed) / runs)
            print(f"{label:<34}{target:>7}{n:>8}{claimed:>9.3f}{sim:>10.3f}{tol:>7.3f}  "
                  f"{'yes' if abs(sim - claimed) <= tol else 'NO'}")
    print("  the README's figures (the old planner: one test at the target coverage), premise e 0.95 on the top half, "
          "0.6 below:")
    for n, said in ((177, 0.5), (481, 0.9)):
        sim = _simulated_pass(n, 0.95, 0.6, 0.5, runs, rng)
        print(f"    {n} labels: said {said}, exact {pass_probability(n, A, CONFIDENCE, 0.95, 0.5, 0.6):.3f}, "
              f"simulated {sim:.3f}")
    plan = plan_labels(A, 0.95, 0.5, CONFIDENCE, expect_below=0.6)
    print(f"    the planner now: {plan.n_half} labels for ½ (exact {plan.p_half:.3f}); 0.9 never — P(PASS) ≤ "
          f"{plan.ceiling:.3f}, the first test (on the 116 most confident items) must pass")


def efficiency(runs: int, seed: int) -> None:
    n = 300
    print(f"\nefficiency at n = {n}: median share decided ({runs} runs)")
    print(f"{'world':<18}{'shipped':>9}{'ToE':>7}{'oracle':>8}{'shipped/oracle':>16}")
    for w, name in enumerate(("calibrated", "overconfident", "bad band, middle", "planner's step")):
        draw = WORLDS[name]
        tr = truth(draw, 10_000 + list(WORLDS).index(name), POPULATION)
        rng = np.random.default_rng(seed + 100 + w)
        ours, toe = np.zeros(runs), np.zeros(runs)
        for r in range(runs):
            c, q, _ = draw(rng, n)
            z = (rng.random(n) < q).astype(np.int64)
            t = selective(c, z, c, A, CONFIDENCE).threshold
            ours[r] = 0.0 if t is None else tr.share(t)
            tt = toe_threshold(c, z)
            toe[r] = 0.0 if tt is None else tr.share(tt)
        orc = tr.oracle()
        print(f"{name:<18}{np.median(ours):>9.3f}{np.median(toe):>7.3f}{orc:>8.3f}"
              f"{(np.median(ours) / orc if orc else float('nan')):>16.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--smoke", action="store_true", help="smallest size (seconds), no targets checked")
    args = ap.parse_args()
    global POPULATION
    runs = 10 if args.smoke else args.runs
    if args.smoke:
        POPULATION = 20_000
    start = time.perf_counter()
    print(f"judge certificate: A = {A}, confidence {CONFIDENCE}" + (" (smoke: figures meaningless)" if args.smoke
                                                                    else ""))
    validity(runs, 1)
    clustered(runs, 2)
    planner(max(runs // 2, 5) if not args.smoke else 5, 3)
    efficiency(runs, 4)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
