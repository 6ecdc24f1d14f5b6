"""Peak memory and time of the hostile-input cases of issue 23 (§3, §4), beside their targets.

    python bench/hostile_inputs.py                  # the full sizes: a 1M-row scores file, 1 GiB logs (the cap)
    python bench/hostile_inputs.py --quick          # 100k rows, 10 MB logs: a minute
    python bench/hostile_inputs.py --smoke          # 400 rows, a 1 MB audit, one scores and one audit case: no target
    python bench/hostile_inputs.py --cases import --import-mb 100   # one case family, another size

Each case is the real CLI in a child process; its peak resident memory comes from ``wait4`` (the child's own
``ru_maxrss``), its time is wall time and CPU time (user + system: on a loaded machine the wall time says more about
the neighbours than about relgate). Cases:

* ``judge-audit --scores`` and ``judge-intervals`` on a synthetic scores file (4 judges, 5-point log-probs), then on
  one of a single judge (every row an item ``judge-intervals`` uses): target ≤ 1 GB peak and ≤ 60 s of CPU for a
  1M-row (130 MB) scores file (issue 29);
* ``import lm-eval`` and ``import samples`` of synthetic logs (lm-eval: the bundled fixture's rows repeated with new
  ids; samples: one question and five answers per line), by default at the largest log an import accepts: 1 GiB
  (``importers.model.MAX_LOG_BYTES``) of at most ``MAX_IMPORT_ITEMS`` items, so each answer carries about 2 KB of
  step-by-step working (``--answer-chars``). Target: a peak of at most 1.5 × that cap. A smaller log is judged
  by the peak it implies at the cap (the peak of a tiny import, plus the peak above it per MB of log times the
  cap), printed beside it;
* ``relgate audits ID --json`` on a stored audit whose ``answers.jsonl`` was grown to ``--audit-mb`` MB of repeated
  answers: answers are streamed, so the peak stays far below the file (target ≤ 1 GB), and the same audit with
  ``/dev/zero`` planted as its ``answers.jsonl`` (a one-line error at once).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GB = 1 << 30
MB = 1 << 20


def run_case(argv: list[str], home: Path) -> tuple[int, float, float, float, str]:
    """(exit code, peak MB, wall s, cpu s, last stderr line) of ``relgate ARGV`` in a child process."""
    env = {**os.environ, "RELGATE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "relgate_tui.cli", *argv], stdout=subprocess.DEVNULL,
                                stderr=err, env=env, cwd=str(home))
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
    return proc.returncode, usage.ru_maxrss / 1024, wall, usage.ru_utime + usage.ru_stime, (lines or [""])[-1]


def scores_file(path: Path, rows: int, judges: int = 4) -> None:
    """``rows`` rows of ``judges`` judges (each item scored by every judge); ``judges=1``: a million distinct items
    of one judge, every row used by ``judge-intervals``."""
    rng = random.Random(0)
    with path.open("w") as f:
        for i in range(rows):
            human, score = 1 + i % 5, 1 + (i * 7) % 5
            lps = ",".join(f'"{v}":-{rng.random() * 5:.2f}' for v in range(1, 6))
            f.write(f'{{"id":"d{i // judges}","judge":"j{i % judges}","criterion":"coherence","human":{human},'
                    f'"score":{score},"logprobs":{{{lps}}}}}\n')


def _reasoning(n: int, size: int) -> str:
    """About ``size`` characters of step-by-step working before an answer (what generation tasks log)."""
    step = f"Step: carry the digits of item {n} and check the sum again. "
    return step * max(1, -(-size // len(step)))  # at least ``size``: a log at the cap stays within the item cap


def lm_eval_log(folder: Path, megabytes: int, answer_chars: int) -> Path:
    fixture = ROOT / "tests" / "fixtures" / "imports" / "lm_eval" / "addition"
    (samples,) = fixture.glob("samples_*.jsonl")
    rows = [json.loads(x) for x in samples.read_text().splitlines() if x.strip()]
    out = folder / samples.name
    written, n = 0, 0
    with out.open("w") as f:
        while written < megabytes * MB:
            row = dict(rows[n % len(rows)])
            row["doc_id"] = n
            row["doc"] = {**row["doc"], "id": f"add-{n}"}
            row["doc_hash"] = f"{n:064x}"
            if answer_chars:
                work = _reasoning(n, answer_chars)
                row["resps"] = [[f"{work}\n{a}" for a in row["resps"][0]]]
            line = json.dumps(row) + "\n"
            f.write(line)
            written += len(line)
            n += 1
    return out


def samples_log(folder: Path, megabytes: int, answer_chars: int) -> Path:
    out = folder / "samples.jsonl"
    written, n = 0, 0
    with out.open("w") as f:
        while written < megabytes * MB:
            a, b = 100 + n % 900, 100 + (n * 7) % 900
            work = _reasoning(n, answer_chars) + "\n" if answer_chars else ""
            line = json.dumps({"id": f"q{n}", "question": f"What is {a} plus {b}?", "answer": str(a + b),
                               "samples": [f"{work}{a + b}", f"{work}The answer is {a + b}.", f"{work}{a + b + 1}",
                                           f"{work}{a + b}", f"{work}{a} + {b} = {a + b}"]}) + "\n"
            f.write(line)
            written += len(line)
            n += 1
    return out


def stored_audit(home: Path, megabytes: int) -> Path:
    sys.path.insert(0, str(ROOT))
    from tests.engine.stored_audit import stored_audit as make

    audit = make(home)
    answers = audit / "answers.jsonl"
    lines = answers.read_bytes()
    with answers.open("ab") as f:
        while answers.stat().st_size < megabytes * MB:
            f.write(lines * 64)
    return audit


SMOKE = False  # --smoke: every verdict reads "smoke" (no target checked)


def row(name: str, size_mb: float, result: tuple[int, float, float, float, str], target_mb: float,
        target_s: float | None, judged: float | None = None) -> None:
    """One line of the table; ``judged``: the peak compared with the target when it is not the one measured."""
    rc, peak, wall, cpu, last = result
    ok = rc in (0, 1) and (peak if judged is None else judged) <= target_mb and (target_s is None or cpu <= target_s)
    ts = f"{target_s:>7.0f}" if target_s is not None else f"{'—':>7}"
    print(f"{name:<34}{size_mb:>8.0f}{peak:>9.0f}{target_mb:>9.0f}{wall:>8.1f}{cpu:>8.1f}{ts}  "
          f"{'smoke' if SMOKE else 'PASS' if ok else 'FAIL'}{'' if rc in (0, 1) else f' (exit {rc}: {last[:80]})'}")


def import_case(home: Path, source: str, log: Path, cap: int, base: float) -> None:
    """One import of ``log``: its peak beside the target, 1.5 × the cap. At the cap the peak is judged as measured;
    below it, by the peak it implies at the cap: ``base`` (the peak of importing a tiny log: the interpreter and
    the code) plus the peak above ``base`` per MB of log, times the cap."""
    size = log.stat().st_size / MB
    result = run_case(["import", source, str(log), "--run-dir", str(home / "runs"), "--quiet"], home)
    at_cap = size > cap / MB - 1
    per_mb = max(0.0, result[1] - base) / size
    implied = result[1] if at_cap else base + per_mb * cap / MB
    row(f"import {source}" + (" (at the cap)" if at_cap else ""), size, result, 1.5 * cap / MB, None,
        judged=implied)
    print(f"{'  → above the base, per MB of log':<34}{per_mb:>8.2f}; base {base:.0f} MB; at the cap ({cap / MB:.0f} MB): "
          f"{implied:.0f} MB against {1.5 * cap / MB:.0f} MB")
    shutil.rmtree(home / "runs", ignore_errors=True)
    log.unlink()


def import_base(home: Path) -> float:
    """Peak MB of importing the bundled fixture log (24 rows): what every import costs before its log."""
    fixture = ROOT / "tests" / "fixtures" / "imports" / "lm_eval" / "addition"
    (samples,) = fixture.glob("samples_*.jsonl")
    result = run_case(["import", "lm-eval", str(samples), "--run-dir", str(home / "runs"), "--quiet"], home)
    shutil.rmtree(home / "runs", ignore_errors=True)
    return result[1]


def main() -> None:
    from relgate_tui.engine.importers.model import MAX_IMPORT_ITEMS, MAX_LOG_BYTES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    parser.add_argument("--smoke", action="store_true", help="the smallest sizes, one case of each kind (seconds), "
                        "no target checked")
    parser.add_argument("--cases", default="scores,import,audit",
                        help="comma-separated case families: scores, import, audit (default: all)")
    parser.add_argument("--sources", default="lm-eval,samples", help="import cases: lm-eval, samples (default both)")
    parser.add_argument("--rows", type=int, default=None, help="scores-file rows (default 1,000,000)")
    parser.add_argument("--import-mb", type=int, default=None,
                        help=f"log size in MB (default {MAX_LOG_BYTES // MB}: the largest log an import accepts)")
    parser.add_argument("--answer-chars", type=int, default=None,
                        help="characters of working before each logged answer (default: enough that a log at the "
                             "cap holds at most MAX_IMPORT_ITEMS items; 0 with --quick)")
    parser.add_argument("--audit-mb", type=int, default=None, help="stored answers in MB (default 200)")
    args = parser.parse_args()
    global SMOKE
    SMOKE = args.smoke
    if args.smoke:
        args.quick, args.rows, args.audit_mb, args.cases = True, 400, 1, "scores,audit"  # imports: bench/import.py
    cases = {c.strip() for c in args.cases.split(",") if c.strip()}
    rows = args.rows or (100_000 if args.quick else 1_000_000)
    import_mb = args.import_mb or (10 if args.quick else MAX_LOG_BYTES // MB)
    audit_mb = args.audit_mb or (20 if args.quick else 200)

    with tempfile.TemporaryDirectory(prefix="relgate-bench-") as d:
        home = Path(d)
        print(f"{'case':<34}{'file MB':>8}{'peak MB':>9}{'target':>9}{'wall s':>8}{'cpu s':>8}{'target':>7}")
        if "scores" in cases:
            scores = home / "scores.jsonl"
            scores_file(scores, rows)
            size = scores.stat().st_size / MB
            time_target = 60.0  # issue 29: a 1M-row file (130 MB) in at most 60 s of CPU, as for imports
            row(f"judge-audit --scores ({rows:,} rows)", size,
                run_case(["judge", "audit", "--scores", str(scores)], home), GB / MB, time_target)
            if args.smoke:  # one case of the family
                cases.discard("scores")
        if "scores" in cases:
            row(f"judge-intervals ({rows // 4:,} rows used)", size,
                run_case(["judge", "intervals", "--scores", str(scores), "--judge", "j0", "--seeds", "1", "--methods",
                          "cqr"], home), GB / MB, None)
            scores_file(scores, rows, judges=1)  # one judge: every row is an item judge-intervals uses
            size = scores.stat().st_size / MB
            row(f"judge-intervals ({rows:,} rows, 1 judge)", size,
                run_case(["judge", "intervals", "--scores", str(scores), "--judge", "j0", "--seeds", "1", "--methods",
                          "cqr"], home), GB / MB, time_target)
            row(f"judge-audit --scores ({rows:,} rows, 1 judge)", size,
                run_case(["judge", "audit", "--scores", str(scores)], home), GB / MB, time_target)
            scores.unlink()
        if "import" in cases:
            # a log of import_mb MB: at the default, the largest one an import accepts — at most MAX_LOG_BYTES and
            # MAX_IMPORT_ITEMS items, so its rows are at least cap / items bytes (answers with their working)
            chars = args.answer_chars if args.answer_chars is not None else (
                0 if args.quick else MAX_LOG_BYTES // MAX_IMPORT_ITEMS // 5)
            base = import_base(home)
            for source, make in (("lm-eval", lm_eval_log), ("samples", samples_log)):
                if source not in args.sources.split(","):
                    continue
                import_case(home, source, _at_most(make(home, import_mb, chars), MAX_LOG_BYTES), MAX_LOG_BYTES, base)
        if "audit" in cases:
            audit = stored_audit(home, audit_mb)
            size = (audit / "answers.jsonl").stat().st_size / MB
            if not args.smoke:  # one case of the family: the hostile one below
                row("audits ID --json (streamed answers)", size,
                    run_case(["audits", audit.name, "--json", str(home / "a.json")], home), GB / MB, None)
            (audit / "answers.jsonl").unlink()
            (audit / "answers.jsonl").symlink_to("/dev/zero")
            rc, peak, wall, cpu, last = run_case(["audits", audit.name, "--json", "-"], home)
            print(f"{'audits ID, answers.jsonl → /dev/zero':<34}{'∞':>8}{peak:>9.0f}{GB / MB:>9.0f}{wall:>8.1f}"
                  f"{cpu:>8.1f}{'—':>7}  {'smoke' if SMOKE else 'PASS' if rc == 2 and peak < GB / MB else 'FAIL'} ({last[:70]})")


def _at_most(log: Path, cap: int) -> Path:
    """``log`` cut back to whole lines within ``cap`` bytes (the generators stop just past their size)."""
    if log.stat().st_size > cap:
        with log.open("r+b") as f:
            f.seek(cap)
            back = 0
            while True:  # find the last newline before the cap
                back = min(cap, back + (1 << 20))
                f.seek(cap - back)
                chunk = f.read(back)
                nl = chunk.rfind(b"\n")
                if nl >= 0:
                    f.truncate(cap - back + nl + 1)
                    break
    return log


if __name__ == "__main__":
    main()
