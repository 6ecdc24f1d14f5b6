"""Judge audit I (paper 000): per-input tournaments, directed 3-cycles, ranking methods with exact MFAS repair,
Kendall τ-b, position bias, and split conformal sets over Likert judge scores. Pure: no IO."""

from relgate_tui.core.judge.bias import PositionBias, position_bias
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
    LIKERT_SCALE,
    LikertConformalRow,
    LikertSplitResult,
    inter_judge_width_agreement,
    likert_conformal_table,
    likert_nonconformity,
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


def all_rankings(tournament: Tournament, mfas_time_limit_s: float = 10.0,
                 mfas: MfasResult | None = None) -> dict[str, Ranking]:
    """Every ranking method of paper Table 2, keyed by :data:`RANKING_METHODS` names. ``mfas``: the exact MFAS of
    ``tournament`` when the caller has already solved it (it is then not solved a second time)."""
    if mfas is None:
        mfas = mfas_exact(tournament, time_limit_s=mfas_time_limit_s)
    return {
        "win_rate": win_rate_ranking(tournament),
        "bradley_terry": bradley_terry_ranking(tournament),
        "schulze": schulze_ranking(tournament),
        "copeland": copeland_ranking(tournament),
        "mfas_exact": mfas.ranking,
        "mfas_copeland": mfas_copeland(tournament).ranking,
    }


__all__ = [
    "BT_PSEUDO_COUNT", "DEFAULT_ALPHAS", "DEFAULT_SPLITS", "LIKERT_SCALE", "RANKING_METHODS", "TIE",
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
