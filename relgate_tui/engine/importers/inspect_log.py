"""Inspect AI logs (``.json`` and ``.eval``) → :class:`~relgate_tui.engine.importers.model.ImportedLog`.

* ``.json``: one object ``{"version", "status", "eval", "plan", "results", "samples": [...]}``.
* ``.eval``: a ZIP archive with ``header.json`` (the same header), ``samples/<id>_epoch_<n>.json`` (one sample
  each), ``_journal/start.json`` (written first) and summaries. Members are zstd-compressed (ZIP method 93) since
  Inspect 0.3.206 and deflated before; Python 3.11's ``zipfile`` reads the directory but cannot inflate zstd, so
  zstd members are read from their local header and decompressed with ``zstandard`` (multi-frame streams
  included). A member name that appears twice (Inspect appends rewritten members): the last one wins, as for every
  ZIP reader. An unfinished log (no ``header.json``) imports what it holds, with the header of
  ``_journal/start.json``; a truncated archive (no central directory) is an error.

Epochs of a sample are separate records with the same ``id``; they become the item's K answers in epoch order.
The answer is ``output.completion``; when it is empty the text parts of ``output.choices[0].message.content``
(a string or a list of ``{"type": "text", "text"}`` / reasoning / … parts) are joined. The reference is ``target``
(a string or a list of acceptable strings; a letter for multiple choice, with the options in ``choices``).
Temperature and seed: ``eval.model_generate_config``, else ``plan.config``. Errored samples are skipped (counted in
the notes); a sample without output counts as an empty (invalid) answer.

Faithful to Inspect's own reading: a sample Inspect invalidated (``invalidate_samples()``: ``sample.invalidation``,
``log.invalidated``) is left out, counted and noted with its reason; a sample that hit a limit (``sample.limit``:
message, token, time …) is imported as recorded and noted (its cut or missing answer is an invalid answer); with
``num_choices`` > 1 every choice of ``output.choices`` is an answer (K = epochs × choices, said in the notes); and
Inspect's own headline — ``results.scores``, each scorer's metrics by Inspect's names and its epoch reducer — is a
note beside relgate's figures.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from relgate_tui.core.jsonsafe import loads_strict
from relgate_tui.core.text import counted, one_line
from relgate_tui.engine.importers.model import (
    MAX_DOCUMENT_BYTES,
    MAX_LOG_BYTES,
    ImportedItem,
    ImportedLog,
    SourceFile,
    check_totals,
    read_log,
)
from relgate_tui.errors import DataError, data_error

__all__ = ["load_inspect", "read_eval_members"]

KNOWN_VERSIONS = (1, 2)
MAX_MEMBER_BYTES = 512 * 1024 * 1024
MAX_TOTAL_BYTES = 1024**3
ZIP_ZSTD = 93


class _Budget:
    """Bytes an archive may still inflate to, counted on the bytes actually decompressed (never on the sizes its
    directory declares: a member that declares 2 bytes may inflate to gigabytes). A member is read in chunks and
    never past its declared size (plus one byte, to see that it lies), the member cap or what the archive has left:
    memory follows the smallest of the three, whatever the compressed data would inflate to."""

    def __init__(self, total: int) -> None:
        self.left = total

    def read(self, path: Path, name: str, stream: Any, declared: int) -> bytes:
        """Everything ``stream`` yields, read in chunks while within the member and archive budgets; it must be
        exactly ``declared`` bytes."""
        from relgate_tui.engine.runs.inputs import read_bounded

        limit = min(MAX_MEMBER_BYTES, self.left)
        stop = min(limit, max(declared, 0))  # reading one byte past this tells a lying member
        data = read_bounded(stream, stop)
        if data is None:
            if stop >= declared:  # read past the declared size: the directory lies
                raise data_error(path, f"member inflates to more than the {declared} bytes the directory says",
                                 field=name)
            which = "member" if limit == MAX_MEMBER_BYTES else "archive"
            cap = MAX_MEMBER_BYTES if which == "member" else MAX_TOTAL_BYTES
            raise data_error(path, f"{which} inflates to more than {cap >> 20} MB (the directory says "
                                   f"{declared} bytes)", field=name)
        if len(data) != declared:
            raise data_error(path, f"member is {len(data)} bytes, the directory says {declared}", field=name)
        self.left -= len(data)
        return data


def _decompress_zstd(path: Path, name: str, data: bytes, size: int, budget: _Budget) -> bytes:
    import zstandard

    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
        return budget.read(path, name, reader, size)
    except zstandard.ZstdError as exc:
        raise data_error(path, f"corrupt zstd data ({exc})", field=name) from None


def _read_member(path: Path, zf: zipfile.ZipFile, raw: io.BytesIO, info: zipfile.ZipInfo, budget: _Budget) -> bytes:
    if info.file_size > MAX_MEMBER_BYTES:
        raise data_error(path, f"member too large ({info.file_size} bytes)", field=info.filename)
    try:
        if info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            with zf.open(info) as member:
                return budget.read(path, info.filename, member, info.file_size)
        if info.compress_type != ZIP_ZSTD:
            raise data_error(path, f"unsupported ZIP compression method {info.compress_type}", field=info.filename)
        raw.seek(info.header_offset)
        header = raw.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise data_error(path, "truncated archive (bad local header)", field=info.filename)
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        raw.seek(info.header_offset + 30 + name_len + extra_len)
        data = raw.read(info.compress_size)
        if len(data) != info.compress_size:
            raise data_error(path, "truncated archive (member data cut short)", field=info.filename)
        return _decompress_zstd(path, info.filename, data, info.file_size, budget)
    except DataError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise data_error(path, f"unreadable member ({exc})", field=info.filename) from None


class _Archive:
    """An ``.eval`` archive's directory (a duplicated name keeps its last entry; the declared total checked) and its
    members decompressed one at a time on demand, within one budget for the archive."""

    def __init__(self, path: Path, data: bytes) -> None:
        self.path, self.raw = path, io.BytesIO(data)
        try:
            self.zf = zipfile.ZipFile(self.raw)
        except (zipfile.BadZipFile, ValueError, EOFError):
            raise data_error(path, "truncated or not a ZIP archive (no central directory)", field="zip") from None
        self.last: dict[str, zipfile.ZipInfo] = {}
        for info in self.zf.infolist():
            self.last[info.filename] = info  # later entries win
        total = sum(i.file_size for i in self.last.values())
        if total > MAX_TOTAL_BYTES:
            self.zf.close()
            raise data_error(path, f"archive expands to {total / 1e9:.1f} GB (at most {MAX_TOTAL_BYTES / 1e9:.1f} GB)",
                             field="zip")
        self.budget = _Budget(MAX_TOTAL_BYTES)

    def read(self, name: str) -> bytes:
        return _read_member(self.path, self.zf, self.raw, self.last[name], self.budget)

    def close(self) -> None:
        self.zf.close()


def read_eval_members(path: Path, data: bytes | None = None) -> dict[str, bytes]:
    """Every member of an ``.eval`` archive (decompressed as a stream within a budget per member and per archive;
    a duplicated name keeps the last member). ``data``: the archive's bytes when already read."""
    if data is None:
        data, _ = read_log(path, what="an Inspect log")
    archive = _Archive(path, data)
    try:
        return {name: archive.read(name) for name in archive.last}
    finally:
        archive.close()


