"""Judge certificates (issue 30) on disk: the verdicts they are computed from, the certificate document, its store.

**Verdicts** (:class:`Verdicts`: one row per item — id, P(yes), the judge's verdict, repeated votes, the human's
verdict or None) come from

* a verdicts file (:func:`load_verdicts_file`): JSONL, one item a line — ``id`` (string or integer), ``p_yes`` (a
  number in [0, 1]) and/or ``judge`` (0/1) and/or ``votes`` (a list of 0/1 verdicts of repeated calls), ``human``
  (0/1; absent or null = unlabelled). With votes only, P(yes) is their "yes" share and the verdict its majority (a
  tie counts as "yes" at confidence ½); with ``judge`` only, the confidence is 1. Every bad row is one line naming the
  file, the line and the field (:func:`relgate_tui.errors.data_error`), all of them in one error, nothing else done;
  the file is read through the one bounded reader (:func:`relgate_tui.engine.runs.inputs.read_regular`,
  :data:`MAX_BYTES`).
* a run (:func:`verdicts_from_run`): its results' ``judge_assisted`` rows — the verification judge's verdict and
  P(yes) on every judged item and the humans' verdicts on the labelled ones. A failed, unparseable or unanswered
  verdict gets P(yes) ½ (the least confident: it is always escalated); an "ok" verdict without log-probs confidence 1.

**Fingerprint**: what the certificate is about — the judge's endpoint, model, prompt hash, temperature and
top log-probs. :func:`differing_field` names the first field in which two fingerprints differ: a certificate never
applies to another judge, prompt or sampling.

**Store**: certificates are JSON documents in ``<data dir>/judge_certificates/<id>.json`` (:func:`save`,
:func:`load`), written through the one output write.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relgate_tui.core.text import one_line
from relgate_tui.errors import DataError, UserError, data_error

__all__ = ["MAX_BYTES", "MAX_ROWS", "FINGERPRINT_FIELDS", "Verdicts", "load_verdicts_file", "verdicts_from_run",
           "verify_fingerprint", "differing_field", "certificates_dir", "save", "load"]

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

    @property
    def human_codes(self) -> list[int]:
        """Human verdicts with -1 for unlabelled (what :func:`relgate_tui.core.judge_certificate.certify` takes)."""
        return [-1 if h is None else h for h in self.human]


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_bit(v: Any) -> bool:
    return v in (0, 1) and not isinstance(v, bool) and not (isinstance(v, float) and not v.is_integer())


def _row(obj: Any, path: str, line: int, seen: dict[str, int], errors: list[str]
         ) -> tuple[str, float, int, tuple[int, ...] | None, int | None] | None:
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
    if p is None:
        p = sum(votes) / len(votes) if votes else float(f or 0)
    verdict = int(f) if f is not None else int(p >= 0.5)
    return item_id, float(p), verdict, votes, None if h is None else int(h)


def load_verdicts_file(path: str | Path, fingerprint: Mapping[str, Any] | None = None) -> Verdicts:
    """The verdicts of a JSONL file (module docstring); :class:`DataError` listing every bad row, one line each."""
    from relgate_tui.engine.runs.inputs import read_regular

    data = read_regular(path, MAX_BYTES, what="a verdicts file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise data_error(path, f"not UTF-8 text (byte {exc.start})") from None
    errors: list[str] = []
    seen: dict[str, int] = {}
    rows: list[tuple[str, float, int, tuple[int, ...] | None, int | None]] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if len(rows) >= MAX_ROWS:
            raise data_error(path, f"more than {MAX_ROWS} rows; refusing to read it", line=n)
        try:
            obj = json.loads(raw, parse_constant=lambda c: float("nan"))
        except json.JSONDecodeError as exc:
            errors.append(str(data_error(path, f"not JSON ({exc.msg})", line=n)))
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


def _verdicts(source: str, rows: Sequence[tuple[str, float, int, tuple[int, ...] | None, int | None]],
              fingerprint: Mapping[str, Any]) -> Verdicts:
    has_votes = any(r[3] is not None for r in rows)
    return Verdicts(source, tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(r[2] for r in rows),
                    tuple(r[4] for r in rows), tuple(r[3] or () for r in rows) if has_votes else None,
                    dict(fingerprint))


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
    if not isinstance(block, Mapping):
        raise UserError(f"run {run_id} has no verification judge results (certify it with --verify-judge-model)")
    rows = []
    for r in block.get("verdicts") or []:
        p = r.get("p_yes")
        if r.get("status") != "ok":
            p = 0.5
        elif p is None:
            p = float(r["judge"])
        rows.append((str(r["id"]), float(p), int(r["judge"]), None, r.get("human")))
    if not rows:
        raise UserError(f"run {run_id}: {block.get('message') or 'the verification judge judged no item'}")
    return _verdicts(f"run {run_id}", rows, verify_fingerprint(block.get("judge") or {})), run_id


def differing_field(certified: Mapping[str, Any], given: Mapping[str, Any]) -> str | None:
    """The first fingerprint field whose values differ (None: the same judge)."""
    for key in FINGERPRINT_FIELDS:
        if certified.get(key) != given.get(key):
            return key
    return None


def certificates_dir() -> Path:
    from relgate_tui.engine.runs.paths import data_dir

    return data_dir() / "judge_certificates"


def save(doc: Mapping[str, Any]) -> tuple[str, Path]:
    """Store a certificate document; returns (its id, its path). The id is the hash of its content."""
    from relgate_tui.engine.runs.outputs import write_file

    body = json.dumps(doc, sort_keys=True, ensure_ascii=False, allow_nan=False)
    cert_id = "jc-" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:12]
    folder = certificates_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{cert_id}.json"
    write_file(path, json.dumps({**doc, "id": cert_id}, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    return cert_id, path


def load(ref: str) -> dict[str, Any]:
    """A stored certificate by id (``jc-…``, in the data dir) or by path."""
    from relgate_tui.engine.runs.inputs import read_regular

    path = Path(ref).expanduser()
    if not path.exists():
        if not _ID.match(ref):
            raise UserError(f"certificate {one_line(ref, 60)!r}: not a file and not a certificate id")
        path = certificates_dir() / f"{ref}.json"
        if not path.exists():
            raise UserError(f"no certificate {ref} in {certificates_dir()}")
    try:
        doc = json.loads(read_regular(path, 64 << 20, what="a judge certificate").decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise data_error(path, f"not a judge certificate ({exc})") from None
    sel = doc.get("selective") if isinstance(doc, dict) else None
    if not isinstance(sel, dict) or "threshold" not in sel or not isinstance(doc.get("fingerprint"), dict):
        raise data_error(path, "not a judge certificate (no selective threshold or fingerprint)")
    return doc
