"""One of a thing is singular wherever a count is printed (issue 31 item 18): "1 label waiting", "1 disputed item
counted as a miss", "1 skipped item counted as a miss"; the plural forms are unchanged."""

from __future__ import annotations

from relgate_tui.commands.certify_summary import print_summary
from relgate_tui.engine.review.summary import misses_line
from tests.cli.test_certify_summary import DOC, summary_of


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


def test_counts_that_said_noun_s_agree_with_one_and_with_two(tmp_path, capsys) -> None:
    """The former "noun(s)" sites, built for 1 and for 2 through the real functions: no "(s)", noun and verb agree."""
    import json

    import pytest

    from relgate_tui.core.jury.groups import group_splits
    from relgate_tui.engine.certification.paired_runs import no_shared_items
    from relgate_tui.engine.judging import direct
    from relgate_tui.engine.judging.scores_file import load_scores

    def null_note(n_null: int, n_rows: int) -> str:
        path = tmp_path / f"scores-{n_null}-{n_rows}.jsonl"
        rows = [{"id": f"i{i}", "judge": "j", "score": None if i < n_null else 3} for i in range(n_rows)]
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        note = load_scores(path).unscored_note()
        assert note is not None
        return note

    def pairable(n: int) -> str:
        from relgate_tui.engine.certification.result import RunResult

        empty = RunResult.from_json({"items": []})
        return no_shared_items({"matched_by": "id", "n_shared_by_question": n}, empty, empty)

    def groups(labels: list[str]) -> str:
        with pytest.raises(ValueError) as err:
            group_splits(labels, 1, 0)
        return str(err.value)

    def without_token(n: int) -> str:
        return "\n".join(direct.markdown(direct.analyse([], 0.1, 0, no_rating_token={"no log-probabilities": n})))

    def incomplete(n: int, never: int) -> str:
        print_summary(summary_of(DOC | {"n_incomplete": n, "n_not_sampled": never}), "/runs/x")
        return capsys.readouterr().err

    said = {
        "scores table": (null_note(1, 1), "1 of 1 row has a null score", null_note(2, 4), "2 of 4 rows have a null score"),
        "compare": (pairable(1), "; 1 item pairs by question text", pairable(12), "; 12 items pair by question text"),
        "groups": (groups(["a", "a"]), "1 group: a grouped", groups(["a", "b"]), "2 groups: a grouped"),
        "likert": (without_token(1), "1 answer without a rating token", without_token(2),
                   "2 answers without a rating token"),
        "certify": (incomplete(1, 1), "1 item not sampled to its stop, not sampled at all", incomplete(2, 1),
                    "2 items not sampled to their stop, 1 of them not sampled at all"),
    }
    for site, (one, one_words, two, two_words) in said.items():
        for text, words in ((one, one_words), (two, two_words)):
            assert "(s)" not in text and words in text, (site, text)


def test_the_live_label_plan_says_one_item_left_in_the_singular() -> None:
    from relgate_tui.core.certification.watched import plan_labels

    one = plan_labels(19, 20, 0.9, 0.95, 1).message
    assert "not within the 1 item left to label" in one and "labelling it will not clear it" in one
    many = plan_labels(19, 20, 0.9, 0.95, 3).message
    assert "not within the 3 items left to label" in many and "labelling them all will not clear it" in many
