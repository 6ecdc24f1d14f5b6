"""Prompt perturbations (paper 002 §3.3): seeded, placeholder- and rating-instruction-preserving."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relgate_tui.core.perturb import (
    DEFAULT_PROTECTED,
    PLACEHOLDER,
    check_paraphrase,
    newline_variant,
    standard_variants,
    typo_variant,
)

TEMPLATE = """You will be given one summary written for a news article.
Your task is to evaluate the summary on one metric: coherence.
Please make sure you read and understand these instructions carefully.

Evaluation criteria: the collective quality of all sentences, well structured and well organized.

Source text: {document}
Summary: {summary}

Rate the summary on a scale from 1 (worst) to 5 (best). Output only the score."""


def test_typo_swaps_adjacent_letters_in_five_eligible_words():
    v = typo_variant(TEMPLATE, seed=42)
    assert v.name == "typo" and len(v.edits) == 5 and v.template != TEMPLATE
    assert len(v.template) == len(TEMPLATE)
    for edit in v.edits:
        before, after = edit.split(" → ")
        assert sorted(before) == sorted(after) and before != after
        diff = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
        assert len(diff) == 2 and diff[1] == diff[0] + 1
    assert PLACEHOLDER.findall(v.template) == PLACEHOLDER.findall(TEMPLATE)
    assert v.template.splitlines()[-1] == TEMPLATE.splitlines()[-1]  # the rating instructions are untouched
    for seed in range(40):  # a protected keyword (here the criterion's name) is never edited
        assert "coherence" in typo_variant(TEMPLATE, seed, protected=DEFAULT_PROTECTED | {"coherence"}).template


def test_variants_are_reproducible_and_seed_dependent():
    assert typo_variant(TEMPLATE, 42) == typo_variant(TEMPLATE, 42)
    assert typo_variant(TEMPLATE, 42).template != typo_variant(TEMPLATE, 43).template
    assert newline_variant(TEMPLATE, 7) == newline_variant(TEMPLATE, 7)


def test_newline_adds_up_to_three_breaks_and_nothing_else():
    v = newline_variant(TEMPLATE, seed=42)
    assert v.template.count("\n") == TEMPLATE.count("\n") + 3 and len(v.edits) == 3
    assert v.template.replace("\n", "") == TEMPLATE.replace("\n", "")
    assert PLACEHOLDER.findall(v.template) == PLACEHOLDER.findall(TEMPLATE)


def test_paraphrase_checks():
    assert check_paraphrase(TEMPLATE, TEMPLATE.replace("evaluate", "assess")) is None
    assert "placeholders" in check_paraphrase(TEMPLATE, TEMPLATE.replace("{summary}", "the summary"))
    assert "numbers" in check_paraphrase(TEMPLATE, TEMPLATE.replace("5 (best)", "10 (best)"))
    names = [v.name for v in standard_variants(TEMPLATE, paraphrase=TEMPLATE.replace("carefully", "attentively"))]
    assert names == ["original", "typo", "newline", "paraphrase"]
    with pytest.raises(ValueError, match="placeholders"):
        standard_variants(TEMPLATE, paraphrase="no placeholders")


@given(st.text(alphabet=st.sampled_from("abcdefgh XYZ.\n{}12"), max_size=200), st.integers(0, 10_000))
@settings(max_examples=150, deadline=None)
def test_perturbations_never_touch_placeholders(text, seed):
    for v in (typo_variant(text, seed), newline_variant(text, seed)):
        assert PLACEHOLDER.findall(v.template) == PLACEHOLDER.findall(text)
        assert re.findall(r"\d", v.template) == re.findall(r"\d", text)
