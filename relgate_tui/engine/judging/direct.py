"""The direct Likert study (paper 000 §3.4): each candidate scored 1–5 ``reps`` times; split conformal sets.

Requests: one per candidate, keyed ``("direct", variant, input_id, candidate_id)``. The judge's prediction ŷ for a
candidate follows the Likert protocol (:func:`relgate_tui.core.judge.likert_point_predictions`): ``"single"`` (the
default, paper §3.2: one integer score — the first valid answer, a later one standing in for an unparseable first
answer as a re-ask would) or ``"mean"`` (the mean of the valid scores of the k repetitions); NaN when none is valid.
The conformal table evaluates split conformal Likert sets (nonconformity |ŷ − y*|, y* the rounded human mean; paper
eqs. 2–3) over seeded splits at each α (:func:`relgate_tui.core.judge.likert_conformal_analysis`), and
``width_vs_error`` the first split at the audit's α. The JSON names the protocol used (``likert_protocol``).

The prompt is one of the built-in ones (:mod:`.geval`: paper 000's ``score-only`` or the ``geval`` form) on a 1–K
scale (K = 5 by default), or a variant's own template; answers are parsed by the audit's prompt and scale
(:func:`parse`). Paper 000's Likert conformal sets assume the 1–5 scale of its human means: for another K the study
keeps the scores (and their log-probs, for paper 001) and gives no conformal table, with a one-line ``note``.

When the judge returned log-probabilities, each score answer also yields the log-probability of every scale value at
the rating position (:func:`locate`, paper 001's input), through the core's one locator
(:func:`relgate_tui.core.judge_intervals.features.locate_rating`): the token that carries the *parsed* score — on the
answer's first line for the score-only prompt (the span the strict parser reads), after the last cue ("Score: 4"),
else on the last line, for G-Eval — with the top alternatives that denote a scale value merged in probability space (" 4", "4", "four").
An answer whose score cannot be parsed, or whose located token disagrees with the parsed score, has no log-probs,
with a one-line reason. They appear in the candidate's row as ``score_logprobs`` (one object per repetition), only
when present.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from relgate_tui.core import judge as cj
from relgate_tui.core.jsonsafe import finite_or_none
from relgate_tui.core.judge_intervals.features import Located, locate_rating
from relgate_tui.core.text import counted
from relgate_tui.engine.judging import geval
from relgate_tui.engine.judging.ask import Key, Request
from relgate_tui.engine.judging.data import AuditInput
from relgate_tui.engine.judging.variants import PromptVariant
from relgate_tui.engine.transport.logprobs import TokenLogprob

KIND = "direct"
SCALE = tuple(cj.LIKERT_SCALE)
NO_LOGPROBS = "no log-probabilities returned"


def requests(inputs: Sequence[AuditInput], criterion: str, description: str, variant: PromptVariant,
             base: str | None = None) -> list[Request]:
    """One request per candidate; ``base``: the direct template of a variant that has none of its own (the audit's
    built-in prompt, :func:`.geval.direct_template`; None = paper 000's)."""
    if base is not None and variant.direct is None:
        variant = replace(variant, direct=base)
    return [Request((KIND, variant.name, inp.id, c.id),
                    tuple(variant.direct_messages(inp.input, c.text, criterion, description)))
            for inp in inputs for c in inp.candidates]


def parse(text: str, prompt: str = geval.DEFAULT_PROMPT, scale: int = geval.DEFAULT_SCALE) -> float | None:
    """The 1–``scale`` score of an answer to ``prompt`` (:func:`.geval.parse_score`), or None for an unparseable
    reply."""
    score = geval.parse_score(text, prompt, scale)
    return float(score) if score is not None else None


def locate(tokens: Sequence[TokenLogprob] | None, text: str, prompt: str = geval.DEFAULT_PROMPT,
           scale: int = geval.DEFAULT_SCALE) -> Located:
    """The rating token of an answer (module docstring): its merged log-probs over 1–``scale``, or the reason there
    are none (no log-probs, no parseable score, no rating token, or a token that disagrees with the parsed score)."""
    if not tokens:
        return Located(None, None, None, NO_LOGPROBS)
    parsed = geval.parse_score(text, prompt, scale)
    found = locate_rating([(t.token, t.logprob, t.top) for t in tokens], geval.scale_values(scale),
                          span=geval.SPAN[prompt])
    if parsed is None:
        why = found.reason if found.reason is not None else "the strict parser reads no score on its first line"
        return Located(found.index, None, None, f"unparseable answer: {why}")
    if found.reason is None and found.score != parsed:
        return Located(found.index, parsed, None,
                       f"the rating token says {found.score} but the answer parses as {parsed}")
    return found


def score_logprobs(tokens: Sequence[TokenLogprob] | None, scale: Sequence[int] = SCALE, text: str | None = None,
                   prompt: str = geval.DEFAULT_PROMPT) -> dict[int, float] | None:
    """Scale value → merged log-prob at the rating position (:func:`locate`; ``text``: the answer, by default the
    tokens' text). None without log-probs or without a rating token."""
    if not tokens:
        return None
    if text is None:
        text = "".join(t.token for t in tokens)
    found = locate(tokens, text, prompt, max(scale))
    return None if found.logprobs is None else dict(sorted(found.logprobs.items()))


@dataclass(frozen=True, slots=True)  # slots: a million-row scores file makes a million of these
class ScoredCandidate:
    input: str
    candidate: str
    scores: tuple[float, ...]
    human: float | None
    logprobs: tuple[Mapping[int, float] | None, ...] = ()
    answers: tuple[float | None, ...] | None = None  # every answer in the order asked (None = unparseable)

    @property
    def mean(self) -> float:
        return float(np.mean(self.scores)) if self.scores else math.nan

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"input": self.input, "candidate": self.candidate,
                             "judge_scores": [int(s) if float(s).is_integer() else s for s in self.scores],
                             "judge_mean": finite_or_none(self.mean), "human": self.human}
        if any(lp is not None for lp in self.logprobs):
            d["score_logprobs"] = [None if lp is None else {str(k): v for k, v in lp.items()} for lp in self.logprobs]
        return d


