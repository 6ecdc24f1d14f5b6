"""Smoke check of the real local judges started by ``bench/real_judges.sh`` (issues 12-14).

    bash bench/real_judges.sh python bench/real_judges_check.py [--repeats 3] [--hanna-fit] [URL ...]
    python bench/real_judges_check.py --smoke    # one story; exit 77 ("skipped") when no server answers

For each chat server (default: $RELGATE_JUDGE_URLS, else 127.0.0.1:8012/8013/8014) it sends relgate's direct 1-5
scoring prompt (``judge_prompts.direct_prompt``, HANNA, Coherence) with ``logprobs: true, top_logprobs: 10,
max_tokens: 4, temperature: 0`` for ``--repeats`` different stories (different stories, so llama.cpp's prompt cache
does not hide the prompt evaluation), and prints the answer, every generated token with its log-probability, the
rating token (the first generated token that is a digit 1-5 once stripped) with its top alternatives, the latency of
each request (and, given $RELGATE_JUDGE_PIDS, the server's CPU seconds for it: a load-independent figure) and whether the answer has the OpenAI shape ``choices[0].logprobs.content[].top_logprobs``; then the
same stories again without log-probabilities (the latency difference is llama-cpp-python's log-prob cost). One request
with ``n: 2`` shows how many choices come back. Then one ``/v1/embeddings`` request (two texts) on $RELGATE_EMBED_URL
(default 127.0.0.1:8013) prints the embedding size. ``--hanna-fit`` counts, with each server's own tokenizer
(``/extras/tokenize/count``), the direct prompt of every HANNA story and the pairwise prompt of every pair of stories
of one input (summing the parts: exact within a few tokens), and prints how many fit ``--n-ctx`` minus ``--reserve``.

This only verifies the servers, so it talks to them with httpx directly; relgate itself asks judges through its
judging platform. Loopback only; nothing here is a benchmark target.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from relgate_tui.engine.judging.data import load_audit_set  # noqa: E402
from relgate_tui.engine.judging.prompts import direct_prompt, pairwise_prompt  # noqa: E402

DEFAULT_URLS = ["http://127.0.0.1:8012/v1", "http://127.0.0.1:8013/v1", "http://127.0.0.1:8014/v1"]
CRITERION = "Coherence"


def _model_id(client: httpx.Client, url: str) -> str:
    return str(client.get(f"{url}/models").json()["data"][0]["id"])


def _chat(client: httpx.Client, url: str, model: str, messages: list[dict], **extra: object) -> tuple[dict, float]:
    body = {"model": model, "messages": messages, "temperature": 0, "max_tokens": 4,
            "logprobs": True, "top_logprobs": 10, **extra}
    t0 = time.perf_counter()
    r = client.post(f"{url}/chat/completions", json=body)
    dt = time.perf_counter() - t0
    r.raise_for_status()
    return r.json(), dt


def _alts(entry: dict) -> str:
    return ", ".join(f"{a['token']!r} {a['logprob']:.2f}" for a in entry.get("top_logprobs") or [])


def _cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU time of a local server process (all its threads), from /proc; None when unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, TypeError):
        return None


def check_judge(client: httpx.Client, url: str, stories: list[tuple[str, str]], description: str,
                pid: int | None) -> float:
    model = _model_id(client, url)
    print(f"== {url}  model id {model!r}")
    latencies, cpu = [], []
    for i, (prompt, story) in enumerate(stories):
        c0 = _cpu_seconds(pid)
        doc, dt = _chat(client, url, model, direct_prompt(prompt, story, CRITERION, description))
        latencies.append(dt)
        c1 = _cpu_seconds(pid)
        if c0 is not None and c1 is not None:
            cpu.append(c1 - c0)
        choice = doc["choices"][0]
        content = (choice.get("logprobs") or {}).get("content")
        shape = isinstance(content, list) and all(isinstance(e.get("top_logprobs"), list) for e in content)
        usage = doc.get("usage") or {}
        print(f"  story {i}: {dt:.2f} s ({cpu[-1] if cpu else float('nan'):.2f} CPU-s), prompt {usage.get('prompt_tokens')} tokens, answer "
              f"{choice['message']['content']!r}, finish {choice.get('finish_reason')}, OpenAI logprobs shape: {shape}")
        if i == 0 and shape:
            for e in content:
                print(f"    token {e['token']!r} logprob {e['logprob']:.3f}  top: {_alts(e)}")
        rating = next((e for e in content or [] if e["token"].strip() in {"1", "2", "3", "4", "5"}), None)
        if rating is None:
            print("    no rating token among the generated tokens")
        else:
            print(f"    rating token {rating['token']!r} ({math.exp(rating['logprob']):.2f}); top: {_alts(rating)}")
    plain = [_chat(client, url, model, direct_prompt(p, s, CRITERION, description), logprobs=False,
                   top_logprobs=None)[1] for p, s in stories]
    doc, _ = _chat(client, url, model, direct_prompt(*stories[0], CRITERION, description), n=2)
    print(f"  n=2 request -> {len(doc['choices'])} choice(s)")
    med = statistics.median(latencies)
    print(f"  latency median {med:.2f} s over {len(latencies)} different stories (max_tokens 4); the same stories "
          f"without logprobs: median {statistics.median(plain):.2f} s")
    if cpu:
        print(f"  server CPU time per answer (with logprobs): median {statistics.median(cpu):.2f} CPU-s "
              "(= the wall time of an idle machine at --n_threads 1)")
    return med


def check_embeddings(client: httpx.Client, url: str, texts: list[str]) -> None:
    model = _model_id(client, url)
    t0 = time.perf_counter()
    r = client.post(f"{url}/embeddings", json={"model": model, "input": texts})
    dt = time.perf_counter() - t0
    r.raise_for_status()
    data = r.json()["data"]
    first = data[0]["embedding"]
    if first and isinstance(first[0], list):  # no pooling: one vector per token
        print(f"== {url}  model id {model!r}: NOT pooled: {len(first)} token vectors of size {len(first[0])}")
        return
    norm = math.sqrt(sum(x * x for x in first))
    print(f"== {url}  model id {model!r}: {len(data)} embeddings of size {len(first)} in {dt:.2f} s "
          f"(first values {[round(x, 4) for x in first[:3]]}, L2 norm {norm:.1f})")


def _count(client: httpx.Client, url: str, model: str, text: str) -> int:
    root = url.rstrip("/").removesuffix("/v1")  # llama-cpp-python's extras live beside /v1, not under it
    r = client.post(f"{root}/extras/tokenize/count", json={"model": model, "input": text})
    r.raise_for_status()
    return int(r.json()["count"])


def hanna_fit(client: httpx.Client, url: str, n_ctx: int, reserve: int) -> None:
    """Prompt tokens = tokens of the user text + the chat template's overhead (measured once from ``usage``)."""
    audit = load_audit_set("hanna")
    description = audit.criterion_description(CRITERION)
    model = _model_id(client, url)
    first = audit.inputs[0]
    messages = direct_prompt(first.input, first.candidates[0].text, CRITERION, description)
    doc, _ = _chat(client, url, model, messages, max_tokens=1)
    overhead = int(doc["usage"]["prompt_tokens"]) - _count(client, url, model, messages[0]["content"])
    budget = n_ctx - reserve
    direct, pair_fit, pair_all, pair_max = [], 0, 0, 0
    for inp in audit.inputs:
        skeleton = pairwise_prompt(inp.input, "", "", CRITERION, description)[0]["content"]
        base = _count(client, url, model, skeleton) + overhead
        story_tokens = []
        for c in inp.candidates:
            story_tokens.append(_count(client, url, model, c.text))
            direct.append(_count(client, url, model, direct_prompt(inp.input, c.text, CRITERION, description)[0]["content"])
                          + overhead)
        for a in range(len(story_tokens)):
            for b in range(a + 1, len(story_tokens)):
                n = base + story_tokens[a] + story_tokens[b]
                pair_all += 1
                pair_fit += n <= budget
                pair_max = max(pair_max, n)
    fit = sum(n <= budget for n in direct)
    print(f"== {model}: chat template overhead {overhead} tokens; budget {n_ctx} - {reserve} = {budget}")
    print(f"  direct prompts: {fit}/{len(direct)} fit; tokens median {statistics.median(direct):.0f}, "
          f"max {max(direct)}, total {sum(direct)}")
    print(f"  pairwise prompts (unordered pairs within an input): {pair_fit}/{pair_all} fit; max {pair_max}")


