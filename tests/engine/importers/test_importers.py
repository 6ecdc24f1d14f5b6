"""Importers (issue 15 §1) on the fixtures written by the real lm-evaluation-harness and Inspect AI
(tests/fixtures/imports/regenerate.sh), and one-line errors for bad or foreign files."""

from __future__ import annotations

import json
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from relgate_tui.core.canon import get_canonicalizer
from relgate_tui.engine.importers import assign_flags, load_log
from relgate_tui.engine.importers.inspect_log import read_eval_members
from relgate_tui.errors import DataError

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "imports"


def _samples_file(name: str) -> Path:
    return next((FIX / "lm_eval" / name).glob("samples_*.jsonl"))


def _raw_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ------------------------------------------------------------------------------------------------------ lm-eval
def test_lm_eval_jsonl_takes_all_of_resps0_once_per_document() -> None:
    path = _samples_file("addition")
    rows = _raw_rows(path)
    filters = sorted({r["filter"] for r in rows})
    assert len(filters) == 2  # the fixture really has several filters
    log = assign_flags(load_log("lm-eval", path))
    assert log.tool == "lm-eval" and log.version == "0.4.13" and log.task == "relgate_addition"
    assert log.model == "sim-mid" and log.k == 5 and log.temperature == 0.7 and log.do_sample is True
    assert log.seed is None and log.endpoint and log.endpoint.startswith("http://127.0.0.1:")
    first = {}
    for r in rows:
        first.setdefault(str(r["doc_id"]), r)
    # issue 24 §1: each item is named by its document's own id (the data set's), not by lm-eval's doc_id
    assert [it.id for it in log.items] == [r["doc"]["id"] for r in first.values()]
    for it, r in zip(log.items, first.values(), strict=True):
        assert it.samples == tuple(r["resps"][0])  # all K raw answers, never filtered_resps
        assert it.answers == (r["target"],) and it.doc_hash == r["doc_hash"]
        assert it.question == r["doc"]["question"]  # the user message of the chat prompt
        assert it.flags == ()
    # the directory form finds the same file and its results JSON
    assert load_log("lm-eval", path.parent).items == load_log("lm-eval", path).items


def test_lm_eval_classes_match_canonicalizing_resps0_directly() -> None:
    canon = get_canonicalizer("numeric")
    path = _samples_file("addition")
    log = load_log("lm-eval", path)
    direct = {}
    for r in _raw_rows(path):
        direct.setdefault(str(r["doc"]["id"]), Counter(canon(a) for a in r["resps"][0]))
    assert {it.id: Counter(canon(s) for s in it.samples) for it in log.items} == direct
    assert any(len(c) > 1 for c in direct.values())  # the fixture has disagreeing repeats


def test_lm_eval_array_form_equals_the_jsonl_it_was_converted_from() -> None:
    array = load_log("lm-eval", FIX / "lm_eval_array" / "sim-mid_relgate_addition.jsonl")
    jsonl = load_log("lm-eval", _samples_file("addition"))
    assert array.version == "0.4.0-0.4.2 (array form)"
    assert [(i.id, i.samples, i.answers) for i in array.items] == [(i.id, i.samples, i.answers) for i in jsonl.items]
    assert array.temperature == 0.7 and array.do_sample is True  # from the logged generation kwargs


def test_lm_eval_default_seed_with_identical_repeats_is_flagged() -> None:
    log = assign_flags(load_log("lm-eval", _samples_file("addition_seeded")))
    assert log.seed == 1234 and any("seed 1234" in n for n in log.notes)
    for it in log.items:
        identical = len(set(it.samples)) == 1
        assert ("fixed_seed" in it.flags) == identical
    assert sum("fixed_seed" in it.flags for it in log.items) >= len(log.items) - 1


