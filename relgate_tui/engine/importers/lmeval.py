"""lm-evaluation-harness ``--log_samples`` files → :class:`~relgate_tui.engine.importers.model.ImportedLog`.

Formats (detected from the first non-blank character):

* **JSONL** (lm-eval ≥ 0.4.3): ``samples_<task>_<date>.jsonl``, one object per (document, filter) with ``doc_id``,
  ``doc``, ``target`` (``str(target)``: a Python-repr list means several acceptable answers), ``arguments``
  (``{"gen_args_0": {"arg_0": prompt, "arg_1": generation kwargs}}``), ``resps``, ``filtered_resps``, ``filter``,
  ``doc_hash``, ``prompt_hash``, ``target_hash``.
* **JSON array** (0.4.0–0.4.2): the same objects in one indented array (``arguments`` as a list of argument lists,
  ``target`` unconverted, no ``filter``/hash fields).

One row per document: the first filter seen is kept and rows are de-duplicated on ``doc_id`` (the raw ``resps`` are
the same under every filter). An item's id is the document's own ``id`` when every document has a distinct one (so an
lm-eval import pairs with an Inspect log or a task file of the same items), else lm-eval's ``doc_id``. The K answers of a generation task are **all of** ``resps[0]`` — never
``filtered_resps``, which may already be a majority vote. For log-likelihood multiple choice (``resps[i]`` holds
``[log-likelihood, is_greedy]`` per repeat for option i) the answer of repeat r is the letter of the arg-max option.

K, temperature, ``do_sample`` and the request seed come from the generation kwargs logged with each request
(``arg_1``), else from the results JSON beside the samples (``results_<date>.json``: ``configs.<task>``,
``config.gen_kwargs``, ``config.model``/``model_args``, ``config.use_cache``, ``lm_eval_version``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from relgate_tui.core.jsonsafe import loads_strict
from relgate_tui.core.text import one_line
from relgate_tui.engine.importers.model import (
    MAX_DOCUMENT_BYTES,
    ImportedItem,
    ImportedLog,
    LogLines,
    SourceFile,
    check_totals,
    parse_json_line,
    read_log,
)
from relgate_tui.errors import DataError, data_error

__all__ = ["load_lm_eval", "samples_files"]

LETTERS = "ABCDEFGHIJ"
_API_MODELS = ("local-completions", "local-chat-completions", "openai-completions", "openai-chat-completions",
               "azure-openai-chat-completions")
MAX_RESULTS_BYTES = 64 << 20  # lm-eval's results JSON is a summary (kilobytes); a larger one is not read
DEFAULT_API_SEED = 1234  # lm_eval/models/api_models.py: TemplateAPI(seed=1234), sent with every request


def samples_files(directory: Path) -> dict[str, list[Path]]:
    """``task → samples files`` under an lm-eval output directory (``samples_<task>_<date>.jsonl``, newest last)."""
    out: dict[str, list[Path]] = {}
    for p in sorted(directory.rglob("samples_*.jsonl")):
        m = re.match(r"^samples_(.+)_(\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$", p.name)
        task = m.group(1) if m else p.stem[len("samples_"):]
        out.setdefault(task, []).append(p)
    return out


def _resolve(path: Path, task: str | None) -> tuple[Path, str | None, list[str]]:
    notes: list[str] = []
    if not path.exists():
        raise data_error(path, "no such file or directory")
    if not path.is_dir():
        return path, task, notes
    found = samples_files(path)
    if not found:
        raise data_error(path, "no lm-eval samples file (samples_<task>_<date>.jsonl) in this directory")
    if task is None:
        if len(found) > 1:
            raise data_error(path, f"several tasks logged ({', '.join(sorted(found))}): choose one with --task")
        task = next(iter(found))
    if task not in found:
        raise data_error(path, f"no samples file for task {task!r} (found: {', '.join(sorted(found))})")
    files = found[task]
    if len(files) > 1:
        notes.append(f"{len(files)} samples files for {task}: imported the newest, {files[-1].name}")
    return files[-1], task, notes


def _read_rows(path: Path) -> tuple[Iterable[tuple[int, Any]], bool, LogLines]:
    """``(line or position, row)`` pairs, whether the file is the 0.4.0–0.4.2 array form, and the lines read (their
    :attr:`~relgate_tui.engine.importers.model.LogLines.sha256` is the hash of the file once the rows are consumed).
    JSON lines are read and parsed one at a time as they are consumed, so neither the file's text nor all its parsed
    rows are ever in memory together; the array form is one JSON document, parsed whole (at most
    :data:`~relgate_tui.engine.importers.model.MAX_DOCUMENT_BYTES`)."""
    lines = LogLines(path, what="an lm-eval samples file")
    stream = iter(lines)
    first = next(((n, t) for n, t in stream if t.strip()), None)
    head = first[1].lstrip()[:1] if first else ""
    if first is None or head not in "[{":
        raise data_error(path, "not an lm-eval samples file (expected JSON lines or a JSON array)")
    if head == "[":
        text = _rest(path, first[1], stream, "an lm-eval samples file (the JSON array form)")
        try:
            rows = loads_strict(text)
        except json.JSONDecodeError as exc:
            raise data_error(path, f"bad JSON array: {exc.msg}", line=exc.lineno + first[0] - 1) from None
        except ValueError as exc:  # JSONInputError: our own words
            raise data_error(path, f"bad JSON array: {exc}") from None
        del text
        if not isinstance(rows, list):
            raise data_error(path, "not an lm-eval samples file (expected JSON lines or a JSON array)")
        return [(i + 1, r) for i, r in enumerate(rows)], True, lines
    try:
        json.loads(first[1])
    except (ValueError, RecursionError):
        # not one JSON line: an object written over several lines (lm-eval's results file) or a bad first line
        whole: Any = None
        with contextlib.suppress(ValueError, RecursionError, DataError):
            whole = loads_strict(_rest(path, first[1], stream, "an lm-eval file", limit=MAX_RESULTS_BYTES))
        if isinstance(whole, dict) and "resps" not in whole:
            if "results" in whole or "configs" in whole:
                raise data_error(path, "this is an lm-eval results file, not a samples file: import the "
                                       "samples_<task>_<date>.jsonl written beside it (run lm-eval with "
                                       "--log_samples)", field="resps") from None
            raise data_error(path, "not an lm-eval samples row", line=1, field="resps") from None
        parse_json_line(path, first[0], first[1])  # raises the first line's error
    return _jsonl_rows(path, itertools.chain((first,), stream)), False, lines


def _rest(path: Path, head: str, stream: Iterator[tuple[int, str]], what: str,
          limit: int = MAX_DOCUMENT_BYTES) -> str:
    """``head`` and every line after it as one text, refused (one line) past ``limit`` characters."""
    parts, n = [head], len(head)
    for _, text in stream:
        n += len(text)
        if n > limit:
            raise data_error(path, f"{what} larger than {limit >> 20} MB: relgate reads it whole and stops there")
        parts.append(text)
    return "".join(parts)




def _jsonl_rows(path: Path, lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, Any]]:
    for lineno, line in lines:
        if line.strip():
            yield lineno, parse_json_line(path, lineno, line)


def _headline(results: Mapping[str, Any], task: str) -> str | None:
    """lm-eval's own figures for ``task`` from the results JSON, by lm-eval's names (``exact_match,strict-match
    0.917``: the metric, then the filter), stderr left out; None when the JSON is absent or has none."""
    block = results.get("results") if isinstance(results, Mapping) else None
    figures = block.get(task) if isinstance(block, Mapping) else None
    if not isinstance(figures, Mapping):
        return None
    parts = [f"{one_line(str(name), 40)} {float(v):.3f}" for name, v in figures.items()
             if isinstance(name, str) and "," in name and "_stderr," not in name
             and isinstance(v, (int, float)) and not isinstance(v, bool)]
    return ", ".join(parts[:6]) or None


def _results_json(samples_path: Path, task: str) -> tuple[Path | None, dict[str, Any], str | None]:
    """The results JSON written with ``samples_path`` (same date stamp), else the newest one in the same directory
    whose ``configs`` has ``task``; ``(None, {})`` when there is none."""
    m = re.match(r"^samples_.+_(\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$", samples_path.name)
    candidates = []
    if m:
        candidates.append(samples_path.with_name(f"results_{m.group(1)}.json"))
    candidates += sorted(samples_path.parent.glob("results*.json"), reverse=True)
    for c in candidates:
        try:
            raw, sha = read_log(c, limit=MAX_RESULTS_BYTES, what="an lm-eval results file")
            doc = loads_strict(raw)
        except (DataError, UnicodeDecodeError, ValueError):
            continue  # not a regular file, too large, or not JSON: not this run's results
        if isinstance(doc, dict) and isinstance(doc.get("configs"), dict) and task in doc["configs"]:
            return c, doc, sha
    return None, {}, None


def _parse_kv(text: str) -> dict[str, Any]:
    """lm-eval's ``a=1,b=x`` argument strings."""
    out: dict[str, Any] = {}
    for part in text.split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        return _parse_kv(value)
    return {}


