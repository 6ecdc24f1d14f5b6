"""Sequential stopping: calls saved and validity of each rule (SPEC §3.7 and §8; issue 2 scope 6).

Run: ``python bench/stopping.py [--items 20000] [--delta 0.05] [--seed 0]`` (``--smoke``: 200 items, no target
checked).

Workloads (each item's samples are i.i.d. from its class distribution; no INVALID answers):

* ``reference`` — SPEC §8: 60% of items p = (0.97, 0.02, 0.01), 25% (0.75, 0.15, 0.10), 15% (0.45, 0.30, 0.15, 0.10).
* ``unanimous`` — every item p = (1.0,).
* ``near-ties`` — equal thirds of (0.5, 0.5) (an exact tie: no true mode, so every early stop is wrong),
  (0.55, 0.45) and (0.4, 0.35, 0.25).

For K_max ∈ {20, 10} and the rules ``paper`` (eq. 9.1), ``anytime-v1`` (the default rule before issue 11: Beta(8, 1)
prior, level indexed by the number of classes seen), ``anytime`` (default: Beta(16, 1) prior, level indexed by the
leader's order of first appearance, w_1 = 0.9), ``trustgate`` (TrustGate 0.3.9's unsound rule) and ``none``: mean samples per item, % of calls saved vs K_max, % of items stopped early, and the
wrong-mode-at-stop rate (stopped early while the true mode did not strictly lead) with its one-sided 95%
Clopper–Pearson upper bound. All rules see the same sample streams (common random numbers), so differences between
rules are not sampling noise. A workload's items are split between its components in proportion to their shares.

A second table stresses validity: the wrong-mode-at-stop rate on adversarial distributions at K_max = 200, where a
rule gets many chances to stop wrongly (``anytime`` is provably <= delta at every budget; TrustGate's rule is not).

Target (SPEC §3.7): on ``reference`` at K_max = 20, ``anytime`` saves at least as many calls as ``trustgate``
⇒ PASS, else FAIL (exit status 1).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy import stats

from relgate_tui.core.certification.stopping import get_stopping_rule, simulate_stopping, unanimous_floor

RULES = ("paper", "anytime-v1", "anytime", "trustgate", "none")
K_MAXES = (20, 10)
WORKLOADS: dict[str, list[tuple[float, tuple[float, ...]]]] = {
    "reference": [(0.60, (0.97, 0.02, 0.01)), (0.25, (0.75, 0.15, 0.10)), (0.15, (0.45, 0.30, 0.15, 0.10))],
    "unanimous": [(1.0, (1.0,))],
    "near-ties": [(1 / 3, (0.5, 0.5)), (1 / 3, (0.55, 0.45)), (1 / 3, (0.4, 0.35, 0.25))],
}


@dataclass(frozen=True)
class Row:
    workload: str
    k_max: int
    rule: str
    items: int
    mean_samples: float
    saved: float
    early: float
    wrong: int

    @property
    def wrong_rate(self) -> float:
        return self.wrong / self.items

    @property
    def wrong_upper(self) -> float:
        if self.wrong >= self.items:
            return 1.0
        return float(stats.beta.ppf(0.95, self.wrong + 1, self.items - self.wrong))


def run_workload(name: str, rule_name: str, k_max: int, n_items: int, delta: float, seed: int) -> Row:
    rule = get_stopping_rule(rule_name, delta)
    total_samples = early = wrong = items = 0
    components = WORKLOADS[name]
    sizes = [max(1, round(share * n_items)) for share, _ in components[:-1]]
    sizes.append(max(1, n_items - sum(sizes)))
    for index, ((_, probs), n) in enumerate(zip(components, sizes, strict=True)):
        # same seed for every rule and K_max: the rules see the same sample streams
        s = simulate_stopping(rule, probs, k_max, n, np.random.default_rng([seed, index]))
        total_samples += s.mean_samples * n
        early += round(s.early_stop_rate * n)
        wrong += s.wrong_stops
        items += n
    mean = total_samples / items
    return Row(name, k_max, rule_name, items, mean, 1 - mean / k_max, early / items, wrong)


STRESS_K_MAX = 200
STRESS: list[tuple[str, tuple[float, ...], float]] = [
    ("(0.5, 0.5) exact tie", (0.5, 0.5), 0.0),
    ("(0.45, 0.45) tie + 10% INVALID", (0.45, 0.45), 0.1),
    ("(0.55, 0.45)", (0.55, 0.45), 0.0),
    ("(0.4, 0.35, 0.25)", (0.4, 0.35, 0.25), 0.0),
    ("0.45 + 11 x 0.05", (0.45,) + (0.05,) * 11, 0.0),
]


def stress_table(n_items: int, delta: float, seed: int) -> str:
    """Wrong-mode-at-stop rate per adversarial distribution at a large budget (rules get many chances to err)."""
    rules = ("paper", "anytime-v1", "anytime", "trustgate")
    header = f"{'distribution':<32}" + "".join(f" {r + ' wrong (95% UB)':>26}" for r in rules)
    lines = [header, "-" * len(header)]
    for index, (label, probs, invalid) in enumerate(STRESS):
        cells = []
        for rule_name in rules:
            s = simulate_stopping(
                get_stopping_rule(rule_name, delta), probs, STRESS_K_MAX, n_items,
                np.random.default_rng([seed, 100 + index]), invalid_prob=invalid,
            )
            upper = 1.0 if s.wrong_stops >= n_items else stats.beta.ppf(0.95, s.wrong_stops + 1, n_items - s.wrong_stops)
            mark = " !" if upper > delta and s.wrong_stop_rate > delta else "  "
            cells.append(f"{100 * s.wrong_stop_rate:>8.2f}% ({100 * upper:5.2f}%){mark}")
        lines.append(f"{label:<32}" + "".join(f" {c:>26}" for c in cells))
    return "\n".join(lines)


def unanimous_stop(rule_name: str, delta: float, limit: int = 1000) -> int | None:
    rule = get_stopping_rule(rule_name, delta)
    return next((k for k in range(1, limit + 1) if rule.should_stop([k], k)), None)


def format_table(rows: list[Row]) -> str:
    header = (
        f"{'workload':<10} {'K_max':>5} {'rule':<10} {'items':>6} {'mean K':>7} {'saved':>7} {'stopped':>8} "
        f"{'wrong-mode-at-stop':>19} {'95% UB':>7}"
    )
    lines = [header, "-" * len(header)]
    previous = None
    for r in rows:
        if previous is not None and (r.workload, r.k_max) != previous:
            lines.append("")
        previous = (r.workload, r.k_max)
        lines.append(
            f"{r.workload:<10} {r.k_max:>5} {r.rule:<10} {r.items:>6} {r.mean_samples:>7.2f} {100 * r.saved:>6.1f}% "
            f"{100 * r.early:>7.1f}% {100 * r.wrong_rate:>11.2f}% ({r.wrong:>4}) {100 * r.wrong_upper:>6.2f}%"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=20_000, help="simulated items per workload (default 20000)")
    parser.add_argument("--delta", type=float, default=0.05, help="rule level delta (default 0.05)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="200 items per workload (seconds), no target checked")
    args = parser.parse_args(argv)
    if args.smoke:
        args.items = 200
    try:
        get_stopping_rule("anytime", args.delta)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    started = time.perf_counter()
    rows = [
        run_workload(name, rule, k_max, args.items, args.delta, args.seed)
        for name in WORKLOADS
        for k_max in K_MAXES
        for rule in RULES
    ]
    stress = stress_table(max(1, args.items // 4), args.delta, args.seed)
    elapsed = time.perf_counter() - started

    print(f"Sequential stopping, delta = {args.delta}, {args.items} simulated items per workload, seed {args.seed}")
    print()
    print(format_table(rows))
    print()
    print(
        f"Validity stress: K_max = {STRESS_K_MAX}, {max(1, args.items // 4)} items each; wrong = stopped early while "
        f"the true mode did not strictly lead\n(any early stop under an exact tie); '!' = rate above delta = {args.delta}."
    )
    print(stress)
    print()
    print("First k at which a unanimous item stops (no budget):")
    for rule in RULES:
        k = unanimous_stop(rule, args.delta)
        print(f"  {rule:<10} {'never' if k is None else k}")
    print(
        f"  floor: no label-symmetric rule valid at delta = {args.delta} can stop before k = "
        f"{unanimous_floor(args.delta)}\n         (on an exact two-class tie it would stop, always wrongly, with "
        f"probability 2^(1-k) > delta)"
    )
    print(
        "  paper: eq. 9.1 cannot stop before k = 21 at delta = 0.05 (the bound exceeds 1 >= Delta_k for k <= 20),\n"
        "         so with K_max = 20 (or 10) it saves nothing; the paper's Table 6 savings cannot come from it."
    )
    print()
    ref = {r.rule: r for r in rows if r.workload == "reference" and r.k_max == 20}
    ok = ref["anytime"].saved >= ref["trustgate"].saved
    ref10 = {r.rule: r for r in rows if r.workload == "reference" and r.k_max == 10}
    print(
        f"Retuning (issue 11): anytime saves {100 * ref['anytime'].saved:.1f}% at K_max = 20 and "
        f"{100 * ref10['anytime'].saved:.1f}% at K_max = 10; the previous tuning {100 * ref['anytime-v1'].saved:.1f}% "
        f"and {100 * ref10['anytime-v1'].saved:.1f}%"
    )
    print(
        f"Target (reference workload, K_max = 20): anytime saves {100 * ref['anytime'].saved:.1f}% of calls, "
        f"trustgate {100 * ref['trustgate'].saved:.1f}% ⇒ {'smoke' if args.smoke else 'PASS' if ok else 'FAIL'}"
    )
    print(f"(simulation time {elapsed:.1f} s)")
    return 0 if ok or args.smoke else 1


if __name__ == "__main__":
    sys.exit(main())