def test_lm_eval_loglikelihood_multiple_choice() -> None:
    path = _samples_file("mmlu_loglik")
    log = assign_flags(load_log("lm-eval", path))
    assert log.loglikelihood and log.k == 2
    for it, r in zip(log.items, [r for r in _raw_rows(path)], strict=True):
        lls = [float(resp[0][0]) for resp in r["resps"]]
        best = "ABCD"[max(range(len(lls)), key=lambda i: lls[i])]
        assert it.samples == (best, best)
        assert it.answers == ("ABCD"[int(r["target"])],)
        assert it.choices == tuple(a["arg_1"].strip() for a in r["arguments"].values())
        assert it.flags == ("loglikelihood_mc",)


def test_greedy_decoding_and_cache_flags() -> None:
    log = load_log("lm-eval", _samples_file("addition"))
    greedy = assign_flags(type(log)(**{**log.__dict__, "temperature": 0.0}))
    assert all("temperature_0" in it.flags for it in greedy.items)
    cached = assign_flags(type(log)(**{**log.__dict__, "cache": True}))
    for it in cached.items:
        assert ("identical_repeats" in it.flags) == (len(set(it.samples)) == 1)


# ------------------------------------------------------------------------------------------------------ Inspect
def test_inspect_eval_zstd_epochs_become_the_k_answers() -> None:
    path = FIX / "inspect" / "addition_zstd.eval"
    with zipfile.ZipFile(path) as zf:
        assert {i.compress_type for i in zf.infolist()} == {93}  # really zstd
    log = assign_flags(load_log("inspect", path))
    assert log.version == "0.3.285" and log.k == 4 and log.temperature == 0.7 and len(log.items) == 8
    members = read_eval_members(path)
    for it in log.items:
        epochs = sorted((json.loads(members[n]) for n in members if n.startswith(f"samples/{it.id}_epoch_")),
                        key=lambda s: s["epoch"])
        assert it.samples == tuple(s["output"]["completion"] for s in epochs)
        assert it.answers == (epochs[0]["target"],) and it.question == epochs[0]["input"]


def test_inspect_eval_deflate_reads_like_zstd() -> None:
    path = FIX / "inspect" / "addition_deflate.eval"
    with zipfile.ZipFile(path) as zf:
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_DEFLATED}
    log = load_log("inspect", path)
    assert log.version == "0.3.200" and log.k == 2 and len(log.items) == 8


def test_inspect_json_multiple_choice() -> None:
    log = load_log("inspect", FIX / "inspect" / "mmlu.json")
    assert log.k == 2 and len(log.items) == 4
    for it in log.items:
        assert len(it.choices) == 4 and it.answers and all(a in "ABCD" for a in it.answers)
    canon = get_canonicalizer("mcq")
    assert all(canon(s, it.choices) != "INVALID" for it in log.items for s in it.samples)


def test_inspect_multi_part_content() -> None:
    path = FIX / "inspect" / "addition_parts.eval"
    members = read_eval_members(path)
    samples = [json.loads(members[n]) for n in members if n.startswith("samples/")]
    content = samples[0]["output"]["choices"][0]["message"]["content"]
    assert isinstance(content, list) and {p["type"] for p in content} == {"reasoning", "text"}
    log = load_log("inspect", path)
    by_id = {it.id: it for it in log.items}
    for s in samples:
        text = "\n".join(p["text"] for p in s["output"]["choices"][0]["message"]["content"] if p["type"] == "text")
        assert by_id[s["id"]].samples[s["epoch"] - 1] == text
    # without a completion the text parts are used
    from relgate_tui.engine.importers.inspect_log import _answers

    s = json.loads(json.dumps(samples[0]))
    s["output"]["completion"] = ""
    assert _answers(s)[0] == by_id[s["id"]].samples[s["epoch"] - 1]


