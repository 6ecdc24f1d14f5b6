"""Write the example judge scores files in ``examples/`` (issue 24 §6): one audit of relgate's *simulated* judge pool
on the bundled HANNA set (MIT; see ``assets/NOTICE.md``), exported with ``relgate audits ID --scores FILE``.

The audit: HANNA / Coherence, 30 inputs × 5 candidates, direct scores 1–5 with the top-5 log-probs, three judges
(``sim-judge``, ``sim-judge-long``, ``sim-judge-sensitive``) under three prompt variants (the original, the seeded
``typo`` and ``newline`` perturbations), one answer each. Prompt texts are left out (ids point into
``assets/judge/hanna.jsonl``) and stories are kept only where a study reads them, so the files stay small; every
judge score in them comes from the simulated demo, every human score from HANNA.

* ``hanna-coherence-sim-judges.jsonl`` — every judge × variant: the IRT study (variants) and the jury (judges);
* ``hanna-coherence-sim-judge.jsonl`` — ``sim-judge`` under the original prompt: the score-interval study;
* ``hanna-coherence-jury.jsonl`` — the three judges under the original prompt on 20 inputs, with the stories (the
  jury's reliability predictors read the judged texts).

Run from the repository root: ``python examples/make_examples.py`` (starts the demo in-process; about a minute).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
JUDGES = ("sim-judge", "sim-judge-long", "sim-judge-sensitive")
DROP = ("input", "output")  # texts stay in assets/judge/hanna.jsonl
JURY_INPUTS = 20  # the jury's reliability predictors read the judged texts: its file keeps the stories


def main() -> int:
    from relgate_tui.cli import main as cli
    from relgate_tui.demo import DemoServer
    from relgate_tui.engine.judging import list_audits

    out = ROOT / "examples"
    with tempfile.TemporaryDirectory() as home:
        os.environ["RELGATE_HOME"] = home
        with DemoServer() as demo:
            args = ["judge-audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", demo.base_url,
                    "--model", JUDGES[0], *(x for j in JUDGES[1:] for x in ("--judge", f"model={j}")),
                    "--perturb", "typo,newline", "--protocol", "direct", "--reps", "1", "--top-logprobs", "5",
                    "--inputs", "30", "--candidates", "5", "--seed", "0", "--json", os.devnull]
            if cli(args) != 0:
                return 1
        (audit,) = list_audits(Path(home) / "audits")
        full = Path(home) / "scores.jsonl"
        if cli(["audits", audit.id, "--scores", str(full)]) != 0:
            return 1
        rows = [json.loads(line) for line in full.read_text(encoding="utf-8").splitlines()]
    with_texts = [dict(r) for r in rows]
    for r in rows:
        for key in DROP:
            r.pop(key, None)

    def write(name: str, keep: list[dict]) -> None:
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in keep)
        (out / name).write_text(text, encoding="utf-8")
        print(f"{name}: {len(keep)} rows, {len(text.encode()) // 1024} KiB")

    write("hanna-coherence-sim-judges.jsonl", rows)
    write("hanna-coherence-sim-judge.jsonl", [r for r in rows if r["judge"] == "sim-judge"
                                               and r.get("variant", "original") == "original"])
    inputs = sorted({r["id"].split("/")[0] for r in with_texts}, key=lambda p: int(p[1:]))[:JURY_INPUTS]
    jury = [{k: v for k, v in r.items() if k != "input"} for r in with_texts
            if r.get("variant", "original") == "original" and r["id"].split("/")[0] in inputs]
    write("hanna-coherence-jury.jsonl", jury)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
