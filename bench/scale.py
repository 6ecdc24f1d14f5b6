"""Speed at scale (issue 10 §6): listing runs, opening and resuming a 10,000-item × K = 20 run, a huge task file.

Run: ``python bench/scale.py [--items 10000] [--k 20] [--runs 100] [--repeat 3] [--task-mb 200]`` (``--smoke``: 50
items × K = 3, 3 runs, one repeat, a 1 MB task file, no target checked).

Builds, in a temporary directory, one stored run of ``--items`` items × ``--k`` samples each (stopping "none", the
samples a seeded mix of easy, hard and unsolvable items), then measures (median of ``--repeat`` runs, each figure
beside its target):

* ``relgate runs`` — :func:`relgate_tui.engine.runs.listing.list_runs` over ``--runs`` stored runs of that size (hard
  links of the one run's files: same bytes, no extra disk). Target ≤ 0.5 s for 100 runs.
* open — what the TUI does when a run is opened from Runs: ``Session.open`` + the results view at α = 0.10.
  Target ≤ 1.5 s. The run's writer left its derived sample index (``samples.index.npz``,
  :mod:`relgate_tui.engine.runs.sampleindex`), so no sample line is parsed; the same open of a copy *without* the index
  (a run written before indexes existed: every line parsed) is printed too, for information.
* resume — ``relgate certify`` of that fully sampled run again (its command resumes it: nothing to sample, so no
  network call): prepare, the pipeline over 10k finished items, analysis, results document. Target ≤ 3 s.
* a ``--task-mb`` MB task file with ``--limit 5``: peak RSS (and time) of loading it in a fresh process.
  Target: peak RSS ≤ 150 MB (the interpreter with numpy is ~60 MB), i.e. the file is streamed, never held.

Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from relgate_tui.engine.certification.certify import CertifyConfig, prepare
from relgate_tui.engine.records import StoredSample
from relgate_tui.engine.runs.listing import list_runs
from relgate_tui.engine.runs.store import RunStatus

UNREACHABLE = "http://127.0.0.1:9/v1"


CPU: list[float] = []  # process CPU seconds of the last measure (median), shown beside the wall-clock figure


def _median_time(fn: Callable[[], object], repeat: int) -> float:
    """Median wall-clock seconds of ``repeat`` calls (its CPU seconds go to ``CPU``: on a shared, loaded machine
    the wall clock also counts the time other processes held the CPU)."""
    times, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    CPU.append(statistics.median(cpu))
    return statistics.median(times)


def build_run(root: Path, n_items: int, k: int) -> tuple[Path, list[str]]:
    """A task file of ``n_items`` addition questions and its run with ``k`` stored samples per item."""
    task = root / "task.jsonl"
    with task.open("w") as f:
        for i in range(n_items):
            f.write(json.dumps({"id": f"q{i:05d}", "question": f"What is {i} + {i}?", "answer": str(2 * i)}) + "\n")
    args = ["certify", "--task", str(task), "--endpoint", UNREACHABLE, "--model", "bench", "--k-max", str(k),
            "--stopping", "none", "--run-dir", str(root / "runs"), "--quiet"]
    cfg = CertifyConfig(task=str(task), endpoint=UNREACHABLE, model="bench", k_max=k, stopping="none",
                        run_dir=str(root / "runs"))
    prepared = prepare(cfg)
    rng = random.Random(0)
    batch: list[StoredSample] = []
    for item in prepared.items:
        answer = int(item.answers[0])
        kind = rng.random()
        p = 0.9 if kind < 0.7 else (0.45 if kind < 0.9 else 0.0)
        for index in range(k):
            u = rng.random()
            value = answer if u < p else answer + (1 if rng.random() < 0.7 else 10)
            text = f"The answer is {value}."
            batch.append(StoredSample(item.id, index, text, str(value), {"prompt_tokens": 20,
                                                                          "completion_tokens": 6}))
        if len(batch) >= 20000:
            prepared.store.append_samples(batch)
            batch = []
    prepared.store.append_samples(batch)
    prepared.store.set_status(RunStatus.SAMPLED)
    path = prepared.store.path
    prepared.close()
    return path, args


def copies(run: Path, root: Path, n: int) -> Path:
    """``n`` runs under ``root``: the run itself and hard-linked copies of it (distinct directories)."""
    root.mkdir()
    for i in range(n):
        d = root / f"{run.name}-copy{i:03d}"
        d.mkdir()
        for f in run.iterdir():
            if f.is_file():
                os.link(f, d / f.name)
    return root


def task_rss(root: Path, mb: int) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of loading a ``mb`` MB task file with limit 5 in a fresh interpreter."""
    big = root / "big.jsonl"
    line = json.dumps({"id": "x", "question": "What is 1 + 1? " + "padding " * 100, "answer": "2"})
    with big.open("w") as f:
        n = mb * 1024 * 1024 // (len(line) + 8)
        for i in range(n):
            f.write(line.replace('"x"', f'"x{i}"', 1) + "\n")
    # peak RSS from /proc (VmHWM, reset by exec), not getrusage: ru_maxrss keeps the forking parent's peak
    code = ("import sys, time; from relgate_tui.engine.certification.tasks import load_task; t = time.perf_counter(); "
            "task = load_task(sys.argv[1], limit=5); dt = time.perf_counter() - t; assert len(task.items) == 5; "
            "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]; "
            "print(dt, int(hwm) / 1024)")
    out = subprocess.run([sys.executable, "-c", code, str(big)], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    seconds, rss = out.stdout.split()
    big.unlink()
    return float(seconds), float(rss)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=10000)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--task-mb", type=int, default=200)
    ap.add_argument("--smoke", action="store_true", help="the smallest size (seconds), no target checked")
    args = ap.parse_args(argv)
    if args.smoke:
        args.items, args.k, args.runs, args.repeat, args.task_mb = 50, 3, 3, 1, 1
    from relgate_tui.cli import main as cli
    from relgate_tui.engine.certification.session import Session

    rows: list[tuple[str, str, str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="relgate-scale-") as tmp:
        root = Path(tmp)
        os.environ["RELGATE_HOME"] = str(root / "home")
        t0 = time.perf_counter()
        run, certify_args = build_run(root, args.items, args.k)
        print(f"built a {args.items} × K={args.k} run in {time.perf_counter() - t0:.1f} s "
              f"({(run / 'samples.jsonl').stat().st_size / 1e6:.0f} MB of samples)", file=sys.stderr)

        many = copies(run, root / "many", args.runs)
        listing = _median_time(lambda: list_runs(many), args.repeat)
        n = len(list_runs(many))
        rows.append((f"relgate runs: list {n} runs of {args.items} items", f"{listing:.3f} s ({CPU[-1]:.3f})", "≤ 0.5 s",
                     listing <= 0.5 * args.runs / 100))

        def open_run() -> None:
            session = Session.open(run)
            session.results(0.10)
            session.close()

        opening = _median_time(open_run, args.repeat)
        rows.append((f"open a {args.items} × K={args.k} run (Session.open + results view)",
                     f"{opening:.3f} s ({CPU[-1]:.3f})",
                     "≤ 1.5 s", opening <= 1.5))

        def resume() -> None:
            code = cli(certify_args)
            assert code in (0, 1), code

        plain = root / "no-index" / run.name  # a copy without the derived index: samples.jsonl is parsed
        plain.mkdir(parents=True)
        for f in run.iterdir():
            if f.is_file() and f.name != "samples.index.npz":
                os.link(f, plain / f.name)

        def open_plain() -> None:
            session = Session.open(plain)
            session.results(0.10)
            session.close()

        opening_plain = _median_time(open_plain, args.repeat)
        rows.append(("  the same run without its sample index (all lines parsed)", f"{opening_plain:.3f} s "
                     f"({CPU[-1]:.3f})", "—", True))

        resuming = _median_time(resume, args.repeat)
        rows.append((f"resume the fully sampled {args.items}-item run (relgate certify)",
                     f"{resuming:.3f} s ({CPU[-1]:.3f})",
                     "≤ 3 s", resuming <= 3.0))

        seconds, rss = task_rss(root, args.task_mb)
        rows.append((f"{args.task_mb} MB task file, --limit 5: peak RSS (load {seconds:.2f} s)", f"{rss:.0f} MB",
                     "≤ 150 MB", rss <= 150))

    width = max(len(r[0]) for r in rows)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; measured = median wall clock "
          "(process CPU seconds)")
    print(f"{'measure':{width}s}  {'measured':>18s}  {'target':>9s}  verdict")
    for name, value, target, ok in rows:
        verdict = "" if target == "—" else "smoke" if args.smoke else ("PASS" if ok else "FAIL")
        print(f"{name:{width}s}  {value:>18s}  {target:>9s}  {verdict}")
    return 0 if args.smoke or all(r[3] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
