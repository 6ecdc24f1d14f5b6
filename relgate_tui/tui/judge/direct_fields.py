"""The direct study's request settings in the judge setup (issue 12 §1): top log-probs, the prompt, the scale 1–K.

:class:`DirectFields` (shown while the protocol asks for direct scores) holds the three options that
``relgate judge audit`` takes as ``--top-logprobs N``, ``--prompt score-only|geval`` and ``--scale K``, and
:meth:`DirectFields.settings` turns them into :class:`DirectSettings` — the values the setup passes to
:class:`~relgate_tui.engine.judging.audit_run.JudgeAuditConfig` exactly as the CLI's ``_config`` does, so the same
settings give the same stored audit (same manifest, same audit id):

* ``top_logprobs`` (0–20; 0 = none): paper 001's Intervals view (``i`` on the results) needs the score token's
  log-probabilities, so the field starts at :data:`DEFAULT_TOP_LOGPROBS` = 5 (the CLI's default stays 0);
* ``prompt``: paper 000's score-only prompt or the G-Eval form (:mod:`relgate_tui.engine.judging.geval`);
* ``scale`` K (2–10, default 5);
* ``max_tokens``: the CLI's rule when ``--max-tokens`` is not given — 400 for G-Eval (it reasons before its
  score), 16 otherwise.

A pairwise-only audit asks no direct score: the fields are hidden and the CLI's defaults are used (no log-probs,
score-only, 1–5), as ``relgate judge audit --protocol pairwise`` without these options. A bad value is a one-line
error under the fields (and in the side panel), and the audit cannot start until it is fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Grid
from textual.widgets import Input, Label, Select, Static

from relgate_tui.tui.forms import parse_number

DEFAULT_TOP_LOGPROBS = 5
MAX_TOP_LOGPROBS = 20
TOP_LOGPROBS_LABEL = "top log-probs"  # named by the Intervals notice (audit_studies.NO_LOGPROBS_FIX)
PROMPT_OPTIONS = (("score-only (paper 000)", "score-only"), ("G-Eval form (criterion, steps, reasoning)", "geval"))


@dataclass(frozen=True)
class DirectSettings:
    """What the fields give the config (module docstring)."""

    top_logprobs: int = 0
    prompt: str = "score-only"
    scale: int = 5
    max_tokens: int = 16

    @classmethod
    def of(cls, top_logprobs: int, prompt: str, scale: int) -> DirectSettings:
        """The settings with the CLI's ``--max-tokens`` default for ``prompt`` (``commands/judge_audit._config``)."""
        from relgate_tui.engine.judging import geval

        return cls(top_logprobs, prompt, scale, 400 if prompt == geval.GEVAL else 16)


def paraphrase_refusal(settings: DirectSettings, protocol: str) -> str | None:
    """Why the model paraphrase cannot be a variant of this audit (None: it can) — the CLI's rule: paper 002's
    paraphrase rewrites paper 000's score-only 1–5 prompt, so with direct scores on another prompt or scale the
    user gives their own paraphrase of that prompt (here: as a template file)."""
    from relgate_tui.engine.judging.paraphrase import writes_for

    if writes_for(protocol, settings.prompt, settings.scale):
        return None
    return (f"paraphrase: it rewrites paper 000's score-only 1-5 prompt, not the {settings.prompt} prompt on 1-"
            f"{settings.scale}: give your paraphrase of that prompt as a template file")


class DirectFields(Grid):
    """The three fields and their error line (module docstring); ``previous``: the last audit's config."""

    DEFAULT_CSS = """
    DirectFields #direct-error {
        height: auto;
    }
    """

    def __init__(self, top_logprobs: int = DEFAULT_TOP_LOGPROBS, prompt: str = "score-only", scale: int = 5,
                 **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.initial = (top_logprobs, prompt if prompt in {v for _, v in PROMPT_OPTIONS} else "score-only", scale)

    def compose(self) -> ComposeResult:
        top, prompt, scale = self.initial
        yield Label(TOP_LOGPROBS_LABEL)
        yield Input(str(top), id="top-logprobs", type="integer", compact=True,
                    tooltip="per-token log-probabilities of the score (0 = none); paper 001's Intervals view "
                            "(i on the results) needs them — relgate judge audit --top-logprobs N")
        yield Label("direct prompt")
        yield Select(list(PROMPT_OPTIONS), value=prompt, allow_blank=False, id="prompt", compact=True)
        yield Label("scale 1–K")
        yield Input(str(scale), id="scale", type="integer", compact=True,
                    tooltip="the direct scores' scale 1–K, K from 2 to 10 — relgate judge audit --scale K")
        yield Label("")
        yield Static("", id="direct-error")

    def settings(self) -> DirectSettings:
        """The fields' settings; ValueError (one line, also shown under the fields) for a bad value."""
        error = self.query_one("#direct-error", Static)
        try:
            top = parse_number(self.query_one("#top-logprobs", Input).value, TOP_LOGPROBS_LABEL, int, lo=0,
                               hi=MAX_TOP_LOGPROBS)
            scale = parse_number(self.query_one("#scale", Input).value, "scale K", int, lo=2, hi=10)
        except ValueError as exc:
            error.update(Text(str(exc).splitlines()[0], style="bold red"))
            raise
        error.update("")
        return DirectSettings.of(top, str(self.query_one("#prompt", Select).value), scale)
