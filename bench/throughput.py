"""Sampling throughput against a fast loopback stub, relgate beside a minimal raw-socket reference client (issue 10
§6; SPEC §8).

A stub chat-completions server runs in a child process: raw asyncio streams, keep-alive, every request answered with
the same small JSON completion after a fixed latency (20 ms). In *this* process, for each concurrency (16 and 64),
two clients ask it for the same number of calls, alternately, ``--repeats`` times:

* the **reference**: ``concurrency`` asyncio tasks, each with one keep-alive connection, writing a pre-built request
  and reading the ``Content-Length`` response — the least a client can do (no JSON, no bookkeeping);
* **relgate**: the :class:`~relgate_tui.engine.transport.sampler.Sampler` with the ``none`` stopping rule and no cache, one
  sample per request (the stub ignores ``n``), timed from building the sampler to its last event (start-up
  included): request building, JSON parsing, canonicalization, stopping rule, events.

Reported per concurrency: the median calls/s of each, their ratio (median of the per-repeat ratios: each relgate run
is paired with the reference run just before it), each rate as a share of the ideal ``concurrency / latency``, and
client CPU per call. Target: relgate ≥ 90 % of the reference at 16 and at 64.

Run: ``python bench/throughput.py [--calls 3000] [--latency-ms 20] [--repeats 3]``; ``--cli``: both clients as
processes (200 items × ``calls / 200``); ``--numeric``: the second workload (120 items, ``--canon numeric``, K 10 and
K 40: 1,200 and 4,800 calls) with each client's fixed cost per run beside its per-call rate; ``--smoke``: the smallest
sizes, one repeat, no target checked.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time

CHAT_RESPONSE = (b'{"id":"x","object":"chat.completion","model":"stub","choices":[{"index":0,"message":{"role":'
                 b'"assistant","content":"The answer is 579."},"finish_reason":"stop"}],'
                 b'"usage":{"prompt_tokens":20,"completion_tokens":6,"total_tokens":26}}')
TARGET = 0.90


# ------------------------------------------------------------------------------------------------ the stub server
async def _stub(latency_s: float) -> None:
    response = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n"
                b"Content-Length: %d\r\n\r\n" % len(CHAT_RESPONSE)) + CHAT_RESPONSE

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                await reader.readexactly(length)
                await asyncio.sleep(latency_s)
                writer.write(response)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


def serve_stub(latency_s: float) -> None:
    try:
        asyncio.run(_stub(latency_s))
    except KeyboardInterrupt:
        pass


class StubProcess:
    def __init__(self, latency_s: float) -> None:
        self.process = subprocess.Popen([sys.executable, __file__, "--serve-stub", repr(latency_s)],
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())

    def __enter__(self) -> StubProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


# ------------------------------------------------------------------------------------------------ the two clients
async def _reference(port: int, concurrency: int, calls: int, body: bytes) -> int:
    request = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
               b"Content-Length: %d\r\n\r\n" % (port, len(body))) + body
    per_worker = [calls // concurrency + (i < calls % concurrency) for i in range(concurrency)]

    async def worker(n: int) -> int:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(n):
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            start = head.lower().index(b"content-length:") + 15
            await reader.readexactly(int(head[start:head.index(b"\r\n", start)]))
        writer.close()
        return n

    return sum(await asyncio.gather(*(worker(n) for n in per_worker)))


def measure_reference(port: int, concurrency: int, calls: int, body: bytes) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    made = asyncio.run(_reference(port, concurrency, calls, body))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return made / wall, cpu / made * 1000


def relgate_job(calls: int, k: int):
    from relgate_tui.core.canon import get_canonicalizer
    from relgate_tui.core.certification.stopping import get_stopping_rule
    from relgate_tui.engine.certification.tasks import load_task
    from relgate_tui.engine.transport.sampler import SamplingJob

    items = load_task("bigbench-3digit-addition").items
    n_items = max(1, calls // k)
    items = (items * (n_items // len(items) + 1))[:n_items]
    items = [type(it)(f"{it.id}-{j}", it.question, it.answers) for j, it in enumerate(items)]
    return SamplingJob(items, get_canonicalizer("numeric"), get_stopping_rule("none"), k)


def measure_relgate(port: int, concurrency: int, calls: int, k: int = 10) -> tuple[float, float]:
    from relgate_tui.engine.transport.endpoints import EndpointConfig
    from relgate_tui.engine.transport.sampler import Sampler, run_sampling

    job = relgate_job(calls, k)
    wall, cpu = time.perf_counter(), time.process_time()
    sampler = Sampler(EndpointConfig(f"http://127.0.0.1:{port}/v1", "stub", send_seed=True), concurrency=concurrency)
    totals = run_sampling(sampler, job)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert totals.failed == 0 and totals.made == len(job.items) * k, totals
    return totals.made / wall, cpu / totals.made * 1000


def measure_cli(port: int, concurrency: int, calls: int, home: str, items: int = 200,
                extra: tuple[str, ...] = ()) -> tuple[float, float]:
    """``relgate certify`` in a process of its own, timed from spawn to exit (start-up, run store, cache, fsync and
    results included): the first ``items`` of bigbench-3digit-addition (200 in all) × ``calls / items`` samples,
    stopping ``none``, ``extra`` options added (the numeric workload: ``--canon numeric``)."""
    import json
    import os
    import resource

    k = max(1, calls // items)
    out = os.path.join(home, "result.json")
    env = {**_installed_env(home), "RELGATE_HOME": home}
    argv = [sys.executable, "-m", "relgate_tui.cli", "certify", "--task", "bigbench-3digit-addition", "--k-max", str(k),
            "--stopping", "none", "--concurrency", str(concurrency), "--endpoint", f"http://127.0.0.1:{port}/v1",
            "--model", "stub", "--quiet", "--json", out, *(["--limit", str(items)] if items != 200 else []), *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(argv, env=env, check=False, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out) as f:
        made = json.load(f)["calls"]["made"]
    assert made == items * k, made
    return made / wall, (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / made * 1000


def _installed_env(home: str) -> dict[str, str]:
    """The child processes' environment, as for an installed relgate: no ``RELGATE_*`` settings of the caller, and
    bytecode compiled once and reused (pip compiles it at install; a development shell's ``PYTHONDONTWRITEBYTECODE``
    would otherwise make every run compile relgate's ~120 modules again, ~0.15 s) — kept in a temporary
    ``PYTHONPYCACHEPREFIX``, never beside the sources."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("RELGATE_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(os.path.dirname(home), "pycache")
    return env


def measure_raw_process(port: int, concurrency: int, calls: int, home: str) -> tuple[float, float]:
    """The reference client in a process of its own, timed the same way (spawn to exit)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--raw-client", str(port), str(concurrency), str(calls)], check=True,
                   env=_installed_env(home))
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return calls / wall, (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / calls * 1000


def request_body() -> bytes:
    """The body relgate sends for the first item (so both clients send requests of the same size)."""
    import json

    from relgate_tui.engine.transport.endpoints import EndpointConfig
    from relgate_tui.engine.transport.endpoints import request_body as build
    from relgate_tui.engine.transport.prompts import item_messages

    item = relgate_job(10, 10).items[0]
    return json.dumps(build(EndpointConfig("http://127.0.0.1:1/v1", "stub"), item_messages(item), 1)).encode()


# ------------------------------------------------------------------------------------------------ main
def main(argv: list[str]) -> int:
    if argv[:1] == ["--serve-stub"]:
        serve_stub(float(argv[1]))
        return 0
    if argv[:1] == ["--raw-client"]:
        asyncio.run(_reference(int(argv[1]), int(argv[2]), int(argv[3]), _raw_body()))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cli", action="store_true", help="time `relgate certify` in a process of its own against "
                        "the raw client in a process of its own (issue 32 §6: start-up included), at concurrency 16")
    parser.add_argument("--numeric", action="store_true", help="the second workload as processes: 120 items, --canon "
                        "numeric, K 10 and 40 (1,200 and 4,800 calls), the fixed cost per run and the per-call rate")
    parser.add_argument("--smoke", action="store_true", help="the smallest sizes, one repeat, no target checked")
    args = parser.parse_args(argv)
    if args.smoke:
        main_numeric(args.latency_ms, 1, ks=(1, 2), items=20, warm=False)
        return 0
    if args.numeric:
        return main_numeric(args.latency_ms, args.repeats)
    if args.cli:
        return main_cli(args.calls, args.latency_ms, args.repeats)
    latency = args.latency_ms / 1000
    body = request_body()
    print(f"stub chat endpoint in a child process, latency {args.latency_ms:g} ms; {args.calls} calls per run; "
          f"relgate and the raw-socket reference alternately, median of {args.repeats} runs each "
          f"(relgate: stopping 'none', no cache, start-up included)\n")
    header = (f"{'concurrency':>11}  {'reference/s':>11}  {'relgate/s':>9}  {'ratio':>6}  {'target':>6}  "
              f"{'ideal/s':>7}  {'ref of ideal':>12}  {'relgate of ideal':>16}  {'CPU ms/call ref · relgate':>25}")
    print(header)
    ok = True
    with StubProcess(latency) as stub:
        measure_reference(stub.port, 4, 200, body)  # warm up: imports, connections, the stub's first accepts
        measure_relgate(stub.port, 4, 200)
        for concurrency in (16, 64):
            ref_runs, rel_runs, ratios = [], [], []
            for _ in range(args.repeats):
                ref_runs.append(measure_reference(stub.port, concurrency, args.calls, body))
                rel_runs.append(measure_relgate(stub.port, concurrency, args.calls))
                ratios.append(rel_runs[-1][0] / ref_runs[-1][0])
            ref = statistics.median(r[0] for r in ref_runs)
            rel = statistics.median(r[0] for r in rel_runs)
            ratio = statistics.median(ratios)
            ideal = concurrency / latency
            ref_cpu = statistics.median(r[1] for r in ref_runs)
            rel_cpu = statistics.median(r[1] for r in rel_runs)
            ok = ok and ratio >= TARGET
            print(f"{concurrency:>11}  {ref:11.0f}  {rel:9.0f}  {ratio:6.1%}  {'≥ 90%':>6}  {ideal:7.0f}  "
                  f"{ref / ideal:12.1%}  {rel / ideal:16.1%}  {f'{ref_cpu:.2f} · {rel_cpu:.2f}':>25}")
    print(f"\ntarget: relgate >= {TARGET:.0%} of the reference client's rate at concurrency 16 and 64 -> "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def _raw_body() -> bytes:
    """A request body of relgate's size without importing relgate (the raw client's process stays minimal)."""
    import json

    messages = [{"role": "user", "content": "What is 123 + 456? Give only the final answer as a number."}]
    return json.dumps({"model": "stub", "messages": messages, "temperature": 0.7, "seed": 1234567}).encode()


def _load() -> str:
    """The machine's load average (1, 5, 15 min) now: printed beside the figures, which a busy machine inflates."""
    import os

    return "load average " + " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main_cli(calls: int, latency_ms: float, repeats: int, concurrency: int = 16) -> int:
    """``--cli``: relgate certify vs the raw client, both as processes, alternately; medians and the ratio."""
    import tempfile

    print(f"stub chat endpoint in a child process, latency {latency_ms:g} ms; {calls} calls per run at concurrency "
          f"{concurrency}; `relgate certify` (a process: start-up, run store, cache, results) and the raw-socket client "
          f"(a process) alternately, median of {repeats} runs each; {_load()}\n")
    print(f"{'run':>4}  {'raw client/s':>12}  {'relgate/s':>9}  {'ratio':>6}  {'CPU ms/call raw · relgate':>26}")
    ratios, raws, rels = [], [], []
    with StubProcess(latency_ms / 1000) as stub, tempfile.TemporaryDirectory() as tmp:
        measure_raw_process(stub.port, concurrency, 200, f"{tmp}/warm")  # warm up: bytecode, the stub's accepts
        measure_cli(stub.port, concurrency, 200, f"{tmp}/warm")
        for i in range(repeats):
            raw = measure_raw_process(stub.port, concurrency, calls, f"{tmp}/home{i}")
            rel = measure_cli(stub.port, concurrency, calls, f"{tmp}/home{i}")
            raws.append(raw[0])
            rels.append(rel[0])
            ratios.append(rel[0] / raw[0])
            print(f"{i + 1:>4}  {raw[0]:12.0f}  {rel[0]:9.0f}  {ratios[-1]:6.1%}  {f'{raw[1]:.2f} · {rel[1]:.2f}':>26}")
    ratio = statistics.median(ratios)
    print(f"\nmedian: raw client {statistics.median(raws):.0f}/s, relgate {statistics.median(rels):.0f}/s, ratio "
          f"{ratio:.1%} (target ≥ {TARGET:.0%}: {'PASS' if ratio >= TARGET else 'FAIL'}; ideal "
          f"{concurrency / (latency_ms / 1000):.0f}/s)")
    return 0 if ratio >= TARGET else 1


