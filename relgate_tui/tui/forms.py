"""Reading form fields into values, shared by the Setup and Judge audit screens.

Every function raises ``ValueError`` with one line that names the field, which the screens show inline.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_custom_endpoint", "first_line", "parse_number"]


def first_line(error: BaseException | str) -> str:
    """The first line of an error's message (its type's name when the message is empty)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def parse_number(text: str, name: str, kind: type = float, *, lo: float | None = None, hi: float | None = None,
                 lo_open: bool = False, hi_open: bool = False, optional: bool = False) -> Any:
    """``text`` as an ``int`` or ``float`` within [lo, hi] (an end is excluded when ``lo_open``/``hi_open``);
    an empty field is None when ``optional``."""
    text = text.strip()
    if not text:
        if optional:
            return None
        raise ValueError(f"{name}: a value is needed")
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"{name}: {text!r} is not {'an integer' if kind is int else 'a number'}") from None
    if lo is not None and (value < lo or (lo_open and value == lo)):
        raise ValueError(f"{name} must be {'>' if lo_open else '≥'} {lo:g}")
    if hi is not None and (value > hi or (hi_open and value == hi)):
        raise ValueError(f"{name} must be {'<' if hi_open else '≤'} {hi:g}")
    return value


def check_custom_endpoint(url: str, model: str, api_key_env: str, *, model_question: str) -> tuple[str, str, str | None]:
    """(base URL, model, API-key variable name or None) of a custom endpoint. ``api_key_env`` must be a variable's
    NAME: the key itself is never typed into relgate. ``model_question`` is what to ask when the model is missing."""
    url, model, api_key_env = url.strip(), model.strip(), api_key_env.strip()
    if not url.startswith(("http://", "https://")):
        raise ValueError("URL: give the server's base URL, e.g. http://127.0.0.1:8080/v1")
    if not model:
        raise ValueError(f"model name: {model_question}")
    if api_key_env and not api_key_env.replace("_", "").isalnum():
        raise ValueError("API key env var: give the variable's NAME (letters, digits, _), not the key")
    return url, model, api_key_env or None