def _bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true"
    return None


def _float(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _seed(v: Any, where: tuple[Path | None, int | None], name: str) -> int | None:
    """A seed from the results JSON: None when absent (null, empty), an integer when it is one (``1234``,
    ``"1234"``, ``1234.0``); anything else (``"x"``, ``1.5``, ``1e300``) is a one-line error naming the file and
    field, never Python's "invalid literal for int()" nor an OverflowError."""
    if v is None or v == "":
        return None
    x = _float(v)
    if x is None or isinstance(v, bool) or not math.isfinite(x) or x != int(x) or abs(x) >= 2**63:
        raise data_error(where[0] or Path("lm-eval results"), f"seed {str(v)[:40]!r} is not an integer",
                         line=where[1], field=name)
    return int(x)


def _version_tuple(v: str) -> tuple[int, ...] | None:
    m = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?", v.strip())
    return tuple(int(x) for x in m.groups() if x is not None) if m else None


def _request_args(row: Mapping[str, Any]) -> list[list[Any]]:
    """The per-request argument lists of a row, in both the dict (≥ 0.4.3) and list (0.4.0–0.4.2) forms."""
    args = row.get("arguments")
    if isinstance(args, Mapping):
        out = []
        for key in sorted(args, key=lambda k: int(re.sub(r"\D", "", k) or 0)):
            a = args[key]
            if isinstance(a, Mapping):
                out.append([a[k] for k in sorted(a, key=lambda k: int(re.sub(r"\D", "", k) or 0))])
        return out
    if isinstance(args, list):
        return [list(a) if isinstance(a, (list, tuple)) else [a] for a in args]
    return []


def _prompt_text(prompt: Any) -> str:
    """The question shown for an item: the prompt, or the last user message of a chat prompt."""
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if isinstance(prompt, str):
        s = prompt.strip()
        if s.startswith("[{"):
            try:
                msgs = loads_strict(s)
            except ValueError:  # not JSON, nested too deeply, out-of-range numbers: the prompt as written
                return s
            if isinstance(msgs, list):
                for m in reversed(msgs):
                    if isinstance(m, Mapping) and m.get("role") == "user" and isinstance(m.get("content"), str):
                        return m["content"]
        return s
    return json.dumps(prompt, ensure_ascii=False) if prompt is not None else ""


def _targets(target: Any) -> list[str]:
    """Acceptable answers: a Python-repr (or JSON) list means several; None/empty means no reference."""
    if target is None:
        return []
    if isinstance(target, list):
        return [str(t) for t in target if t is not None and str(t).strip()]
    text = str(target)
    s = text.strip()
    if s.startswith("[") and s.endswith("]"):
        value = _repr_list(s)
        if value is not None:
            return [str(t) for t in value if t is not None and str(t).strip()]
    return [text] if s else []


_REPR_ITEM = re.compile(r"""\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|None|True|False)\s*(?:,|$)""", re.S)
_ESCAPE = re.compile(r"""\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)""", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}


def _repr_list(s: str) -> list[Any] | None:
    """A flat list written as JSON or as Python's ``repr`` (strings, numbers, None), read by one linear scan —
    never ``ast.literal_eval``, whose syntax tree of a multi-megabyte target takes gigabytes. None when ``s`` is
    anything else (then the target is one answer, as written)."""
    try:
        value = loads_strict(s)
    except ValueError:
        value = None
    if isinstance(value, list):
        return value
    inner, pos = s[1:-1], 0
    out: list[Any] = []
    if not inner.strip():
        return []
    while pos < len(inner):
        m = _REPR_ITEM.match(inner, pos)
        if m is None or m.end() == pos:
            return None
        tok = m.group(1)
        if tok[0] in "'\"":
            out.append(_ESCAPE.sub(_unescape, tok[1:-1]))
        else:
            out.append(None if tok == "None" else tok)
        pos = m.end()
    return out


def _unescape(m: re.Match[str]) -> str:
    e = m.group(1)
    if e[0] in "xuU" and len(e) > 1:
        try:
            return chr(int(e[1:], 16))
        except ValueError:
            return m.group(0)
    return _SIMPLE_ESCAPES.get(e, m.group(0))


def _is_loglikelihood(resps: list[Any]) -> bool:
    first = resps[0] if resps else None
    return bool(isinstance(first, list) and first and isinstance(first[0], (list, tuple)))


def _own_id(doc: Any) -> str | None:
    """A document's own id (``doc["id"]``, a non-empty string or integer), else None."""
    if not isinstance(doc, Mapping):
        return None
    own = doc.get("id")
    if isinstance(own, bool) or not isinstance(own, (int, str)) or not str(own).strip():
        return None
    return str(own)


def _mc_item(path: Path, line: int, row: Mapping[str, Any], item_id: str) -> ImportedItem:
    resps = row["resps"]
    args = _request_args(row)
    if len(resps) > len(LETTERS):
        raise data_error(path, f"{len(resps)} options: relgate reads at most {len(LETTERS)} (A-J)", line=line,
                         field="resps")
    choices = tuple(str(a[1]).strip() if len(a) > 1 else f"option {i + 1}" for i, a in enumerate(args))
    if len(choices) != len(resps):
        choices = tuple(f"option {i + 1}" for i in range(len(resps)))
    k = min(len(r) for r in resps)
    samples = []
    for r in range(k):
        try:
            lls = [float(resps[i][r][0]) for i in range(len(resps))]
        except (TypeError, ValueError, IndexError):
            raise data_error(path, "expected [log-likelihood, is_greedy] per option and repeat", line=line,
                             field="resps") from None
        samples.append(LETTERS[max(range(len(lls)), key=lambda i: (lls[i], -i))])
    answers = []
    for t in _targets(row.get("target")):
        t = t.strip()
        if t.isdigit() and int(t) < len(choices):
            answers.append(LETTERS[int(t)])
        elif t in choices:
            answers.append(LETTERS[choices.index(t)])
        elif len(t) == 1 and t.upper() in LETTERS[: len(choices)]:
            answers.append(t.upper())
    question = _prompt_text(args[0][0]) if args and args[0] else ""
    return ImportedItem(item_id, question, tuple(samples), tuple(dict.fromkeys(answers)), choices,
                        _opt_str(row.get("doc_hash")))


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def load_lm_eval(path: str | Path, task: str | None = None) -> ImportedLog:
    """Read an lm-eval samples file (or an lm-eval output directory; ``task`` picks the task). Raises
    :class:`~relgate_tui.errors.DataError` (one line naming file, line and field) for anything it cannot read."""
    samples_path, task, notes = _resolve(Path(path), task)
    if task is None:
        m = re.match(r"^samples_(.+)_(\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$", samples_path.name)
        task = m.group(1) if m else samples_path.stem
    pairs, array_form, lines = _read_rows(samples_path)
    stream = iter(pairs)
    first = next(stream, None)
    if first is None:
        raise data_error(samples_path, "no rows (empty samples file)")
    rows = itertools.chain((first,), stream)
    results_path, results, results_sha = _results_json(samples_path, task)
    config = results.get("configs", {}).get(task, {}) if results else {}
    run_config = results.get("config", {}) if isinstance(results.get("config"), Mapping) else {}
    version = results.get("lm_eval_version") if isinstance(results.get("lm_eval_version"), str) else None
    if version is not None:
        vt = _version_tuple(version)
        if vt is None or vt < (0, 4):
            raise data_error(results_path, f"unknown lm-eval version {version!r}: relgate reads 0.4.x logs",
                             field="lm_eval_version")
        if vt >= (0, 5):
            notes.append(f"lm-eval {version} is newer than the formats relgate knows (0.4.x)")
    elif array_form:
        version = "0.4.0-0.4.2 (array form)"

    chosen_filter: str | None = None
    seen: set[str] = set()
    own_ids: list[str | None] = []  # each document's own "id", when it has one
    items: list[ImportedItem] = []
    gen_kwargs: dict[str, Any] = {}
    gen_where: tuple[Path | None, int | None] = (results_path, None)  # where gen_kwargs came from (errors name it)
    loglik = False
    n_answers = 0
    for line, row in rows:
        if not isinstance(row, Mapping):
            raise data_error(samples_path, f"expected a JSON object, got {type(row).__name__}", line=line)
        if "resps" not in row:
            field = "resps"
            if "results" in row or "configs" in row:
                raise data_error(samples_path, "this is an lm-eval results file, not a samples file", field=field)
            raise data_error(samples_path, "missing (not an lm-eval --log_samples row?)", line=line, field=field)
        flt = row.get("filter")
        if chosen_filter is None and isinstance(flt, str):
            chosen_filter = flt
        if flt is not None and flt != chosen_filter:
            continue
        doc_id = row.get("doc_id")
        if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)) or str(doc_id) == "":
            raise data_error(samples_path, "missing or not an integer/string", line=line, field="doc_id")
        item_id = str(doc_id)
        if item_id in seen:
            continue
        seen.add(item_id)
        check_totals(samples_path, len(seen), n_answers, line=line)
        own_ids.append(_own_id(row.get("doc")))
        resps = row["resps"]
        if not isinstance(resps, list) or not resps:
            raise data_error(samples_path, "expected a non-empty list of per-request responses", line=line,
                             field="resps")
        if _is_loglikelihood(resps):
            loglik = True
            items.append(_mc_item(samples_path, line, row, item_id))
            n_answers += len(items[-1].samples)
            continue
        answers_raw = resps[0]
        if not isinstance(answers_raw, list):
            raise data_error(samples_path, "expected resps[0] to be the list of the K generated answers",
                             line=line, field="resps")
        samples = tuple("" if a is None else (a if isinstance(a, str) else str(a)) for a in answers_raw)
        n_answers += len(samples)
        args = _request_args(row)
        if args and len(args[0]) > 1 and isinstance(args[0][1], Mapping) and not gen_kwargs:
            gen_kwargs = dict(args[0][1])
            gen_where = (samples_path, line)
        question = _prompt_text(args[0][0]) if args and args[0] else ""
        if not question and isinstance(row.get("doc"), Mapping):
            doc = row["doc"]
            question = str(doc.get("question") or doc.get("problem") or doc.get("input") or "")
        items.append(ImportedItem(item_id, question, samples, tuple(dict.fromkeys(_targets(row.get("target")))),
                                  (), _opt_str(row.get("doc_hash"))))

    check_totals(samples_path, len(items), n_answers)
    if own_ids and all(own_ids) and len(set(own_ids)) == len(own_ids):
        # the documents' own ids (the data set's, as Inspect and the task file use them), not lm-eval's row index
        items = [replace(it, id=str(own)) for it, own in zip(items, own_ids, strict=True)]
    elif any(own_ids):
        notes.append("item ids are lm-eval's doc_id: the documents' own 'id' fields are missing or repeated")
    if not gen_kwargs:
        gen_kwargs = _as_dict(config.get("generation_kwargs"))
        gen_kwargs.update(_as_dict(run_config.get("gen_kwargs")))
    model_type = str(run_config.get("model", "")) if run_config else ""
    model_args = _as_dict(run_config.get("model_args"))
    temperature = _float(gen_kwargs.get("temperature"))
    do_sample = _bool(gen_kwargs.get("do_sample"))
    if not loglik and temperature is None and do_sample is None and (gen_kwargs or config):
        temperature, do_sample = 0.0, False
        notes.append("the requests set neither temperature nor do_sample: lm-eval decodes greedily by default")
    seed: int | None = None
    if "seed" in gen_kwargs:
        seed = _seed(gen_kwargs["seed"], gen_where, "gen_kwargs.seed")
    elif model_type in _API_MODELS:
        seed = _seed(model_args.get("seed"), (results_path, None), "model_args.seed") or DEFAULT_API_SEED
        notes.append(f"lm-eval sent seed {seed} with every request (the task did not set seed: null)")
    if not results:
        notes.append("no results JSON beside the samples file: K and the decoding settings come from the samples")
    repeats = config.get("repeats")
    k = max((len(it.samples) for it in items), default=0)
    if isinstance(repeats, int) and not isinstance(repeats, bool) and repeats != k:
        notes.append(f"the results JSON says repeats {repeats}, the samples hold up to {k} answers per item")
    if chosen_filter is not None:
        notes.append(f"filter {chosen_filter!r} rows used (resps are the same under every filter)")
    headline = _headline(results, task)
    if headline:
        notes.append(f"lm-eval's own score — {headline}")
    base_url = model_args.get("base_url")
    endpoint = None
    if isinstance(base_url, str) and re.match(r"^https?://", base_url):
        endpoint = re.sub(r"/(chat/)?completions/?$", "", base_url.rstrip("/"))
    model = str(model_args.get("model") or model_args.get("pretrained") or results.get("model_name") or "unknown")
    files = [SourceFile(str(samples_path), lines.sha256)]  # every row was consumed: the hash of the whole file
    if results_path is not None and results_sha is not None:
        files.append(SourceFile(str(results_path), results_sha))
    return ImportedLog(
        tool="lm-eval", version=version, task=task, model=model, files=tuple(files), items=tuple(items),
        endpoint=endpoint, temperature=temperature, do_sample=do_sample, seed=seed,
        cache=run_config.get("use_cache") not in (None, "", False), loglikelihood=loglik, filter=chosen_filter,
        notes=tuple(notes), extra={"repeats": config.get("repeats"), "output_type": config.get("output_type")},
    )