def main_numeric(latency_ms: float, repeats: int, ks: tuple[int, int] = (10, 40), items: int = 120,
                 concurrency: int = 16, warm: bool = True) -> int:
    """``--numeric``: the second workload (issue 42 §7) — ``relgate certify --limit 120 --canon numeric --stopping
    none --concurrency 16`` at K 10 and K 40 against the raw client, both as processes, paired and alternating. A
    run's time is ``fixed + calls / rate``: from the medians at the two sizes, each client's fixed cost per run and
    per-call rate. Targets: ≥ 80 % of the raw client at K 10, ≥ 90 % at K 40."""
    import tempfile

    targets = {ks[0]: 0.80, ks[1]: 0.90}
    print(f"numeric workload: {items} items, --canon numeric --stopping none --concurrency {concurrency}, stub latency "
          f"{latency_ms:g} ms; `relgate certify` and the raw client as processes (start-up included), alternately, "
          f"median of {repeats}; {_load()}\n")
    print(f"{'K':>3}  {'calls':>6}  {'raw s':>6}  {'relgate s':>9}  {'raw/s':>6}  {'relgate/s':>9}  {'ratio':>6}  "
          f"{'target':>6}")
    walls: dict[int, tuple[float, float]] = {}
    ok = True
    with StubProcess(latency_ms / 1000) as stub, tempfile.TemporaryDirectory() as tmp:
        if warm:  # bytecode compiled, the stub's first accepts
            measure_raw_process(stub.port, concurrency, 200, f"{tmp}/warm")
            measure_cli(stub.port, concurrency, items, f"{tmp}/warm", items, ("--canon", "numeric"))
        for k in ks:
            calls = items * k
            raw_t, rel_t, ratios = [], [], []
            for i in range(repeats):
                raw = measure_raw_process(stub.port, concurrency, calls, f"{tmp}/k{k}-{i}")
                rel = measure_cli(stub.port, concurrency, calls, f"{tmp}/k{k}-{i}", items, ("--canon", "numeric"))
                raw_t.append(calls / raw[0])
                rel_t.append(calls / rel[0])
                ratios.append(rel[0] / raw[0])
            walls[k] = (statistics.median(raw_t), statistics.median(rel_t))
            ratio = statistics.median(ratios)
            ok = ok and ratio >= targets[k]
            print(f"{k:>3}  {calls:>6}  {walls[k][0]:6.2f}  {walls[k][1]:9.2f}  {calls / walls[k][0]:6.0f}  "
                  f"{calls / walls[k][1]:9.0f}  {ratio:6.1%}  {'≥ ' + format(targets[k], '.0%'):>6}")
    span = items * (ks[1] - ks[0])
    print()
    for name, j in (("raw client", 0), ("relgate", 1)):
        per_call = (walls[ks[1]][j] - walls[ks[0]][j]) / span
        fixed = walls[ks[0]][j] - items * ks[0] * per_call
        if per_call <= 0:  # the larger run was not slower: noise (a loaded machine) swamps the per-call time
            print(f"{name:>10}: fixed cost and per-call rate not separable (K {ks[1]} ran no slower than K {ks[0]})")
            continue
        print(f"{name:>10}: fixed cost per run {fixed:5.2f} s · {per_call * 1000:.3f} ms per call "
              f"({1 / per_call:.0f} calls/s)")
    print(f"\ntargets: ≥ 80% of the raw client at {items * ks[0]:,} calls, ≥ 90% at {items * ks[1]:,} -> "
          f"{'PASS' if ok else 'FAIL'} ({_load()})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
