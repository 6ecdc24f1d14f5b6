"""A run's result, typed (issue 37 §1): :class:`RunResult` is what :func:`~relgate_tui.engine.certification.finish.
finish` returns and what every reader of a run's ``results.json`` gets — the CLI summary, ``relgate report``, compare,
the importer's notes, ``relgate runs``' fallback. The file is read back as this type, once, here
(:func:`read_result`, the only caller of :meth:`RunStore.read_results <relgate_tui.engine.runs.store.RunStore.
read_results>`; :func:`write_result` the only caller of ``write_results``); no front end indexes the document.

**The document.** :meth:`RunResult.to_json` is the run's ``results.json``: the document ``finish`` built (today's
layout, byte for byte: ``tests/engine/golden/``), with ``"schema": 2`` first. :meth:`RunResult.from_json` reads
either layout: a file without a ``schema`` key is the layout before it (schema 1), where ``reliability_lower_bound``
was the fixed-n Clopper–Pearson bound whatever the watch rule — there the run's bound is taken from its ``gate`` block
when that says how it was watched. The typed fields are parsed from the document once, in :meth:`from_json` (the one
constructor), so they and :meth:`to_json` cannot disagree; the per-item, readout and weighted-conformal sections the
engine's Markdown report renders stay in the document.

**One name per number** (issue 37 §2). ``reliability_lower_bound`` is *the* lower bound of the run: the one its gate
decides on (:func:`relgate_tui.core.certification.gate.watched_lower_bound`) — anytime-valid once a person labelled,
the one-look Clopper–Pearson bound only when every verdict came from a reference answer or at a one-look's planned
labels. The fixed-n Clopper–Pearson value, where it differs, is ``fixed_n_lower_bound``, shown once under its own name
and with :data:`FIXED_N_CONDITION`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from relgate_tui.core.certification.certify import CertificationResult
from relgate_tui.core.certification.gate import WATCH, GateDecision, GateOn, check_gate_on, check_watch
from relgate_tui.engine.runs.store import RunStatus, RunStore
from relgate_tui.errors import DataError

if TYPE_CHECKING:  # the pairwise-judge section's view: its module (and the judge modules) load on first use
    from relgate_tui.engine.certification.judge_section import JudgeSectionView

__all__ = ["SCHEMA", "FIXED_N_CONDITION", "AssistedView", "CallInfo", "ImportInfo", "ItemEntry", "RunResult",
           "TaskInfo", "UsageInfo", "read_result", "write_result", "bound_name", "judge_cost_note"]

SCHEMA = 2
"""The ``schema`` of the documents written now; a document without the key is schema 1 (module docstring)."""
FIXED_N_CONDITION = "valid only if the number of labels was fixed before labelling"


def bound_name(confidence: float, watch: str | None) -> str:
    """The run's bound by name: "95% lower bound" (decided once), "95% anytime lower bound", "95% one-look lower
    bound" — the words of the gate line (:attr:`GateDecision.basis_label`)."""
    kind = {"anytime": "anytime ", "one-look": "one-look "}.get(watch or "", "")
    return f"{confidence:.0%} {kind}lower bound"


def judge_cost_note(assisted: float | None, human: float | None) -> str | None:
    """When the judge-assisted bound is below the human-only bound, what the judge costs, in one line ("the
    judge-assisted bound is 2.6 points below the human-only 77.8%: this judge costs labels here"); else None."""
    if assisted is None or human is None or not assisted < human:
        return None
    return (f"the judge-assisted bound is {100 * (human - assisted):.1f} points below the human-only "
            f"{100 * human:.1f}%: this judge costs labels here")


# ------------------------------------------------------------------------------------------------ coercion helpers
def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _int(x: Any, default: int = 0) -> int:
    return int(x) if isinstance(x, int) and not isinstance(x, bool) else default


def _opt_int(x: Any) -> int | None:
    return int(x) if isinstance(x, int) and not isinstance(x, bool) else None


