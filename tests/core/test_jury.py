"""Paper 003: jury-on-demand — features, the jury score, baselines, statistics, the protocol."""

from __future__ import annotations

import math

import numpy as np
import pytest

from relgate_tui.core.jury.features import TOPICS, TfidfCorpus, item_feature_matrix, syllables, text_features
from relgate_tui.core.jury.predictors import BinCache, _cached_bins_class, fit_predictor
from relgate_tui.core.jury.protocol import JuryData, cliffs_delta, jury_scores, kendall, wilcoxon_greater
from relgate_tui.core.jury.simulate import simulate_pool
from relgate_tui.core.jury.study import JuryInputError, default_tolerances, run_jury_study


def test_text_features_count_what_they_say():
    f = text_features("The bank may not lend 500 dollars. However, Alice perhaps will! Is it true?")
    assert f["COUNT_WORD"] == 13 and f["COUNT_SENTENCE"] == 3 and f["NUMBER_COUNT"] == 1
    assert f["MODALITY"] == 2 and f["HEDGES"] == 1 and f["NEGATION_SENTENCE"] == 1 and f["COUNT_QUESTION"] == 1
    assert f["NAMED_ENTITY"] == 1 and f["RHETORICAL_STRUCTURE"] == 1
    assert 0 < f["LEXICAL_DIVERSITY"] <= 1 and f["TOKEN_ENTROPY"] > 0
    assert syllables("table") == 2 and syllables("the") == 1 and syllables("banana") == 3
    x, names = item_feature_matrix(["a long source text here.", None], ["short.", "Another output text."])
    assert x.shape == (2, len(names)) and "CHAR_COMPRESSION" in names and names[0].startswith("output_")


def test_jury_score_is_the_reliability_weighted_mean_of_the_top_k():
    r = np.array([[0.9, 0.2, 0.6], [0.1, 0.8, 0.7]])
    s = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, np.nan]])  # item 2: judge 3 gave no score
    out = jury_scores(r, s, [1, 2, 3])
    assert out[1] == pytest.approx([1.0, 1.0])
    assert out[2][0] == pytest.approx((0.9 * 1.0 + 0.6 * 0.5) / 1.5)
    assert out[2][1] == pytest.approx((0.8 * 1.0 + 0.1 * 0.0) / 0.9)  # the unscored judge cannot sit


def test_statistics_against_direct_computations():
    a = [0.5 + i / 100 for i in range(10)]
    b = [x - 0.01 * (i + 1) for i, x in enumerate(a)]
    assert wilcoxon_greater(a, b) == pytest.approx(1 / 1024)  # every split better: the exact tail 1/2^10
    assert wilcoxon_greater(a, a) == 1.0
    assert cliffs_delta([3, 4], [1, 2]) == 1.0 and cliffs_delta([1, 2], [1, 2]) == 0.0
    assert kendall(np.array([1, 2, 3.0]), np.array([3, 2, 1.0])) == pytest.approx(-1.0)
    assert kendall(np.array([1, 1, 1.0]), np.array([1, 2, 3.0])) == 0.0  # undefined → 0


def test_tolerance_sets_follow_the_scale():
    grid5 = (np.arange(5) / 4.0)[np.arange(40) % 5]
    assert default_tolerances(grid5, grid5) == (0.0, 0.25)
    grid3 = (np.arange(3) / 2.0)[np.arange(30) % 3]
    assert default_tolerances(grid3, grid3) == (0.0,)
    assert default_tolerances(grid5, grid5 + 1 / 12) == (0.125, 0.25)  # human means off the judge grid


@pytest.mark.slow
def test_jury_beats_every_static_jury_and_judge_when_reliability_depends_on_the_item():
    data, texts = simulate_pool(450, 6, seed=3)
    study = run_jury_study(data, texts=texts, splits=10, seed=0, n_search=1)
    jury = study.methods["jury"].tau_mean
    assert all(jury > m.tau_mean for name, m in study.methods.items() if name != "jury")
    assert study.claims_improvement
    doc = study.to_json()
    assert set(doc["methods"]) >= {"jury", "average-all", "average-top-k", "weighted-regression", "weighted-tau",
                                   "judge:sim-judge-1"}
    assert 2 <= doc["methods"]["jury"]["k"] <= 5 and set(doc["methods"]["jury"]["auc"]) == set(data.judges)
    assert doc["methods"]["jury"]["vs"]["average-all"]["p_value"] < 0.05
    item = doc["items"][0]
    assert len(item["jury"]) == doc["methods"]["jury"]["k_per_split"][0]
    assert sum(m["weight"] for m in item["jury"]) == pytest.approx(1.0)
    assert "embedding" in doc["feature_groups"]


