"""Agreement figures (issue 21 §4) against independent implementations: the ``krippendorff`` package, statsmodels'
Fleiss κ and scikit-learn's Cohen κ, to 1e-9; finalisation under strict and majority."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa

from relgate_tui.core.review.agreement import agreement, agreement_json
from relgate_tui.core.review.verdicts import finalise, parse_verdict, verdict_code

CATS = ["1", "2", "3", "none"]


def _random_labels(seed: int, n_items: int, reviewers: int, per_item: int, noise: float) -> dict[str, dict[str, str]]:
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, str]] = {}
    for i in range(n_items):
        truth = CATS[rng.integers(len(CATS))]
        who = rng.choice(reviewers, size=per_item, replace=False)
        out[f"q{i:03d}"] = {f"r{w}": (truth if rng.random() > noise else CATS[rng.integers(len(CATS))]) for w in who}
    return out


def _codes(labels: dict[str, dict[str, str]]) -> dict[str, int]:
    cats = sorted({v for by in labels.values() for v in by.values()})
    return {c: j for j, c in enumerate(cats)}


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_krippendorff_alpha_equals_the_package(seed: int) -> None:
    labels = _random_labels(seed, 120, 6, 3 if seed % 2 else 2, 0.3)
    labels["q999"] = {"r0": "1"}  # a unit with one value: not pairable, ignored by both
    a = agreement(labels, per_item=3 if seed % 2 else 2, bootstrap=200)
    code = _codes(labels)
    reviewers = sorted({r for by in labels.values() for r in by})
    items = sorted(labels)
    data = np.full((len(reviewers), len(items)), np.nan)
    for j, i in enumerate(items):
        for r, v in labels[i].items():
            data[reviewers.index(r), j] = code[v]
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert a.krippendorff_alpha.value == pytest.approx(ref, abs=1e-9)
    lo, hi = a.krippendorff_alpha.ci
    assert lo <= a.krippendorff_alpha.value <= hi


@pytest.mark.parametrize("per_item", [2, 3, 4])
def test_fleiss_kappa_equals_statsmodels(per_item: int) -> None:
    labels = _random_labels(10 + per_item, 150, 7, per_item, 0.4)
    a = agreement(labels, per_item=per_item, bootstrap=200)
    code = _codes(labels)
    table = np.zeros((len(labels), len(code)))
    for u, i in enumerate(sorted(labels)):
        for v in labels[i].values():
            table[u, code[v]] += 1
    assert a.fleiss_kappa.value == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-9)
    assert a.fleiss_kappa.n == 150


def test_cohen_kappa_per_pair_equals_sklearn() -> None:
    labels = _random_labels(7, 200, 4, 2, 0.35)
    a = agreement(labels, per_item=2, bootstrap=100)
    assert a.pairs
    for p in a.pairs:
        shared = [i for i in sorted(labels) if p.a in labels[i] and p.b in labels[i]]
        ref = cohen_kappa_score([labels[i][p.a] for i in shared], [labels[i][p.b] for i in shared])
        assert p.cohen_kappa.n == len(shared)
        assert p.cohen_kappa.value == pytest.approx(ref, abs=1e-9)


def test_skips_are_missing_values_and_intervals_are_seeded() -> None:
    labels = _random_labels(3, 80, 3, 2, 0.2)
    with_skip = {i: dict(by) for i, by in labels.items()}
    with_skip["q000"]["extra"] = "skip"
    a1, a2 = agreement(labels, 2), agreement(with_skip, 2)
    assert a1 == a2  # a skip changes no figure and the same labels give the same intervals
    doc = agreement_json(a1)
    assert set(doc) >= {"fleiss_kappa", "krippendorff_alpha", "pairs"}
    assert all(set(p["cohen_kappa"]) == {"value", "ci", "n", "ci_note"} for p in doc["pairs"])


def test_perfect_agreement_and_no_variation() -> None:
    perfect = {f"q{i}": {"a": str(1 + i % 3), "b": str(1 + i % 3)} for i in range(30)}
    a = agreement(perfect, 2, final={i: by["a"] for i, by in perfect.items()}, bootstrap=100)
    assert a.fleiss_kappa.value == pytest.approx(1.0) and a.krippendorff_alpha.value == pytest.approx(1.0)
    assert a.pairs[0].cohen_kappa.value == pytest.approx(1.0)
    assert all(r.with_final.value == 1.0 for r in a.reviewers)
    same = {f"q{i}": {"a": "1", "b": "1"} for i in range(10)}
    b = agreement(same, 2, bootstrap=50)
    assert b.fleiss_kappa.value is None and b.fleiss_kappa.ci is None  # 1 − P_e = 0: undefined, not a number


def test_agreement_with_final_labels() -> None:
    labels = {"q1": {"a": "1", "b": "1"}, "q2": {"a": "1", "b": "2"}, "q3": {"a": "none", "b": "2"}}
    final = {"q1": "1", "q2": "2", "q3": "none"}
    a = agreement(labels, 2, final=final, bootstrap=50)
    by = {r.reviewer: r.with_final for r in a.reviewers}
    assert by["a"].value == pytest.approx(2 / 3) and by["b"].value == pytest.approx(2 / 3)


def test_finalise_strict_counts_unresolved_disputes_as_misses() -> None:
    labels = {"q1": {"a": "1", "b": "1"}, "q2": {"a": "1", "b": "2"}, "q3": {"a": "2", "b": "none"},
              "q4": {"a": "1"}}
    f = finalise(["q1", "q2", "q3", "q4"], labels, 2, {"q3": "2"})
    assert f.final == {"q1": "1", "q2": "none", "q3": "2"}
    assert f.disputed == ("q2",) and f.counted_as_misses == ("q2",) and f.adjudicated == ("q3",)
    assert f.pending == ("q4",)


def test_finalise_majority() -> None:
    labels = {"q1": {"a": "1", "b": "1", "c": "2"}, "q2": {"a": "1", "b": "2", "c": "none"}}
    f = finalise(["q1", "q2"], labels, 3, {}, "majority")
    assert f.final == {"q1": "1", "q2": "none"} and f.disputed == ("q1", "q2") and f.counted_as_misses == ("q2",)
    with pytest.raises(ValueError, match="odd"):
        finalise(["q1"], labels, 2, {}, "majority")


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 50), st.booleans(), st.booleans())
def test_verdict_codes_round_trip(rank: int, none: bool, use_rank: bool) -> None:
    kw = {"rank": rank} if use_rank else ({"none": True} if none else {"skip": True})
    code = verdict_code(**kw)
    r, n, s = parse_verdict(code)
    assert (r, n, s) == (kw.get("rank"), kw.get("none", False), kw.get("skip", False))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.permutations(CATS), st.integers(2, 4))
def test_figures_do_not_depend_on_category_names(seed: int, perm: list[str], per_item: int) -> None:
    """A nominal statistic is invariant under a renaming of the categories (and of the reviewers)."""
    labels = _random_labels(seed, 40, 5, per_item, 0.5)
    rename = dict(zip(CATS, perm, strict=True))
    renamed = {i: {f"x{r}": rename[v] for r, v in by.items()} for i, by in labels.items()}
    a, b = agreement(labels, per_item, bootstrap=0), agreement(renamed, per_item, bootstrap=0)
    for x, y in ((a.fleiss_kappa, b.fleiss_kappa), (a.krippendorff_alpha, b.krippendorff_alpha)):
        assert (x.value is None) == (y.value is None)
        if x.value is not None:
            assert x.value == pytest.approx(y.value, abs=1e-12) and x.value <= 1 + 1e-12
    assert [p.cohen_kappa.value for p in a.pairs] == pytest.approx([p.cohen_kappa.value for p in b.pairs])
