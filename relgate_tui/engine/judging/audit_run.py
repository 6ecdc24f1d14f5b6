"""Running a judge audit (issue 4, paper 000; issue 9) from its settings, for both front ends.

The audit itself — asking, the pairwise and direct studies, several judges and prompt variants, stored audits — is
:mod:`relgate_tui.engine.judging`. This module holds an audit's settings (:class:`JudgeAuditConfig`, turned into an
:class:`~relgate_tui.engine.judging.AuditSpec`), the events with the request cache and the audit store opened around
them (:func:`audit_events`, which the TUI iterates), a blocking runner (:func:`audit_result`, ``asyncio.run``), the
paraphrase written to a file (:func:`paraphrase_to_file`) and the export (:func:`export_audit`). Requests share
certification's request cache (``<cache dir>/samples``): a rerun costs zero calls. A stored audit
(``<data dir>/audits/<id>``) resumes where it stopped. The command line (options, parsing, printing, exit codes) is
``relgate_tui/commands/judge_audit.py``.

The paraphrase variant is written by a paraphraser model before the audit
(:mod:`relgate_tui.engine.judging.paraphrase`), stored in the audit's manifest and read back from there when the
audit is resumed (never asked again).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relgate_tui.engine.judging import (
    ORIGINAL,
    AuditFinished,
    AuditResult,
    AuditSpec,
    AuditStore,
    Judge,
    PromptVariant,
    export_result,
    plan_audit,
    run_audit,
)
from relgate_tui.engine.judging import paraphrase as para
from relgate_tui.errors import UserError

__all__ = ["JudgeAuditConfig", "audit_events", "audit_result", "export_audit", "open_cache", "audits_root",
           "paraphrase_to_file", "run_judge_audit"]


@dataclass(frozen=True)
class JudgeAuditConfig:
    """Options of ``relgate judge audit``. The first judge is ``endpoint``/``model``; ``more_judges`` adds others;
    ``variants`` adds prompt variants after the original. ``store``: keep the audit (resumable) in ``store_dir``
    (None = ``<data dir>/audits``);
    ``cache_dir``: None = ``<cache dir>/samples``; ``use_cache`` False skips the request cache."""

    data: str
    criterion: str
    endpoint: str
    model: str
    api_key_env: str | None = None
    protocol: str = "pairwise"
    reps: int = 3
    inputs: int | None = None
    candidates: int | None = None
    alpha: float = 0.10
    seed: int = 0
    concurrency: int = 8
    temperature: float = 0.7
    max_tokens: int | None = 16
    top_logprobs: int = 0
    timeout_s: float = 60.0
    cache_dir: str | None = None
    use_cache: bool = True
    more_judges: tuple[Judge, ...] = ()
    variants: tuple[PromptVariant, ...] = ()
    store: bool = False
    store_dir: str | None = None
    likert_protocol: str = "single"
    paraphraser: Judge | None = None  # writes a pending "paraphrase" variant (paraphrase.pending) before the audit
    prompt: str = "score-only"  # the direct study's built-in prompt: score-only | geval (engine/judging/geval.py)
    scale: int = 5  # the direct study's scale 1–K

    def judges(self) -> tuple[Judge, ...]:
        first = Judge(self.endpoint, self.model, self.api_key_env, self.temperature, self.max_tokens,
                      self.top_logprobs, self.timeout_s)
        return (first, *self.more_judges)

    def to_spec(self) -> AuditSpec:
        return AuditSpec(self.data, self.criterion, self.judges(), (ORIGINAL, *self.variants), self.protocol,
                         self.reps, self.inputs, self.candidates, self.alpha, self.seed, self.concurrency,
                         likert_protocol=self.likert_protocol, prompt=self.prompt, scale=self.scale).validate()

    def validate(self) -> None:
        self.to_spec()


def open_cache(cfg: JudgeAuditConfig) -> Any:
    from relgate_tui.engine.runs.paths import cache_dir
    from relgate_tui.engine.transport.cache import SampleCache

    if not cfg.use_cache:
        return None
    path = Path(cfg.cache_dir) if cfg.cache_dir else cache_dir() / "samples"
    try:
        return SampleCache(path)
    except OSError as exc:
        raise UserError(f"cannot open the request cache {path}: {exc.strerror or exc}") from None


def audits_root(cfg: JudgeAuditConfig) -> Path | None:
    """Where the audit is stored (None: not stored)."""
    from relgate_tui.engine.judging.store import audits_dir

    if not cfg.store:
        return None
    return Path(cfg.store_dir) if cfg.store_dir else audits_dir()


async def audit_events(cfg: JudgeAuditConfig, *, transport: Any = None) -> Any:
    """The audit's events (:func:`~relgate_tui.engine.judging.run_audit`) with the config's cache and store opened
    and closed around them; first a :class:`~relgate_tui.engine.judging.paraphrase.Paraphrased` when the audit has
    a model-written paraphrase (written now, or read back from the stored audit). The TUI iterates this in its
    worker."""
    spec = cfg.to_spec()
    cache = open_cache(cfg)
    store = None
    try:
        root = audits_root(cfg)
        spec, written = await para.resolve_paraphrase(spec, cfg.paraphraser, audits_root=root, cache=cache,
                                                      transport=transport)
        if written is not None:
            yield written
        store = AuditStore.create_or_open(plan_audit(spec), root) if root is not None else None
        async for event in run_audit(spec, store=store, cache=cache, transport=transport):
            yield event
    finally:
        if store is not None:
            store.close()
        if cache is not None:
            cache.close()


def paraphrase_to_file(cfg: JudgeAuditConfig, path: str) -> para.Paraphrased:
    """``--paraphrase-out FILE``: the audit's paraphrase (read back from its stored audit, else written by the
    paraphraser) written to ``path`` (:func:`~relgate_tui.engine.judging.paraphrase.file_text`); no judge is asked."""

    async def main() -> para.Paraphrased:
        cache = open_cache(cfg)
        try:
            _, done = await para.resolve_paraphrase(cfg.to_spec(), cfg.paraphraser, audits_root=audits_root(cfg),
                                                    cache=cache)
        finally:
            if cache is not None:
                cache.close()
        if done is None:
            raise UserError("--paraphrase-out needs --perturb …,paraphrase (a model-written paraphrase)")
        return done

    done = asyncio.run(main())
    text = para.file_text(done.variant, path)
    from relgate_tui.engine.runs.outputs import write_output

    write_output(path, text, inputs=(cfg.data,))
    return done


def audit_result(cfg: JudgeAuditConfig, on_event: Callable[[Any], None] | None = None) -> AuditResult:
    """Run the whole audit (blocking, ``asyncio.run``); ``on_event`` gets every audit event."""

    async def main() -> AuditResult:
        async for event in audit_events(cfg):
            if on_event is not None:
                on_event(event)
            if isinstance(event, AuditFinished):
                return event.result
        raise RuntimeError("the audit ended without a result")

    return asyncio.run(main())


def run_judge_audit(cfg: JudgeAuditConfig, on_event: Callable[[Any], None] | None = None) -> dict[str, Any]:
    """The audit's JSON document (``relgate judge audit --json``)."""
    return audit_result(cfg, on_event).to_json()


def export_audit(result: AuditResult, fmt: str, folder: Path) -> Path:
    """Write the audit as JSON (the ``--json`` document) or a Markdown report into ``folder``; returns the path."""
    return export_result(result, fmt, folder)
