"""The progress callback of paper 001's study (used by the TUI's progress bar and cancel): one report per seed, then
one per seed of the calibration-size curve; an exception it raises ends the study; reporting changes no number."""

from __future__ import annotations

import math

import numpy as np
import pytest

from relgate_tui.core.judge_intervals.grid import adjust
from relgate_tui.core.judge_intervals.simulate import simulate
from relgate_tui.core.judge_intervals.study import (
    calibration_curve,
    prepare,
    run_method,
    run_study,
    split_data,
    split_indices,
)


def _input(n: int = 80):
    z, y, raw = simulate(n, seed=11)
    return prepare([f"i{k}" for k in range(n)], [{j + 1: float(v) for j, v in enumerate(r)} for r in z], list(y),
                   list(raw))


def _numbers(study) -> dict:
    doc = study.to_json()
    for m in doc["methods"].values():
        m.pop("seconds_mean")
    return doc


def test_progress_per_seed_then_per_curve_seed_and_no_number_changes() -> None:
    inp = _input()
    seen: list[tuple[int, int]] = []
    kw = dict(methods=("cqr", "ordinal-aps"), seeds=range(1, 4), curve_methods=("ordinal-aps",))
    with_progress = run_study(inp, **kw, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(k, 6) for k in range(1, 7)]
    assert _numbers(with_progress) == _numbers(run_study(inp, **kw))
    seen.clear()
    run_study(inp, methods=("ordinal-rc",), seeds=range(1, 3), curve_methods=(), progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 2), (2, 2)]  # no curve: one report per seed


def test_an_exception_from_progress_stops_the_study() -> None:
    class Stop(Exception):
        pass

    calls: list[int] = []

    def stop_at_two(done: int, total: int) -> None:
        calls.append(done)
        if done == 2:
            raise Stop

    with pytest.raises(Stop):
        run_study(_input(), methods=("ordinal-aps",), seeds=range(1, 6), progress=stop_at_two)
    assert calls == [1, 2]


def test_curve_points_are_the_per_method_fraction_seed_runs() -> None:
    """Seeds are the curve's outer loop now: each point is still the mean over seeds of its own runs."""
    inp = _input()
    seeds = (1, 2, 3)
    curve = calibration_curve(inp, methods=("ordinal-aps", "ordinal-rc"), alpha=0.1, seeds=seeds, fractions=(0.5, 1.0))
    assert [(c.method, c.fraction) for c in curve] == [("ordinal-aps", 0.5), ("ordinal-aps", 1.0), ("ordinal-rc", 0.5),
                                                       ("ordinal-rc", 1.0)]
    for c in curve:
        cov = []
        for s in seeds:
            test, cal = split_indices(inp.n, s)
            sub = cal[: max(1, math.ceil(c.fraction * len(cal)))]
            b = run_method(c.method, split_data(inp, sub, inp.z[test]), 0.1, s)
            lo, up = adjust(b.lower, b.upper, inp.grid, 0.0)
            cov.append(float(((lo <= inp.y[test] + 1e-9) & (inp.y[test] <= up + 1e-9)).mean()))
            assert c.n_calibration == len(sub)
        assert c.coverage_mean == pytest.approx(float(np.mean(cov)), abs=1e-12)
