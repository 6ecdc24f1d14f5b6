"""Paper 001's Intervals view and paper 002's IRT view of the audit on the judge audit screen (issue 12 item 6).

The judge audit screen (a finished audit, or a stored one reopened from Runs) offers two keys in its results: ``i``
opens the Intervals view of the judge × prompt variant on show, ``r`` the IRT view of every judge of the audit. Both
read the stored audit with :func:`relgate_tui.engine.judging.as_scores.audit_scores` (zero model calls: repetition 0
of each direct answer) and build the study with the same functions as ``relgate judge intervals --audit`` /
``relgate judge irt --audit`` (``engine/judging/studies.audit_input``, ``build_study``), in a
thread worker. When the audit cannot give the study — no stored audit, a pairwise-only audit, no score-token
log-probs (the notice names the setup's "top log-probs" field and the CLI's option, :data:`NO_LOGPROBS_FIX`), a
single prompt variant for IRT, too few items — a one-line notice says why and nothing opens.

The intervals use the audit's α, seeds 1–30 and all nine methods; the screen's subtitle shows the progress per seed
and ``Escape`` while it runs cancels it (the thread stops at the next seed). Views open in front of the audit
screen; their exports go to the audit exports folder (``judge-audits/``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from textual.worker import Worker, WorkerState, get_current_worker

from relgate_tui.tui.judge.direct_fields import TOP_LOGPROBS_LABEL
from relgate_tui.tui.services import host
from relgate_tui.tui.studies.common import StudyCancelled, plain

GROUP = "audit-study"
NO_LOGPROBS_FIX = (f"set '{TOP_LOGPROBS_LABEL}' to 5 under Direct scores in the judge setup (relgate judge audit "
                   "--top-logprobs 5) and run the audit again")
SEEDS = 30
METHODS: tuple[str, ...] | None = None  # None: all nine (core/judge_intervals/methods.METHOD_NAMES)


def stored_audit(screen: Any) -> Path:
    """The directory of the audit on ``screen``: the reopened one, or where the finished audit was stored."""
    from relgate_tui.errors import UserError

    if screen.reopen is not None:
        return Path(screen.reopen)
    cfg = screen.config
    if cfg is None or not cfg.store:
        raise UserError("this audit was not stored: the studies read a stored audit")
    from relgate_tui.engine.judging.store import audit_id, audits_dir

    return (Path(cfg.store_dir) if cfg.store_dir else audits_dir()) / audit_id(cfg.to_spec())


def intervals_of_audit(path: Path, judge: str, variant: str, alpha: float,
                       progress: Callable[[int, int], None] | None = None) -> tuple[Any, Any, Any]:
    """(IntervalStudy, its StudyInput, AuditScores) of one judge × variant of a stored audit (one-line errors)."""
    from relgate_tui.core.judge_intervals.methods import METHOD_NAMES
    from relgate_tui.core.judge_intervals.study import run_study
    from relgate_tui.engine.judging.as_scores import audit_scores
    from relgate_tui.engine.judging.studies import audit_input

    audit = audit_scores(path)
    inp, labels = audit_input(audit, judge=judge, criterion=None, variant=variant, grid="auto", alpha=alpha,
                              no_logprobs_fix=NO_LOGPROBS_FIX)
    study = run_study(inp, methods=METHODS or METHOD_NAMES, alpha=alpha, seeds=range(1, SEEDS + 1), labels=labels,
                      progress=progress)
    return study, inp, audit


def irt_of_audit(path: Path) -> tuple[Any, Any]:
    """(IRTStudy of every judge, AuditScores) of a stored audit; a one-line error with a single prompt variant."""
    from relgate_tui.engine.judging.as_scores import audit_scores
    from relgate_tui.engine.judging.studies import build_study
    from relgate_tui.errors import UserError

    audit = audit_scores(path)
    variants = audit.table.variants()
    if len(variants) < 2:
        raise UserError(f"audit {audit.audit_id}: the IRT study needs several prompt variants and this audit has one "
                        f"({plain(variants[0] if variants else 'none', 30)}): add prompt variants in the setup")
    return build_study(audit.table, judge=None, criterion=None, prior="mml", original="original"), audit


JURY_SPLITS = 10


def jury_of_audit(path: Path, progress: Any) -> tuple[Any, Any, Any]:
    """(JuryStudy, JuryData, AuditScores) of a stored audit's judges as a pool — ``relgate judge jury --audit``'s
    ``build_data`` and study, ``JURY_SPLITS`` splits (a one-line error with fewer than the jury needs)."""
    from relgate_tui.engine.judging.as_scores import audit_scores
    from relgate_tui.engine.judging.studies import build_data
    from relgate_tui.tui.studies.setup import run_jury

    audit = audit_scores(path)
    data, texts = build_data(audit.table, None)
    return run_jury(data, texts, JURY_SPLITS, 3, progress), data, audit


def start(screen: Any, kind: str) -> None:
    """Start building the ``kind`` (``intervals`` | ``irt`` | ``jury``) study of the screen's audit in a thread
    worker."""
    if running(screen):
        screen.notify("a study of this audit is already being computed (Escape cancels it)", severity="warning")
        return
    result = screen.result
    cell = result.cells[screen.study % len(result.cells)]
    judge, variant, alpha = cell.judge, cell.variant, float(result.alpha)
    try:
        path = stored_audit(screen)
    except Exception as exc:  # noqa: BLE001 - shown as a notice
        _notice(screen, kind, exc)
        return

    def work() -> tuple[str, Any, Any, Any]:
        worker = get_current_worker()
        if kind == "irt":
            study, audit = irt_of_audit(path)
            return kind, study, None, audit

        def progress(done: int, total: int) -> None:
            if worker.is_cancelled:
                raise StudyCancelled
            screen.app.call_from_thread(_progress, screen, done, total, kind)

        if kind == "jury":
            return (kind, *jury_of_audit(path, progress))

        return (kind, *intervals_of_audit(path, judge, variant, alpha, progress))

    what = {"intervals": "intervals (paper 001)", "irt": "IRT diagnostics (paper 002)",
            "jury": "jury-on-demand (paper 003)"}[kind]
    screen.sub_title = f"judge audit · results · computing the {what}… (Escape cancels)"
    screen.audit_study["started"] = time.monotonic()  # the estimate of the time left counts from here
    screen.audit_study.update(kind=kind, label=f"{plain(judge, 40)} [{plain(variant, 20)}]"
                              if kind == "intervals" else "")
    screen.run_worker(work, thread=True, exclusive=True, group=GROUP, exit_on_error=False,
                      description=f"audit {what}")


def running(screen: Any) -> bool:
    return any(w.group == GROUP and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
               for w in screen.workers if w.node is screen)


def cancel(screen: Any) -> bool:
    """Cancel a study being computed; True when there was one (``Escape`` then cancels it and goes nowhere)."""
    if not running(screen):
        return False
    screen.workers.cancel_group(screen, GROUP)
    screen.sub_title = "judge audit · results"
    screen.notify("study cancelled", severity="information")
    return True


def _progress(screen: Any, done: int, total: int, kind: str = "intervals") -> None:
    if running(screen):
        started = screen.audit_study.get("started")
        elapsed = None if started is None else time.monotonic() - float(started)
        screen.sub_title = "judge audit · results · " + progress_title(kind, done, total, elapsed)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else (f"{seconds / 60:.1f} min" if seconds < 5400
                                                     else f"{seconds / 3600:.1f} h")


def progress_title(kind: str, done: int, total: int, elapsed: float | None) -> str:
    """The subtitle while a study is computed: where it is (jury: the split; intervals: the seed of the method
    comparison, then of the calibration-size curve), the time so far and ≈ the time left — the steps so far at their
    mean pace: elapsed × (total − done) / done (the steps are seeds of the same size)."""
    if kind == "jury":
        where = f"jury: split {done} of {total}"
    else:
        seeds = max(1, total // 2) if total > SEEDS else total  # the comparison's seeds, then the curve's
        phase = "seed" if done <= seeds else "calibration-size curve, seed"
        where = f"intervals: {phase} {done if done <= seeds else done - seeds} of {seeds}"
    if elapsed is not None and 0 < done < total:
        where += f" · {_duration(elapsed)} so far, ≈ {_duration(elapsed * (total - done) / done)} left"
    return where + " (Escape cancels)"


def finished(screen: Any, worker: Worker[Any], state: WorkerState) -> None:
    """The study worker's end: open the view (still on the results), or a one-line notice of why not."""
    if state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
        return
    screen.sub_title = {"results": "judge audit · results"}.get(screen.state, screen.sub_title)
    if state != WorkerState.SUCCESS:
        if state == WorkerState.ERROR and not isinstance(worker.error, StudyCancelled):
            _notice(screen, screen.audit_study.get("kind", ""), worker.error)
        return
    if screen.state != "results":
        return
    _kind, study, data, audit = cast("tuple[str, Any, Any, Any]", worker.result)
    label = screen.audit_study.get("label", "")
    title = f"{audit.audit_id} · {label}" if label else str(audit.audit_id)
    screen.audit_study["view"] = host(screen.app).open_screen(
        "study_view", study, title, source=audit.path, export_dir=screen.export_folder(), data=data, audit=audit)


def _notice(screen: Any, kind: str, error: BaseException | None) -> None:
    from relgate_tui.errors import RelgateError

    text = " ".join(str(error or "unknown error").split())
    if not isinstance(error, RelgateError):
        text = f"unexpected error ({type(error).__name__}): {text}"
    title = {"intervals": "No intervals for this audit", "irt": "No IRT study for this audit",
             "jury": "No jury study for this audit"}.get(
        kind, "The study could not be computed")
    screen.notify(plain(text, 300), title=title, severity="warning", markup=False, timeout=10)