def _str(x: Any, default: str = "") -> str:
    return x if isinstance(x, str) else default


def _opt_str(x: Any) -> str | None:
    return x if isinstance(x, str) and x else None


def _obj(x: Any) -> Mapping[str, Any]:
    return x if isinstance(x, Mapping) else {}


def _bool(x: Any) -> bool | None:
    return x if isinstance(x, bool) else None


# ---------------------------------------------------------------------------------------------------- sections
@dataclass(frozen=True)
class TaskInfo:
    """The task of the run: its name, the SHA-256 of its file and its number of items."""

    name: str
    sha256: str
    items: int


@dataclass(frozen=True)
class CallInfo:
    """The call counts of the invocation that wrote the result, and the share of K_max samples saved."""

    made: int
    cached: int
    failed: int
    saved_vs_kmax: float | None
    batch_rounds: int = 0
    batched: int = 0


@dataclass(frozen=True)
class UsageInfo:
    """Tokens and cost (per the run's prices; with ``--batch`` the batch price and the direct one)."""

    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    cost_direct: float | None = None
    batch_price: float | None = None
    present: bool = True  # the document has a usage block


@dataclass(frozen=True)
class ItemEntry:
    """One item of the result: its role, samples, classes (answer, count) in rank order, its rank score (a rank,
    ``math.inf`` = no acceptable class, None = not verified), who verified it, its prediction set and its flags."""

    id: str
    role: str
    samples: int
    invalid: int
    classes: tuple[tuple[str, int], ...]
    score: float | None
    verified_by: str | None
    prediction_set: tuple[str, ...]
    skipped: bool = False
    incomplete: bool = False
    not_sampled: bool = False
    flags: tuple[str, ...] = ()
    doc_hash: str | None = None
    has_prediction_set: bool = True  # the document lists the item's prediction set

    @property
    def verified(self) -> bool:
        return self.score is not None

    @property
    def top_tied(self) -> bool:
        """The two most frequent classes have the same count (the leader was drawn by the seeded RNG)."""
        return len(self.classes) >= 2 and self.classes[0][1] == self.classes[1][1]


@dataclass(frozen=True)
class AssistedView:
    """The verification judge's section as a reader shows it: ``lower_bound`` None = not computed (``message``
    says why)."""

    message: str
    estimate: float | None = None
    lower_bound: float | None = None
    left_out_note: str | None = None
    more_labels_message: str | None = None
    kappa_note: str | None = None
    confidence: float = 0.95
    n_labels: int = 0
    n_judged: int = 0
    judge_model: str = ""
    more_labels: int | None = None
    n_agreement: int = 0
    agreement_rate: float | None = None
    kappa: float | None = None
    kappa_interval: tuple[float, float] | None = None
    false_accepts: int = 0
    n_human_no: int = 0
    false_accept_upper: float | None = None
    warning: str | None = None  # a constant verification judge (issue 31 item 7)
    failures: str | None = None  # verify_judge.failures_note: requests that gave no verdict (issue 29 N15)
    method: str = ""
    population: str = ""
    bound_on: str = "task"
    table: tuple[int, int, int, int] = (0, 0, 0, 0)  # judge yes/human yes, yes/no, no/yes, no/no
    p_yes: Mapping[str, tuple[int, float | None]] = field(default_factory=dict)  # id → (judge verdict, P(yes))


