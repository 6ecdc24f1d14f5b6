"""core/special.py: the normal quantile without scipy equals scipy's, and a certification's end needs no scipy."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import ndtri as scipy_ndtri

from relgate_tui.core.certification.intervals import wilson_interval
from relgate_tui.core.special import ndtri


def test_ndtri_equals_scipy_on_a_dense_grid() -> None:
    grid = np.concatenate([np.linspace(1e-12, 1 - 1e-12, 200_001), [0.5, 0.9, 0.95, 0.975, 0.995, 0.9995]])
    ours = np.array([ndtri(float(p)) for p in grid])
    np.testing.assert_allclose(ours, scipy_ndtri(grid), rtol=2e-15, atol=1e-15)


@given(st.floats(1e-300, 1 - 1e-16))
def test_ndtri_equals_scipy_anywhere(p: float) -> None:
    assert abs(ndtri(p) - float(scipy_ndtri(p))) <= 1e-12 * max(1.0, abs(float(scipy_ndtri(p))))


def test_a_wilson_interval_imports_no_scipy() -> None:
    """The interval every run's result carries (``wilson_proportion``) is computed in a fresh process without
    importing scipy (``relgate certify`` ends ~0.1 s sooner; issue 32 §6)."""
    code = ("import sys; from relgate_tui.core.certification.intervals import wilson_interval as w; "
            "print(w(45, 50, 0.9)); print('scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[1] == "False"
    assert out[0] == str(wilson_interval(45, 50, 0.9))
