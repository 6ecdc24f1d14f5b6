"""Conformal prediction intervals for LLM-judge scores from score-token log-probabilities (paper 001, issue 12).

``features`` (z from the rating token), ``grid`` (label grid, boundary adjustment), the nine methods (``cqr``,
``density``, ``lvd``, ``boosted``, ``ordinal``; names in ``methods``), ``study`` (the evaluation protocol and typed
results), ``report`` (the Markdown renderer) and ``simulate`` (a simulated judge, for tests and benchmarks only).

``base``: the split data, the conformal quantile (relgate's one, from ``core/certification/quantile.py``), the MLP
and bins the methods share.
"""
