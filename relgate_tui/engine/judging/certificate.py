"""Judge certificates (issue 30) on disk: the verdicts they are computed from, the certificate document, its store.

**Verdicts** (:class:`Verdicts`: one row per item — id, P(yes), the judge's verdict, repeated votes, the human's
verdict or None) come from

* a verdicts file (:func:`load_verdicts_file`): JSONL, one item a line — ``id`` (string or integer), ``p_yes`` (a
  number in [0, 1]) and/or ``judge`` (0/1) and/or ``votes`` (a list of 0/1 verdicts of repeated calls), ``human``
  (0/1; absent or null = unlabelled), optionally ``group`` (a string or integer: rows of one group — the pairs of one
  input, the questions of one document — are dependent, and the certificate takes the group as its unit). The
  labelled rows are taken in file order: the certificate checks that order (a file labelled easy-first is not a
  random sample). With votes only, P(yes) is their "yes" share and the verdict its majority (a
  tie counts as "yes" at confidence ½); with ``judge`` only, the confidence is 1. Every bad row is one line naming the
  file, the line and the field (:func:`relgate_tui.errors.data_error`), all of them in one error, nothing else done;
  the file is read through the one bounded reader (:func:`relgate_tui.engine.runs.inputs.read_regular`,
  :data:`MAX_BYTES`).
* a run (:func:`verdicts_from_run`): its results' ``judge_assisted`` rows — the verification judge's verdict and
  P(yes) on every judged item and the humans' verdicts on the labelled ones. A failed, unparseable or unanswered
  verdict gets P(yes) ½ (the least confident: it is always escalated); an "ok" verdict without log-probs confidence 1.
  Only the labelled prefix of the run's seeded order counts (:mod:`relgate_tui.core.label_prefix`, as the
  judge-assisted bound): labels after the first unlabelled item are left out, and a note says how many.

**Fingerprint**: what the certificate is about — the judge's endpoint, model, prompt hash, temperature and
top log-probs. :func:`differing_field` names the first field in which two fingerprints differ: a certificate never
applies to another judge, prompt or sampling.

**Store**: certificates are JSON documents in ``<data dir>/judge_certificates/<id>.json`` (:func:`save`,
:func:`load`), written through the one output write; the folder is guarded (:func:`relgate_tui.engine.runs.outputs.
check_output_path`: no command's output may be written into it). The id is the digest of the content
(:func:`relgate_tui.engine.judging.certificate_doc.content_id`); :func:`load` recomputes it, reads the document as its
type and refuses — one line — a mismatch, a certificate that is not a PASS, a threshold outside [½, 1] or a tested
sequence that does not give its threshold.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relgate_tui.core.text import one_line
from relgate_tui.errors import DataError, UserError, data_error

if TYPE_CHECKING:
    from relgate_tui.engine.judging.certificate_doc import CertificateDoc

__all__ = ["MAX_BYTES", "MAX_ROWS", "FINGERPRINT_FIELDS", "Verdicts", "load_verdicts_file", "verdicts_from_run",
           "verify_fingerprint", "differing_field", "certificates_dir", "certificate_path", "save", "save_document",
           "read_checked", "load"]

MAX_BYTES = 256 << 20
MAX_ROWS = 1_000_000
MAX_VOTES = 1000
MAX_ID = 200
MAX_ERRORS = 20
FINGERPRINT_FIELDS = ("endpoint", "model", "prompt_hash", "temperature", "top_logprobs")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$")


@dataclass(frozen=True)
class Verdicts:
    """Per-item judge verdicts (module docstring); ``votes`` is None when no item has repeats."""

    source: str
    ids: tuple[str, ...]
    p_yes: tuple[float, ...]
    judge: tuple[int, ...]
    human: tuple[int | None, ...]
    votes: tuple[tuple[int, ...], ...] | None
    fingerprint: Mapping[str, Any]
    extras: Mapping[str, Any] | None = None  # a pairwise audit's position-flip rate and cycle share
    groups: tuple[str, ...] | None = None  # dependent items share a group: the group is the unit
    notes: tuple[str, ...] = ()  # e.g. labels left out of the seeded-order prefix
    left_out: int = 0  # how many

    @property
    def human_codes(self) -> list[int]:
        """Human verdicts with -1 for unlabelled (what :func:`relgate_tui.core.judge_certificate.certify` takes)."""
        return [-1 if h is None else h for h in self.human]


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_bit(v: Any) -> bool:
    return v in (0, 1) and not isinstance(v, bool) and not (isinstance(v, float) and not v.is_integer())


Row = tuple[str, float, int, tuple[int, ...] | None, int | None, str | None]


def _row(obj: Any, path: str, line: int, seen: dict[str, int], errors: list[str]) -> Row | None:
    def bad(field: str | None, msg: str) -> None:
        errors.append(str(data_error(path, msg, line=line, field=field)))

    if not isinstance(obj, dict):
        bad(None, "expected a JSON object {\"id\": …, \"p_yes\" or \"judge\" or \"votes\": …, \"human\": 0/1}")
        return None
    raw_id = obj.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or str(raw_id).strip() == "":
        bad("id", "missing or not a string or an integer")
        return None
    item_id = str(raw_id)
    if len(item_id) > MAX_ID:
        bad("id", f"longer than {MAX_ID} characters")
        return None
    if item_id in seen:
        bad("id", f"duplicate id {one_line(item_id, 60)!r} (first on line {seen[item_id]})")
        return None
    seen[item_id] = line
    p, f, votes = obj.get("p_yes"), obj.get("judge"), obj.get("votes")
    if p is not None and (not _is_number(p) or not math.isfinite(p) or not 0.0 <= p <= 1.0):
        bad("p_yes", f"must be a number in [0, 1], got {one_line(json.dumps(p), 40)}")
        return None
    if f is not None and not _is_bit(f):
        bad("judge", f"must be 0 or 1, got {one_line(json.dumps(f), 40)}")
        return None
    if votes is not None:
        if (not isinstance(votes, list) or not 1 <= len(votes) <= MAX_VOTES
                or not all(_is_bit(v) for v in votes)):
            bad("votes", f"must be a list of 1 to {MAX_VOTES} verdicts 0/1")
            return None
        votes = tuple(int(v) for v in votes)
    if p is None and f is None and votes is None:
        bad("p_yes", "missing: give p_yes, judge or votes")
        return None
    h = obj.get("human")
    if h is not None and not _is_bit(h):
        bad("human", f"must be 0, 1 or absent, got {one_line(json.dumps(h), 40)}")
        return None
    g = obj.get("group")
    if g is not None and (isinstance(g, bool) or not isinstance(g, (str, int)) or len(str(g)) > MAX_ID):
        bad("group", f"must be a string or an integer of at most {MAX_ID} characters")
        return None
    if p is None:
        p = sum(votes) / len(votes) if votes else float(f or 0)
    verdict = int(f) if f is not None else int(p >= 0.5)
    return item_id, float(p), verdict, votes, None if h is None else int(h), None if g is None else str(g)


def load_verdicts_file(path: str | Path, fingerprint: Mapping[str, Any] | None = None) -> Verdicts:
    """The verdicts of a JSONL file (module docstring); :class:`DataError` listing every bad row, one line each."""
    from relgate_tui.core.jsonsafe import JSONInputError, loads_strict
    from relgate_tui.engine.runs.inputs import read_regular

    data = read_regular(path, MAX_BYTES, what="a verdicts file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise data_error(path, f"not UTF-8 text (byte {exc.start})") from None
    errors: list[str] = []
    seen: dict[str, int] = {}
    rows: list[Row] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if len(rows) >= MAX_ROWS:
            raise data_error(path, f"more than {MAX_ROWS} rows; refusing to read it", line=n)
        try:
            obj = loads_strict(raw)
        except json.JSONDecodeError as exc:
            errors.append(str(data_error(path, f"not JSON ({exc.msg})", line=n)))
            continue
        except JSONInputError as exc:
            errors.append(str(data_error(path, one_line(str(exc), 200), line=n)))
            continue
        row = _row(obj, str(path), n, seen, errors)
        if row is not None:
            rows.append(row)
        if len(errors) > MAX_ERRORS:
            break
    if errors:
        more = " (and more: stopped after the first errors)" if len(errors) > MAX_ERRORS else ""
        raise DataError("\n".join(errors[:MAX_ERRORS]) + more)
    if not rows:
        raise data_error(path, "no rows")
    fp = dict(fingerprint or {})
    return _verdicts(f"verdicts file {path}", rows, {k: fp.get(k) for k in FINGERPRINT_FIELDS})


def _verdicts(source: str, rows: Sequence[Row], fingerprint: Mapping[str, Any], notes: tuple[str, ...] = (),
              left_out: int = 0) -> Verdicts:
    has_votes = any(r[3] is not None for r in rows)
    has_groups = any(r[5] is not None for r in rows)
    groups = tuple(r[0] if r[5] is None else r[5] for r in rows) if has_groups else None  # no group: its own
    return Verdicts(source, tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(r[2] for r in rows),
                    tuple(r[4] for r in rows), tuple(r[3] or () for r in rows) if has_votes else None,
                    dict(fingerprint), None, groups, notes, left_out)


def verify_fingerprint(judge: Mapping[str, Any]) -> dict[str, Any]:
    """The fingerprint of the verification judge of a run (its results' ``judge_assisted.judge``): the prompt is the
    verification prompt (hashed), temperature 0, top log-probs 5 (engine/judging/verify_judge.py)."""
    from relgate_tui.engine.judging.prompts import verification_prompt
    from relgate_tui.engine.judging.verify_judge import _TOP_LOGPROBS

    template = json.dumps(verification_prompt("{question}", "{answer}"), sort_keys=True)
    return {"endpoint": judge.get("endpoint"), "model": judge.get("model"),
            "prompt_hash": hashlib.sha256(template.encode("utf-8")).hexdigest()[:16], "temperature": 0.0,
            "top_logprobs": _TOP_LOGPROBS}


def verdicts_from_run(run: str, run_dir: str | None = None) -> tuple[Verdicts, str]:
    """(verdicts, run id) of a run with a verification judge (module docstring)."""
    from relgate_tui.engine.certification.result import read_result
    from relgate_tui.engine.runs.listing import open_run
    from relgate_tui.engine.runs.paths import runs_dir

    store = open_run(run, runs_dir(run_dir))
    try:
        result = read_result(store)
        run_id = store.run_id
    finally:
        store.close()
    block = None if result is None else result.document.get("judge_assisted")
    if not isinstance(block, Mapping):  # what can be done instead: an imported run can never have one
        from relgate_tui.engine.certification.assisted import no_verification_judge

        tool = result.imported.tool if result is not None and result.imported is not None else None
        raise UserError(f"run {run_id}: {no_verification_judge(tool)}")
    from relgate_tui.core.label_prefix import labelled_prefix

    raw = list(block.get("verdicts") or [])
    prefix = labelled_prefix([r.get("human") is not None for r in raw])  # rows are in the run's seeded order
    rows: list[Row] = []
    for i, r in enumerate(raw):
        p = r.get("p_yes")
        if r.get("status") != "ok":
            p = 0.5
        elif p is None:
            p = float(r["judge"])
        rows.append((str(r["id"]), float(p), int(r["judge"]), None, r.get("human") if i < prefix.used else None,
                     None))
    if not rows:
        raise UserError(f"run {run_id}: {block.get('message') or 'the verification judge judged no item'}")
    notes = () if prefix.note is None else (prefix.note.replace("judge-assisted bound", "judge certificate"),)
    return _verdicts(f"run {run_id}", rows, verify_fingerprint(block.get("judge") or {}), notes,
                     prefix.left_out), run_id


def differing_field(certified: Mapping[str, Any], given: Mapping[str, Any]) -> str | None:
    """The first fingerprint field whose values differ (None: the same judge)."""
    for key in FINGERPRINT_FIELDS:
        if certified.get(key) != given.get(key):
            return key
    return None


def certificates_dir() -> Path:
    from relgate_tui.engine.runs.outputs import certificates_dir as guarded

    return guarded()


def save(doc: CertificateDoc) -> tuple[str, Path]:
    """Store a certificate document; returns (its id, its path). The id is the digest of its content."""
    return save_document(doc.to_json())


def save_document(plain: Mapping[str, Any]) -> tuple[str, Path]:
    """Store a certificate's JSON (a single judge's, :func:`save`, or a cascade's) under the digest of its content;
    returns (its id, its path)."""
    from relgate_tui.engine.judging.certificate_doc import content_id
    from relgate_tui.engine.runs.outputs import write_file

    cert_id = content_id(plain)
    folder = certificates_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{cert_id}.json"
    body = {**plain, "id": cert_id}
    write_file(path, json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    return cert_id, path


def certificate_path(ref: str) -> Path:
    """The file of a stored certificate given by id (``jc-…``, in the data dir) or by path."""
    path = Path(ref).expanduser()
    if path.exists():
        return path
    if not _ID.match(ref):
        raise UserError(f"certificate {one_line(ref, 60)!r}: not a file and not a certificate id")
    path = certificates_dir() / f"{ref}.json"
    if not path.exists():
        raise UserError(f"no certificate {ref} in {certificates_dir()}")
    return path


def read_checked(ref: str) -> tuple[dict[str, Any], Path, str]:
    """(the JSON, the file, the id for messages) of a stored certificate (by id or path) whose id is its content's
    digest (and its file name, when given by id); anything else is one line (:class:`UserError` /
    :class:`DataError`). What is in it is checked by :func:`load` (one judge) or
    :func:`relgate_tui.engine.judging.cascade.load_cascade`."""
    from relgate_tui.core.jsonsafe import JSONInputError, loads_strict
    from relgate_tui.engine.judging.certificate_doc import content_id
    from relgate_tui.engine.runs.inputs import read_regular

    path = certificate_path(ref)
    try:
        raw = loads_strict(read_regular(path, 64 << 20, what="a judge certificate").decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, JSONInputError) as exc:
        raise data_error(path, f"not a judge certificate ({one_line(str(exc), 120)})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        raise data_error(path, "not a judge certificate (no id)")
    name = one_line(raw["id"], 60)
    if content_id(raw) != raw["id"] or (path.stem.startswith("jc-") and path.stem != raw["id"]):
        raise UserError(f"certificate {name} ({path}): its content does not match its id — edited, damaged or "
                        "renamed; refusing to apply it (certify again)")
    return raw, path, name


def load(ref: str) -> tuple[CertificateDoc, Path]:
    """A stored single-judge certificate (by id or path) as its type, and its file — only when it may be applied:
    its id is its content's digest (:func:`read_checked`), it is a PASS, its threshold lies in [½, 1] and its tested
    sequence gives that threshold. Anything else — a cascade's certificate too — is one line."""
    from relgate_tui.engine.judging.certificate_doc import CertificateDoc as Doc

    raw, path, name = read_checked(ref)
    if isinstance(raw.get("cascade"), list):
        n = len(raw["cascade"])
        raise UserError(f"certificate {name} is a cascade of {n} judges: give their verdicts with {n} --verdicts, "
                        "in its order")
    try:
        doc = Doc.from_json(raw)
    except (ValueError, TypeError) as exc:
        raise data_error(path, f"not a judge certificate ({one_line(str(exc), 160)})") from None
    _check_applicable(doc, name)
    return doc, path


def _check_applicable(doc: CertificateDoc, name: str) -> None:
    from relgate_tui.core.judge_certificate import binomial_p_value

    cert, sel = doc.certificate, doc.certificate.selective
    if cert.verdict != "PASS":
        raise UserError(f"certificate {name} is {cert.verdict}, not PASS: it certifies no share of items, so there "
                        "is nothing to apply")
    t = sel.threshold
    if t is None or not 0.5 <= t <= 1.0:
        raise UserError(f"certificate {name}: threshold {t!r} is outside [0.5, 1]; refusing to apply it")
    if not (0.0 < sel.agreement < 1.0 and 0.0 < sel.confidence < 1.0):
        raise UserError(f"certificate {name}: agreement and confidence must lie in (0, 1); refusing to apply it")
    delta = 1.0 - sel.confidence
    passed = [s for s in sel.steps if s.passed]
    for s in sel.steps:
        if not 0 <= s.n_agree <= s.n_above or (binomial_p_value(s.n_agree, s.n_above, sel.agreement) <= delta) \
                != s.passed:
            raise UserError(f"certificate {name}: its tested sequence does not give its verdict (step at "
                            f"{s.threshold:.4f}); refusing to apply it")
    if not passed or passed[-1].threshold != t or len(passed) != len(sel.steps) - (not sel.steps[-1].passed):
        raise UserError(f"certificate {name}: its threshold is not the last step its sequence passed; refusing to "
                        "apply it")
