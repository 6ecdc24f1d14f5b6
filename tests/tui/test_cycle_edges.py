"""The verdicts both cycle viewers show behind an edge, oriented as x against y."""

from relgate_tui.core.judge import PairwiseVerdict, build_tournament, verdicts_by_order
from relgate_tui.core.types import INVALID
from relgate_tui.tui.widgets.cycles import EdgeVerdicts, edge_verdicts


def test_edge_verdicts_orient_a_pair_either_way():
    verdicts = [PairwiseVerdict("y", "x", "y"), PairwiseVerdict("y", "x", "y"),
                PairwiseVerdict("x", "y", "x"), PairwiseVerdict("x", "y", INVALID)]
    pairs = verdicts_by_order(build_tournament(verdicts, ["x", "y", "z"]), verdicts)
    # x shown first: x won 1, y won 0; y shown first: x won 0, y won 2; one unparseable verdict
    assert edge_verdicts(pairs, "x", "y") == EdgeVerdicts((1, 0), (0, 2), 1)
    assert edge_verdicts(pairs, "y", "x") == EdgeVerdicts((2, 0), (0, 1), 1)
    assert edge_verdicts(pairs, "y", "x").total == (2, 1)
    assert edge_verdicts(pairs, "x", "z") == EdgeVerdicts((0, 0), (0, 0), 0)  # listed, never judged
    assert edge_verdicts([p for p in pairs if p["b"] != "z"], "x", "z") is None