def test_inspect_unfinished_log_imports_what_it_holds() -> None:
    path = FIX / "inspect" / "addition_unfinished.eval"
    with zipfile.ZipFile(path) as zf:
        assert "header.json" not in zf.namelist()
    log = assign_flags(load_log("inspect", path))
    assert any("unfinished" in n for n in log.notes)
    assert 1 <= len(log.items) <= 8 and sum(len(it.samples) for it in log.items) >= 8


def test_inspect_duplicated_member_last_wins(tmp_path: Path) -> None:
    src = FIX / "inspect" / "addition_deflate.eval"
    dup = tmp_path / "dup.eval"
    shutil.copyfile(src, dup)
    members = read_eval_members(src)
    name = sorted(n for n in members if n.startswith("samples/"))[0]
    sample = json.loads(members[name])
    sample["output"]["completion"] = "REWRITTEN 42"
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(dup, "a") as zf:
        zf.writestr(name, json.dumps(sample))
    log = load_log("inspect", dup)
    item = next(it for it in log.items if it.id == sample["id"])
    assert item.samples[sample["epoch"] - 1] == "REWRITTEN 42"


# -------------------------------------------------------------------------------------------------- samples JSONL
def test_generic_samples_jsonl(tmp_path: Path) -> None:
    p = tmp_path / "mine.jsonl"
    p.write_text('{"id": "q1", "question": "2+2?", "answer": "4", "samples": ["4", "four", "4"], "model": "m"}\n'
                 '{"id": 2, "question": "Capital?", "choices": ["London", "Paris"], "acceptable_answers": ["B"], '
                 '"samples": ["B", "Paris"]}\n', encoding="utf-8")
    log = load_log("samples", p)
    assert log.task == "mine" and log.model == "m" and [it.id for it in log.items] == ["q1", "2"]
    assert log.items[1].choices == ("London", "Paris") and log.items[1].answers == ("B",)


# ---------------------------------------------------------------------------------------------------- bad files
def _err(kind: str, path: Path) -> str:
    with pytest.raises(DataError) as info:
        load_log(kind, path)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg
    return msg


def test_results_json_instead_of_samples() -> None:
    results = next((FIX / "lm_eval" / "addition").glob("results_*.json"))
    assert "results file, not a samples file" in _err("lm-eval", results)


def test_missing_resps_names_line_and_field(tmp_path: Path) -> None:
    rows = _raw_rows(_samples_file("addition"))[:3]
    del rows[1]["resps"]
    p = tmp_path / "samples_t_2026-01-01T00-00-00.000000.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    msg = _err("lm-eval", p)
    assert f"{p}:2:" in msg and "field 'resps'" in msg


def test_unknown_versions(tmp_path: Path) -> None:
    src = FIX / "inspect" / "mmlu.json"
    doc = json.loads(src.read_text(encoding="utf-8"))
    doc["version"] = 99
    p = tmp_path / "future.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    assert "field 'version'" in _err("inspect", p)
    d = tmp_path / "old"
    d.mkdir()
    for f in (FIX / "lm_eval" / "addition").iterdir():
        shutil.copyfile(f, d / f.name)
    results = next(d.glob("results_*.json"))
    rdoc = json.loads(results.read_text(encoding="utf-8"))
    rdoc["lm_eval_version"] = "0.3.0"
    results.write_text(json.dumps(rdoc), encoding="utf-8")
    with pytest.raises(DataError, match="field 'lm_eval_version'"):
        load_log("lm-eval", d)


