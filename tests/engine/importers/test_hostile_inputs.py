"""Issue 23 §2–§4 on the inputs: special files are refused before anything is read, what is read is bounded,
numbers in files never size an allocation, and memory stays proportional to the data. Real files, real FIFOs and
devices, the real CLI in a subprocess; the memory tests run under an address-space limit (RLIMIT_AS) and assert a
one-line error or a normal finish — never a MemoryError."""

from __future__ import annotations

import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
LM = ROOT / "tests" / "fixtures" / "imports" / "lm_eval" / "addition"
LIMIT = 1 << 30  # 1 GiB of address space: several times what the commands need, far below the unbounded cases


def _cli(home: Path, *argv: str, limit: int | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {"RELGATE_HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}

    def cap() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run([sys.executable, "-m", "relgate_tui.cli", *argv], capture_output=True, text=True, env=env,
                          cwd=str(home), timeout=timeout, preexec_fn=cap)


def one_line_error(r: subprocess.CompletedProcess[str], *words: str) -> None:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr[-2000:]
    assert "MemoryError" not in r.stderr and "please report" not in r.stderr, r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


# ------------------------------------------------------------------------------------------------ special files
@pytest.mark.parametrize("source", ["samples", "lm-eval", "inspect"])
def test_a_fifo_given_to_import_is_refused_at_once(tmp_path: Path, source: str) -> None:
    fifo = tmp_path / ("log.eval" if source == "inspect" else "samples_x_2026-01-01T00-00-00.000000.jsonl")
    os.mkfifo(fifo)
    r = _cli(tmp_path, "import", source, str(fifo), "--run-dir", str(tmp_path / "runs"), timeout=30)
    one_line_error(r, "not a regular file", "FIFO")


@pytest.mark.parametrize("argv", [("import", "samples"), ("import", "lm-eval"), ("judge", "audit", "--scores"),
                                  ("judge-irt", "--ratings")])
def test_a_symlink_to_dev_zero_named_like_an_input_is_refused(tmp_path: Path, argv: tuple[str, ...]) -> None:
    link = tmp_path / "samples_x_2026-01-01T00-00-00.000000.jsonl"
    link.symlink_to("/dev/zero")
    r = _cli(tmp_path, *argv, str(link), limit=LIMIT, timeout=30)
    one_line_error(r, "not a regular file", "device")


def test_a_sparse_giant_results_file_beside_the_samples_is_not_read(tmp_path: Path) -> None:
    log = tmp_path / "log"
    shutil.copytree(LM, log)
    (results,) = log.glob("results_*.json")
    with results.open("r+b") as f:  # keep its JSON start, then 3 GB of holes
        f.truncate(3 << 30)
    (samples,) = log.glob("samples_*.jsonl")
    r = _cli(tmp_path, "import", "lm-eval", str(samples), "--run-dir", str(tmp_path / "runs"), "--quiet",
             limit=LIMIT)
    assert r.returncode in (0, 1), r.stderr
    assert "MemoryError" not in r.stderr


def test_a_six_megabyte_lm_eval_target_is_read_in_linear_memory(tmp_path: Path) -> None:
    """A 6 MB Python-repr target list is read as its acceptable answers under a 1 GiB address-space limit.
    ``ast.literal_eval`` (the old reader) needs about 1 GB more than the text for it: under the limit it ran out of
    memory and the whole 6 MB text became one acceptable answer, which the last assertion catches."""
    log = tmp_path / "log"
    shutil.copytree(LM, log)
    (samples,) = log.glob("samples_*.jsonl")
    rows = [json.loads(x) for x in samples.read_text().splitlines()]
    rows[0]["target"] = repr(["1346"] + ["x"] * 1_000_000)  # a Python-repr list, 6 MB
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "doc.json"
    r = _cli(tmp_path, "import", "lm-eval", str(samples), "--run-dir", str(tmp_path / "runs"), "--quiet",
             "--json", str(out), limit=LIMIT)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    assert json.loads(out.read_text())["calls"]["made"] == 0
    (task,) = (tmp_path / "runs").glob("*/task/*.jsonl")
    first = json.loads(task.read_text().splitlines()[0])
    assert first["acceptable_answers"] == ["1346", "x"]  # the list's answers, not its 6 MB text as one answer


def _zip_declaring(name: str, declared: int, chunks: int, method: int = 93) -> bytes:
    """A ZIP with one member of ``chunks`` MB of zeros, zstd (method 93) or deflate (8), whose headers declare
    ``declared`` bytes. Built from one compressed megabyte repeated (zstd frames concatenate; a raw deflate block
    ended by a full flush does not refer back), so a gigabyte bomb costs a millisecond to make."""
    zero = bytes(1 << 20)
    if method == 93:
        import zstandard

        comp = zstandard.ZstdCompressor().compress(zero) * chunks
    else:
        piece = zlib.compressobj(9, zlib.DEFLATED, -15)
        comp = (piece.compress(zero) + piece.flush(zlib.Z_FULL_FLUSH)) * chunks
        comp += zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # the final (empty) block
    nm = name.encode()
    crc = zlib.crc32(b"")
    body = struct.pack("<IHHHHHIIIHH", 0x04034B50, 63, 0, method, 0, 0, crc, len(comp), declared, len(nm), 0) + nm \
        + comp
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 63, 63, 0, method, 0, 0, crc, len(comp), declared,
                          len(nm), 0, 0, 0, 0, 0, 0) + nm
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(body), 0)
    return body + central + end


