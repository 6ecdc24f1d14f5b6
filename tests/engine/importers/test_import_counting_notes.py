"""The import summary says how relgate's figure relates to the tool's (issue 31 item 26): the level is k/(n + 1)
where an accuracy is k/n, and tied top answers are broken by the seeded RNG."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "imports"


def test_the_n_plus_one_and_the_ties_are_said(incli, tmp_path: Path) -> None:
    log = tmp_path / "samples.jsonl"
    rows = []
    for i in range(20):  # items 0-3: a tie between the right answer and a wrong one
        answer = str(100 + i)
        samples = [answer, answer, "7", "7"] if i < 4 else [answer, answer, answer, "7"]
        rows.append({"id": f"q{i}", "question": f"What is {i} plus 100?", "answer": answer, "samples": samples})
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "doc.json"
    result = incli(tmp_path, "import", "samples", str(log), "--json", str(out))
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    n = doc["reliability_n"]
    k = round(doc["reliability_level"] * (n + 1))
    assert f"reliability level {k}/{n + 1} = " in result.stderr
    assert f"the same top answers are {k}/{n} = {k / n:.1%}" in result.stderr
    tied = sum(1 for e in doc["items"] if "score" in e and e["classes"][0]["count"] == e["classes"][1]["count"])
    assert tied > 0 and f"{tied} verified item" in result.stderr and "seeded RNG" in result.stderr
