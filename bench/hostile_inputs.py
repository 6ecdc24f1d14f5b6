"""Peak memory and time of the hostile-input cases of issue 23 (§3, §4), beside their targets.

    python bench/hostile_inputs.py            # the full sizes: a 1M-row scores file, a 100 MB lm-eval log
    python bench/hostile_inputs.py --quick    # 100k rows, 10 MB: a minute

Each case is the real CLI in a child process; its peak resident memory comes from ``wait4`` (the child's own
``ru_maxrss``), its time is wall time and CPU time (user + system: on a loaded machine the wall time says more about
the neighbours than about relgate). Cases:

* ``judge-audit --scores`` and ``judge-intervals`` on a synthetic scores file (4 judges, 5-point log-probs):
  target ≤ 1 GB peak and ≤ 60 s of CPU for a 100 MB scores file (and for a smaller one; scaled up for a larger);
* ``import lm-eval`` of a synthetic samples file (the bundled fixture's rows repeated with new ids): target ≤ 1.5 ×
  the largest log an import accepts (``importers.model.MAX_LOG_BYTES``), i.e. a peak of at most 1.5 × the log's size
  (judged on the log measured); the peak per MB of log is printed with the peak it implies for a log at that cap;
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


def scores_file(path: Path, rows: int) -> None:
    rng = random.Random(0)
    with path.open("w") as f:
        for i in range(rows):
            human, score = 1 + i % 5, 1 + (i * 7) % 5
            lps = ",".join(f'"{v}":-{rng.random() * 5:.2f}' for v in range(1, 6))
            f.write(f'{{"id":"d{i // 4}","judge":"j{i % 4}","criterion":"coherence","human":{human},'
                    f'"score":{score},"logprobs":{{{lps}}}}}\n')


def lm_eval_log(folder: Path, megabytes: int) -> Path:
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
            line = json.dumps(row) + "\n"
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


def row(name: str, size_mb: float, result: tuple[int, float, float, float, str], target_mb: float,
        target_s: float | None) -> None:
    rc, peak, wall, cpu, last = result
    ok = rc in (0, 1) and peak <= target_mb and (target_s is None or cpu <= target_s)
    ts = f"{target_s:>7.0f}" if target_s is not None else f"{'—':>7}"
    print(f"{name:<34}{size_mb:>8.0f}{peak:>9.0f}{target_mb:>9.0f}{wall:>8.1f}{cpu:>8.1f}{ts}  "
          f"{'PASS' if ok else 'FAIL'}{'' if rc in (0, 1) else f' (exit {rc}: {last[:80]})'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    parser.add_argument("--rows", type=int, default=None, help="scores-file rows (default 1,000,000)")
    parser.add_argument("--import-mb", type=int, default=None, help="lm-eval log size in MB (default 100)")
    parser.add_argument("--audit-mb", type=int, default=None, help="stored answers in MB (default 200)")
    args = parser.parse_args()
    rows = args.rows or (100_000 if args.quick else 1_000_000)
    import_mb = args.import_mb or (10 if args.quick else 100)
    audit_mb = args.audit_mb or (20 if args.quick else 200)
    from relgate_tui.engine.importers.model import MAX_LOG_BYTES

    with tempfile.TemporaryDirectory(prefix="relgate-bench-") as d:
        home = Path(d)
        print(f"{'case':<34}{'file MB':>8}{'peak MB':>9}{'target':>9}{'wall s':>8}{'cpu s':>8}{'target':>7}")
        scores = home / "scores.jsonl"
        scores_file(scores, rows)
        size = scores.stat().st_size / MB
        time_target = 60.0 * max(1.0, size / 100.0)  # 60 s for a 100 MB file (and for any smaller one)
        row(f"judge-audit --scores ({rows:,} rows)", size,
            run_case(["judge-audit", "--scores", str(scores)], home), GB / MB, time_target)
        row(f"judge-intervals ({rows // 4:,} rows used)", size,
            run_case(["judge-intervals", "--scores", str(scores), "--judge", "j0", "--seeds", "1", "--methods",
                      "cqr"], home), GB / MB, None)
        scores.unlink()
        log = lm_eval_log(home, import_mb)
        size = log.stat().st_size / MB
        result = run_case(["import", "lm-eval", str(log), "--run-dir", str(home / "runs"), "--quiet"], home)
        row("import lm-eval", size, result, 1.5 * size, None)  # 1.5 × the log: what 1.5 × the cap means at the cap
        per_mb = result[1] / size
        print(f"{'  → peak per MB of log':<34}{per_mb:>8.2f}; at the cap ({MAX_LOG_BYTES / MB:.0f} MB): "
              f"{per_mb * MAX_LOG_BYTES / MB:.0f} MB against {1.5 * MAX_LOG_BYTES / MB:.0f} MB")
        shutil.rmtree(home / "runs", ignore_errors=True)
        log.unlink()
        audit = stored_audit(home, audit_mb)
        size = (audit / "answers.jsonl").stat().st_size / MB
        row("audits ID --json (streamed answers)", size,
            run_case(["audits", audit.name, "--json", str(home / "a.json")], home), GB / MB, None)
        (audit / "answers.jsonl").unlink()
        (audit / "answers.jsonl").symlink_to("/dev/zero")
        rc, peak, wall, cpu, last = run_case(["audits", audit.name, "--json", "-"], home)
        print(f"{'audits ID, answers.jsonl → /dev/zero':<34}{'∞':>8}{peak:>9.0f}{GB / MB:>9.0f}{wall:>8.1f}{cpu:>8.1f}"
              f"{'—':>7}  {'PASS' if rc == 2 and peak < GB / MB else 'FAIL'} ({last[:70]})")


if __name__ == "__main__":
    main()
