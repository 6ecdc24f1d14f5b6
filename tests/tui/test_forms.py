"""The form readers shared by Setup and Judge audit, and the endpoint pre-selection rule."""

from __future__ import annotations

import pytest

from relgate_tui.engine.certification.setup import EndpointChoice, default_endpoint_index, endpoint_choices
from relgate_tui.tui.demo_endpoint import demo_endpoint
from relgate_tui.tui.forms import check_custom_endpoint, first_line, parse_number


@pytest.mark.parametrize(
    ("text", "kind", "limits", "expected"),
    [
        ("20", int, {"lo": 1, "hi": 1000}, 20),
        (" 0.05 ", float, {"lo": 0, "hi": 0.5, "lo_open": True}, 0.05),
        ("", int, {"optional": True}, None),
        ("0.5", float, {"lo": 0, "hi": 0.5}, 0.5),  # the upper end is allowed unless hi_open
    ],
)
def test_parse_number_accepts(text, kind, limits, expected):
    assert parse_number(text, "field", kind, **limits) == expected


@pytest.mark.parametrize(
    ("text", "kind", "limits", "message"),
    [
        ("", int, {}, "K: a value is needed"),
        ("2.5", int, {}, "K: '2.5' is not an integer"),
        ("abc", float, {}, "K: 'abc' is not a number"),
        ("0", float, {"lo": 0, "lo_open": True}, "K must be > 0"),
        ("-1", int, {"lo": 0}, "K must be ≥ 0"),
        ("1", float, {"lo": 0, "hi": 1, "hi_open": True}, "K must be < 1"),
        ("1001", int, {"hi": 1000}, "K must be ≤ 1000"),
    ],
)
def test_parse_number_rejects_with_one_line_naming_the_field(text, kind, limits, message):
    with pytest.raises(ValueError) as err:
        parse_number(text, "K", kind, **limits)
    assert str(err.value) == message


def test_custom_endpoint_takes_a_variable_name_never_a_key():
    assert check_custom_endpoint(" http://h:1/v1 ", "m", "", model_question="?") == ("http://h:1/v1", "m", None)
    assert check_custom_endpoint("https://h/v1", "m", "OPENAI_API_KEY", model_question="?")[2] == "OPENAI_API_KEY"
    for url, model, env, start in [("h:1/v1", "m", "", "URL:"), ("http://h/v1", " ", "", "model name: which?"),
                                   ("http://h/v1", "m", "sk-abc123", "API key env var:")]:
        with pytest.raises(ValueError, match=f"^{start}"):
            check_custom_endpoint(url, model, env, model_question="which?")


def test_first_line():
    assert first_line(ValueError("one\ntwo")) == "one"
    assert first_line(KeyError()) == "KeyError"


def test_default_endpoint_prefers_a_usable_real_server_then_the_demo():
    demo = EndpointChoice("demo", "http://127.0.0.1:1/v1", ("sim",), simulated=True)
    broken = EndpointChoice("ollama", "http://127.0.0.1:11434/v1", error="no models")
    real = EndpointChoice("llama.cpp", "http://127.0.0.1:8080/v1", ("qwen",))
    assert default_endpoint_index([demo, broken, real]) == 2
    assert default_endpoint_index([broken, demo]) == 1
    assert default_endpoint_index([broken]) is None
    assert default_endpoint_index([]) is None


def test_endpoint_choices_list_a_demo_that_fails_to_start_with_its_error():
    def failing_demo() -> str:
        raise OSError("address in use")

    choices = endpoint_choices(lambda: [], True, failing_demo)
    assert [(c.simulated, c.error) for c in choices] == [(True, "address in use")]
    assert endpoint_choices(lambda: [], False, failing_demo) == []
    assert endpoint_choices(lambda: [], True, lambda: demo_endpoint("http://127.0.0.1:5/v1"))[0].base_url == \
        "http://127.0.0.1:5/v1"
