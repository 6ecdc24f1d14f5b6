"""core/text.py and core/redact.py: laws over arbitrary text (hypothesis) and the sequences that reached terminals."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from relgate_tui.core.redact import public_url, redact
from relgate_tui.core.text import csv_cell, one_line, strip_controls

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@given(st.text())
def test_stripped_text_has_no_control_and_stripping_is_idempotent(text: str) -> None:
    out = strip_controls(text)
    assert not UNSAFE.search(out)
    assert strip_controls(out) == out
    assert "\n" not in one_line(text) and "\t" not in one_line(text)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs"))))
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert strip_controls(text) == text


def test_escape_sequences_are_removed_whole() -> None:
    assert strip_controls("\x1b]0;pwned\x07Paris") == "Paris"  # OSC title, BEL-terminated
    assert strip_controls("\x1b]52;c;ZXZpbA==\x1b\\42") == "42"  # OSC 52 clipboard, ST-terminated
    assert strip_controls("\x1b[2J\x1b[?1049l\x1b[31mred\x1b[0m") == "red"  # wipe, alt screen, colour
    assert strip_controls("\x9b31mred") == "red" and strip_controls("a\u202eb\u2066c") == "abc"
    assert strip_controls("line 1\nline\t2\r\n") == "line 1\nline\t2\n"
    assert one_line("a\n\nb\tc", limit=4) == "a b…"


@given(st.text())
def test_csv_cells_never_start_a_formula(text: str) -> None:
    cell = csv_cell(text)
    assert isinstance(cell, str) and not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert cell.endswith(text) and len(cell) - len(text) in (0, 1)
    assert csv_cell(-3) == -3 and csv_cell(None) is None


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=8, max_size=40), st.text(max_size=60))
def test_a_known_key_never_survives_redaction(key: str, around: str) -> None:
    text = f"{around}{key}{around} Authorization: Bearer {key}"
    assert key not in redact(text, (key,))


def test_urls_lose_credentials_only() -> None:
    assert public_url("http://u:p@127.0.0.1:8080/v1?token=T&x=1") == "http://127.0.0.1:8080/v1?token=[redacted]&x=1"
    assert public_url("https://[::1]:8443/v1") == "https://[::1]:8443/v1"
    assert public_url("not a url Bearer abcdef12345") == "not a url Bearer [redacted]"


def test_canonical_classes_carry_no_controls() -> None:
    from relgate_tui.core.canon import get_canonicalizer

    assert get_canonicalizer("text")("\x1b]0;pwned\x07Paris\u202e") == "paris"
    assert get_canonicalizer("numeric")("\x1b[31m42\x1b[0m") == "42"
