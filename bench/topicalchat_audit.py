"""Write a judge-audit data file (the JSONL format of ``relgate judge-audit --data``) from Topical-Chat USR.

    python bench/topicalchat_audit.py OUT.jsonl [--contexts N]

Reads ``../shared/data/topicalchat_usr/topical_chat.json`` (60 dialogue contexts × 6 responses, human means of 3
annotators; see that folder's README: evaluation use only, not bundled). Each context becomes one input (the dialogue
history and the knowledge fact), each response a candidate with its human scores on the USR scales.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "topicalchat_usr" / "topical_chat.json"
CRITERIA = {
    "overall": "the overall quality of the response as the next turn of the conversation (1-5)",
    "engagingness": "how interesting and engaging the response is (1-3)",
    "naturalness": "whether the response is something a person would naturally say (1-3)",
    "coherence": "whether the response continues the conversation sensibly (1-3)",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--contexts", type=int, default=60)
    args = ap.parse_args()
    rows = json.loads(DATA.read_text(encoding="utf-8"))
    by_context: dict[str, list[dict]] = {}
    for r in rows:
        by_context.setdefault(r["source"], []).append(r)
    with open(args.out, "w", encoding="utf-8") as fh:
        for i, (source, cands) in enumerate(list(by_context.items())[: args.contexts]):
            text = "Conversation so far:\n" + source.strip() + "\n\nFact the speaker knows: " + cands[0]["context"].strip()
            line = {"id": f"tc{i:02d}", "input": text,
                    "candidates": [{"id": f"r{j}", "text": c["system_output"].strip(), "system": c["system_id"],
                                    "human": {k: float(c["scores"][k]) for k in CRITERIA}} for j, c in enumerate(cands)]}
            if i == 0:
                line["criteria"] = CRITERIA
            fh.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
