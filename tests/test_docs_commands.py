"""Every ``relgate …`` command line in the README and the docs site (``docs/``) parses with the real parser.

Parse only, never execute: the parser is the one ``relgate`` builds (:func:`relgate_tui.cli.build_parser`; ``relgate
demo-server`` has its own, ``relgate_tui.demo.cli``), and ``parse_args`` calls nothing but the option types
(``int``, ``float``, the batch price factor).

What is read, and how:

* **Command lines** — the lines of fenced code blocks (any language but data formats: json, toml, yaml, python…)
  that run ``relgate``: backslash continuations joined, ``$ `` prompts and ``# …`` comments dropped, shell
  operators (``&&``, ``|``, ``;``, ``&``, redirections) split, ``$VAR`` / ``${VAR}`` kept as the word ``VAR``. Each
  segment that starts with ``relgate`` is parsed **exactly**: the whole argument list must be accepted.
* **Synopses** — a command line with optional parts in brackets (``[--alpha 0.1]``) or an ellipsis (``relgate
  judge-audit … --json -``) is a synopsis, not a command: its sub-command words must exist and every ``--flag`` it
  names must be an option of that sub-command.
* **Inline mentions** — code spans in the prose that start with ``relgate `` (often a fragment: ``relgate review
  label`` / ``pull``) are checked as synopses.

``relgate certify --config FILE …``: the file supplies the flags (``cli._expand_config`` puts its keys before the
line's own), so the check puts ``--task T --endpoint E --model M`` (the flags every config must give) before the
line's words instead of reading a file.

Skipped, and why: an inline span with ``·`` in it is the name the app shows for the embedded demo endpoint
(``relgate demo · simulated models``), not a command. Nothing else is skipped: the only words not checked are a
synopsis's values and positional placeholders (``RUN``, ``FILE``). The test also counts what it checked, so it cannot
pass by finding nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA_LANGUAGES = {"json", "jsonl", "toml", "yaml", "yml", "python", "py", "csv", "text", "txt", "sql", "r"}
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")
OPERATORS = {"&&", "||", "|", ";", "&", ">", ">>", "<", "2>", "2>&1", "&>", "(", ")", "|&"}


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@dataclass(frozen=True)
class Mention:
    path: Path
    line: int
    text: str
    synopsis: bool

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}: {self.text}"


def _is_synopsis(text: str) -> bool:
    return "[" in text or "…" in text or "..." in text


def fenced_commands(path: Path) -> list[Mention]:
    """The ``relgate`` command lines of the file's fenced code blocks (see the module docstring)."""
    out: list[Mention] = []
    fence: str | None = None
    language = ""
    pending: list[str] = []
    start = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence, language = match.group(2), match.group(3).lower()
            continue
        if match and match.group(2).startswith(fence) and not match.group(3):
            fence = None
            continue
        if language in DATA_LANGUAGES:
            continue
        if not pending:
            start = number
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(stripped)
        logical = " ".join(part.strip() for part in pending)
        pending = []
        logical = re.sub(r"^\$\s+", "", logical.strip())
        for segment in _segments(logical):
            out.append(Mention(path, start, " ".join(segment), _is_synopsis(logical)))
    return out


def _segments(logical: str) -> list[list[str]]:
    """The shell segments of a line that start with ``relgate`` (words, comments dropped)."""
    if "relgate" not in logical:
        return []
    if _is_synopsis(logical):  # brackets and | alternatives are not shell syntax here: split on spaces only
        words = logical.split(" #", 1)[0].split()
        return [words[i:] for i, w in enumerate(words[:1]) if w == "relgate"]
    text = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", r"\1", logical)
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    segments: list[list[str]] = [[]]
    for token in lexer:
        if token in OPERATORS or set(token) <= set("&|;<>()"):
            segments.append([])
        else:
            segments[-1].append(token)
    return [seg for seg in segments if seg and seg[0] == "relgate"]


def inline_mentions(path: Path) -> list[Mention]:
    """Code spans in the prose (outside fenced blocks) that start with ``relgate ``: checked as synopses."""
    lines = path.read_text(encoding="utf-8").splitlines()
    prose: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(2)
            continue
        if fence is not None:
            if match and match.group(2).startswith(fence) and not match.group(3):
                fence = None
            continue
        prose.append((number, line))
    out: list[Mention] = []
    # a code span may run over a line break: join each paragraph, remembering where it starts
    paragraph: list[tuple[int, str]] = []
    for number, line in [*prose, (len(lines) + 1, "")]:
        if line.strip():
            paragraph.append((number, line))
            continue
        if paragraph:
            text = " ".join(part for _, part in paragraph)
            for match in re.finditer(r"(?<!`)`([^`]+)`(?!`)", text):
                span = " ".join(match.group(1).split())
                if (span.startswith("relgate ") or span == "relgate") and "·" not in span:  # docstring
                    out.append(Mention(path, paragraph[0][0], span, True))
        paragraph = []
    return out