@dataclass(frozen=True)
class WidthVsError:
    """Set width against |ŷ − y*| on the test half of the first seeded split at ``alpha``."""

    alpha: float
    q_hat: float
    errors: tuple[float, ...]
    widths: tuple[int, ...]
    n_unscored: int
    spearman: float | None

    def mean_width_by_error(self) -> list[tuple[float, float, int]]:
        """(error, mean set width, items) at each error value (rounded to 6 decimals), in increasing error."""
        errors, widths = np.array(self.errors), np.array(self.widths)
        levels = np.round(errors, 6)
        return [(float(e), float(widths[levels == e].mean()), int((levels == e).sum())) for e in np.unique(levels)]

    def to_json(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha, "split": 0, "q_hat": finite_or_none(self.q_hat),
            "points": [[float(e), int(w)] for e, w in zip(self.errors, self.widths, strict=True)],
            "mean_width_by_error": [list(m) for m in self.mean_width_by_error()],
            "n_unscored": self.n_unscored,
            "spearman": finite_or_none(self.spearman),
        }


@dataclass(frozen=True)
class DirectResult:
    """The direct study of one judge under one prompt variant."""

    scores: tuple[ScoredCandidate, ...]
    table: tuple[cj.LikertConformalRow, ...]
    n_scored: int
    width_vs_error: WidthVsError | None
    likert_protocol: str = "single"
    n_first_score_replaced: int = 0
    n_without_valid_score: int = 0
    note: str | None = None  # why there is no conformal table (another scale than paper 000's 1–5)
    no_rating_token: Mapping[str, int] = field(default_factory=dict)  # reason → answers (when log-probs were asked)

    def to_json(self) -> dict[str, Any]:
        return {
            "likert_protocol": self.likert_protocol,
            **({"note": self.note} if self.note else {}),
            **({"no_rating_token": dict(self.no_rating_token)} if self.no_rating_token else {}),
            "n_first_score_replaced": self.n_first_score_replaced,
            "n_without_valid_score": self.n_without_valid_score,
            "scores": [s.to_json() for s in self.scores],
            "likert_conformal": [{
                "alpha": r.alpha, "target_coverage": r.target_coverage, "coverage": finite_or_none(r.coverage),
                "coverage_sd": finite_or_none(r.coverage_sd), "mean_width": finite_or_none(r.mean_width),
                "mean_q_hat": finite_or_none(r.mean_q_hat), "spearman_width_error": finite_or_none(r.spearman_width_error),
                "n_cal": r.n_cal, "n_test": r.n_test, "n_infinite_q": r.n_infinite_q} for r in self.table],
            "n_scored": self.n_scored,
            "answers": self.answer_counts(),
            "width_vs_error": None if self.width_vs_error is None else self.width_vs_error.to_json(),
        }

    def answer_counts(self) -> dict[str, int]:
        """Judge answers asked for scores, and how many of them held no parseable score."""
        every = [a for s in self.scores for a in (s.answers if s.answers is not None else s.scores)]
        return {"total": len(every), "unparseable": sum(1 for a in every if a is None)}


def candidates_of(inputs: Sequence[AuditInput], variant: str, scores: Mapping[Key, Sequence[float | None]],
                  criterion: str, logprobs: Mapping[Key, Sequence[Mapping[int, float] | None]] | None = None
                  ) -> list[ScoredCandidate]:
    out = []
    for inp in inputs:
        for c in inp.candidates:
            key = (KIND, variant, inp.id, c.id)
            raw = tuple(scores.get(key, ()))
            valid = tuple(s for s in raw if s is not None)
            out.append(ScoredCandidate(inp.id, c.id, valid, c.human.get(criterion),
                                       tuple((logprobs or {}).get(key, ())), raw))
    return out


