"""Paper 002: item response theory diagnostics of an LLM judge under prompt perturbations.

- :mod:`.grm` — Samejima's graded response model (Eq. 1) fitted by marginal maximum likelihood over a fixed
  Gauss–Legendre quadrature grid (or MAP with the paper's priors), with EAP abilities and posterior variances.
- :mod:`.metrics` — prompt consistency C_V (Eqs. 2–3), marginal reliability ρ (Eq. 4), discrimination breadth ratio
  θ_ratio (Eqs. 5–6), the 1-Wasserstein distance D_W (Eq. 7), the diagnosis sentences, the score-level curve.
- :mod:`.study` — the whole two-phase study of one judge (and criterion) from long-format ratings.
"""

from relgate_tui.core.irt.grm import GRMFit, IRTInputError, fit_grm
from relgate_tui.core.irt.metrics import (
    CV_MAX,
    RHO_MIN,
    marginal_reliability,
    prompt_consistency,
    score_level_curve,
    theta_range,
    wasserstein_1,
)
from relgate_tui.core.irt.study import IRTStudy, JudgeIRT, run_irt_study

__all__ = [
    "CV_MAX",
    "RHO_MIN",
    "GRMFit",
    "IRTInputError",
    "IRTStudy",
    "JudgeIRT",
    "fit_grm",
    "marginal_reliability",
    "prompt_consistency",
    "run_irt_study",
    "score_level_curve",
    "theta_range",
    "wasserstein_1",
]
