"""Statistics speed (SPEC §8): recompute every result when α changes, and 100-split stability, on 10,000 items.

Run: ``python bench/stats_speed.py`` (``--smoke``: 500 items, two repeats, no target checked). Builds a seeded
synthetic run (10,000 items × K = 20 samples, heterogeneous
agent with INVALID answers and a capability gap, references for every item), goes through the same path the engine
uses (per-item RankedClasses → ItemRecord → build_input), then times:

* ``compute_results`` at a changing α (cycling through 7 levels), median over 300 calls — target ≤ 20 ms;
* ``split_stability`` with 100 seeded splits of the 10,000 items, median over 11 runs — target ≤ 1 s;
* informational: building the input once, ``coverage_curve`` over 7 α, and the B = 10,000 bootstrap.

Prints a table and exits with status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from relgate_tui.core.certification.certify import (
    CertificationInput,
    build_input,
    compute_results,
    coverage_curve,
    item_record,
)
from relgate_tui.core.certification.readouts import bootstrap_summary, split_stability
from relgate_tui.core.certification.synthetic import SyntheticAgent, simulate_agent

N_ITEMS = 10_000
K = 20
ALPHAS = (0.01, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30)
AGENT = SyntheticAgent(
    0.7, distractor_weights=(0.4, 0.3, 0.2, 0.1), invalid_share=0.1, concentration=3.0, unsolvable_fraction=0.04
)


def median_seconds(fn: Callable[[int], object], repeats: int) -> float:
    times = []
    for i in range(repeats):
        t0 = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="500 items, a few repeats (seconds), no target checked")
    smoke = ap.parse_args().smoke
    n_items = 500 if smoke else N_ITEMS

    def reps(full: int) -> int:
        return min(full, 2) if smoke else full

    rng = np.random.default_rng(20240601)
    t0 = time.perf_counter()
    batch = simulate_agent(AGENT, n_items, K, rng)
    sim_s = time.perf_counter() - t0

    # The engine's path: ranked classes per item -> records -> input (once per run or per label change).
    t0 = time.perf_counter()
    records = [item_record(f"item-{i:05d}", batch.ranked_item(i), acceptable={"correct"}) for i in range(n_items)]
    half = n_items // 2
    inp = build_input(records[:half], records[half:], k_max=K)
    build_s = time.perf_counter() - t0

    # A heavier variant: 10,000 calibration items and 10,000 deployment items.
    extra = simulate_agent(AGENT, n_items, K, rng)
    heavy = CertificationInput.from_arrays(
        batch.scores,
        k_max=K,
        deployment_n_classes=extra.n_classes,
        deployment_scores=extra.scores,
        deployment_acceptable_fraction=extra.acceptable_fraction,
        deployment_entropy=extra.entropy,
    )

    rows: list[tuple[str, str, int, str, str, str]] = []

    def row(name: str, items: str, repeats: int, seconds: float, target_s: float | None, unit: str) -> bool:
        scale = 1e3 if unit == "ms" else 1.0
        ok = target_s is None or seconds <= target_s
        target = "—" if target_s is None else f"≤ {target_s * scale:g} {unit}"
        verdict = "—" if target_s is None else "smoke" if smoke else ("PASS" if ok else "FAIL")
        rows.append((name, items, repeats, f"{seconds * scale:.3f} {unit}", target, verdict))
        return ok

    ok = True
    t = median_seconds(lambda i: compute_results(inp, ALPHAS[i % len(ALPHAS)], gate=0.9), reps(300))
    ok &= row("compute_results (α changes)", "5,000 cal + 5,000 test", reps(300), t, 0.020, "ms")
    t = median_seconds(lambda i: compute_results(heavy, ALPHAS[i % len(ALPHAS)], gate=0.9), reps(300))
    ok &= row("compute_results (α changes)", "10,000 cal + 10,000 test", reps(300), t, 0.020, "ms")
    t = median_seconds(lambda i: coverage_curve(inp, ALPHAS), reps(100))
    row("coverage_curve (7 α)", "5,000 cal + 5,000 test", reps(100), t, None, "ms")
    ids = [r.item_id for r in records]
    t = median_seconds(lambda i: split_stability(batch.scores, alpha=0.10, n_splits=100, seed=i, item_ids=ids), reps(11))
    ok &= row("split_stability (100 splits)", f"{n_items:,}", reps(11), t, 1.0, "s")
    t = median_seconds(lambda i: bootstrap_summary(inp, 0.10, n_boot=200 if smoke else 10_000, seed=i), reps(5))
    row("bootstrap_summary (B = 10,000)", "5,000 test / 10,000", reps(5), t, None, "s")
    row("item records + build_input (once)", "10,000", 1, build_s, None, "s")
    row("synthetic simulation (setup)", "10,000 × K=20", 1, sim_s, None, "s")

    res = compute_results(inp, 0.10, gate=0.9)
    stab = split_stability(batch.scores, alpha=0.10, n_splits=100, seed=0, item_ids=ids)

    headers = ("operation", "items", "repeats", "median", "target", "result")
    widths = [max(len(str(r[c])) for r in (headers, *rows)) for c in range(len(headers))]
    line = "  ".join("{:<%d}" % w for w in widths)
    print(f"relgate statistics speed — {n_items:,} items × K = {K}, numpy {np.__version__}, python {sys.version.split()[0]}")
    print(line.format(*headers))
    print(line.format(*("-" * w for w in widths)))
    for r in rows:
        print(line.format(*map(str, r)))
    print()
    print(
        f"at α = 0.10: M* = {res.m_star:g}, reliability {res.reliability_level:.4f} "
        f"(≥ {res.reliability_lower_bound:.4f} with 95% confidence), coverage {res.coverage.estimate:.4f}, "
        f"conditional {res.conditional_coverage.estimate:.4f}, gap β {res.capability_gap.estimate:.4f}, "
        f"avg set {res.average_set_size:.3f}"
    )
    print(
        f"100 splits: M* {stab.m_star_mean:.2f} ± {stab.m_star_sd:.2f}, "
        f"coverage {stab.coverage_mean:.3f} ± {stab.coverage_sd:.3f}"
    )
    return 0 if ok or smoke else 1


if __name__ == "__main__":
    raise SystemExit(main())
