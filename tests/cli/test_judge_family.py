"""The judge family: ``relgate judge audit | intervals | irt | jury | certify | apply | list``; the old top-level words
stay as hidden aliases that still work and say where the command moved; ``relgate --help`` fits one screen; and the
shell hands commands the terminal UI's launcher (``commands/review.py`` never imports ``cli.py``)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import relgate_tui.commands as commands
from relgate_tui.cli import build_parser, main

SEVEN = ("audit", "intervals", "irt", "jury", "certify", "apply", "list")
OLD = {"judge-audit": "judge audit", "judge-intervals": "judge intervals", "judge-irt": "judge irt",
       "jury": "judge jury", "audits": "judge list"}


def _help(argv: list[str], capsys, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    assert main([*argv, "--help"]) == 0
    return capsys.readouterr().out


def test_relgate_judge_help_lists_the_seven(capsys, monkeypatch) -> None:
    out = _help(["judge"], capsys, monkeypatch)
    listed = [line.split()[0] for line in out.split("ACTION\n", 1)[1].split("\noptions:")[0].splitlines()
              if line.startswith("    ") and not line.startswith("     ")]
    assert sorted(listed) == sorted(SEVEN)


def test_relgate_help_fits_one_screen_without_the_old_words(capsys, monkeypatch) -> None:
    out = _help([], capsys, monkeypatch)
    lines = out.rstrip("\n").splitlines()
    assert len(lines) <= 24, out
    assert max(len(line) for line in lines) <= 80
    words = {line.split()[0] for line in lines if line.startswith("    ")}
    assert "judge" in words and not words & set(OLD), out


@pytest.mark.parametrize("old", sorted(OLD))
def test_each_old_word_parses_as_its_new_one(old: str) -> None:
    """The hidden alias takes the same arguments as the new word and runs the same command."""
    parser = build_parser()
    new = OLD[old].split()
    args = {"judge-audit": ["--data", "hanna"], "judge-intervals": ["--scores", "x.jsonl"],
            "judge-irt": ["--ratings", "x.jsonl"], "jury": ["--scores", "x.jsonl"], "audits": ["ID"]}[old]
    a, b = parser.parse_args([old, *args]), parser.parse_args([*new, *args])
    assert {k: v for k, v in vars(a).items() if k not in ("handler", "command", "judge_command")} == \
        {k: v for k, v in vars(b).items() if k not in ("handler", "command", "judge_command")}
    module = next(m for m in commands.modules() if m.NAME == old)
    assert b.handler is module.run and a.handler is not module.run  # the alias wraps it, to say where it moved


@pytest.mark.parametrize("old", sorted(OLD))
def test_each_old_word_still_works_and_says_where_it_moved(old: str, tmp_path: Path, capsys, monkeypatch) -> None:
    """Run for real on a missing input (each exits 2 with its own one-line error, which then also says where the
    command moved) or, for ``audits``, on an empty data dir (exit 0; the move is said on stderr after): the old word
    gives the new word's exit code and output."""
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    args = {"judge-audit": ["--scores", str(tmp_path / "none.jsonl")],
            "judge-intervals": ["--scores", str(tmp_path / "none.jsonl")],
            "judge-irt": ["--ratings", str(tmp_path / "none.jsonl")], "jury": ["--scores", str(tmp_path / "none.jsonl")],
            "audits": []}[old]
    rc_new = main([*OLD[old].split(), *args])
    new = capsys.readouterr()
    rc_old = main([old, *args])
    got = capsys.readouterr()
    assert rc_old == rc_new and got.out == new.out
    moved = f"`{old}` is now `relgate {OLD[old]}`"
    assert moved not in new.err
    assert new.err.count("\n") <= 1  # the command's own one error line, or nothing
    if new.err and old in ("judge-intervals", "judge-irt", "jury"):  # an error raised to the shell: one line
        assert got.err == new.err.rstrip("\n") + f" ({moved})\n"
    else:  # done, or an error the command printed itself: the move is said after it
        assert got.err == new.err + f"relgate: {moved} (the old word still works)\n"


def test_judge_list_reopens_a_stored_audit_under_both_words(tmp_path: Path, capsys, monkeypatch) -> None:
    from tests.engine.stored_audit import stored_audit

    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    audit = stored_audit(tmp_path / "home")
    assert main(["judge", "list", str(audit), "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(["audits", str(audit), "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out) == doc


def test_review_open_gets_the_launcher_from_the_shell(tmp_path: Path, monkeypatch) -> None:
    """``relgate review open`` opens the TUI through ``args.launch_tui``, the launcher the shell sets — the command
    module imports neither ``cli.py`` nor the TUI."""
    from relgate_tui.commands import review

    source = Path(review.__file__).read_text(encoding="utf-8")
    imported = {n.module for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)} | \
        {a.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m and (m == "relgate_tui.cli" or m.startswith("relgate_tui.tui"))}
    from relgate_tui.cli import launch_review

    args = build_parser().parse_args(["review", "open", "S1", "--db", f"sqlite:///{tmp_path / 'r.sqlite3'}"])
    assert args.launch_tui is launch_review
    seen: list[tuple] = []
    args.launch_tui = lambda store, session, name: seen.append((session, name)) or 0
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    assert args.handler(args) == 0
    assert seen and seen[0][0] == "S1"
