"""Compare two stored runs item by item (issue 15 §2): the IO half of ``relgate compare`` (statistics in
:mod:`relgate_tui.core.certification.paired`).

Before anything is counted, the paired items must be the same items (issue 31 item 3): an item is its document, its
id and its reference answer, not the prompt a harness rendered from it — lm-eval stores "Q: …\nA:", Inspect the raw
input, and the same model under two harnesses is exactly what people compare. A pair is the same item when it was
paired by document hash, or when its reference answers agree (where both runs have one) and one run's question text
contains the other's (case-folded, whitespace collapsed; :func:`same_item`). Two runs on different tasks that happen
to share ids are refused with one line; paired items whose prompts differ (:func:`prompt_hash`: the wording the model saw) are counted and
noted (``n_prompts_differ``, ``notes``). A run compared with itself says so.
Items are paired by the tools' document hashes when every item of both runs carries one (lm-eval imports: the
hash of the document, stable across runs and models) and they are unique, else by item id; ``--match question``
pairs them by question text instead (each run's own task copy; a question asked twice in a run pairs nothing), and
a comparison where nothing pairs names both runs' id spaces and how many items question text would pair. An item counts when it is
verified in both runs (its result entry has a ``score``: rank, or null = no acceptable class); it is correct when
its score is 1 (the top answer is acceptable — the event behind the reliability level). Set sizes are the sizes of
each run's stored prediction sets (each at its own M*).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from relgate_tui import __version__
from relgate_tui.core.certification.paired import more_paired_items, paired_table, paired_test, set_size_difference
from relgate_tui.core.text import counted, one_line
from relgate_tui.engine.certification.result import ItemEntry, RunResult
from relgate_tui.errors import DataError

__all__ = ["compare_runs", "compare_documents", "paired_view", "PairedView", "ItemChange", "EXIT_CODES",
           "MATCH_CHOICES", "question_hash", "prompt_hash", "no_shared_items", "same_item", "same_run_note"]

EXIT_CODES = {"not_worse": 0, "worse": 1, "undecided": 3}


def _num(x: float) -> float | None:
    return None if isinstance(x, float) and math.isnan(x) else float(x)


MATCH_CHOICES = ("auto", "question")


def _question_key(text: str) -> str:
    """Question text as a pairing key: case-folded, whitespace collapsed."""
    return " ".join(str(text).split()).casefold()


def _keyed(r: RunResult, by_hash: bool, questions: Mapping[str, str] | None = None) -> dict[str, ItemEntry]:
    """Items keyed by document hash, by id, or (``questions``: id → question text) by question text; a question
    asked twice in one run pairs nothing (it is left out)."""
    out: dict[str, ItemEntry] = {}
    repeated: set[str] = set()
    for entry in r.items:
        if not entry.id:
            continue
        if questions is not None:
            text = questions.get(entry.id)
            if not text or not text.strip():
                continue
            key = _question_key(text)
            if key in out:
                repeated.add(key)
            out[key] = entry
        else:
            out[str(entry.doc_hash) if by_hash else entry.id] = entry
    for key in repeated:
        del out[key]
    return out


def id_spaces(a: RunResult, b: RunResult, n: int = 3) -> str:
    """"A's ids: 0, 1, 2 …; B's ids: add3-0001, …" — what each run calls its items (for a "share no item" message)."""
    def sample(r: RunResult) -> str:
        ids = [e.id for e in r.items if e.id]
        return ", ".join(one_line(i)[:40] for i in ids[:n]) + (" …" if len(ids) > n else "") if ids else "none"

    return f"A's ids: {sample(a)}; B's ids: {sample(b)}"


def _hashable(r: RunResult) -> bool:
    hashes = [e.doc_hash for e in r.items]
    return bool(hashes) and all(hashes) and len(set(hashes)) == len(hashes)


def question_hash(question: str, choices: Any = ()) -> str:
    """SHA-256 of an item's question text (and its choices, when it has some): what two runs must share for their
    items to be compared."""
    return hashlib.sha256(json.dumps([question, list(choices or ())], ensure_ascii=False).encode()).hexdigest()


def prompt_hash(item: Any) -> str:
    """:func:`question_hash` of the wording a task item's model saw: its last user message when the item carries the
    messages that were sent (an Inspect import whose solver rendered the input, a chat task), else its question (an
    lm-eval import's question is the prompt lm-eval rendered). Two harnesses that both sent "Q: …\nA:" agree."""
    sent = next((m.get("content") for m in reversed(item.messages or ()) if m.get("role") == "user"), None)
    return question_hash(sent if isinstance(sent, str) else item.question, item.choices)


def same_item(question_a: str | None, question_b: str | None, refs_a: Any = (), refs_b: Any = ()) -> bool:
    """Whether two paired items are the same item: their reference answers agree where both have one (as sets of
    stripped strings) and one question text contains the other (case-folded, whitespace collapsed) — a rendered
    prompt ("Q: What is 2 + 2?\nA:") contains the raw question."""
    ra = {str(r).strip() for r in refs_a or ()}
    rb = {str(r).strip() for r in refs_b or ()}
    if ra and rb and ra != rb:
        return False
    qa, qb = _question_key(question_a or ""), _question_key(question_b or "")
    return bool(qa and qb) and (qa in qb or qb in qa)


def _identity_check(doc_a: RunResult, doc_b: RunResult, a: Mapping[str, ItemEntry],
                    b: Mapping[str, ItemEntry], shared: list[str], by_hash: bool,
                    questions: tuple[Mapping[str, str], Mapping[str, str]] | None,
                    texts: tuple[Mapping[str, str], Mapping[str, str]] | None,
                    references: tuple[Mapping[str, Any], Mapping[str, Any]] | None) -> list[str]:
    """Refuse (one-line :class:`DataError`) when paired items are not the same items; return the paired keys whose
    prompts differ (the items being the same)."""
    if questions is None:
        return []
    qa, qb = questions
    differ = [k for k in shared if qa.get(a[k].id) != qb.get(b[k].id)]
    if by_hash or not differ:
        return differ  # one document hash: one document, whatever prompt each harness rendered from it
    ta, tb = texts if texts is not None else ({}, {})
    ra, rb = references if references is not None else ({}, {})
    other = [k for k in differ
             if not same_item(ta.get(a[k].id), tb.get(b[k].id), ra.get(a[k].id), rb.get(b[k].id))]
    if other:
        first = a[other[0]].id
        task_a, task_b = doc_a.task.name, doc_b.task.name
        raise DataError(f"{len(other)} of {len(shared)} paired items ask different questions (first: item "
                        f"{one_line(str(first), 60)!r}; tasks {one_line(str(task_a), 40)!r} and "
                        f"{one_line(str(task_b), 40)!r}): these runs are not on the same task; not compared")
    return differ


def compare_documents(doc_a: RunResult, doc_b: RunResult, *, margin: float = 0.05,
                      confidence: float = 0.95, match: str = "auto",
                      questions: tuple[Mapping[str, str], Mapping[str, str]] | None = None,
                      question_texts: tuple[Mapping[str, str], Mapping[str, str]] | None = None,
                      references: tuple[Mapping[str, Any], Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The comparison document of two runs' results (their ``results.json`` read as :class:`RunResult`). ``match`` "auto" pairs by
    document hash (when both runs carry unique ones) else by id; "question" pairs by question text
    (``question_texts``: each run's id → question). ``questions``: each run's ``item id → prompt hash``
    (:func:`prompt_hash`); ``references``: each run's ``item id → reference answers``. Paired items that are not
    the same items (:func:`same_item`) are refused (one-line :class:`DataError`): the runs do not ask the same thing,
    whatever their ids say; the same items under different prompts are compared, with a note. With ``question_texts`` given, ``n_shared_by_question`` says
    how many items question text would pair (the offer made when ids pair nothing)."""
    if match not in MATCH_CHOICES:
        raise DataError(f"match must be one of {', '.join(MATCH_CHOICES)}, got {match!r}")
    by_hash = match == "auto" and _hashable(doc_a) and _hashable(doc_b)
    if match == "question":
        if question_texts is None:
            raise DataError("matching by question text needs each run's questions")
        a, b = _keyed(doc_a, False, question_texts[0]), _keyed(doc_b, False, question_texts[1])
    else:
        a, b = _keyed(doc_a, by_hash), _keyed(doc_b, by_hash)
    shared = [k for k in a if k in b]
    prompts_differ = _identity_check(doc_a, doc_b, a, b, shared, by_hash, questions, question_texts, references)
    notes = []
    if doc_a.run_id and doc_a.run_id == doc_b.run_id:
        notes.append("A and B are the same run: every paired item agrees with itself")
    if prompts_differ:
        first = one_line(a[prompts_differ[0]].id, 60)
        notes.append(f"the prompts differ on {len(prompts_differ)} of {len(shared)} paired items (first: item "
                     f"{first!r}), e.g. one harness's rendered prompt and another's raw input: the items are the "
                     "same (document, id, reference), the wording the models saw is not")
    by_question = None
    if question_texts is not None:
        ta, tb = _keyed(doc_a, False, question_texts[0]), _keyed(doc_b, False, question_texts[1])
        by_question = sum(1 for k in ta if k in tb)
    ids, a_ok, b_ok, size_a, size_b = [], [], [], [], []
    unverified = 0
    for k in shared:
        ea, eb = a[k], b[k]
        if not ea.verified or not eb.verified or ea.skipped or eb.skipped:
            unverified += 1
            continue
        ids.append((ea.id, eb.id))
        a_ok.append(ea.score == 1)
        b_ok.append(eb.score == 1)
        size_a.append(float(len(ea.prediction_set)) if ea.has_prediction_set else math.nan)
        size_b.append(float(len(eb.prediction_set)) if eb.has_prediction_set else math.nan)
    table = paired_table(a_ok, b_ok)
    test = paired_test(table, margin, confidence)
    more, more_message = None, None
    if test.decision == "undecided":  # issue 33 §6: never more than the shared items left unpaired
        mp = more_paired_items(table, unverified, margin, confidence)
        more, more_message = mp.more, mp.message
    sizes = set_size_difference(size_a, size_b)
    lost = [ia for (ia, _), x, y in zip(ids, a_ok, b_ok, strict=True) if x and not y]
    won = [ia for (ia, _), x, y in zip(ids, a_ok, b_ok, strict=True) if y and not x]
    n = table.n

    def run_info(r: RunResult, keyed: Mapping[str, Any]) -> dict[str, Any]:
        return {"run_id": r.run_id, "model": r.model, "task": r.task.name, "items": len(keyed),
                "reliability_level": r.reliability_level,
                "reliability_lower_bound": r.reliability_lower_bound}  # the run's bound, its gate's

    return {
        "relgate_version": __version__,
        "run_a": run_info(doc_a, a),
        "run_b": run_info(doc_b, b),
        "matched_by": "question" if match == "question" else ("doc_hash" if by_hash else "id"),
        "n_shared": len(shared),
        "n_shared_by_question": by_question,
        "n_prompts_differ": len(prompts_differ),
        "notes": notes,
        "n_unverified": unverified,
        "n": n,
        "margin": float(margin),
        "confidence": float(confidence),
        "table": {"both_right": table.n11, "b_lost": table.n10, "b_won": table.n01, "both_wrong": table.n00},
        "accuracy_a": _num(test.accuracy_a),
        "accuracy_b": _num(test.accuracy_b),
        "reliability_level_a": (table.n11 + table.n10) / (n + 1) if n else None,  # no number from nothing
        "reliability_level_b": (table.n11 + table.n01) / (n + 1) if n else None,
        "difference": {"estimate": _num(test.difference), "lower": test.lower, "upper": test.upper,
                       "confidence": test.confidence},
        "test": {"method": test.method, "p_not_worse": test.p_not_worse, "p_worse": test.p_worse,
                 "level": test.gamma},
        "decision": test.decision,
        "more_items_to_decide": more,
        "more_items_message": more_message,
        "set_size": {"n": sizes.n, "mean_a": _num(sizes.mean_a), "mean_b": _num(sizes.mean_b),
                     "mean_difference": _num(sizes.mean_difference), "larger": sizes.larger,
                     "smaller": sizes.smaller, "equal": sizes.equal},
        "lost": lost,
        "won": won,
    }


@dataclass(frozen=True)
class ItemChange:
    """An item one run got right and the other wrong: ``change`` "lost" (B wrong, A right) or "won", and each run's
    top answer ("—" without one)."""

    item_id: str
    change: str
    top_a: str
    top_b: str


@dataclass(frozen=True)
class PairedView:
    """What a front end shows of a comparison (:func:`compare_documents`): the paired gate's decision, the paired
    items, B's losses and wins, the accuracy difference B − A with its interval, and the items that changed."""

    decision: str  # "not_worse" | "worse" | "undecided"
    n: int
    margin: float
    b_lost: int
    b_won: int
    estimate: float | None
    lower: float | None
    upper: float | None
    more_items_to_decide: int | None  # undecided: about how many more items would decide (None: none would)
    changes: tuple[ItemChange, ...]  # the lost items, then the won ones
    matched_by: str  # "doc_hash" | "id" | "question"
    no_pairs: str | None  # nothing paired: why, in one line (both id spaces, the offer to pair by question)
    notes: tuple[str, ...] = ()  # the same run twice; prompts that differ on the same items
    more_message: str | None = None  # undecided: core.paired.more_paired_items' line


def paired_view(doc_a: RunResult, doc_b: RunResult, *, margin: float = 0.05,
                confidence: float = 0.95, match: str = "auto",
                questions: tuple[Mapping[str, str], Mapping[str, str]] | None = None,
                question_texts: tuple[Mapping[str, str], Mapping[str, str]] | None = None,
                references: tuple[Mapping[str, Any], Mapping[str, Any]] | None = None) -> PairedView:
    """:func:`compare_documents` of two runs' results (the keywords as there) as the typed view the TUI reads."""
    out = compare_documents(doc_a, doc_b, margin=margin, confidence=confidence, match=match, questions=questions,
                            question_texts=question_texts, references=references)
    tops = [doc_a.top_answers, doc_b.top_answers]
    d, t = out["difference"], out["table"]
    changes = tuple(ItemChange(i, change, tops[0].get(i, "—"), tops[1].get(i, "—"))
                    for change in ("lost", "won") for i in out[change])
    return PairedView(out["decision"], out["n"], out["margin"], t["b_lost"], t["b_won"], d["estimate"], d["lower"],
                      d["upper"], out["more_items_to_decide"], changes, out["matched_by"],
                      no_shared_items(out, doc_a, doc_b) if out["n_shared"] == 0 else None, tuple(out["notes"]),
                      out.get("more_items_message"))


def no_shared_items(out: Mapping[str, Any], doc_a: RunResult, doc_b: RunResult) -> str:
    """Why nothing paired, in one line: both id spaces, and what question text would pair."""
    msg = f"share no item (matched by {out['matched_by']}; {id_spaces(doc_a, doc_b)})"
    n_q = out.get("n_shared_by_question")
    if out["matched_by"] != "question" and n_q:
        msg += f"; {counted(n_q, 'item')} {'pairs' if n_q == 1 else 'pair'} by question text: --match question"
    return msg


def compare_runs(run_a: str, run_b: str, *, margin: float = 0.05, confidence: float = 0.95,
                 runs_root: str | None = None, match: str = "auto") -> dict[str, Any]:
    """Open two runs (path, id or unique id prefix) and compare their stored results."""
    from relgate_tui.engine.certification.certify import open_prepared
    from relgate_tui.engine.certification.result import read_result
    from relgate_tui.engine.runs.listing import open_run
    from relgate_tui.engine.runs.paths import runs_dir

    docs: list[RunResult] = []
    questions: list[dict[str, str]] = []
    texts: list[dict[str, str]] = []
    paths = []
    refs: list[dict[str, tuple[str, ...]]] = []
    for run in (run_a, run_b):
        store = open_run(run, runs_dir(runs_root))
        paths.append((store.path, store.run_id))
        result = read_result(store)
        if result is None:
            raise DataError(f"{store.path}: run {store.run_id} has no results yet (status: {store.status})")
        docs.append(result)
        prepared = open_prepared(store.path)
        try:
            questions.append({it.id: prompt_hash(it) for it in prepared.items})
            texts.append({it.id: it.question for it in prepared.items})
            refs.append({it.id: tuple(it.answers) for it in prepared.items})
        finally:
            prepared.close()
    out = compare_documents(docs[0], docs[1], margin=margin, confidence=confidence, match=match,
                            question_texts=(texts[0], texts[1]),
                            questions=(questions[0], questions[1]), references=(refs[0], refs[1]))
    if out["n_shared"] == 0:
        raise DataError(f"runs {run_a} and {run_b} {no_shared_items(out, docs[0], docs[1])}")
    note = same_run_note(paths[0], paths[1])
    if note is not None:  # one run twice: its directory or its run id (issue 29); said once, first
        out["note"] = note
        out["notes"] = [note] + [n for n in out.get("notes") or () if not n.startswith("A and B are the same run")]
    return out


def same_run_note(a: tuple[Any, str], b: tuple[Any, str]) -> str | None:
    """The note owed when A and B are one run (the same directory, or two copies of one run id): every item agrees
    with itself, so "not worse" says nothing about any change. ``a``, ``b``: (run directory, run id)."""
    import os

    try:
        same_dir = os.path.samefile(a[0], b[0])
    except OSError:
        same_dir = False
    if same_dir:
        return (f"A and B are the same run ({one_line(str(a[1]), 80)}): every item agrees with itself, so this "
                "comparison says nothing about a change; compare two different runs")
    if a[1] == b[1]:
        return (f"A and B are copies of the same run id ({one_line(str(a[1]), 80)}, in {one_line(str(a[0]), 120)} "
                f"and {one_line(str(b[0]), 120)}): the comparison says nothing about a change")
    return None