def _assisted_view(block: Mapping[str, Any]) -> AssistedView:
    from relgate_tui.engine.judging.verify_judge import failures_note

    judge = _obj(block.get("judge"))
    verdicts: dict[str, tuple[int, float | None]] = {}
    for r in block.get("verdicts") or ():
        if isinstance(r, Mapping) and isinstance(r.get("id"), str):
            verdicts[r["id"]] = (_int(r.get("judge")), _num(r.get("p_yes")))
    base = dict(message=_str(block.get("message")), confidence=float(_num(block.get("confidence")) or 0.95),
                judge_model=_str(judge.get("model")), method=_str(block.get("method")),
                population=_str(block.get("population")), bound_on=_str(block.get("bound_on"), "task"), p_yes=verdicts)
    if _num(block.get("lower_bound")) is None:
        return AssistedView(**base)  # type: ignore[arg-type]
    ag = _obj(block.get("agreement"))
    kappa, table, far = _obj(ag.get("kappa")), _obj(ag.get("table")), _obj(ag.get("false_accept"))
    lo, hi = _num(kappa.get("lower")), _num(kappa.get("upper"))
    return AssistedView(
        **base,  # type: ignore[arg-type]
        estimate=_num(block.get("estimate")), lower_bound=_num(block.get("lower_bound")),
        n_labels=_int(block.get("n_labels")), n_judged=_int(block.get("n_judged")),
        more_labels=_opt_int(block.get("more_labels")) or None, n_agreement=_int(ag.get("n")),
        agreement_rate=_num(ag.get("agreement_rate")), kappa=_num(kappa.get("estimate")),
        kappa_interval=(lo, hi) if lo is not None and hi is not None else None,
        false_accepts=_int(table.get("judge_yes_human_no")), n_human_no=_int(far.get("n_human_no")),
        false_accept_upper=_num(far.get("upper")), failures=failures_note(block),
        warning=_opt_str(block.get("warning")), left_out_note=_opt_str(block.get("left_out_note")),
        more_labels_message=_opt_str(block.get("more_labels_message")), kappa_note=_opt_str(kappa.get("note")),
        table=(_int(table.get("judge_yes_human_yes")), _int(table.get("judge_yes_human_no")),
               _int(table.get("judge_no_human_yes")), _int(table.get("judge_no_human_no"))))


@dataclass(frozen=True)
class ImportInfo:
    """Where an imported run came from (issue 15): the tool, its version, the model, the files and hashes, K, the
    sampling settings, the per-item flags (count per flag, why) and the import's notes."""

    tool: str
    version: str
    model: str
    endpoint: str | None
    k: int | None
    temperature: float | None
    do_sample: bool | None
    seed: int | None
    filter: str | None
    files: tuple[tuple[str, str], ...]  # (path, sha256)
    flags: tuple[tuple[str, int], ...]
    flag_reasons: Mapping[str, str]
    n_flagged: int
    notes: tuple[str, ...]


def _import_info(imp: Mapping[str, Any]) -> ImportInfo:
    files = tuple((_str(f.get("path"), "?"), _str(f.get("sha256"))) for f in imp.get("files") or ()
                  if isinstance(f, Mapping))
    flags = tuple((str(k), _int(v)) for k, v in _obj(imp.get("flags")).items())
    reasons = {str(k): _str(v) for k, v in _obj(imp.get("flag_reasons")).items()}
    return ImportInfo(_str(imp.get("tool"), "?"), _str(imp.get("version")), _str(imp.get("model"), "?"),
                      _opt_str(imp.get("endpoint")), _opt_int(imp.get("k")), _num(imp.get("temperature")),
                      _bool(imp.get("do_sample")), _opt_int(imp.get("seed")), _opt_str(imp.get("filter")), files,
                      flags, reasons, _int(imp.get("n_flagged")),
                      tuple(str(n) for n in imp.get("notes") or () if isinstance(n, str)))


def _score(entry: Mapping[str, Any]) -> float | None:
    if "score" not in entry:
        return None
    s = entry["score"]
    return math.inf if s is None else float(s) if _num(s) is not None else None


def _item(entry: Mapping[str, Any]) -> ItemEntry:
    """An item entry of the document; an id that is not a string reads as "" (such an entry pairs nothing)."""
    classes = tuple((str(c.get("answer", "")), _int(c.get("count"))) for c in entry.get("classes") or ()
                    if isinstance(c, Mapping))
    return ItemEntry(
        _str(entry.get("id")), _str(entry.get("role")), _int(entry.get("samples")), _int(entry.get("invalid")),
        classes, _score(entry), _opt_str(entry.get("verified_by")),
        tuple(str(a) for a in entry.get("prediction_set") or ()), bool(entry.get("skipped")),
        bool(entry.get("incomplete")), bool(entry.get("not_sampled")),
        tuple(str(f) for f in entry.get("flags") or () if isinstance(f, str)), _opt_str(entry.get("doc_hash")),
        isinstance(entry.get("prediction_set"), list))