def _json(path: Path, data: bytes, what: str) -> Any:
    try:
        return loads_strict(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise data_error(path, f"not JSON ({exc.__class__.__name__})", field=what) from None
    except ValueError as exc:  # JSONInputError: our own words
        raise data_error(path, f"not readable JSON: {exc}", field=what) from None


def _text_of(content: Any) -> str:
    """The text of a message content: a string, or the ``text`` parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _answers(sample: Mapping[str, Any]) -> tuple[str, ...]:
    """The sample's answers: one per choice of ``output.choices`` (``num_choices`` > 1 asks several per call), the
    first falling back to ``output.completion``; one empty answer when the sample has no output."""
    output = sample.get("output")
    if not isinstance(output, Mapping):
        return ("",)
    choices = output.get("choices")
    texts = []
    if isinstance(choices, list):
        for c in choices:
            message = c.get("message") if isinstance(c, Mapping) else None
            texts.append(_text_of(message.get("content")) if isinstance(message, Mapping) else "")
    completion = output.get("completion")
    if isinstance(completion, str) and completion:  # Inspect's own text of the first choice
        texts[:1] = [completion]
    return tuple(texts) or ("",)


def _headline(header: Mapping[str, Any], epochs: int | None, reducers: Any) -> str | None:
    """Inspect's own figures from ``results.scores``: each scorer's metrics by Inspect's names (``match``:
    accuracy 0.720, stderr 0.05), with the reducer over epochs (the score's own, else ``eval.config.epochs_reducer``,
    else Inspect's default, the mean), or None."""
    results = header.get("results")
    scores = results.get("scores") if isinstance(results, Mapping) else None
    parts = []
    for sc in scores if isinstance(scores, list) else []:
        if not isinstance(sc, Mapping) or not isinstance(sc.get("metrics"), Mapping):
            continue
        metrics = [f"{one_line(str(name), 30)} {float(m['value']):.3f}" for name, m in sc["metrics"].items()
                   if isinstance(m, Mapping) and isinstance(m.get("value"), (int, float))
                   and not isinstance(m.get("value"), bool)]
        if metrics:
            reducer = sc.get("reducer") or (", ".join(map(str, reducers)) if isinstance(reducers, list) and reducers
                                            else "mean")
            how = f" ({epochs} epochs reduced by {one_line(str(reducer), 20)})" if epochs and epochs > 1 else ""
            parts.append(f"{one_line(str(sc.get('name') or sc.get('scorer') or 'score'), 30)}: "
                         f"{', '.join(metrics[:4])}{how}")
    return "; ".join(parts[:3]) or None


def _question(inp: Any) -> str:
    if isinstance(inp, str):
        return inp
    if isinstance(inp, list):
        for m in reversed(inp):
            if isinstance(m, Mapping) and m.get("role") == "user":
                return _text_of(m.get("content"))
    return ""


def _sent(sample: Mapping[str, Any], question: str) -> tuple[dict[str, str], ...]:
    """The messages Inspect sent before the model's first reply (``sample.messages``; system and user turns, as
    text), when the last user turn is not ``question`` itself — a solver such as ``prompt_template`` rewrote it (the
    log keeps ``input`` raw); else ()."""
    messages = sample.get("messages")
    sent: list[dict[str, str]] = []
    for m in messages if isinstance(messages, list) else ():
        if not isinstance(m, Mapping) or m.get("role") not in ("system", "user", "assistant"):
            continue
        if m["role"] == "assistant":
            break
        sent.append({"role": str(m["role"]), "content": _text_of(m.get("content"))})
    users = [m["content"] for m in sent if m["role"] == "user"]
    if not users or not users[-1].strip() or users[-1].strip() == question.strip():
        return ()
    return tuple(sent)


def _targets(target: Any) -> tuple[str, ...]:
    if isinstance(target, str):
        return (target,) if target.strip() else ()
    if isinstance(target, list):
        return tuple(dict.fromkeys(str(t) for t in target if isinstance(t, (str, int, float)) and str(t).strip()))
    return ()


def _header_and_samples(path: Path, raw: bytes) -> tuple[dict[str, Any], Iterable[Any], list[str]]:
    """The log's header, its samples (an ``.eval`` archive's sample members are decompressed and parsed one at a
    time as they are consumed: one member in memory, never all of them) and notes."""
    notes: list[str] = []
    if path.suffix.lower() == ".eval":
        archive = _Archive(path, raw)
        try:
            if "header.json" in archive.last:
                header = _json(path, archive.read("header.json"), "header.json")
            elif "_journal/start.json" in archive.last:
                header = _json(path, archive.read("_journal/start.json"), "_journal/start.json")
                notes.append("unfinished log (no header.json): imported the samples it holds")
            else:
                raise data_error(path, "not an Inspect log (no header.json or _journal/start.json)",
                                 field="header.json")
        except BaseException:
            archive.close()
            raise
        names = sorted(n for n in archive.last if n.startswith("samples/") and n.endswith(".json"))
        return header if isinstance(header, dict) else {}, _member_samples(path, archive, names), notes
    try:
        doc = loads_strict(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise data_error(path, f"not JSON ({exc.__class__.__name__})") from None
    except ValueError as exc:  # JSONInputError (nested too deeply, 1e400, …): our own words
        raise data_error(path, f"not readable JSON: {exc}") from None
    if not isinstance(doc, dict) or "eval" not in doc:
        raise data_error(path, "not an Inspect log (no 'eval' header)", field="eval")
    samples = doc.get("samples")
    if samples is None:
        raise data_error(path, "the log holds no samples (was it written with log_samples=False?)", field="samples")
    if not isinstance(samples, list):
        raise data_error(path, "expected a list", field="samples")
    if doc.get("status") not in (None, "success"):
        notes.append(f"log status {doc.get('status')!r}: imported the samples it holds")
    return doc, samples, notes


def _member_samples(path: Path, archive: _Archive, names: list[str]) -> Iterator[Any]:
    try:
        for n in names:
            yield _json(path, archive.read(n), n)
    finally:
        archive.close()


def load_inspect(path: str | Path, task: str | None = None) -> ImportedLog:
    """Read an Inspect ``.json`` or ``.eval`` log. Raises :class:`~relgate_tui.errors.DataError` (one line naming
    file and field) for a log it cannot read."""
    p = Path(path)
    if p.is_dir():
        logs = sorted(x.name for x in p.iterdir() if x.suffix.lower() in (".eval", ".json"))
        example = f" (this directory holds {len(logs)}, e.g. {logs[-1]})" if logs else ""
        raise data_error(p, f"a directory: `relgate import inspect` reads one Inspect log file, a .eval archive or a "
                            f".json log{example}")
    # a .json log is one document, parsed whole: read up to MAX_DOCUMENT_BYTES (an .eval one sample at a time)
    whole = p.suffix.lower() != ".eval"
    raw, sha = read_log(p, limit=MAX_DOCUMENT_BYTES if whole else MAX_LOG_BYTES,
                        what="an Inspect .json log" if whole else "an Inspect log")
    header, samples, notes = _header_and_samples(p, raw)
    version = header.get("version")
    if isinstance(version, bool) or version not in KNOWN_VERSIONS:
        raise data_error(p, f"unknown Inspect log version {version!r} (relgate reads versions 1 and 2)",
                         field="version")
    spec: Mapping[str, Any] = header["eval"] if isinstance(header.get("eval"), Mapping) else {}
    plan: Mapping[str, Any] = header["plan"] if isinstance(header.get("plan"), Mapping) else {}
    gen = dict(plan.get("config") or {}) if isinstance(plan.get("config"), Mapping) else {}
    if isinstance(spec.get("model_generate_config"), Mapping):
        gen.update({k: v for k, v in spec["model_generate_config"].items() if v is not None})
    config: Mapping[str, Any] = spec["config"] if isinstance(spec.get("config"), Mapping) else {}
    by_id: dict[str, list[tuple[int, int, str]]] = {}
    meta: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], tuple[dict[str, str], ...]]] = {}
    errored = invalidated = 0
    limits: dict[str, int] = {}
    widths: set[int] = set()
    reasons: set[str] = set()
    for pos, s in enumerate(samples):
        if not isinstance(s, Mapping):
            raise data_error(p, f"sample {pos}: expected an object", field="samples")
        sid = s.get("id")
        if isinstance(sid, bool) or not isinstance(sid, (str, int)) or str(sid) == "":
            raise data_error(p, f"sample {pos}: missing or not a string/integer", field="id")
        epoch = s.get("epoch", 1)
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise data_error(p, f"sample {sid!r}: epoch must be an integer", field="epoch")
        if s.get("error"):
            errored += 1
            continue
        if s.get("invalidation"):  # Inspect's invalidate_samples(): the tool itself says not to count it
            invalidated += 1
            why = s["invalidation"].get("reason") if isinstance(s["invalidation"], Mapping) else None
            if isinstance(why, str) and why.strip():
                reasons.add(one_line(why, 80))
            continue
        limit = s.get("limit")
        if isinstance(limit, Mapping):
            kind = f"{one_line(str(limit.get('type') or 'a'), 20)} limit"
            if isinstance(limit.get("limit"), (int, float)) and not isinstance(limit.get("limit"), bool):
                kind += f" {limit['limit']:g}"
            limits[kind] = limits.get(kind, 0) + 1
        key = str(sid)
        answers = _answers(s)
        widths.add(len(answers))
        by_id.setdefault(key, []).extend((epoch, i, a) for i, a in enumerate(answers))
        check_totals(p, len(by_id), pos + 1 - errored - invalidated)
        if key not in meta:
            choices = s.get("choices")
            ch = tuple(str(c) for c in choices) if isinstance(choices, list) else ()
            question = _question(s.get("input"))
            meta[key] = (question, _targets(s.get("target")), ch, _sent(s, question))
    if errored:
        notes.append(f"{counted(errored, 'errored sample')} skipped")
    if invalidated or header.get("invalidated"):
        why = f", reason: {'; '.join(sorted(reasons)[:3])}" if reasons else ""
        notes.append(f"{counted(invalidated, 'sample')} invalidated in Inspect (invalidate_samples{why}): left out"
                     if invalidated else "the log is marked invalidated in Inspect, but no sample carries an "
                                         "invalidation: every sample imported")
    if limits:
        hit = ", ".join(f"{n} × {kind}" for kind, n in sorted(limits.items()))
        notes.append(f"{counted(sum(limits.values()), 'sample')} hit a limit ({hit}): imported as Inspect recorded "
                     "them — an answer cut short or missing is an invalid answer")
    if max(widths, default=1) > 1:
        epochs = config.get("epochs") if isinstance(config.get("epochs"), int) else None
        n = max(widths)
        per = f"{epochs} epochs × {n} choices" if epochs else f"epochs × {n} choices"
        notes.append(f"every choice of a sample read (num_choices = {n}): K = {per}"
                     + (f" = {epochs * n}" if epochs else ""))
    headline = _headline(header, config.get("epochs") if isinstance(config.get("epochs"), int) else None,
                         config.get("epochs_reducer"))
    if headline:
        notes.append(f"Inspect's own score — {headline}")
    items = []
    for key, found in by_id.items():
        found.sort(key=lambda e: (e[0], e[1]))  # epoch order, then choice order
        question, targets, choices, sent = meta[key]
        items.append(ImportedItem(key, question, tuple(a for _, _, a in found), targets, choices[:10],
                                  messages=sent))
    if not items:
        raise data_error(p, "no completed samples in the log", field="samples")
    packages: Mapping[str, Any] = spec["packages"] if isinstance(spec.get("packages"), Mapping) else {}
    seed = gen.get("seed")
    temperature = gen.get("temperature")
    base_url = spec.get("model_base_url")
    return ImportedLog(
        tool="inspect",
        version=str(packages.get("inspect_ai")) if packages.get("inspect_ai") else f"log format {version}",
        task=task or str(spec.get("task") or p.stem),
        model=str(spec.get("model") or "unknown"),
        files=(SourceFile(str(p), sha),),
        items=tuple(items),
        endpoint=base_url if isinstance(base_url, str) and base_url.startswith(("http://", "https://")) else None,
        temperature=float(temperature) if isinstance(temperature, (int, float)) and not isinstance(
            temperature, bool) else None,
        seed=int(seed) if isinstance(seed, int) and not isinstance(seed, bool) else None,
        notes=tuple(notes),
        extra={"epochs": config.get("epochs"), "status": header.get("status")},
    )
