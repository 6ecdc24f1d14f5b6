"""The per-item request templates of the sampler's hot path give exactly the fingerprints and bodies of the plain
functions (a cache keyed by a different digest would re-ask every sample; a different body a different answer)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relgate_tui.engine.transport.endpoints import (
    EndpointConfig,
    body_encoder,
    fingerprinter,
    request_body,
    request_fingerprint,
)

CONFIGS = [
    EndpointConfig("http://127.0.0.1:1/v1", "stub"),
    EndpointConfig("http://h/v1", "m", system="sys -918273645546372819", max_tokens=5, top_p=0.9,
                   extra={"a": [1, 2], "seed_x": 1}),
    EndpointConfig("http://h/v1", "m", send_seed=False),
    EndpointConfig("http://h/x", "", kind="http", request_template='{"q": "{{question}}", "m": {{messages}}}',
                   response_path="a.b"),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=range(len(CONFIGS)))
@settings(max_examples=60, deadline=None)
@given(content=st.text(max_size=40), index=st.integers(0, 10**6),
       seed=st.one_of(st.none(), st.integers(0, 2**31 - 1)), n=st.sampled_from([1, 1, 3]))
def test_templates_match_the_plain_functions(cfg: EndpointConfig, content: str, index: int, seed: int | None,
                                             n: int) -> None:
    messages = [{"role": "user", "content": content + " -192837465564738291"}]
    assert fingerprinter(cfg, messages)(index, seed) == request_fingerprint(cfg, messages, index, seed)
    body = request_body(cfg, messages, seed, n)
    expected = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode("utf-8")
    assert body_encoder(cfg, messages)(seed, n) == expected