@pytest.mark.slow
def test_a_pool_of_identical_judges_claims_nothing():
    data, texts = simulate_pool(450, 6, seed=3, identical=True)
    study = run_jury_study(data, texts=texts, splits=10, seed=0, n_search=1)
    assert not study.claims_improvement


def test_missing_scores_keep_a_judge_off_that_items_jury():
    data, texts = simulate_pool(200, 4, seed=5)
    scores = data.scores.copy()
    scores[::3, 0] = np.nan
    holey = JuryData(data.ids, data.judges, scores, data.human, data.features, data.feature_names)
    study = run_jury_study(holey, splits=2, n_search=1, tolerances=(0.0,))
    assert all(data.judges[0] not in [m["judge"] for m in it["jury"]] for it in study.example_items
               if data.judges[0] in it["not_scored"])
    assert any(data.judges[0] in it["not_scored"] for it in study.example_items)
    n1 = study.methods["judge:sim-judge-1"].n_per_split[0]
    assert n1 < study.methods["average-all"].n_per_split[0]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("one judge", "at least two judges"),
        ("no human", "no human scores"),
        ("constant human", "constant human scores"),
        ("few items", "at least 50"),
        ("silent judge", "has no scores"),
    ],
)
def test_bad_pools_are_one_line_errors(change, words):
    data, _ = simulate_pool(120, 3, seed=1)
    s, h, ids, judges, x = data.scores, data.human, data.ids, data.judges, data.features
    if change == "one judge":
        s, judges = s[:, :1], judges[:1]
    elif change == "no human":
        h = np.full_like(h, math.nan)
    elif change == "constant human":
        h = np.full_like(h, 3.0)
    elif change == "few items":
        s, h, ids, x = s[:30], h[:30], ids[:30], x[:30]
    else:
        s = s.copy()
        s[:, 2] = np.nan
    with pytest.raises(JuryInputError, match=words) as info:
        run_jury_study(JuryData(ids, judges, s, h, x, data.feature_names), splits=2)
    assert "\n" not in str(info.value)


def test_splits_on_worker_processes_give_the_same_study():
    data, texts = simulate_pool(160, 4, seed=9)
    one = run_jury_study(data, texts=texts, splits=3, n_search=1, tolerances=(0.0,))
    two = run_jury_study(data, texts=texts, splits=3, n_search=1, tolerances=(0.0,), workers=2)
    assert one.to_json() == two.to_json()


@pytest.mark.parametrize("max_features", [20_000, 40])
def test_tfidf_corpus_cuts_exactly_what_the_vectorizer_fitted_on_the_split_gives(monkeypatch, max_features):
    """The tokenise-once corpus against scikit-learn's TfidfVectorizer fitted on the training texts: the same matrix,
    bit for bit (also when the most-frequent-terms cut applies: 40 terms)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    _, texts = simulate_pool(150, 3, seed=4)
    tx = [t or "" for t in texts["output"]]
    monkeypatch.setattr(TfidfCorpus, "MAX_FEATURES", max_features)
    corpus = TfidfCorpus(tx, TOPICS)
    for seed in range(3):
        train = np.random.default_rng(seed).permutation(len(tx))[:90]
        vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, max_features=max_features)
        fitted = vec.fit([tx[i] for i in train])
        want, want_extra = fitted.transform(tx), fitted.transform(list(TOPICS))
        got, got_extra = corpus.split(train)
        for a, b in ((want, got), (want_extra, got_extra)):
            assert a.shape == b.shape and np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
            assert np.array_equal(a.data, b.data)


def test_shared_binning_gives_the_same_models():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 12))
    x[:, :4] = np.round(x[:, :4])
    y = (x[:, 0] + rng.normal(size=200) > 0).astype(float)
    bins = BinCache()
    for seed in range(3):
        plain = fit_predictor(0, 0.0, x[:120], y[:120], x[120:], y[120:], n_search=2, seed=seed)
        shared = fit_predictor(0, 0.0, x[:120], y[:120], x[120:], y[120:], n_search=2, seed=seed, bins=bins)
        assert np.array_equal(plain.predict(x), shared.predict(x)) and plain.val_auc == shared.val_auc
    if _cached_bins_class() is not None:  # the hook is on (scikit-learn's binning step as expected): one binning
        assert len(bins._bins) == 1
