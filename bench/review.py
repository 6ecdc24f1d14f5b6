"""Team review under load (issue 21 acceptance): 8 headless reviewer processes on one session of 400 items with
R = 2, on a real PostgreSQL server (started here: initdb + pg_ctl as the ``postgres`` user, fsync on) and on the
embedded SQLite store.

Run: ``python bench/review.py [--items 400] [--reviewers 8] [--backend both|postgres|sqlite]`` (``--smoke``: 10 items,
2 reviewers, the embedded store, the label checks but not the latency target). Each reviewer is
its own process, connected as its own database role on PostgreSQL (``--as`` on SQLite), and works the queue through
the same :class:`~relgate_tui.engine.review.client.Reviewer` as ``relgate review label`` (claim, journal with fsync,
commit); they start labelling together, once all of them are connected. Checks: exactly ``items × R`` labels, every item labelled by exactly R distinct reviewers, none lost, none
duplicated. Prints the time from a label (the keypress, journaled) to its commit — p50 and p95 beside the target
(p95 ≤ 30 ms on loopback) — and exits 1 when a check or the target fails.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TARGET_P95_MS = 30.0


def worker(url: str, sid: str, as_name: str | None, out: str, seed: int) -> None:
    import random

    from relgate_tui.engine.review.client import Reviewer
    from relgate_tui.engine.review.store import open_store

    rng = random.Random(seed)
    store = open_store(url)
    name = store.db.identity(as_name)
    times: list[float] = []
    r = Reviewer(store, store.session(sid), name, on_commit=times.append)
    # start line: every reviewer is imported and connected before anyone labels (8 Pythons booting at once would
    # otherwise compete with the first labels for the CPU and time their start-up, not the store)
    print("ready", flush=True)
    sys.stdin.readline()
    n = 0
    while (claim := r.next_item()) is not None:
        n_cand = max(1, len(claim.item.candidates))
        verdict = str(rng.randint(1, n_cand)) if rng.random() < 0.9 else "none"
        sent = r.label(claim.item_id, verdict, claim_next=True)  # as `relgate review label` does
        if sent.unreachable:
            raise SystemExit(f"{name}: {sent.unreachable}")
        n += 1
    r.close()
    store.close()
    Path(out).write_text(json.dumps({"reviewer": name, "labels": n, "times": times}))


def _make_run(home: Path, n_items: int) -> str:
    from relgate_tui.cli import main
    from relgate_tui.engine.runs.listing import list_runs

    p = home / "samples.jsonl"
    with p.open("w", encoding="utf-8") as f:
        for i in range(2 * n_items):  # the run's calibration half is what gets published
            samples = [str(i)] * 3 + [str(i + 1)] * 2 + [str(i + 2)]
            f.write(json.dumps({"id": f"q{i:05d}", "question": f"q{i}?", "model": "bench", "samples": samples}) + "\n")
    assert main(["import", "samples", str(p), "--run-dir", str(home / "runs"), "--quiet"]) == 0
    return list_runs(home / "runs")[0].run_id


def bench(kind: str, n_items: int, n_reviewers: int, per_item: int) -> dict[str, object]:
    from relgate_tui.cli import main
    from relgate_tui.engine.review.store import open_store

    tmp = Path(tempfile.mkdtemp(prefix=f"relgate-bench-review-{kind}-"))
    os.environ["RELGATE_HOME"] = str(tmp / "home")
    (tmp / "home").mkdir()
    server = None
    try:
        urls: list[tuple[str, str | None]] = []
        if kind == "postgres":
            from tests.engine.review.pgserver import PgServer

            server = PgServer(fsync=True).start()
            server.create_db("bench")
            admin = server.url("postgres", None, "bench")
            assert main(["review", "init", "--db", admin]) == 0
            for k in range(n_reviewers):
                pw = secrets.token_hex(8)
                server.create_login(f"rev{k}", pw)
                assert main(["review", "grant", f"rev{k}", "--db", admin]) == 0
                urls.append((server.url(f"rev{k}", pw, "bench"), None))
        else:
            admin = f"sqlite:///{tmp / 'review.sqlite3'}"
            assert main(["review", "init", "--db", admin]) == 0
            urls = [(admin, f"rev{k}") for k in range(n_reviewers)]
        run = _make_run(tmp / "home", n_items)
        out = tmp / "pub.json"
        assert main(["review", "publish", run, "--db", admin, "--per-item", str(per_item), "--json", str(out)]) == 0
        sid = json.loads(out.read_text())["session"]
        procs = []
        for k, (url, as_name) in enumerate(urls):
            cmd = [sys.executable, __file__, "--worker", url, sid, as_name or "", str(tmp / f"w{k}.json"), str(k)]
            procs.append(subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, text=True))
        for p in procs:
            p.stdout.readline()  # "ready" (or EOF when the worker failed: its exit code says so below)
        t0 = time.perf_counter()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.close()
        codes = [p.wait() for p in procs]
        wall = time.perf_counter() - t0
        results = [json.loads((tmp / f"w{k}.json").read_text()) for k in range(n_reviewers) if codes[k] == 0]
        store = open_store(admin)
        labels = store.labels(sid)
        ids = store.item_ids(sid)
        store.close()
        n_labels = sum(len(v) for v in labels.values())
        reported = sum(int(r["labels"]) for r in results)
        times = sorted(t * 1000 for r in results for t in r["times"])
        exact = sum(1 for i in ids if len(labels.get(i, {})) == per_item)
        p95 = times[int(0.95 * (len(times) - 1))] if times else float("nan")
        return {"backend": kind, "items": len(ids), "labels": n_labels, "expected": len(ids) * per_item,
                "items_with_R": exact, "worker_labels": reported, "failed_workers": sum(c != 0 for c in codes),
                "p50_ms": statistics.median(times) if times else float("nan"), "p95_ms": p95,
                "wall_s": wall, "labels_per_s": n_labels / wall if wall else 0.0}
    finally:
        if server is not None:
            server.destroy()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=400)
    ap.add_argument("--reviewers", type=int, default=8)
    ap.add_argument("--per-item", type=int, default=2)
    ap.add_argument("--backend", choices=("both", "postgres", "sqlite"), default="both")
    ap.add_argument("--worker", nargs=5, metavar=("URL", "SESSION", "AS", "OUT", "SEED"), help=argparse.SUPPRESS)
    ap.add_argument("--smoke", action="store_true", help="10 items, 2 reviewers, SQLite (seconds), no target checked")
    args = ap.parse_args()
    if args.smoke:
        args.items, args.reviewers, args.backend = 10, 2, "sqlite"
    if args.worker:
        url, sid, as_name, out, seed = args.worker
        worker(url, sid, as_name or None, out, int(seed))
        return 0
    kinds = ["postgres", "sqlite"] if args.backend == "both" else [args.backend]
    rows = [bench(k, args.items, args.reviewers, args.per_item) for k in kinds]
    ok = True
    load = os.getloadavg()
    print(f"\n{args.reviewers} reviewer processes, {args.items} items, R = {args.per_item}; {os.cpu_count()} CPUs, "
          f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min)\n")
    print(f"| backend | labels (expected) | items with exactly R distinct | p50 label→commit | p95 label→commit "
          f"(target ≤ {TARGET_P95_MS:.0f} ms) | wall | labels/s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        good = (r["labels"] == r["expected"] == r["worker_labels"] and r["items_with_R"] == r["items"]
                and not r["failed_workers"])
        fast = args.smoke or float(r["p95_ms"]) <= TARGET_P95_MS  # type: ignore[arg-type]
        ok = ok and good and fast
        print(f"| {r['backend']} | {r['labels']} ({r['expected']}) {'ok' if good else 'MISMATCH'} | "
              f"{r['items_with_R']} of {r['items']} | {r['p50_ms']:.1f} ms | {r['p95_ms']:.1f} ms "
              f"{'smoke' if args.smoke else 'ok' if fast else 'MISSED'} | {r['wall_s']:.1f} s | {r['labels_per_s']:.0f} |")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
