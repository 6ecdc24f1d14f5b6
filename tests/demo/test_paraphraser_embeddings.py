"""sim-paraphraser and sim-embed over loopback, and the token log-prob law (relgate_tui/demo/paraphraser.py,
embeddings.py, tokens.py)."""

from __future__ import annotations

import base64
import math
import re
import struct

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relgate_tui.demo import DemoServer
from relgate_tui.demo.recognise import read_scoring_prompt
from relgate_tui.demo.tokens import split_tokens, token_choices
from relgate_tui.engine.judging.prompts import direct_prompt, pairwise_prompt


@pytest.fixture(scope="module")
def client():
    with DemoServer() as server, httpx.Client(base_url=server.base_url, timeout=30) as c:
        yield c


# ------------------------------------------------------------------------------------------------ paraphraser


def _paraphrase(client, content: str, seed: object = 0, n: int = 1) -> list[str]:
    body = {"model": "sim-paraphraser", "messages": [{"role": "user", "content": content}], "seed": seed, "n": n}
    response = client.post("/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return [c["message"]["content"] for c in response.json()["choices"]]


TEMPLATE = direct_prompt("{input}", "{response}", "Coherence", "how much the story makes sense")[0]["content"]


def test_paraphrases_are_deterministic_per_seed_and_vary_across_seeds(client) -> None:
    first = [_paraphrase(client, TEMPLATE, seed)[0] for seed in range(6)]
    again = [_paraphrase(client, TEMPLATE, seed)[0] for seed in range(6)]
    assert first == again
    assert len(set(first)) >= 4 and all(p != TEMPLATE for p in first)


def test_paraphrase_keeps_placeholders_numbers_and_data_lines(client) -> None:
    for text in _paraphrase(client, TEMPLATE, seed=3, n=10):
        assert "Input: {input}\n" in text and "Response: {response}\n" in text
        assert re.findall(r"\d+", text) == re.findall(r"\d+", TEMPLATE)
        assert text.count("Coherence") == TEMPLATE.count("Coherence")
        prompt = read_scoring_prompt([{"role": "user", "content": text.replace("{input}", "In.").replace(
            "{response}", "Out text.")}])
        assert prompt is not None and prompt.text == "Out text." and prompt.scale == 5


def test_paraphrase_instruction_line_and_fences(client) -> None:
    request = f'Paraphrase the prompt below. Keep every {{placeholder}}.\n\n"""\n{TEMPLATE}\n"""'
    (text,) = _paraphrase(client, request, seed=1)
    assert not text.startswith("Paraphrase") and '"""' not in text and "{response}" in text
    pairwise = pairwise_prompt("{input}", "{a}", "{b}", "Coherence")[0]["content"]
    (other,) = _paraphrase(client, pairwise, seed=2)
    assert "Response A: {a}\nResponse B: {b}" in other and other != pairwise
    assert _paraphrase(client, "12345", seed=0) == ["12345"]  # nothing to rephrase: returned unchanged


# ------------------------------------------------------------------------------------------------ embeddings


def _embed(client, inputs, **extra) -> httpx.Response:
    return client.post("/embeddings", json={"model": "sim-embed", "input": inputs, **extra})


def _cosine(u: list[float], v: list[float]) -> float:
    return sum(a * b for a, b in zip(u, v, strict=True))


def test_embeddings_are_deterministic_normalised_and_semantic(client) -> None:
    texts = ["The cat sat on the mat.", "A cat was sitting on the mat.", "Quarterly revenue grew by 12 percent.", ""]
    body = _embed(client, texts).json()
    assert body["object"] == "list" and body["model"] == "sim-embed" and body["usage"]["prompt_tokens"] == 6 + 7 + 6
    vectors = [d["embedding"] for d in body["data"]]
    assert [d["index"] for d in body["data"]] == [0, 1, 2, 3] and all(d["object"] == "embedding" for d in body["data"])
    assert all(len(v) == 128 and abs(math.fsum(x * x for x in v) - 1.0) < 1e-9 for v in vectors)
    assert vectors == [d["embedding"] for d in _embed(client, texts).json()["data"]]  # deterministic
    assert _embed(client, texts[0]).json()["data"][0]["embedding"] == vectors[0]  # a string input = a list of one
    assert _cosine(vectors[0], vectors[1]) > 0.4 > abs(_cosine(vectors[0], vectors[2]))
    with DemoServer() as other:  # and the same in another server (no per-process salt)
        assert httpx.post(other.base_url + "/embeddings", json={"model": "sim-embed", "input": texts}).json()["data"][0][
            "embedding"] == vectors[0]


def test_embeddings_dimensions_and_base64(client) -> None:
    floats = _embed(client, ["hello world"], dimensions=64).json()["data"][0]["embedding"]
    encoded = _embed(client, ["hello world"], dimensions=64, encoding_format="base64").json()["data"][0]["embedding"]
    decoded = struct.unpack("<64f", base64.b64decode(encoded))
    assert len(floats) == 64 and all(abs(a - b) < 1e-6 for a, b in zip(floats, decoded, strict=True))


@pytest.mark.parametrize(
    ("payload", "status", "fragment"),
    [
        ({"model": "sim-mid", "input": "x"}, 400, "does not support embeddings"),
        ({"model": "gpt-4", "input": "x"}, 404, "not found"),
        ({"model": "sim-embed", "input": [[1, 2, 3]]}, 400, "token arrays"),
        ({"model": "sim-embed", "input": []}, 400, "'input'"),
        ({"model": "sim-embed", "input": "x", "dimensions": 4}, 400, "dimensions"),
        ({"model": "sim-embed", "input": "x", "encoding_format": "hex"}, 400, "encoding_format"),
    ],
)
def test_embeddings_errors(client, payload, status, fragment) -> None:
    response = client.post("/embeddings", json=payload)
    assert response.status_code == status and fragment in response.json()["error"]["message"]


def test_embed_model_refuses_chat(client) -> None:
    response = client.post("/chat/completions", json={"model": "sim-embed", "messages": [{"role": "user", "content": "x"}]})
    assert response.status_code == 400 and "does not support chat" in response.json()["error"]["message"]


# ------------------------------------------------------------------------------------------------ token log-probs


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.lists(st.sampled_from(["A", " B", "4", "**", ":", " x"]), min_size=1, max_size=4),
                       st.floats(0.0, 1.0)), min_size=1, max_size=12),
    st.data(),
)
def test_token_choices_law(replies, data) -> None:
    """At each position the sampled token is one of the alternatives with its own log-prob, the alternatives are
    sorted and their probabilities sum to at most 1, and the log-probs chain to the reply's probability."""
    replies = [(tuple(tokens), p) for tokens, p in replies]
    chosen = data.draw(st.sampled_from(replies))[0]
    choices = token_choices(replies, chosen)
    assert tuple(c.token for c in choices) == chosen
    for choice in choices:
        alternatives = dict(choice.alternatives)
        assert alternatives[choice.token] == choice.logprob <= 1e-12
        assert math.fsum(math.exp(lp) for lp in alternatives.values()) <= 1.0 + 1e-9
        assert [lp for _, lp in choice.alternatives] == sorted(alternatives.values(), reverse=True)
    floor = 1e-9
    total = sum(max(p, floor) for _, p in replies)
    p_exact = sum(max(p, floor) for tokens, p in replies if tokens == chosen) / total
    p_prefix_only = sum(max(p, floor) for tokens, p in replies if tokens[: len(chosen)] == chosen) / total
    assert p_exact - 1e-9 <= math.exp(math.fsum(c.logprob for c in choices)) <= p_prefix_only + 1e-9


def test_split_tokens_round_trips() -> None:
    for text in ("Score: 4", "**4**", "4/5", "It is decent overall.", "Response A", " two  spaces\nline"):
        assert "".join(split_tokens(text)) == text
    assert split_tokens("Score: 4") == ("Score", ":", " 4")
