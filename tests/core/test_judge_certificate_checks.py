"""Issue 41 §2–§4: dependent items (the group is the unit), labelled items that are not a random sample, and the
per-class honesty of the decided items."""

from __future__ import annotations

import numpy as np

from relgate_tui.core.certification.intervals import clopper_pearson_lower
from relgate_tui.core.judge_certificate import certify, selective
from relgate_tui.core.judge_certificate_checks import NOT_RANDOM, one_per_group, sample_warnings

G, K, SD, BASE = 100, 10, 0.15, 0.92  # inputs, pairs per input, per-input spread; true agreement E[clip(.92 + u)]


def _clustered(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of one input share its confidence (± 0.02) and its agreement offset u ~ N(0, 0.15): the population's
    agreement is 0.892 < 0.90 at every threshold, so every certificate that decides anything errs."""
    c = np.repeat(rng.uniform(0.5, 1.0, G), K) + rng.normal(0.0, 0.02, G * K)
    u = np.repeat(rng.normal(0.0, SD, G), K)
    return c, (rng.random(G * K) < np.clip(BASE + u, 0.0, 1.0)).astype(np.int64)


def test_the_input_as_unit_is_valid_under_within_input_dependence_where_pairs_are_not() -> None:
    groups = np.repeat(np.arange(G), K)
    idx = one_per_group(groups, np.ones(G * K, dtype=bool))
    assert idx.size == G and np.unique(groups[idx]).size == G
    runs = 600
    rng = np.random.default_rng(41)
    unit_err = pair_err = 0
    for _ in range(runs):
        c, z = _clustered(rng)
        unit_err += selective(c[idx], z[idx], c, 0.90, 0.95).threshold is not None
        pair_err += selective(c, z, c, 0.90, 0.95).threshold is not None
    bound = 0.05 + 2 * np.sqrt(0.05 * 0.95 / runs)
    assert unit_err / runs <= bound, unit_err / runs
    assert pair_err / runs > bound  # the world is hard: pairs as independent items err (issue: 7.95%)


def test_certify_with_groups_tests_one_drawn_item_per_group_and_says_so() -> None:
    c, z = _clustered(np.random.default_rng(5))
    f = np.ones(G * K, dtype=np.int64)
    human = np.where(z == 1, f, 1 - f)
    groups = np.repeat(np.arange(G), K).astype(str)
    cert = certify(np.where(f == 1, np.clip(c, 0, 1), 1 - np.clip(c, 0, 1)), human, group=groups)
    idx = one_per_group(groups, np.ones(G * K, dtype=bool))
    cc = np.round(np.clip(c, 0, 1), 12)
    assert cert.unit == "group" and cert.n_labelled == G and cert.n_labelled_given == G * K
    assert cert.selective == selective(cc[idx], z[idx], cc, 0.90, 0.95)


def _easy_first(rng: np.random.Generator, n: int = 3000, labelled: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    """Items of latent easiness d: the judge is surer and more often right on easy ones; a file sorted easy-first
    whose first ``labelled`` lines carry a human verdict."""
    d = np.sort(rng.random(n))[::-1]
    c = 0.5 + 0.25 * d + 0.25 * rng.random(n)
    y = (rng.random(n) < 0.7).astype(np.int64)
    f = np.where(rng.random(n) < 0.62 + 0.38 * d, y, 1 - y)
    human = np.where(np.arange(n) < labelled, y, -1)
    return np.where(f == 1, c, 1 - c), human


def test_a_file_labelled_easy_first_is_named_and_never_passes() -> None:
    p, human = _easy_first(np.random.default_rng(1))
    cert = certify(p, human)
    assert cert.verdict == "NOT DECIDABLE" and NOT_RANDOM in cert.sentence
    assert any(w.startswith(f"{NOT_RANDOM}: ") and "Mann–Whitney" in w for w in cert.warnings)
    assert cert.next_step and "random sample" in cert.next_step


def test_labels_sorted_by_verdict_are_named_and_a_random_order_rarely_is() -> None:
    rng = np.random.default_rng(2)
    c = rng.uniform(0.5, 1.0, 1000)
    agree = (rng.random(1000) < c).astype(np.int64)
    y = np.sort(rng.integers(0, 2, 1000))
    assert any("human verdict rises along the file" in w for w in sample_warnings(c, agree, y, ()))
    fired = sum(bool(sample_warnings(rng.uniform(0.5, 1, 500), rng.integers(0, 2, 500), rng.integers(0, 2, 500),
                                     rng.uniform(0.5, 1, 300))) for _ in range(80))
    assert fired <= 2  # four checks at 0.001: ≤ 0.4% of files expected


def test_a_rare_no_class_the_judge_misses_is_warned_with_exact_per_class_bounds() -> None:
    """Issue 41 §4: 5% 'no' items, a judge with TNR ≈ 0.4 got 'PASS: decides 100%' with no warning."""
    rng = np.random.default_rng(3)
    n = 1000
    y = (rng.random(n) >= 0.05).astype(np.int64)
    f = np.where(y == 1, (rng.random(n) < 0.995).astype(np.int64), (rng.random(n) < 0.6).astype(np.int64))
    c = rng.uniform(0.95, 1.0, n)
    cert = certify(np.where(f == 1, c, 1 - c), y)
    no = cert.decided_no
    assert no.n > 0 and no.successes < no.n / 2 and no.lower == clopper_pearson_lower(no.successes, no.n, 0.95)
    assert any("always says yes" in w for w in cert.warnings)
    assert any(w.startswith("the judge misses") and "said no to" in w for w in cert.warnings)