def _gate_on(value: Any) -> GateOn:
    """A stored ``gate_on`` as the gate it is now (an old config's ``best`` is ``assisted``; unknown: ``bound``)."""
    try:
        return check_gate_on(_str(value, "bound"))
    except ValueError:
        return "bound"


def _gate(block: Mapping[str, Any] | None) -> GateDecision | None:
    if not isinstance(block, Mapping) or _num(block.get("threshold")) is None:
        return None
    passed = _bool(block.get("passed"))
    watch = _str(block.get("watch"), "once")
    return GateDecision(
        threshold=float(block["threshold"]), gate_on=_gate_on(block.get("gate_on")),
        level=_num(block.get("level")), lower_bound=_num(block.get("lower_bound")),
        confidence=float(_num(block.get("confidence")) or 0.95), passed=passed,
        assisted_lower_bound=_num(block.get("assisted_lower_bound")), note=_opt_str(block.get("note")),
        undecided=_opt_str(block.get("summary")) if passed is None else None,
        watch=check_watch(watch) if watch in WATCH else "once", planned=_opt_int(block.get("planned_labels")))


# ------------------------------------------------------------------------------------------------------ the result
@dataclass(frozen=True, eq=False)
class RunResult:
    """A run's result (module docstring). Built by :meth:`from_json` only — from the document ``finish`` made (then
    with ``core``, the core's :class:`CertificationResult`, and what ``finish`` did: ``labels_written``, ``status``)
    or from a ``results.json`` read back (``core`` None)."""

    schema: int
    run_id: str
    model: str
    endpoint: str
    version: str
    task: TaskInfo
    alpha: float
    delta: float | None
    stopping: str
    k_max: int
    confidence: float
    canon_spec: str | None
    canon_source: str | None
    n_cal: int
    n_skipped: int
    n_pending: int
    n_incomplete: int
    n_not_sampled: int
    sampling_complete: bool
    reliability_level: float | None
    reliability_lower_bound: float | None  # *the* bound: the gate's, of ``watch``
    reliability_n: int
    watch: str | None  # "once" | "anytime" | "one-look"; None: a schema-1 document that does not say
    fixed_n_lower_bound: float | None  # the fixed-n Clopper–Pearson value where it differs from the run's bound
    m_star: int | None  # None = ∞ (or no calibration)
    calibration_message: str | None
    coverage: float | None
    conditional_coverage: float | None
    capability_gap: float | None
    avg_set_size: float | None
    tie_rate: float | None
    calls: CallInfo
    usage: UsageInfo
    min_reliability: float | None
    gate_on: GateOn
    passed: bool | None
    gate: GateDecision | None
    worst_level: float | None
    worst_lower_bound: float | None
    sets_message: str | None
    assisted: AssistedView | None
    review: Mapping[str, Any] | None
    imported: ImportInfo | None
    document: dict[str, Any] = field(repr=False)  # the serialised form (to_json); read only by the engine's report
    core: CertificationResult | None = field(default=None, repr=False)
    analysis: Any = field(default=None, repr=False)  # finish()'s Analysis (None when read back)
    labels_written: int = 0
    status: RunStatus | None = None

    # ---------------------------------------------------------------------------------------------- derived
    @functools.cached_property
    def items(self) -> tuple[ItemEntry, ...]:
        """Every item of the result, in the document's order (read from the document on first use: a 10,000-item
        result is not parsed item by item by a reader that needs only its headline)."""
        return tuple(_item(e) for e in self.document.get("items") or () if isinstance(e, Mapping))

    @functools.cached_property
    def judge(self) -> JudgeSectionView | None:
        """The pairwise judge's section (None without one, or when it is malformed), read on first use."""
        section = self.document.get("pairwise_judge")
        if not isinstance(section, Mapping):  # no judge: its modules are never imported
            return None
        try:
            from relgate_tui.engine.certification.judge_section import judge_section_view

            return judge_section_view(section)
        except (KeyError, TypeError, ValueError):
            return None

    @property
    def has_gate(self) -> bool:
        return self.min_reliability is not None or self.passed is not None

    @property
    def verdict(self) -> str:
        """PASS / FAIL / "no gate" (undecided gates say "no gate" only without a threshold)."""
        return "no gate" if self.passed is None else ("PASS" if self.passed else "FAIL")

    @property
    def bound_name(self) -> str:
        """The run's bound by name ("95% anytime lower bound"), as the gate line says it."""
        return bound_name(self.confidence, self.watch)

    @property
    def bound_note(self) -> str | None:
        """Why the run has no bound although items are verified (a one-look before its planned labels)."""
        if self.reliability_lower_bound is None and self.reliability_n and self.gate is not None:
            return self.gate.undecided
        return None

    @property
    def fixed_n_line(self) -> str | None:
        """The fixed-n Clopper–Pearson value, once, under its own name and with its condition; None when it is the
        run's bound."""
        if self.fixed_n_lower_bound is None:
            return None
        return (f"fixed-n Clopper–Pearson lower bound {100 * self.fixed_n_lower_bound:.1f}% ({FIXED_N_CONDITION})")

    @property
    def judge_cost(self) -> str | None:
        """With an assisted gate below the human-only bound: what the judge costs (:func:`judge_cost_note`)."""
        g = self.gate
        if g is None or g.gate_on not in ("assisted", "best"):
            return None
        return judge_cost_note(g.assisted_lower_bound, g.lower_bound)

    @property
    def reliability_successes(self) -> int | None:
        """The verified items whose top answer is acceptable (the level's numerator x of x/(n + 1)): the core's count
        when the result was just computed, else counted from the items (a score ≤ 1); None when the items do not
        account for ``reliability_n`` (a document without its items)."""
        if self.core is not None:
            return self.core.reliability_successes
        verified = [it for it in self.items if it.verified and not it.skipped]
        if len(verified) != self.reliability_n:
            return None
        return sum(1 for it in verified if it.score is not None and it.score <= 1)

    @property
    def top_answers(self) -> dict[str, str]:
        """Each item's top answer ("—" without one)."""
        return {it.id: it.classes[0][0] if it.classes else "—" for it in self.items}

    # ------------------------------------------------------------------------------------------------ (de)serialise
    def to_json(self) -> dict[str, Any]:
        """The run's ``results.json`` (module docstring)."""
        return dict(self.document)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, core: CertificationResult | None = None, analysis: Any = None,
                  labels_written: int = 0, status: RunStatus | None = None) -> RunResult:
        """The result of a document of either layout (module docstring); :class:`DataError` (one line) for one that is
        no JSON object or of a newer schema. Fields missing or of the wrong type read as absent (a run id as ""),
        never as a crash."""
        if not isinstance(doc, Mapping):
            raise DataError("not a relgate result document (not a JSON object)")
        schema = _int(doc.get("schema"), 1)
        if schema > SCHEMA:
            raise DataError(f"result document schema {schema} is newer than this relgate reads ({SCHEMA}); upgrade")
        task, calls, usage = _obj(doc.get("task")), _obj(doc.get("calls")), _obj(doc.get("usage"))
        canon = _obj(doc.get("canon"))
        gate = _gate(doc.get("gate"))
        worst = _obj(doc.get("worst_case"))
        bound = _num(doc.get("reliability_lower_bound"))
        fixed_n = _num(doc.get("reliability_lower_bound_fixed_n"))
        watch: str | None = _opt_str(doc.get("reliability_watch")) or "once"
        if schema == 1:  # reliability_lower_bound was Clopper–Pearson: the run's bound is its gate's when it says
            watch = gate.watch if gate is not None and "watch" in _obj(doc.get("gate")) else None
            if gate is not None and watch is not None and watch != "once":
                bound, fixed_n = gate.lower_bound, bound
        if fixed_n is not None and fixed_n == bound:
            fixed_n = None  # the same number: one name
        assisted = doc.get("judge_assisted")
        imported = doc.get("imported_from")
        review = doc.get("review")
        return cls(
            schema=schema, run_id=_str(doc.get("run_id")), model=_str(doc.get("model"), "?"),
            endpoint=_str(doc.get("endpoint"), "?"), version=_str(doc.get("relgate_version"), "?"),
            task=TaskInfo(_str(task.get("name"), "?"), _str(task.get("sha256")), _int(task.get("items"))),
            alpha=float(_num(doc.get("alpha")) or 0.0), delta=_num(doc.get("delta")),
            stopping=_str(doc.get("stopping")), k_max=_int(doc.get("k_max")),
            confidence=float(_num(doc.get("confidence")) or 0.95),
            canon_spec=_opt_str(canon.get("spec")), canon_source=_opt_str(canon.get("source")),
            n_cal=_int(doc.get("n_cal")), n_skipped=_int(doc.get("n_skipped")), n_pending=_int(doc.get("n_pending")),
            n_incomplete=_int(doc.get("n_incomplete")), n_not_sampled=_int(doc.get("n_not_sampled")),
            sampling_complete=doc.get("sampling_complete") is not False,
            reliability_level=_num(doc.get("reliability_level")), reliability_lower_bound=bound,
            reliability_n=_int(doc.get("reliability_n"), _int(doc.get("n_cal"))), watch=watch,
            fixed_n_lower_bound=fixed_n, m_star=_opt_int(doc.get("m_star")),
            calibration_message=_opt_str(doc.get("calibration_message")), coverage=_num(doc.get("coverage")),
            conditional_coverage=_num(doc.get("conditional_coverage")),
            capability_gap=_num(doc.get("capability_gap")), avg_set_size=_num(doc.get("avg_set_size")),
            tie_rate=_num(doc.get("tie_rate")),
            calls=CallInfo(_int(calls.get("made")), _int(calls.get("cached")), _int(calls.get("failed")),
                           _num(calls.get("saved_vs_kmax")), _int(calls.get("batch_rounds")),
                           _int(calls.get("batched"))),
            usage=UsageInfo(_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")),
                            _num(usage.get("cost")), _num(usage.get("cost_direct")), _num(usage.get("batch_price")),
                            present=bool(usage)),
            min_reliability=_num(doc.get("min_reliability")), gate_on=_gate_on(doc.get("gate_on")),
            passed=_bool(doc.get("passed")), gate=gate, worst_level=_num(worst.get("level")),
            worst_lower_bound=_num(worst.get("lower_bound")),
            sets_message=_opt_str(_obj(doc.get("prediction_sets")).get("message")),
            assisted=_assisted_view(assisted) if isinstance(assisted, Mapping) else None,
            review=review if isinstance(review, Mapping) else None,
            imported=_import_info(imported) if isinstance(imported, Mapping) else None,
            document=dict(doc), core=core, analysis=analysis, labels_written=labels_written, status=status)


def read_result(store: RunStore) -> RunResult | None:
    """The run's last written result (None before the first): the one reader of ``results.json``. A file that is no
    result document raises :class:`DataError` (one line, naming the file)."""
    doc = store.read_results()
    if doc is None:
        return None
    try:
        return RunResult.from_json(doc)
    except DataError as exc:
        raise DataError(f"{store.path / 'results.json'}: {exc}") from None


def write_result(store: RunStore, result: RunResult, **fields: Any) -> None:
    """Write ``result`` as the run's ``results.json`` (and its headline, with ``fields`` such as a new ``status``,
    into the manifest in one write): the one writer."""
    store.write_results(result.to_json(), **fields)
