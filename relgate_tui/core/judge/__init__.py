"""Judge audit I (paper 000): per-input tournaments, directed 3-cycles, ranking methods with exact MFAS repair,
Kendall τ-b, position bias, and split conformal sets over Likert judge scores. Pure: no IO.

How a pairwise/direct study uses this package (issue 11 §2), per input ``x`` with candidate ids ``cands``:

1. ``plan = plan_pairwise(cands, k=3, seed=seed, input_id=x)`` — ask every ``plan.asks`` item (show ``first``
   then ``second``), record ``PairwiseVerdict(first, second, winner)`` (winner = first, second, INVALID or TIE);
   then ``while more := plan_reasks(plan, verdicts): ask more`` (pass only this plan's verdicts).
2. ``t = build_tournament(verdicts, cands)``; ``transitivity_report(t)`` per input and
   ``summarize_transitivity(reports)`` over inputs: ρ (eq. 1), the cycle share, the random baseline 0.25.
3. ``all_rankings(t, tie_seed=(seed, x))`` and ``kendall_tau_b(ranking, human)``; ``mfas_exact(t,
   tie_seed=(seed, x))`` for the repaired order — ties follow a seeded random order, never the file order.
4. Position: ``position_consistency([verdicts of input 1, …])`` — over the protocol's verdicts (fair-coin
   orders: the first-shown share test is unbiased), or over ``plan_both_orders(cands, k_per_order=1)`` verdicts
   for the flip share; ``.flag`` is ``position_only`` for an always-first judge.
5. Direct scores: ``likert_conformal_analysis(scores_per_item, human_means, protocol="single", seed=seed)``
   (``protocol="mean"`` for the mean of k); ``.protocol`` says which was used.

Modules: :mod:`.tournament` (per-input tournaments), :mod:`.mfas` (feedback-arc-set repair), :mod:`.rankings` (the
ranking methods and Kendall τ), :mod:`.likert` (split conformal Likert sets).
"""

from relgate_tui.core.judge.bias import (
    POSITION_ONLY_SHARE,
    PositionBias,
    PositionConsistency,
    position_bias,
    position_consistency,
)
from relgate_tui.core.judge.cycles import (
    CycleReport,
    CycleSummary,
    cycle_report,
    summarize_cycles,
    three_cycles_from_adjacency,
)
from relgate_tui.core.judge.likert import (
    DEFAULT_ALPHAS,
    DEFAULT_SPLITS,
    LIKERT_PROTOCOLS,
    LIKERT_SCALE,
    LikertAnalysis,
    LikertConformalRow,
    LikertSplitResult,
    inter_judge_width_agreement,
    likert_conformal_analysis,
    likert_conformal_table,
    likert_nonconformity,
    likert_point_predictions,
    likert_prediction_sets,
    likert_set_widths,
    round_human_mean,
    seeded_splits,
    spearman_or_nan,
    split_conformal_likert,
)
from relgate_tui.core.judge.mfas import (
    MfasResult,
    mfas_brute_force,
    mfas_copeland,
    mfas_exact,
    order_cost,
    reversed_edges,
)
from relgate_tui.core.judge.protocol import (
    DEFAULT_K,
    RANDOM_BASELINE_RHO,
    PairwisePlan,
    PlannedAsk,
    TransitivityReport,
    TransitivitySummary,
    plan_both_orders,
    plan_pairwise,
    plan_reasks,
    presentation_order,
    summarize_transitivity,
    transitivity_report,
)
from relgate_tui.core.judge.rankings import (
    BT_PSEUDO_COUNT,
    Ranking,
    bradley_terry_ranking,
    bradley_terry_strengths,
    copeland_ranking,
    kendall_tau_b,
    kendall_tau_b_scores,
    ranking_from_scores,
    schulze_ranking,
    win_rate_ranking,
)
from relgate_tui.core.judge.ties import TieSeed, order_by_scores, tie_keys
from relgate_tui.core.judge.tournament import (
    TIE,
    Edge,
    PairCounts,
    PairwiseVerdict,
    Tournament,
    VerdictError,
    build_tournament,
    verdicts_by_order,
)

RANKING_METHODS: tuple[str, ...] = (
    "win_rate", "bradley_terry", "schulze", "copeland", "mfas_exact", "mfas_copeland",
)


def all_rankings(tournament: Tournament, mfas_time_limit_s: float = 10.0, *, tie_seed: TieSeed = 0,
                 mfas: MfasResult | None = None) -> dict[str, Ranking]:
    """Every ranking method of paper Table 2, keyed by :data:`RANKING_METHODS` names. Ties are broken by the seeded
    random order of ``tie_seed`` (pass ``(seed, input_id)``), never by the candidates' file order (issue 11 §2).
    ``mfas``: the exact MFAS of ``tournament`` (with the same ``tie_seed``) when the caller has already solved it (it
    is then not solved a second time)."""
    if mfas is None:
        mfas = mfas_exact(tournament, time_limit_s=mfas_time_limit_s, tie_seed=tie_seed)
    return {
        "win_rate": win_rate_ranking(tournament, tie_seed=tie_seed),
        "bradley_terry": bradley_terry_ranking(tournament, tie_seed=tie_seed),
        "schulze": schulze_ranking(tournament, tie_seed=tie_seed),
        "copeland": copeland_ranking(tournament, tie_seed=tie_seed),
        "mfas_exact": mfas.ranking,
        "mfas_copeland": mfas_copeland(tournament, tie_seed=tie_seed).ranking,
    }


__all__ = [
    "BT_PSEUDO_COUNT", "DEFAULT_ALPHAS", "DEFAULT_K", "DEFAULT_SPLITS", "LIKERT_PROTOCOLS", "LIKERT_SCALE",
    "POSITION_ONLY_SHARE", "RANDOM_BASELINE_RHO", "RANKING_METHODS", "TIE",
    "LikertAnalysis", "PairwisePlan", "PlannedAsk", "PositionConsistency", "TieSeed", "TransitivityReport",
    "TransitivitySummary",
    "likert_conformal_analysis", "likert_point_predictions", "order_by_scores", "plan_both_orders", "plan_pairwise",
    "plan_reasks",
    "position_consistency", "presentation_order", "summarize_transitivity", "tie_keys", "transitivity_report",
    "CycleReport", "CycleSummary", "Edge", "LikertConformalRow", "LikertSplitResult", "MfasResult", "PairCounts",
    "PairwiseVerdict", "PositionBias", "Ranking", "Tournament", "VerdictError",
    "all_rankings", "bradley_terry_ranking", "bradley_terry_strengths", "build_tournament", "copeland_ranking",
    "cycle_report", "inter_judge_width_agreement", "kendall_tau_b", "kendall_tau_b_scores",
    "likert_conformal_table", "likert_nonconformity", "likert_prediction_sets", "likert_set_widths",
    "mfas_brute_force", "mfas_copeland", "mfas_exact", "order_cost", "position_bias", "ranking_from_scores",
    "reversed_edges", "round_human_mean", "schulze_ranking", "seeded_splits", "spearman_or_nan",
    "split_conformal_likert", "summarize_cycles", "three_cycles_from_adjacency", "verdicts_by_order",
    "win_rate_ranking",
]