@functools.cache
def _parsers() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    from relgate_tui import cli
    from relgate_tui.demo import cli as demo_cli

    return cli.build_parser(), demo_cli._parser()


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _resolve(words: list[str]) -> tuple[argparse.ArgumentParser, list[str], list[str]]:
    """The (sub-)parser the words lead to, the command words used and the words left."""
    main, demo = _parsers()
    if words[:1] == ["demo-server"]:
        return demo, ["demo-server"], words[1:]
    parser, path, rest = main, [], list(words)
    while rest and rest[0] in _subparsers(parser):
        parser = _subparsers(parser)[rest[0]]
        path.append(rest.pop(0))
    return parser, path, rest


def check_exact(words: list[str]) -> str | None:
    """None when the real parser accepts ``relgate WORDS…``, else its one-line error."""
    main, demo = _parsers()
    args = words[1:]
    parser = demo if args[:1] == ["demo-server"] else main
    args = args[1:] if parser is demo else args
    if args[:1] == ["certify"] and any(a == "--config" or a.startswith("--config=") for a in args):
        args = ["certify", "--task", "T", "--endpoint", "E", "--model", "M", *args[1:]]  # the config's (docstring)
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(args)
    except SystemExit as exc:
        if exc.code in (0, None):  # --help
            return None
        return stderr.getvalue().strip().splitlines()[-1] if stderr.getvalue().strip() else f"exit {exc.code}"
    except Exception as exc:  # the parsers' own one-line errors (cli.UsageError, the demo's)
        return f"{exc.__class__.__name__}: {exc}"
    return None


def check_synopsis(words: list[str]) -> str | None:
    """None when the sub-command words exist and every ``--flag`` is one of that sub-command's options."""
    plain = [w for w in words[1:] if not re.match(r"^[\[\]|(…]", w)]
    command_words = []
    for w in plain:
        if w.startswith("-") or not re.fullmatch(r"[a-z][a-z0-9-]*", w):
            break
        command_words.append(w)
    parser, path, rest = _resolve(command_words)
    if rest and _subparsers(parser):  # a sub-command word that does not exist (placeholders are upper case)
        return f"unknown sub-command {rest[0]!r} after relgate {' '.join(path)}".rstrip()
    options = set(parser._option_string_actions)
    flags = re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", " ".join(words[1:]))
    unknown = sorted({f.split("=", 1)[0] for f in flags} - options)
    if unknown:
        return f"relgate {' '.join(path)} has no option {', '.join(unknown)}"
    return None


def all_mentions() -> list[Mention]:
    return [m for path in doc_files() for m in (*fenced_commands(path), *inline_mentions(path))]


def test_the_docs_site_and_the_readme_are_found():
    files = doc_files()
    assert (ROOT / "README.md") in files and len(files) >= 10, files


def test_every_relgate_command_line_in_the_docs_parses():
    mentions = all_mentions()
    exact = [m for m in mentions if not m.synopsis]
    assert len(exact) >= 40 and len(mentions) >= 100, (len(exact), len(mentions))  # the test checks something
    failures = []
    for m in mentions:
        words = m.text.split() if m.synopsis else shlex.split(m.text)
        error = check_synopsis(words) if m.synopsis else check_exact(words)
        if error:
            failures.append(f"{m.where()}\n    → {error}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("line, ok", [
    ("relgate certify --task t --endpoint http://x/v1 --model m --k-max 5", True),
    ("relgate certify --task t --endpoint http://x/v1 --model m --k-max five", False),
    ("relgate certify --no-such-flag", False),
    ("relgate demo-server --port 0 --slots 1", True),
    ("relgate demo-server --nope", False),
    ("relgate review publish RUN --per-item 2", True),
    ("relgate nonsense", False),
    ("relgate certify --config run.toml --json result.json", True),
    ("relgate certify --json result.json", False),
])
def test_the_exact_check_accepts_and_refuses_what_the_parser_does(line, ok):
    assert (check_exact(line.split()) is None) is ok


@pytest.mark.parametrize("line, ok", [
    ("relgate judge-audit … --protocol direct [--prompt score-only|geval] [--scale K]", True),
    ("relgate judge-audit [--no-such-option]", False),
    ("relgate review label", True),
    ("relgate review labelx SESSION", False),
    ("relgate judge certify --plan --agreement 0.9", True),
])
def test_the_synopsis_check_knows_sub_commands_and_their_options(line, ok):
    assert (check_synopsis(line.split()) is None) is ok


def test_line_continuations_comments_and_operators_are_read_as_the_shell_does(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```bash\nrelgate certify --task t \\\n    --endpoint $URL --model m  # a comment\n"
                    "pip install x && relgate tasks | head\n```\n```json\n{\"relgate\": 1}\n```\n", encoding="utf-8")
    found = fenced_commands(page)
    assert [m.text for m in found] == ["relgate certify --task t --endpoint URL --model m", "relgate tasks"]
    assert [m.line for m in found] == [2, 4] and not any(m.synopsis for m in found)


def test_no_page_names_an_issue_number():
    """User pages speak of features, not of the tracker ("Judge certificate", never "Judge certificate (issue 30)")."""
    pattern = re.compile(r"\bissues? (?:#?\d+|\d+ and \d+)", re.IGNORECASE)
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in doc_files()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not found, "\n".join(found)
