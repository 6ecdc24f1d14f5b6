"""Issue 23 §6: judge, criterion and item names are untrusted text at every output edge — stdout of judge-audit
--scores, judge-irt, judge-intervals and jury, their Markdown reports, `relgate audits`, CSV and --json to a
terminal. Real files, the real CLI: ``cli.main`` in the test's process, its output read at file descriptors 1 and 2
(the ``incli`` fixture)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import InProcessCli
from tests.engine.stored_audit import stored_audit

OSC52 = "\x1b]52;c;ZXZpbA==\x07"
OSC0 = "\x1b]0;pwned\x07"
JUDGE = f"j1{OSC52}\u202e"
CRITERION = f"coh{OSC0}\u202e\x9b2J"
CONTROLS = ("\x1b", "\x07", "\x9b", "\x9d", "\u202e")


def clean(text: str) -> bool:
    return not any(c in text for c in CONTROLS)


def hostile_scores(path: Path, n: int = 60) -> Path:
    rows = []
    for i in range(n):
        human = 1 + i % 5
        for judge, shift in ((JUDGE, 0), ("j2", 1)):
            score = min(5, human + shift * (i % 2))
            rows.append({"id": f"d{i}\u202e", "judge": judge, "criterion": CRITERION, "human": human,
                         "score": score, "input": f"in {i}", "output": f"=cmd|' /C calc'!A0 {i}",
                         "logprobs": {str(v): (-0.2 if v == score else -3.0) for v in range(1, 6)}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_study_commands_print_and_report_names_without_controls(tmp_path: Path, incli: InProcessCli) -> None:
    scores = hostile_scores(tmp_path / "scores.jsonl")
    runs = {
        "judge-audit": ("judge-audit", "--scores", str(scores), "--markdown", "ja.md"),
        "judge-irt": ("judge-irt", "--ratings", str(scores), "--markdown", "irt.md"),
        "judge-intervals": ("judge-intervals", "--scores", str(scores), "--judge", JUDGE, "--seeds", "2",
                            "--methods", "cqr,ordinal-aps", "--markdown", "iv.md"),  # one method per family:
        # the names are the data's, not the method's (the boosted and r2ccp methods cost 10 s of model fitting)
        "jury": ("jury", "--scores", str(scores), "--splits", "2", "--search", "1", "--markdown", "jury.md"),
    }
    for name, argv in runs.items():
        r = incli(tmp_path, *argv)
        assert r.returncode == 0, (name, r.stderr)
        assert clean(r.stdout) and clean(r.stderr), name
        md = (tmp_path / argv[-1]).read_text()
        assert md.strip() and clean(md), name
    r = incli(tmp_path, "judge-audit", "--scores", str(scores), "--json", "-")
    assert r.returncode == 0 and clean(r.stdout)
    assert JUDGE in {s["judge"] for s in json.loads(r.stdout)["studies"]}  # the JSON value itself is unchanged


def test_relgate_audits_lists_hostile_manifest_names_as_plain_text(tmp_path: Path, incli: InProcessCli) -> None:
    audit = stored_audit(tmp_path)
    manifest = json.loads((audit / "manifest.json").read_text())
    manifest["criterion"] = CRITERION
    manifest["data"]["name"] = f"hanna{OSC0}"
    manifest["created"] = f"2026{OSC52}"
    manifest["spec"]["judges"][0]["name"] = JUDGE
    (audit / "manifest.json").write_text(json.dumps(manifest))
    r = incli(tmp_path, "audits")
    assert r.returncode == 0 and audit.name in r.stdout and "coh" in r.stdout
    assert clean(r.stdout), r.stdout


def test_csv_cells_are_sanitised_and_never_formulas() -> None:
    from relgate_tui.tui.studies.intervals_chart import intervals_csv

    class Item:
        id, human, lower, upper, adj_lower, adj_upper = f"\u202e=evil{OSC0}", 3.0, 2.0, 4.0, 2.0, 4.0

    class Method:
        name = f"cqr{OSC52}"
        items = [Item()]

    class Study:
        methods = [Method()]

    text = intervals_csv(Study())
    assert clean(text) and "'=evil" in text