SKIPPED = 77  # --smoke with no server: the exit code of a skipped check (tests/test_bench_smoke.py)


def _answers(url: str) -> bool:
    """Whether an OpenAI-compatible server answers ``GET /models`` at ``url`` (2 s)."""
    try:
        return httpx.get(url.rstrip("/") + "/models", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("urls", nargs="*")
    ap.add_argument("--embed", default=os.environ.get("RELGATE_EMBED_URL", "http://127.0.0.1:8013/v1"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--hanna-fit", action="store_true")
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--reserve", type=int, default=16, help="tokens kept for the answer")
    ap.add_argument("--json", help="also write the median latencies (seconds per URL) here")
    ap.add_argument("--smoke", action="store_true", help="one story, no --hanna-fit; exit 77 when no judge server "
                    "answers")
    args = ap.parse_args()
    urls = args.urls or os.environ.get("RELGATE_JUDGE_URLS", "").split() or DEFAULT_URLS
    if args.smoke:
        args.repeats, args.hanna_fit = 1, False
        down = [url for url in urls if not _answers(url)]
        if down:
            print(f"skipped: no judge server answers at {', '.join(down)} (start them with bench/real_judges.sh)")
            return SKIPPED
    env_pids = [int(p) for p in os.environ.get("RELGATE_JUDGE_PIDS", "").split()]
    pids: list[int | None] = list(env_pids) if not args.urls and len(env_pids) == len(urls) else [None] * len(urls)
    audit = load_audit_set("hanna")
    description = audit.criterion_description(CRITERION)
    stories = [(inp.input, inp.candidates[0].text) for inp in audit.inputs[: args.repeats]]
    medians = {}
    with httpx.Client(timeout=600) as client:
        for url, pid in zip(urls, pids, strict=True):
            medians[url] = check_judge(client, url, stories, description, pid)
        if args.embed:
            check_embeddings(client, args.embed, [stories[0][1], stories[-1][1]])
        if args.hanna_fit:
            for url in urls:
                hanna_fit(client, url, args.n_ctx, args.reserve)
    if args.json:
        Path(args.json).write_text(json.dumps(medians, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
