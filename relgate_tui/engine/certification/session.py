"""One run as the TUI works on it (SPEC §5): the :class:`Session` lifecycle — create or open, sample (iterating the
one pipeline, :func:`relgate_tui.engine.certification.pipeline.run`), spot-check labels, results at any α, export.

The TUI never does statistics or HTTP itself: it calls this module, which is built only from the engine and the
core. Nothing here re-implements their math or their JSON: the result document is
:func:`relgate_tui.engine.certification.finish.finish`'s, the one the CLI writes. Setting up a run lives in
:mod:`relgate_tui.engine.certification.setup`, the screens' view models in :mod:`relgate_tui.engine.certification.views` (both re-exported here
for the screens that import them from this module).

**Viewing changes nothing.** A run opened with :meth:`Session.open` is read without the run's lock and written only
when this session adds to it (a sampling pass, a verdict, an undo): :meth:`Session.save_results` is then the only
writer of ``results.json`` and of the final status.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import EllipsisType
from typing import TYPE_CHECKING, Any, cast

from relgate_tui.core.certification.certify import compute_results
from relgate_tui.core.certification.gate_names import GateOn
from relgate_tui.core.types import INVALID
from relgate_tui.engine.certification import pipeline
from relgate_tui.engine.certification.analysis import Analysis, analyse, audit_items, core_input
from relgate_tui.engine.certification.calls import CallCounts
from relgate_tui.engine.certification.certify import Prepared, judge_section, open_prepared, prepare, reference_classes
from relgate_tui.engine.certification.run_gate import RunGateViews
from relgate_tui.engine.certification.setup import RunSetup, VerificationMode, certify_config
from relgate_tui.engine.certification.views import (
    AuditSummary,
    ItemProgress,
    ItemView,
    LabelOutcome,
    LiveTable,
    ResultsView,
    SamplingUpdate,
    SpotProgress,
    audit_summary,
    build_item_view,
    build_results_view,
)
from relgate_tui.engine.records import canonical_prefix
from relgate_tui.engine.runs.labels import by_a_person
from relgate_tui.engine.runs.listing import looks_simulated
from relgate_tui.engine.runs.store import Label, RunStoreError, json_object

if TYPE_CHECKING:  # pragma: no cover
    from relgate_tui.engine.certification.assisted import AssistedSection
    from relgate_tui.engine.certification.judge_section import JudgeSectionView

__all__ = ["Session", "TUI_MANIFEST_KEY"]

TUI_MANIFEST_KEY = "tui"


class Session(RunGateViews):
    """One run as the TUI works on it: create or open, sample, spot-check, results at any α, export.

    Built on the pipeline phases of :mod:`relgate_tui.engine.certification.certify` (``prepare``, sampling, ``analyse``,
    ``results_document``), the run store and the core. The analysis is computed once (after sampling) and then
    updated one item at a time as labels arrive, so a keypress costs one item's re-analysis plus the core's O(n)
    results — well under the 50 ms budget.
    """

    def __init__(self, prepared: Prepared, *, verification: VerificationMode = "auto", audit_fraction: float = 0.2,
                 cache_dir: Path | None = None, simulated: bool = False) -> None:
        from relgate_tui.engine.judging.certify_judge import (  # cycle: judge ↔ certify
            JudgeCalls,
            verdicts_from_document,
        )

        self.prepared = prepared
        self.config = prepared.config
        self.store = prepared.store
        self.verification: VerificationMode = verification
        self.audit_fraction = audit_fraction
        self.cache_dir = cache_dir
        self.simulated = simulated
        self.calls = CallCounts()
        self._refs = reference_classes(prepared)
        self._items = {item.id: item for item in prepared.items}
        self._roles = prepared.roles
        self._analysis: Analysis | None = None
        self._assisted: tuple[Any, ...] | None = None  # (analysis, confidence, gate, block): see assisted()
        self._by_id: dict[str, Any] = {}
        self._samples: Mapping[str, Sequence[Any]] | None = None
        status = self.store.run_status
        self._sampling_finished = status is not None and status.sampling_done
        self._control = pipeline.RunControl()
        self._modified = False  # True once this session added to the run (samples, verdicts): then it saves results
        self.audit_ids: tuple[str, ...] = ()
        if verification == "audit":
            with_refs = [i for i in prepared.calibration_ids if self._items[i].answers]
            self.audit_ids = audit_items(with_refs, audit_fraction, self.config.seed)
        self._audit_set = frozenset(self.audit_ids)
        previous_calls, previous_judge_calls = self.store.result_calls()
        self._stored_calls = {k: _count(previous_calls.get(k)) for k in ("made", "cached", "failed")}
        # the optional pairwise judge (issue 4 item 3): its verdicts live in the run (judge_verdicts.json)
        self.judge_config = self.config.pairwise_judge_config()
        self._judge_verdicts = (verdicts_from_document(self.store.read_judge_verdicts(), self.judge_config)
                                if self.judge_config is not None else None)
        self._judgements: dict[str, Any] | None = None
        judge_calls = previous_judge_calls if self._judge_verdicts else {}
        self.judge_calls = JudgeCalls(**{k: _count(judge_calls.get(k)) for k in ("made", "cached", "failed")})

    # ------------------------------------------------------------------------------------------- create / open
    @classmethod
    def create(cls, setup: RunSetup, *, runs_dir: Path, cache_dir: Path | None = None) -> Session:
        """Validate ``setup``, load the task and open (or resume) its run under ``runs_dir``. Raises ValueError
        (one line) for bad settings or a task that cannot be loaded."""
        prepared = prepare(certify_config(setup, runs_dir, cache_dir))
        tui = {"verification": setup.verification, "audit_fraction": setup.audit_fraction,
               "simulated": setup.simulated}
        session = cls(prepared, verification=setup.verification, audit_fraction=setup.audit_fraction,
                      cache_dir=cache_dir, simulated=setup.simulated)
        prepared.store.update_manifest(**{TUI_MANIFEST_KEY: {**tui, "audit_items": list(session.audit_ids)}})
        return session

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, cache_dir: Path | None = None,
             simulated_models: Collection[str] = ()) -> Session:
        """Reopen the stored run at ``path`` — no network call, no lock, no write (see the module docstring); a
        renamed or copied run directory opens as itself, a run whose task or labels file moved opens from its own
        copy. Every stored sample (through the run's sample index while it matches samples.jsonl, else parsed) and
        label is read here, so a corrupt file is one line now (ValueError naming the file and how to repair it),
        never a crash later. ``simulated_models``: the demo's model names (the front end's), for ``simulated``."""
        prepared = open_prepared(path)
        if cache_dir is not None:
            prepared.config = replace(prepared.config, cache_dir=str(Path(cache_dir) / "samples"))
        try:
            manifest = prepared.store.manifest
            tui = json_object(manifest, TUI_MANIFEST_KEY)
            cfg = prepared.config  # the mode is in the run's config (open_prepared reads older runs' "tui" too)
            session = cls(prepared, verification=cast(VerificationMode, cfg.verification),
                          audit_fraction=float(cfg.audit_fraction), cache_dir=cache_dir,
                          simulated=tui.get("simulated") is True
                          or looks_simulated(prepared.config.endpoint, prepared.config.model, simulated_models))
            session._samples_by_item(refresh=True)
            session.store.current_labels()
        except (RunStoreError, TypeError, ValueError) as exc:
            prepared.close()
            raise RunStoreError(str(exc)) from None
        return session

    def close(self) -> None:
        self.prepared.close()

    # ---------------------------------------------------------------------------------------------- describing
    @property
    def path(self) -> Path:
        return Path(self.store.path)

    @property
    def run_id(self) -> str:
        return self.store.run_id

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def task_name(self) -> str:
        return self.prepared.task.name

    @property
    def endpoint_label(self) -> str:
        return ("simulated · " if self.simulated else "") + self.config.endpoint

    @property
    def k_max(self) -> int:
        return int(self.config.k_max)

    @property
    def stopping(self) -> str:
        return f"{self.config.stopping} δ={self.config.delta:g}"

    @property
    def alpha(self) -> float:
        return float(self.config.alpha)

    @property
    def n_items(self) -> int:
        return len(self.prepared.items)

    @property
    def title(self) -> str:
        from relgate_tui.core.text import one_line

        sim = " (simulated)" if self.simulated else ""
        return one_line(f"{self.model}{sim} on {self.task_name}")  # untrusted names: shown without controls

    @property
    def short_title(self) -> str:
        from relgate_tui.core.text import one_line

        return one_line(f"{self.model} · {self.task_name}")

    @property
    def imported_tool(self) -> str | None:
        """The tool whose log this run was imported from ("lm-eval", "inspect", "samples"), None for a sampled run."""
        imported = self.store.manifest.get("imported_from")
        tool = imported.get("tool") if isinstance(imported, Mapping) else None
        return tool if isinstance(tool, str) and tool else None

    @property
    def sampling_complete(self) -> bool:
        """True once a sampling pass finished every item (now or in an earlier session: run status "sampled") and,
        with a pairwise judge, the judge has given its verdicts."""
        return self._sampling_finished and not self.judge_pending

    @property
    def uses_judge(self) -> bool:
        return self.judge_config is not None

    @property
    def judge_pending(self) -> bool:
        """True when the run has a pairwise judge whose verdicts are not stored yet."""
        return self.judge_config is not None and self._judge_verdicts is None

    def describe(self) -> str:
        c = self.config
        sim = " (simulated)" if self.simulated else ""
        return (f"{self.model}{sim} at {self.config.endpoint} · {self.task_name} ({self.n_items} items, "
                f"{len(self.prepared.calibration_ids)} calibration) · K_max {c.k_max} · {c.stopping} δ={c.delta:g} "
                f"· T={c.temperature:g} · concurrency {c.concurrency} · run {self.run_id}")

    # ------------------------------------------------------------------------------------------------ sampling
    def _progress_row(self, item_id: str, canonicals: Sequence[str], error: str = "") -> ItemProgress:
        """One live-table row from an item's canonical classes (in sample order)."""

        from relgate_tui.engine.certification.certify import used_sample_count

        n = len(canonicals)
        counts = Counter(c for c in canonicals if c != INVALID)
        leader, top = counts.most_common(1)[0] if counts else (None, 0)
        used = used_sample_count(canonicals, self.prepared.rule, self.k_max) if n else 0
        stopped = 0 < used < self.k_max and (used < n or self.prepared.rule.should_stop(list(counts.values()), n))
        return ItemProgress(
            item_id=item_id,
            role=self._roles.get(item_id, ""),
            n_samples=min(n, self.k_max),
            k_max=self.k_max,
            leader=leader,
            consensus=top / n if n else 0.0,
            stopped=stopped,
            done=stopped or n >= self.k_max,
            error=error,
        )

    async def sample(self) -> AsyncIterator[SamplingUpdate]:
        """One pass of the pipeline (:func:`relgate_tui.engine.certification.pipeline.run`: sampling with bounded concurrency,
        retries and sequential stopping, then the pairwise judge when the run has one), as live-table updates.
        Resumes from the stored samples and the cache. Raises :class:`~relgate_tui.engine.certification.analysis.CertifyError`
        (one line) when the endpoint cannot be reached or every request failed."""
        prepared = self.prepared
        table = LiveTable(prepared.items, self._roles, self.k_max, self._samples_by_item(refresh=True))
        paused: str | None = None
        batch: str | None = None  # a --batch round's progress line (issue 32)
        total = len(prepared.items)
        last: pipeline.Sampling | None = None
        base = CallCounts(self.calls.made, self.calls.cached, self.calls.failed)

        def update(items: tuple[ItemProgress, ...] = (), messages: tuple[str, ...] = (),
                   judge: pipeline.Judging | None = None) -> SamplingUpdate:
            done, used = (last.done_items, last.samples_used) if last else (0, 0)
            c = last.calls if last else CallCounts()
            j = judge.calls if judge else CallCounts()
            return SamplingUpdate(
                items=items, items_done=done if judge is None else total, items_total=total,
                calls_made=base.made + c.made + j.made, calls_cached=base.cached + c.cached + j.cached,
                calls_failed=base.failed + c.failed + j.failed, samples_used=used,
                saved=1.0 - used / (done * self.k_max) if done else 0.0, paused=paused, errors=messages,
                judge_done=judge.done if judge else 0, judge_total=judge.total if judge else 0,
                judge_name=judge.which if judge else "pairwise", batch=batch)

        self._modified = True
        try:
            async for event in pipeline.run(prepared, control=self._control):
                if isinstance(event, pipeline.Sampling):
                    last, batch = event, event.batch or batch  # a --batch round's counts: the progress line, no note
                    changed = table.apply(event.event)
                    note = () if event.batch or not event.message else (event.message,)
                    yield update((table.row(changed),) if changed else (), note)
                elif isinstance(event, pipeline.EndpointDown):  # "the server is busy: …" or "endpoint unreachable"
                    paused = ("the server is busy — lower the concurrency" if event.message.startswith("the server is busy")
                              else "endpoint unreachable")
                    yield update(messages=(event.message,))
                elif isinstance(event, pipeline.EndpointUp):
                    paused = None
                    yield update(messages=(event.message,))
                elif isinstance(event, pipeline.Judging):
                    yield update(messages=(event.message,) if event.message else (), judge=event)
                elif isinstance(event, pipeline.Done):
                    self._add_calls(event.calls)
                    last = None
                    base = CallCounts(self.calls.made, self.calls.cached, self.calls.failed)
                    self._sampling_finished = True
                    if event.judge_calls is not None:
                        from relgate_tui.engine.judging.certify_judge import JudgeCalls, verdicts_from_document  # cycle

                        self.judge_calls = JudgeCalls(event.judge_calls.made, event.judge_calls.cached,
                                                      event.judge_calls.failed)
                        self._judge_verdicts = verdicts_from_document(self.store.read_judge_verdicts(),
                                                                      self.judge_config)
                        self._judgements = None
        finally:
            if last is not None:  # stopped or failed mid-pass: count what was made
                self._add_calls(last.calls)
            self._samples = None
            self._analysis = None

    def _add_calls(self, calls: CallCounts) -> None:
        self.calls.made += calls.made
        self.calls.cached += calls.cached
        self.calls.failed += calls.failed

    def judge_results(self, alpha: float, *, gate: float | None = None, confidence: float = 0.95
                      ) -> dict[str, Any] | None:
        """The pairwise judge's section at ``alpha`` (the ``pairwise_judge`` part of ``relgate certify``'s JSON:
        both rankings side by side, cycles, position bias, per-item tournaments), or None without stored verdicts.
        Per-item judgements are computed once; the labels only change the calibration (cheap)."""
        from relgate_tui.engine.judging.certify_judge import judge_items  # cycle: judge ↔ certify

        cfg = self.judge_config
        if cfg is None or self._judge_verdicts is None:
            return None
        a = self.analysis()
        if self._judgements is None:
            self._judgements = judge_items({ia.item_id: ia.ranked for ia in a.items}, self._judge_verdicts,
                                           cfg.max_classes)
        calls = self.judge_calls if (self.judge_calls.made or self.judge_calls.cached or self.judge_calls.failed) \
            else None
        return judge_section(self.prepared, a, alpha=alpha, confidence=confidence, gate=gate, calls=calls,
                             judgements=self._judgements)

    def judge_view(self, alpha: float, *, gate: float | None = None, confidence: float = 0.95
                   ) -> JudgeSectionView | None:
        """:meth:`judge_results` as the typed view the TUI reads (None without stored verdicts)."""
        from relgate_tui.engine.certification.judge_section import judge_section_view

        section = self.judge_results(alpha, gate=gate, confidence=confidence)
        return None if section is None else judge_section_view(section)

    def pause_sampling(self) -> bool:
        """Stop issuing new requests (in-flight ones complete); False when no pass is running."""
        return self._control.pause()

    def resume_sampling(self) -> bool:
        return self._control.resume()

    def item_progress(self) -> list[ItemProgress]:
        """The live table's rows as stored now (a resumed run starts from its stored samples)."""
        samples = self._samples_by_item(refresh=True)
        rows = []
        for item in self.prepared.items:
            stored = samples.get(item.id, [])
            prefix = canonical_prefix(stored)
            rows.append(self._progress_row(item.id, prefix))
        return rows

    # ------------------------------------------------------------------------------------------------ analysis
    def _samples_by_item(self, refresh: bool = False) -> Mapping[str, Sequence[Any]]:
        if self._samples is None or refresh:
            self._samples = self.store.samples_by_item()
        return self._samples

    def has_samples(self) -> bool:
        """True when at least one sample is stored (read from the run store)."""
        return any(self.store.samples_by_item().values())

    def _refs_for(self, item: Any) -> set[str] | None:
        """Reference classes used for verification: none for calibration items in "human" mode (the human
        verifies them; references still validate the deployment items)."""
        if self.verification == "human" and self._roles.get(item.id) == "calibration":
            return None
        return self._refs(item)

    def _analyse(self, items: Sequence[Any], labels: Mapping[str, Label]) -> Analysis:
        samples = self._samples_by_item()
        return analyse(
            replace(self.prepared.task, items=tuple(items)),
            {i.id: self._roles[i.id] for i in items},  # unsampled items stay: "not sampled", as in the CLI
            samples,
            labels,
            canonicalize_refs=self._refs_for,
            rule=self.prepared.rule,
            k_max=self.k_max,
            seed=self.config.seed,
        )

    def analysis(self, refresh: bool = False) -> Analysis:
        """The pipeline's :class:`~relgate_tui.engine.certification.analysis.Analysis` of the run (cached; ``refresh`` re-reads
        the samples and labels from the run store)."""
        if self._analysis is None or refresh:
            self._samples_by_item(refresh=refresh or self._samples is None)
            self._analysis = self._analyse(self.prepared.items, self.store.current_labels())
            self._judgements = None
            self._by_id = {a.item_id: a for a in self._analysis.items}
        return self._analysis

    def _reanalyse_item(self, item_id: str) -> None:
        """Re-verify one item after its label changed and rebuild the core input (the other items are unchanged)."""
        current = self.analysis()
        label = self.store.current_labels().get(item_id)
        one = self._analyse([self._items[item_id]], {item_id: label} if label is not None else {})
        if not one.items:
            return
        new = one.items[0]
        items = tuple(new if a.item_id == item_id else a for a in current.items)
        self._analysis = Analysis(items, core_input(items, self.k_max), current.k_max, current.usage)
        self._by_id[item_id] = new

    # ---------------------------------------------------------------------------------------------- spot-check
    def human_items(self) -> list[str]:
        """Calibration items (with samples) a human verifies under this run's verification mode, in the seeded
        split order: items without references, every calibration item in "human" mode, and the audit sample."""
        self.analysis()
        out = []
        for item_id in self.prepared.calibration_ids:
            a = self._by_id.get(item_id)
            if a is not None and a.sampled and (not a.has_reference or item_id in self._audit_set):
                out.append(item_id)
        return out

    def pending_items(self) -> list[str]:
        """:meth:`human_items` still without a human (or labels-file) verdict."""
        return [i for i in self.human_items() if not by_a_person(self._by_id[i].verified_by)]

    def item_view(self, item_id: str) -> ItemView:
        """Question, ranked candidates (INVALID apart), raw samples and verdicts of one item."""
        self.analysis()
        return build_item_view(self._items[item_id], self._roles.get(item_id, ""), self._by_id.get(item_id),
                               self._samples_by_item().get(item_id, []), self.store.current_labels().get(item_id),
                               audit=item_id in self._audit_set)

    def label(self, item_id: str, *, rank: int | None = None, none: bool = False,
              skip: bool = False) -> LabelOutcome:
        """Persist a human verdict (written and fsync-ed by the run store before this returns), then update the
        analysis. ``rank`` must name one of the item's candidates. On an audited item a verdict whose score differs
        from the reference's is stored as overriding it (the spot-check asks before it calls this)."""
        self.analysis()
        if item_id not in self._roles:
            raise ValueError(f"unknown item {item_id!r}")
        a = self._by_id.get(item_id)
        if rank is not None and (a is None or not 1 <= rank <= a.ranked.n_classes):
            raise ValueError(f"item {item_id!r} has no candidate of rank {rank}")
        lab = Label(item_id, rank=rank, none=none, skip=skip, source="human")
        disagrees = (item_id in self._audit_set and not skip and a is not None and a.reference_score is not None
                     and lab.score != a.reference_score)
        lab = replace(lab, ts=time.time(), overrides_reference=disagrees)  # ts given: the store keeps every field
        self.store.append_label(lab)
        self._modified = True
        self._reanalyse_item(item_id)
        return LabelOutcome(item_id, lab.kind, rank, disagrees)

    def undo(self) -> str | None:
        """Cancel the most recent verdict still in effect (an undo event, fsync-ed); returns its item id, or None
        when there is nothing to undo."""
        lab = self.store.undo_last_label()
        if lab is None:
            return None
        self._modified = True
        if lab.item in self._items:
            self._reanalyse_item(lab.item)
        return lab.item

    def audit(self) -> AuditSummary:
        """The audit so far: audit items with a human verdict (skips excluded) and those that differ from the
        automatic reference verdict, by name."""
        self.analysis()
        return audit_summary(self.audit_ids, self._by_id, self.store.current_labels())

    def audit_counts(self) -> tuple[int, int]:
        """(audited, disagreements) of :meth:`audit`."""
        s = self.audit()
        return s.audited, len(s.disagreements)

    def spot_progress(self, confidence: float = 0.95) -> SpotProgress:
        """Items verified by hand so far and the reliability level (with its bound) over every verified item."""
        items = self.human_items()
        done = [i for i in items if by_a_person(self._by_id[i].verified_by)]
        skipped = sum(1 for i in done if self._by_id[i].skipped)
        res = compute_results(self.analysis().input, self.alpha, confidence)
        audited, disagreements = self.audit_counts()
        has_n = res.reliability_n > 0
        return SpotProgress(
            done=len(done),
            total=len(items),
            skipped=skipped,
            n=res.reliability_n,
            reliability_level=res.reliability_level if has_n else None,
            fixed_n_lower_bound=res.fixed_n_lower_bound if has_n else None,
            confidence=confidence,
            audited=audited,
            disagreements=disagreements,
            successes=res.reliability_successes if has_n else 0,
        )

    def assisted(self, confidence: float = 0.95, gate: float | None = None) -> AssistedSection | None:
        """The verification judge's section now (issue 22; None without a verification judge): the live panel's bound
        and "≈ m more labels" (with ``gate``). The judge's verdicts are read from the run, never shown by this."""
        from relgate_tui.engine.certification.assisted import assisted_section

        a = self.analysis()  # a new object after every label and every pass: the cache key
        if self._assisted is None or self._assisted[0] is not a or self._assisted[1:3] != (confidence, gate):
            self._assisted = (a, confidence, gate, assisted_section(self.prepared, a, confidence=confidence, gate=gate))
        return self._assisted[3]

    def verify_verdict(self, item_id: str) -> Any:
        """The verification judge's stored verdict on ``item_id`` (None without one). The spot-check reveals it only
        after the item was labelled (the label is blind)."""
        from relgate_tui.engine.judging.verify_judge import config_of, verdicts_from_document

        cfg = config_of(self.prepared.config)
        if cfg is None:
            return None
        verdicts = verdicts_from_document(self.store.read_verify_verdicts(), cfg)
        return None if verdicts is None else verdicts.get(item_id)

    # ------------------------------------------------------------------------------------------------- results
    def call_counts(self) -> CallCounts:
        """Calls of this session's sampling passes; for a run only reopened, the counts its last result stored."""
        c = self.calls
        if c.made or c.cached or c.failed:
            return c
        return CallCounts(self._stored_calls["made"], self._stored_calls["cached"], self._stored_calls["failed"])

    def results(self, alpha: float, *, gate: float | None = None, gate_on: GateOn = "level",
                confidence: float = 0.95, curve_alphas: Sequence[float] | None = None) -> ResultsView:
        """Every number of the results screen at ``alpha`` (the core's ``compute_results``; sub-millisecond), the gate
        decided by the one gate rule (with this run's judge-assisted bound for "assisted"/"best"). Unsampled items
        keep their row ("not sampled"; no score, no coverage)."""
        a = self.analysis()
        return build_results_view(a, self._items, alpha, gate=gate, gate_on=gate_on, confidence=confidence,
                                  curve_alphas=curve_alphas, calls=self.call_counts(), audit=self.audit(),
                                  assisted=self.assisted_bound(gate_on, confidence, gate),
                                  one_look=self.config.one_look)

    def document(self, alpha: float | None = None, *, gate: float | None = None,
                 confidence: float = 0.95, gate_on: GateOn | None = None) -> dict[str, Any]:
        """The result document at ``alpha`` — the end of a run viewed without writing
        (:func:`~relgate_tui.engine.certification.finish.finish` with ``write=False``), the JSON ``relgate certify``
        writes (``gate_on`` None: the run's configured ``gate_on``)."""
        return self._finish(alpha, gate=gate, confidence=confidence, gate_on=gate_on, write=False).document

    def _finish(self, alpha: float | None, *, gate: float | None, confidence: float, gate_on: GateOn | None,
                write: bool) -> Any:
        from relgate_tui.engine.certification.finish import finish

        a = self.alpha if alpha is None else alpha
        self.judge_results(a, gate=gate, confidence=confidence)  # the per-item judgements, computed once
        jc = self.judge_calls
        return finish(self.prepared, calls=self.call_counts(), alpha=a, confidence=confidence, gate=gate,
                      gate_on=gate_on, write=write, analysis=self.analysis(),
                      judge_calls=jc if (jc.made or jc.cached or jc.failed) else None,
                      judgements=self._judgements, pending=len(self.pending_items()),
                      set_status=self.sampling_complete)

    def save_results(self, alpha: float | None = None, *, gate: float | None | EllipsisType = ...,
                     confidence: float | None = None, gate_on: GateOn | None = None) -> dict[str, Any]:
        """The result document; written (``finish``) as the run's ``results.json`` (what ``relgate runs`` lists) with
        the run's status only when this session added to the run — viewing a run never rewrites it. Decided against
        the run's own :attr:`gate` (``gate`` given: that threshold, e.g. a test's fixture, never a viewer's)."""
        own = self.gate
        g = own.threshold if isinstance(gate, EllipsisType) else gate
        doc = self._finish(alpha, gate=g, confidence=own.confidence if confidence is None else confidence,
                           gate_on=gate_on or own.gate_on, write=self._modified).document
        self.forget_gate()  # written: the run's gate is the one its results now hold
        return doc

    def export(self, fmt: str, *, alpha: float | None = None, gate: float | None | EllipsisType = ...) -> Path:
        """Export the results (``fmt`` "json", "csv" or "md"; the run's own gate) into ``<run>/exports/``; returns
        the file's path."""
        from relgate_tui.engine.certification.report import FORMATS, write_report

        if fmt not in FORMATS:
            raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
        a = self.alpha if alpha is None else alpha
        doc = self.save_results(a, gate=gate)
        name = f"{self.run_id}-alpha{a:.2f}.{fmt}"
        return write_report(doc, fmt, self.path / "exports" / name,
                            simulated_models=(self.config.model,) if self.simulated else ())


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
