"""``relgate judge certify/apply`` with several ``--verdicts`` (a judge cascade, cheapest first): the JSON blocks,
refusals (other ids, disagreeing human labels), exit codes, ``judge apply`` tagging each item with its judge — and one
``--verdicts`` pinned by a golden document and text, exactly as before cascades existed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).parent / "golden"


def _world(n: int, seed: int, labelled: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The easy-only world: the cheap judge sure of easy items only, the strong judge of most (calibrated)."""
    rng = np.random.default_rng(seed)
    d = rng.random(n)
    c = np.array([1 - d / 2, 0.5 + 0.5 * (1 - d ** 4)])
    y = (rng.random(n) < 0.7).astype(int)
    f = np.where(rng.random(c.shape) < c, y, 1 - y)
    return np.round(np.where(f == 1, c, 1 - c), 4), y, np.arange(n) < labelled


def _files(tmp: Path, n: int = 900, seed: int = 2, labelled: int = 800, humans: tuple[int, ...] = (0, 1)
           ) -> list[Path]:
    p, y, lab = _world(n, seed, labelled)
    out = []
    for j, name in enumerate(("cheap.jsonl", "strong.jsonl")):
        rows = []
        for i in range(n):
            row: dict[str, object] = {"id": f"i{i}", "p_yes": float(p[j, i])}
            if lab[i] and j in humans:
                row["human"] = int(y[i])
            rows.append(json.dumps(row))
        (tmp / name).write_text("\n".join(rows) + "\n")
        out.append(tmp / name)
    return out


def _pinned(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("RELGATE_REGENERATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


def test_one_verdicts_file_is_exactly_as_before(tmp_path: Path, incli) -> None:
    """Golden: the JSON and the text of ``judge certify --verdicts v.jsonl`` (a relative path: the document is
    the same in any directory), written by the code before cascades existed."""
    p, y, lab = _world(600, 7, 500)
    rows = [json.dumps({"id": i, "p_yes": float(p[1, i]), **({"human": int(y[i])} if lab[i] else {})})
            for i in range(600)]
    (tmp_path / "v.jsonl").write_text("\n".join(rows) + "\n")
    r = incli(tmp_path, "judge", "certify", "--verdicts", "v.jsonl", "--json", "c.json")
    assert r.returncode == 0, r.stderr
    _pinned("judge_certificate_single.json", (tmp_path / "c.json").read_text())
    _pinned("judge_certificate_single.md", r.stdout)
    r = incli(tmp_path, "judge", "apply", json.loads((tmp_path / "c.json").read_text())["id"], "--verdicts",
              "v.jsonl", "--json", "a.json")
    assert r.returncode == 0, r.stderr
    _pinned("judge_apply_single.json", (tmp_path / "a.json").read_text())
    _pinned("judge_apply_single.txt", r.stdout)
