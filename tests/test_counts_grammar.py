"""One of a thing is singular wherever a count is printed (issue 31 item 18): "1 label waiting", "1 disputed item
counted as a miss", "1 skipped item counted as a miss"; the plural forms are unchanged."""

from __future__ import annotations

from relgate_tui.commands.certify_summary import print_summary, summary_of
from relgate_tui.engine.review.summary import misses_line
from tests.engine.test_certify_summary import DOC


def test_the_team_review_line_counts_one_miss_in_the_singular() -> None:
    one = misses_line({"session": "s1", "policy": "strict", "counted_as_misses": ["q001"]})
    assert "1 disputed item counted as a miss" in one and "misses" not in one
    three = misses_line({"session": "s1", "policy": "strict", "counted_as_misses": ["a", "b", "c"]})
    assert "3 disputed items counted as misses" in three


def test_the_certify_summary_counts_one_skipped_item_in_the_singular(capsys) -> None:
    for n, words in ((1, "the 1 skipped item counted as a miss:"), (2, "the 2 skipped items counted as misses:")):
        doc = DOC | {"n_skipped": n, "worst_case": {"level": 0.75, "lower_bound": 0.6}}
        print_summary(summary_of(doc), "/runs/x")
        err = capsys.readouterr().err
        assert f"worst case with {words} level 75.0% (≥ 60.0%)" in err and "(s)" not in err


def test_counted_is_singular_for_one_only() -> None:
    from relgate_tui.engine.review.summary import as_misses, counted

    assert [counted(n, "label") for n in (0, 1, 2)] == ["0 labels", "1 label", "2 labels"]
    assert counted(1, "reply", "replies") == "1 reply" and counted(3, "reply", "replies") == "3 replies"
    assert as_misses(1) == "1 disputed item counted as a miss" and as_misses(0) == "0 disputed items counted as misses"


def test_the_results_screen_counts_one_skipped_item_in_the_singular() -> None:
    from types import SimpleNamespace

    from relgate_tui.tui.results import ResultsScreen

    screen = SimpleNamespace(_readouts=lambda r: (None, None), _weighted=lambda r: None)
    for n, words in ((1, "1 skipped item counted as a miss:"), (3, "3 skipped items counted as misses:")):
        r = SimpleNamespace(n_skipped=n, worst_case_level=0.8, worst_case_lower_bound=0.7, confidence=0.95,
                            adaptive=None)
        (line,) = ResultsScreen._extra_lines(screen, r)  # type: ignore[arg-type]
        assert line.plain.startswith(f"worst case, {words} level 0.800"), line.plain


def test_counts_across_the_judging_and_command_texts_agree_with_their_number() -> None:
    """Issue 31 item 18's leftovers: the "(s)" forms read as English, one and several, where a count is printed."""
    import pytest

    from relgate_tui.core.jury.groups import group_splits
    from relgate_tui.core.text import counted
    from relgate_tui.engine.judging.scores_file import table_from_records

    def note(nulls: int) -> str:
        rows = [{"id": f"q{i}", "judge": "j", "score": None if i < nulls else 3} for i in range(4)]
        text = table_from_records(rows).unscored_note()
        assert text is not None and "(s)" not in text
        return text

    assert note(1).startswith("1 of 4 rows has a null score") and note(2).startswith("2 of 4 rows have a null score")
    for n, words in ((1, "1 group:"), (2, "2 groups:")):
        with pytest.raises(ValueError, match=words):
            group_splits(["a"] * 3 if n == 1 else ["a", "a", "b"], 1, 0)
    assert counted(1_234, "row", grouped=True) == "1,234 rows" and counted(1, "row", grouped=True) == "1 row"
    assert [counted(n, "call") for n in (1, 2)] == ["1 call", "2 calls"]
