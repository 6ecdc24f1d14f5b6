"""Exact weighted MFAS speed (SPEC §8: exact CP-SAT MFAS for up to 16 candidates in ≤ 1 s; issue 4 scope 6).

Run: ``python bench/mfas.py [--seeds 7] [--time-limit 10] [--workers 1]`` (``--smoke``: n ∈ {6, 8}, one seed, no
target checked).

Noisy random tournaments, built exactly as an audit builds them: n candidates with latent qualities
q_i ~ N(0, spread²); every pair is judged k = 3 times in each presentation order (6 verdicts), the judge preferring
i with Bradley–Terry probability 1/(1 + e^{−(q_i − q_j)}); the majority tournament has margin weights in {2, 4, 6}
and no edge on a 3–3 split. Regimes: ``bt 0.5`` (spread 0.5: near-equal candidates, many cycles), ``bt 0``
(spread 0: every verdict a coin flip; about 31% of pairs split 3–3, so the tournament is partial) and ``complete``
(worst case: a uniformly random complete tournament, every pair decided, margins uniform in 1..6).

For each n ∈ {6, 8, 12, 16, 24} and regime, over the seeds: median and max wall time of ``mfas_exact`` (model
building + CP-SAT, ``num_workers`` as given; 1 is the default because the LP-based search runs best single-threaded
and the machine has 2 shared cores), how many solves were proven optimal, agreement of the optimal cost with brute
force over all n! orders (n ≤ 8), and the excess cost of the Copeland approximation (mean of cost_Copeland −
cost_exact, and Σ excess / Σ cost_exact in %; the Copeland order breaks score ties by candidate order, so it can
reverse edges even of an acyclic partial tournament). A second table compares 1 and 2 workers (3 s time limit).

Target: every n ≤ 16 solve proven optimal with max time ≤ 1 s ⇒ PASS, else FAIL (exit status 1).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from itertools import combinations

import numpy as np

from relgate_tui.core.judge import (
    PairwiseVerdict,
    Tournament,
    build_tournament,
    cycle_report,
    mfas_brute_force,
    mfas_copeland,
    mfas_exact,
)

SIZES = (6, 8, 12, 16, 24)
REGIMES = ("bt 0.5", "bt 0", "complete")
REPS_PER_ORDER = 3
TARGET_N = 16
TARGET_SECONDS = 1.0


def noisy_tournament(n: int, spread: float, seed: int) -> Tournament:
    rng = np.random.default_rng([n, int(spread * 1000), seed])
    q = rng.normal(0.0, spread, n)
    names = [f"c{i}" for i in range(n)]
    verdicts = []
    for i, j in combinations(range(n), 2):
        p_i = 1.0 / (1.0 + np.exp(-(q[i] - q[j])))
        for first, second in ((i, j), (j, i)):
            for _ in range(REPS_PER_ORDER):
                winner = i if rng.random() < p_i else j
                verdicts.append(PairwiseVerdict(names[first], names[second], names[winner]))
    return build_tournament(verdicts, names)


def random_complete_tournament(n: int, seed: int) -> Tournament:
    rng = np.random.default_rng([n, 7, seed])
    names = [f"c{i}" for i in range(n)]
    verdicts = []
    for i, j in combinations(range(n), 2):
        w, l = (i, j) if rng.random() < 0.5 else (j, i)
        verdicts += [PairwiseVerdict(names[w], names[l], names[w])] * int(rng.integers(1, 7))
    return build_tournament(verdicts, names)


def make_tournament(regime: str, n: int, seed: int) -> Tournament:
    if regime == "complete":
        return random_complete_tournament(n, seed)
    return noisy_tournament(n, float(regime.split()[1]), seed)


def timed_exact(t: Tournament, time_limit: float, workers: int):
    t0 = time.perf_counter()
    res = mfas_exact(t, time_limit_s=time_limit, num_workers=workers)
    return res, time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=7)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--smoke", action="store_true", help="the smallest size (seconds), no target checked")
    args = ap.parse_args()
    sizes, compare_sizes = ((6, 8), (8,)) if args.smoke else (SIZES, (16, 24))
    if args.smoke:
        args.seeds = 1

    mfas_exact(random_complete_tournament(8, 999), time_limit_s=5.0)  # warm-up: imports OR-Tools, runs CP-SAT once

    header = (f"{'regime':>8} {'n':>3} {'seeds':>5} {'med ρ':>6} {'med s':>8} {'max s':>8} {'optimal':>8} "
              f"{'med cost':>8} {'brute':>7} {'Cop. excess':>11} {'excess %':>8}")
    print(f"Exact weighted MFAS (CP-SAT, workers={args.workers}, time limit {args.time_limit:g} s per solve)")
    print(header)
    print("-" * len(header))
    target_ok = True
    for regime in REGIMES:
        for n in sizes:
            times, rhos, costs, excess = [], [], [], []
            n_opt = 0
            brute_ok = 0
            for seed in range(args.seeds):
                t = make_tournament(regime, n, seed)
                rhos.append(cycle_report(t).rho)
                res, secs = timed_exact(t, args.time_limit, args.workers)
                times.append(secs)
                costs.append(res.cost)
                n_opt += res.optimal
                if n <= 8:
                    brute_ok += mfas_brute_force(t).cost == res.cost
                cop = mfas_copeland(t).cost
                excess.append(cop - res.cost)
                if n <= TARGET_N and (secs > TARGET_SECONDS or not res.optimal):
                    target_ok = False
            brute = f"{brute_ok}/{args.seeds}" if n <= 8 else "-"
            print(f"{regime:>8} {n:>3} {args.seeds:>5} {statistics.median(rhos):>6.3f} "
                  f"{statistics.median(times):>8.3f} {max(times):>8.3f} {n_opt:>3}/{args.seeds:<4} "
                  f"{statistics.median(costs):>8g} {brute:>7} {statistics.mean(excess):>11.1f} "
                  f"{100 * sum(excess) / max(sum(costs), 1):>7.1f}%")
    print()
    compare_limit = min(args.time_limit, 3.0)
    print(f"Workers (complete, time limit {compare_limit:g} s: median / max seconds, proven optimal)")
    for n in compare_sizes:
        cells = []
        for workers in (1, 2):
            runs = [timed_exact(random_complete_tournament(n, s), compare_limit, workers) for s in range(args.seeds)]
            ts = [s for _, s in runs]
            cells.append(f"workers={workers}: {statistics.median(ts):6.3f} / {max(ts):6.3f} s, "
                         f"{sum(r.optimal for r, _ in runs)}/{len(runs)} optimal")
        print(f"  n={n:>2}  " + "   ".join(cells))
    print()
    if args.smoke:
        print("smoke: no target checked")
        return 0
    verdict = "PASS" if target_ok else "FAIL"
    print(f"{verdict}: n <= {TARGET_N}, every solve proven optimal in <= {TARGET_SECONDS:g} s (SPEC §8)")
    return 0 if target_ok else 1


if __name__ == "__main__":
    sys.exit(main())
