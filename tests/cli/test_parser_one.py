"""``relgate WORD …`` builds only WORD's parser when a command module of that name defines it (cli.build_parser,
commands.register_one): the same help and the same parsed arguments as from the full parser, and the full parser for
every other first word (the judge family, old words, options, typos)."""

from __future__ import annotations

import argparse

from relgate_tui.cli import build_parser
from relgate_tui.commands import modules


def _sub(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_each_command_of_its_own_module_gets_the_parser_the_full_one_has() -> None:
    full = _sub(build_parser())
    words = [m.NAME for m in modules() if m.__name__.rsplit(".", 1)[1] == m.NAME.replace("-", "_")]
    assert "certify" in words and "runs" in words
    for word in words:
        one = _sub(build_parser([word]))
        if word == "judge" or word in ("judge-audit", "judge-intervals", "judge-irt", "jury", "audits"):
            assert set(one.choices) == set(full.choices), word  # the family is always built whole
            continue
        assert set(one.choices) == {word, "demo-server"}, word
        assert one.choices[word].format_help() == full.choices[word].format_help(), word


def test_a_certify_command_line_parses_the_same() -> None:
    argv = ["certify", "--task", "t", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--k-max", "7",
            "--stopping", "none", "--quiet"]
    assert vars(build_parser(argv).parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_other_first_words_build_every_command() -> None:
    full = set(_sub(build_parser()).choices)
    for argv in (["--version"], ["judge", "audit"], ["jury"], ["import", "x"], ["certifyx"], ["_x"], ["a/b"]):
        assert set(_sub(build_parser(argv)).choices) == full, argv