def rating_reasons(located: Mapping[Key, Sequence[Located]]) -> dict[str, int]:
    """Reason → answers without a rating token, when the judge returned log-probs at all (``{}`` otherwise)."""
    every = [x for v in located.values() for x in v]
    if all(x.reason == NO_LOGPROBS for x in every):
        return {}
    return dict(sorted(Counter(x.reason for x in every if x.reason).items(), key=lambda kv: (-kv[1], kv[0])))


def analyse(rows: Sequence[ScoredCandidate], alpha: float, seed: int, protocol: str = "single",
            scale: int = geval.DEFAULT_SCALE, no_rating_token: Mapping[str, int] | None = None) -> DirectResult:
    """Conformal table and width-vs-error over the rows that have a human score, ŷ by the Likert ``protocol``
    (module docstring; ŷ NaN = unscored: infinite error, the full scale). Paper 000's sets are on the 1–5 scale:
    another ``scale`` gives no table, with the reason in ``note``. ``no_rating_token``: :func:`rating_reasons`."""
    reasons = dict(no_rating_token or {})
    if protocol not in cj.LIKERT_PROTOCOLS:
        raise ValueError(f"unknown Likert protocol {protocol!r} (choose one of {', '.join(cj.LIKERT_PROTOCOLS)})")
    human_rows = [r for r in rows if r.human is not None]
    answers = [r.answers if r.answers is not None else r.scores for r in human_rows]
    table: tuple[cj.LikertConformalRow, ...] = ()
    wve = None
    if scale != len(SCALE):  # the core's validity rule is 1–5: count on this scale's parsed scores instead
        none = sum(1 for a in answers if all(s is None for s in a))
        replaced = sum(1 for a in answers if a and a[0] is None and any(s is not None for s in a)) \
            if protocol == "single" else 0
        note = (f"paper 000's Likert conformal sets compare a 1-5 judge score with the rounded 1-5 human mean; this "
                f"audit scored on 1-{scale}: no sets (its log-probs serve paper 001: relgate judge intervals --audit)")
        return DirectResult(tuple(rows), table, len(answers), wve, protocol, replaced, none, note, reasons)
    preds, replaced, none = cj.likert_point_predictions(answers, protocol)
    if answers and none == len(answers):  # garbage is never a number: no full-scale sets "covering" every item
        note = (f"no valid scores: every answer of the {len(answers)} candidates was unparseable, so there are no "
                "conformal sets")
        return DirectResult(tuple(rows), table, len(answers), wve, protocol, replaced, none, note, reasons)
    human = np.array([r.human for r in human_rows], dtype=float)
    alphas = sorted(set(cj.DEFAULT_ALPHAS) | {alpha})
    if len(preds) >= 4:
        table = tuple(cj.likert_conformal_analysis(answers, human, protocol=protocol, alphas=alphas, seed=seed).rows)
        wve = _width_vs_error(preds, human, alpha, seed)
    return DirectResult(tuple(rows), table, len(preds), wve, protocol, replaced, none, None, reasons)


def _width_vs_error(preds: np.ndarray, human: np.ndarray, alpha: float, seed: int) -> WidthVsError:
    cal, test = cj.seeded_splits(len(preds), cj.DEFAULT_SPLITS, seed)[0]
    targets = cj.round_human_mean(human)
    res = cj.split_conformal_likert(preds[cal], targets[cal], preds[test], targets[test], alpha)
    finite = np.isfinite(res.errors)
    errors, widths = res.errors[finite], res.widths[finite]
    spearman = cj.spearman_or_nan(widths, errors) if finite.sum() >= 2 else None
    return WidthVsError(alpha, float(res.q_hat), tuple(float(e) for e in errors), tuple(int(w) for w in widths),
                        int((~finite).sum()), spearman)


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "—" if x is None or not math.isfinite(x) else format(x, spec)


def markdown(r: DirectResult) -> list[str]:
    lines = ["", f"## Likert conformal sets (direct scores, {r.n_scored} scored candidates, ŷ = "
                 f"{'one score per candidate' if r.likert_protocol == 'single' else 'mean of the k scores'}, "
                 f"protocol {r.likert_protocol})", ""]
    if r.no_rating_token:
        n = sum(r.no_rating_token.values())
        lines += [f"{counted(n, 'answer')} without a rating token (no paper-001 features): "
                  + "; ".join(f"{why} ({c})" for why, c in list(r.no_rating_token.items())[:3]), ""]
    if r.note:
        return lines + [r.note[:1].upper() + r.note[1:] + "."]
    if not r.table:
        return lines + ["Too few scored candidates with human scores for conformal sets (need 4)."]
    lines += ["| α | target | coverage | mean width | Spearman(width, error) |", "|---|---|---|---|---|"]
    lines += [f"| {t.alpha:.2f} | {t.target_coverage:.2f} | {_fmt(t.coverage)} | "
              f"{_fmt(t.mean_width, '.2f')} | {_fmt(t.spearman_width_error, '+.3f')} |" for t in r.table]
    return lines
