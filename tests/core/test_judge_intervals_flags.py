"""Paper 001 (issue 20 §4): the "uninformative" flag and the ordinal methods on the label grid's 13 classes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from relgate_tui.core import jsonsafe
from relgate_tui.core.judge_intervals.base import single_thread
from relgate_tui.core.judge_intervals.ordinal import on_label_grid
from relgate_tui.core.judge_intervals.report import render_markdown
from relgate_tui.core.judge_intervals.simulate import simulate
from relgate_tui.core.judge_intervals.study import prepare, run_study, split_data, split_indices

ALPHA = 0.1


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with single_thread():
        yield


def _input(z, y, raw):
    return prepare([f"i{i}" for i in range(len(y))], [dict(zip(range(1, 6), r)) for r in z], list(y), list(raw))


def test_a_judge_that_says_nothing_is_flagged_uninformative_everywhere():
    """A constructed full-scale case: the judge's log-probs are the same for every item (it tells nothing), and the
    human labels spread over the whole 1–5 scale, so every valid 90% set is the whole scale."""
    rng = np.random.default_rng(3)
    n = 300
    y = rng.integers(1, 6, n).astype(float)
    z = np.tile(np.log(np.full(5, 0.2)), (n, 1))
    inp = _input(z, y, np.full(n, 3.0))
    study = run_study(inp, methods=("ordinal-aps", "ordinal-rc"), seeds=range(1, 4), curve_methods=())
    for m in study.methods:
        assert m.adjusted.coverage_mean >= 1 - ALPHA  # valid…
        assert m.full_scale_share == 1.0 and m.uninformative  # …but says nothing
        assert "100% of its intervals span the whole scale 1–5" in (m.uninformative_reason or "")
    doc = json.loads(json.dumps(jsonsafe.jsonable(study)))
    aps = doc["methods"]["ordinal-aps"]
    assert aps["uninformative"] is True and aps["full_scale_share"] == 1.0 and "span" in aps["uninformative_reason"]
    md = render_markdown(study)
    assert "| ✓ uninformative |" in md and "- ordinal-aps: uninformative: 100%" in md


def test_an_informative_judge_is_not_flagged():
    inp = _input(*simulate(400, seed=7))
    study = run_study(inp, methods=("r2ccp", "ordinal-aps"), seeds=range(1, 3), curve_methods=())
    r2 = study.method("r2ccp")
    assert not r2.uninformative and r2.full_scale_share < 0.5 and r2.uninformative_reason is None
    assert "uninformative" not in render_markdown(study).split("## Notes")[0].split("Criterion ✓")[0]


def test_ordinal_methods_on_the_13_label_grid_classes():
    inp = _input(*simulate(600, seed=11, raters=3))
    assert inp.grid.name == "thirds" and len(inp.grid.values) == 13
    test, cal = split_indices(inp.n, 1)
    d = split_data(inp, cal, inp.z[test])
    g = on_label_grid(d, inp.grid.values)
    assert g.z_test.shape == (len(test), 13) and tuple(g.scale) == inp.grid.values
    np.testing.assert_allclose(g.z_test[:, ::3], d.z_test)  # the scale's own points keep their log-probs
    np.testing.assert_allclose(g.z_test[:, 1], (2 * d.z_test[:, 0] + d.z_test[:, 1]) / 3)  # 4/3: linear
    seeds = range(1, 7)
    five = run_study(inp, methods=("ordinal-aps", "ordinal-rc"), seeds=seeds, curve_methods=())
    grid = run_study(inp, methods=("ordinal-aps", "ordinal-rc"), seeds=seeds, curve_methods=(), ordinal_grid=True)
    assert grid.ordinal_grid and jsonsafe.jsonable(grid)["ordinal_classes"] == "label grid"
    for name in ("ordinal-aps", "ordinal-rc"):
        a, b = five.method(name), grid.method(name)
        assert b.adjusted.coverage_mean >= 1 - ALPHA - 0.02  # still valid (six seeds: Monte-Carlo slack)
        assert b.adjusted.width_mean < a.adjusted.width_mean  # narrower on three-rater labels
    assert any(abs(v * 3 - round(v * 3)) < 1e-9 and v != round(v)
               for it in grid.method("ordinal-aps").items for v in (it.adj_lower, it.adj_upper))  # ends on thirds


def test_chr_bins_are_label_aligned_and_its_ends_lie_on_labels():
    from relgate_tui.core.judge_intervals.density import chr_edges, chr_method

    inp = _input(*simulate(800, seed=5, raters=3))
    test, cal = split_indices(inp.n, 2)
    d = split_data(inp, cal, inp.z[test])
    edges = chr_edges(d)
    assert len(edges) == 14 and edges[0] == 1.0 and edges[-1] == 5.0
    np.testing.assert_allclose(edges[1:-1], 1 + (np.arange(1, 13) - 0.5) / 3)  # halfway between labels
    b = chr_method(d, ALPHA, 2)
    for v in np.concatenate([b.lower, b.upper]):
        assert abs(v * 3 - round(v * 3)) < 1e-9  # on the thirds grid: adjustment has nothing left to do
    again = chr_method(d, ALPHA, 2)
    np.testing.assert_array_equal(b.lower, again.lower)  # the randomisation is seeded
    covered = np.mean((b.lower <= inp.y[test] + 1e-9) & (inp.y[test] <= b.upper + 1e-9))
    sd = np.sqrt(ALPHA * (1 - ALPHA) * (1 / len(d.y_cal) + 1 / len(test)))  # one split's Monte-Carlo sd
    assert covered >= 1 - ALPHA - 3.5 * sd


def test_the_default_fit_share_is_80_percent_but_leaves_enough_to_calibrate():
    from relgate_tui.core.judge_intervals.study import fit_size

    assert fit_size(700, None) == 560  # 80/20
    assert fit_size(200, None) == 150  # 50 left to calibrate on
    assert fit_size(60, None) == 30  # small halves stay 50/50
    assert fit_size(700, 0.5) == 350 and fit_size(10, 0.99) == 9
    with pytest.raises(ValueError, match="fit share"):
        fit_size(100, 1.0)
    inp = _input(*simulate(400, seed=1))
    test, cal = split_indices(inp.n, 1)
    d = split_data(inp, cal, inp.z[test])
    assert (len(d.y_fit), len(d.y_cal)) == (150, 50)
    study = run_study(inp, methods=("r2ccp",), seeds=(1,), curve_methods=(), fit_share=0.5)
    assert jsonsafe.jsonable(study)["fit_share"] == 0.5
