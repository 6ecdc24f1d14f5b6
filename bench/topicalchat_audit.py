"""Write a judge-audit data file (the JSONL format of ``relgate judge audit --data``) from Topical-Chat USR.

    python bench/topicalchat_audit.py OUT.jsonl [--contexts N]
    python bench/topicalchat_audit.py --smoke    # 3 contexts into a temporary file; exit 77 (skipped) without the data

Reads ``../shared/data/topicalchat_usr/topical_chat.json`` (60 dialogue contexts × 6 responses, human means of 3
annotators; see that folder's README: evaluation use only, not bundled). Each context becomes one input (the dialogue
history and the knowledge fact), each response a candidate with its human scores on the USR scales.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

SKIPPED = 77  # --smoke without the data: the exit code of a skipped check (tests/test_bench_smoke.py)
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "topicalchat_usr" / "topical_chat.json"
CRITERIA = {
    "overall": "the overall quality of the response as the next turn of the conversation (1-5)",
    "engagingness": "how interesting and engaging the response is (1-3)",
    "naturalness": "whether the response is something a person would naturally say (1-3)",
    "coherence": "whether the response continues the conversation sensibly (1-3)",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--contexts", type=int, default=60)
    ap.add_argument("--smoke", action="store_true", help="3 contexts into a temporary file (seconds)")
    args = ap.parse_args()
    if not DATA.exists():
        print(f"{'skipped' if args.smoke else 'error'}: Topical-Chat USR not found at {DATA}")
        return SKIPPED if args.smoke else 2
    if args.smoke:
        with tempfile.TemporaryDirectory() as tmp:
            args.out, args.contexts = str(Path(tmp) / "tc.jsonl"), 3
            write(args.out, args.contexts)
            print(f"smoke: wrote {sum(1 for _ in open(args.out, encoding='utf-8'))} inputs")
        return 0
    if args.out is None:
        ap.error("OUT is required (or --smoke)")
    write(args.out, args.contexts)
    return 0


def write(out: str, contexts: int) -> None:
    rows = json.loads(DATA.read_text(encoding="utf-8"))
    by_context: dict[str, list[dict]] = {}
    for r in rows:
        by_context.setdefault(r["source"], []).append(r)
    with open(out, "w", encoding="utf-8") as fh:
        for i, (source, cands) in enumerate(list(by_context.items())[:contexts]):
            text = "Conversation so far:\n" + source.strip() + "\n\nFact the speaker knows: " + cands[0]["context"].strip()
            line = {"id": f"tc{i:02d}", "input": text,
                    "candidates": [{"id": f"r{j}", "text": c["system_output"].strip(), "system": c["system_id"],
                                    "human": {k: float(c["scores"][k]) for k in CRITERIA}} for j, c in enumerate(cands)]}
            if i == 0:
                line["criteria"] = CRITERIA
            fh.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    sys.exit(main())