def test_truncated_zip(tmp_path: Path) -> None:
    data = (FIX / "inspect" / "addition_zstd.eval").read_bytes()
    p = tmp_path / "cut.eval"
    p.write_bytes(data[: len(data) // 2])
    assert "truncated or not a ZIP" in _err("inspect", p)


def test_corrupt_zstd_member(tmp_path: Path) -> None:
    src = FIX / "inspect" / "addition_zstd.eval"
    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as zf:
        info = next(i for i in zf.infolist() if i.filename.startswith("samples/"))
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + 8: start + 40] = b"\x00" * 32
    p = tmp_path / "corrupt.eval"
    p.write_bytes(bytes(data))
    assert "field 'samples/" in _err("inspect", p)


@pytest.mark.parametrize("text, field", [
    ('{"id": "a", "question": "q"}\n', "samples"),
    ('{"id": "a", "samples": [1, 2]}\n', "samples"),
    ('{"question": "q", "samples": ["x"]}\n', "id"),
    ('{"id": "a", "samples": ["x"]}\n{"id": "a", "samples": ["y"]}\n', "id"),
    ('{"id": "a", "samples": ["x"], "choices": "A|B"}\n', "choices"),
])
def test_generic_samples_errors(tmp_path: Path, text: str, field: str) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text(text, encoding="utf-8")
    assert f"field '{field}'" in _err("samples", p)


def test_not_json_and_missing(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text("hello\n", encoding="utf-8")
    _err("lm-eval", p)
    _err("samples", p)
    _err("inspect", p)
    _err("lm-eval", tmp_path / "missing.jsonl")


def test_lm_eval_repr_list_target_means_several_answers(tmp_path: Path) -> None:
    rows = _raw_rows(_samples_file("addition"))[:2]
    rows[0]["target"] = "['1346', 'one thousand three hundred forty-six']"
    rows[1]["target"] = "[not a list"
    p = tmp_path / "samples_t_2026-01-01T00-00-00.000000.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    log = load_log("lm-eval", p)
    assert log.items[0].answers == ("1346", "one thousand three hundred forty-six")
    assert log.items[1].answers == ("[not a list",)
    assert any("no results JSON" in n for n in log.notes)


def test_lm_eval_greedy_run_replayed_from_the_cache() -> None:
    """The real lm-eval run twice with --use_cache and do_sample false: every repeat comes from the cache."""
    path = _samples_file("addition_cached")
    log = assign_flags(load_log("lm-eval", path))
    assert log.cache and log.do_sample is False and log.temperature == 0.0
    for it in log.items:
        assert len(set(it.samples)) == 1
        assert it.flags == ("temperature_0", "identical_repeats")


def _zstd_zip(members: list[tuple[str, bytes]]) -> bytes:
    """A ZIP whose members are zstd-compressed (method 93) as two zstd frames each — Python's zipfile cannot write
    that, so the archive is assembled by hand (local headers, central directory, end record)."""
    import struct
    import zlib

    import zstandard

    body, central = b"", b""
    for name, data in members:
        half = len(data) // 2
        comp = zstandard.ZstdCompressor().compress(data[:half]) + zstandard.ZstdCompressor().compress(data[half:])
        crc, nm = zlib.crc32(data), name.encode()
        offset = len(body)
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 63, 0, 93, 0, 0, crc, len(comp), len(data), len(nm), 0)
        body += nm + comp
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 63, 63, 0, 93, 0, 0, crc, len(comp), len(data),
                               len(nm), 0, 0, 0, 0, 0, offset) + nm
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(body), 0)
    return body + central + end


def test_multi_frame_zstd_members_and_duplicates(tmp_path: Path) -> None:
    header = read_eval_members(FIX / "inspect" / "addition_zstd.eval")["header.json"]
    sample = {"id": "s1", "epoch": 1, "input": "What is 2 plus 2?", "target": "4",
              "output": {"completion": "The answer is 4. " + "x" * 5000}}
    rewritten = {**sample, "output": {"completion": "4"}}
    p = tmp_path / "frames.eval"
    p.write_bytes(_zstd_zip([("header.json", header), ("samples/s1_epoch_1.json", json.dumps(sample).encode()),
                             ("samples/s1_epoch_1.json", json.dumps(rewritten).encode())]))
    log = load_log("inspect", p)
    assert [it.samples for it in log.items] == [("4",)]  # the later duplicate wins
    members = read_eval_members(p)
    assert json.loads(members["header.json"]) == json.loads(header)