@pytest.mark.parametrize("method", [93, 8], ids=["zstd", "deflate"])
def test_an_eval_member_declaring_two_bytes_is_inflated_within_a_budget(tmp_path: Path, method: int) -> None:
    """A member that declares 2 bytes and inflates to 900 MB is refused in one line, under a 1 GiB address-space
    limit: decompression stops at the declared size. (``zipfile``'s ``read()`` of a deflate member inflates all the
    compressed data it holds before cutting to the declared size: the old reader ran out of memory on it.)"""
    from relgate_tui.engine.importers.inspect_log import read_eval_members
    from relgate_tui.errors import DataError

    p = tmp_path / "bomb.eval"
    p.write_bytes(_zip_declaring("header.json", 2, 900, method))  # 900 MB of zeros behind a 2-byte declaration
    with pytest.raises(DataError, match="header.json") as info:
        read_eval_members(p)
    assert "\n" not in str(info.value)
    r = _cli(tmp_path, "import", "inspect", str(p), "--run-dir", str(tmp_path / "runs"), limit=LIMIT)
    one_line_error(r, "bomb.eval", "header.json")


def test_a_huge_log_prob_key_is_a_one_line_scale_error(tmp_path: Path) -> None:
    rows = []
    for i in range(60):
        h = 1 + i % 5
        lp = {str(v): (-0.2 if v == h else -3.0) for v in range(1, 6)}
        if i == 3:
            lp["1000000000"] = -9.0
        rows.append({"id": f"d{i}", "judge": "j", "criterion": "c", "human": h, "score": h, "logprobs": lp})
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = _cli(tmp_path, "judge-intervals", "--scores", str(path), "--seeds", "2", limit=LIMIT)
    one_line_error(r, "scores.jsonl", "2 to 101 points")


def test_one_score_of_1e15_is_a_one_line_scale_error_in_judge_irt(tmp_path: Path) -> None:
    rows = [{"id": f"d{i}", "judge": "j", "criterion": "c", "variant": v, "human": 1 + i % 5,
             "score": 1e15 if (i, v) == (5, "p1") else 1 + (i + len(v)) % 5}
            for i in range(60) for v in ("original", "p1")]
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = _cli(tmp_path, "judge-irt", "--ratings", str(path), "--quiet", limit=LIMIT)
    one_line_error(r, "2 to 101 points")


def test_a_sparse_jury_pool_never_allocates_its_dense_matrix(tmp_path: Path) -> None:
    path = tmp_path / "pool.jsonl"
    with path.open("w") as f:  # 40k items × 8k judges named, one score each: 3 MB
        for i in range(40_000):
            f.write(json.dumps({"id": f"i{i}", "judge": f"j{i % 8000}", "criterion": "c", "score": 1 + i % 5,
                                "human": 1 + i % 4, "output": "x"}) + "\n")
    r = _cli(tmp_path, "jury", "--scores", str(path), "--quiet", limit=LIMIT)
    one_line_error(r, "pool.jsonl", "8,000 judges")


# ---------------------------------------------------------------------------------------------- file, line, field
@pytest.mark.parametrize(("line", "words"), [
    ('{"id": "a", "score": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"id": "a", "score": ' + "9" * 5000 + "}", "bad JSON"),
    ('{"id": "a\\ud800", "score": 1}', "lone surrogate"),
], ids=["deep-nesting", "5000-digits", "lone-surrogate"])
def test_scores_file_errors_name_the_file_and_line(tmp_path: Path, line: str, words: str) -> None:
    path = tmp_path / "scores.jsonl"
    path.write_text('{"id": "ok", "score": 1}\n' + line + "\n")
    r = _cli(tmp_path, "judge", "audit", "--scores", str(path))
    one_line_error(r, "scores.jsonl:2", words)


def test_off_scale_judge_scores_are_a_one_line_error(tmp_path: Path) -> None:
    rows = [{"id": f"d{i}", "judge": "j", "criterion": "c", "human": 1 + i % 5, "score": 7 if i == 4 else 1 + i % 5,
             "logprobs": {str(v): (-0.2 if v == 1 + i % 5 else -3.0) for v in range(1, 6)}} for i in range(60)]
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = _cli(tmp_path, "judge", "audit", "--scores", str(path))
    one_line_error(r, "scores.jsonl:5", "field 'score'", "off the judge's scale")


def test_import_inspect_of_a_directory_says_what_it_wants(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "2026-01-01_task_abc.eval").write_bytes(b"")
    r = _cli(tmp_path, "import", "inspect", str(tmp_path / "logs"), "--run-dir", str(tmp_path / "runs"))
    one_line_error(r, "reads one Inspect log file", "2026-01-01_task_abc.eval")
