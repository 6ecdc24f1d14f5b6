"""A pre-flight that tells the truth (issue 24 §2): the latency is measured at the run's concurrency with parallel
probe calls and the time estimate multiplies by it, never divides one call's latency by the concurrency (a one-slot
server answers in turn). How close the estimate comes to a real run's wall time is measured by
``bench/preflight_estimate.py`` (timing does not belong in a test)."""

from __future__ import annotations

import asyncio

import pytest

from relgate_tui.demo import DemoServer
from relgate_tui.engine.certification.setup import (
    PROBE_MAX_PARALLEL,
    RunSetup,
    inspect_task,
    preflight,
    probe_latency,
    probe_parallelism,
)

TASK = "bigbench-3digit-addition"


@pytest.mark.parametrize("concurrency", [1, 8, 32])
def test_the_estimate_is_expected_calls_times_the_per_call_time_measured_at_that_concurrency(concurrency):
    setup = RunSetup(base_url="http://127.0.0.1:9/v1", model="m", task=TASK, limit=40, concurrency=concurrency)
    pf = preflight(setup, inspect_task(TASK), (0.5, 20.0, 5.0))
    assert pf.seconds == pytest.approx(pf.expected_calls * 0.5)  # no division by the concurrency
    assert probe_parallelism(setup) == min(concurrency, PROBE_MAX_PARALLEL)


def test_the_probe_sends_its_calls_at_once_and_a_one_slot_server_shows_its_full_latency():
    with DemoServer(latency_ms=40, slots=1) as server:
        setup = RunSetup(base_url=server.base_url, model="sim-mid", task=TASK, concurrency=4)
        lat = asyncio.run(probe_latency(setup))
        per_call, prompt_tokens, completion_tokens = lat.seconds, lat.prompt_tokens, lat.completion_tokens
        assert lat.judge_seconds is None  # no judge in this run: nothing else is timed
        assert lat.parallel == 4 and lat.note == ""  # the four were answered within the deadline
        # a warm-up call, one call on its own (concurrency 1 first), then one per slot of the run's concurrency
        assert len(server.chat_requests) == 1 + 1 + 4
        assert len({r.body_sha256 for r in server.chat_requests}) == 6  # all different requests
    # four requests on one slot: each waits its turn, so one call costs at least the server's full latency
    # (a lower bound set by the server's own sleeps — dividing one call's latency by 4 would give ~10 ms)
    assert per_call >= 0.040 and prompt_tokens > 0 and completion_tokens > 0


def test_timeouts_while_other_requests_succeed_say_the_server_is_busy(tmp_path, monkeypatch):
    """Issue 24 §2 with issue 23 §9: eight requests at once on a one-slot server whose every answer takes 300 ms, with
    a 1 s timeout: the first answers come back, the ones queued behind them would time out (the server's own sleeps
    guarantee it). That is a busy server — fewer requests in flight —, never an unreachable endpoint: the run ends
    with every sample, any pause or failure says "busy", and nothing says "unreachable"."""
    from relgate_tui.engine.certification.certify import CertifyConfig, prepare
    from relgate_tui.engine.certification.pipeline import Done, EndpointDown, Sampling, run

    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with DemoServer(latency_ms=300, slots=1, honour_n=False) as server:
        cfg = CertifyConfig(task=TASK, endpoint=server.base_url, model="sim-mid", limit=8, k_max=2,
                            stopping="none", concurrency=8, timeout_s=1.0, run_dir=str(tmp_path / "runs"),
                            cache_dir=str(tmp_path / "cache")).validate()
        prepared = prepare(cfg)

        async def all_events() -> list:
            return [event async for event in run(prepared)]

        try:
            events = asyncio.run(all_events())
        finally:
            prepared.close()
        answered = [r for r in server.chat_requests if r.status == 200]
    assert answered  # the server answered throughout
    downs = [e.message for e in events if isinstance(e, EndpointDown)]
    assert all(m.startswith("the server is busy:") and "lower --concurrency" in m for m in downs)
    failures = [e.event for e in events if isinstance(e, Sampling) and type(e.event).__name__ == "SampleFailed"]
    assert failures  # the scenario does make queued requests time out (else this test would check nothing)
    assert {f.error_kind for f in failures} <= {"busy", "timeout"} and not any(f.final for f in failures)
    assert not any("unreachable" in m for m in downs)
    assert isinstance(events[-1], Done) and events[-1].calls.failed == 0


def test_judge_audit_takes_a_timeout_like_certify(tmp_path, monkeypatch, capsys):
    import json

    from relgate_tui.cli import main

    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    base = ["judge-audit", "--data", "hanna", "--criterion", "Coherence", "--protocol", "direct", "--inputs", "2",
            "--candidates", "3", "--reps", "1", "--no-store"]
    with DemoServer() as demo:
        assert main([*base, "--endpoint", demo.base_url, "--model", "sim-judge", "--timeout", "0"]) == 2
        assert "--timeout must be in (0, 3600] seconds, got 0" in capsys.readouterr().err
        out = tmp_path / "a.json"
        assert main([*base, "--endpoint", demo.base_url, "--model", "sim-judge", "--timeout", "7.5",
                     "--judge", "model=sim-judge-long", "--json", str(out)]) == 0
    judges = json.loads(out.read_text())["judges"]
    assert [j["timeout_s"] for j in judges] == [7.5, 7.5]


def test_the_probe_times_several_fresh_items_never_the_warm_up_item(monkeypatch):
    """Issue 31 item 8: at concurrency 1 one timed call of the warm-up's own prompt (a prompt-cache hit on llama.cpp)
    said 882 ms where the run paid 1.45 s a call: the probe now times at least 4 calls, none on the warm-up's item."""
    from relgate_tui.demo.items import last_user_content
    from relgate_tui.engine.certification.setup import PROBE_MIN_CALLS
    from relgate_tui.engine.transport import probe as probe_module

    questions: list[str] = []
    real = probe_module.complete

    async def recording(client, cfg, messages, **kw):  # the real request, its question noted
        questions.append(last_user_content(list(messages)))
        return await real(client, cfg, messages, **kw)

    monkeypatch.setattr(probe_module, "complete", recording)
    with DemoServer(latency_ms=5, slots=1) as server:
        setup = RunSetup(base_url=server.base_url, model="sim-mid", task=TASK, concurrency=1)
        asyncio.run(probe_latency(setup))
        assert len(server.chat_requests) == 1 + PROBE_MIN_CALLS
    assert len(questions) == 1 + PROBE_MIN_CALLS == 5
    assert questions[0] not in questions[1:] and len(set(questions[1:])) == PROBE_MIN_CALLS


def test_judge_calls_are_counted_and_timed_and_the_calls_have_a_range():
    from relgate_tui.engine.certification.setup import task_choices

    noref = next(t for t in task_choices() if not t.has_references)
    setup = RunSetup(base_url="http://127.0.0.1:9/v1", model="m", task=noref.name, limit=40, verify_judge_model="j")
    pf = preflight(setup, noref, (0.5, 20.0, 5.0))
    assert pf.judge_calls == 40  # one verdict per item without a reference
    assert pf.seconds == pytest.approx((pf.expected_calls + 40) * 0.5)
    low, high = pf.calls_range
    assert low < pf.expected_calls < high <= pf.worst_calls
    referenced = inspect_task(TASK)
    by_hand = RunSetup(base_url="http://127.0.0.1:9/v1", model="m", task=TASK, limit=40, verify_judge_model="j",
                       verification="human")
    assert preflight(by_hand, referenced, None).judge_calls == 20  # the calibration items, verified by hand
    assert preflight(RunSetup(base_url="http://127.0.0.1:9/v1", model="m", task=TASK, limit=40,
                              verify_judge_model="j"), referenced, None).judge_calls == 0


def test_the_judges_verdicts_are_timed_as_the_run_asks_them_and_counted_in_the_time(monkeypatch):
    """Issue 31 item 8: on llama.cpp a verdict (a longer prompt, log-probabilities) cost 0.71–1.37 s where an answer
    cost 0.46–1.26 s, and the estimate timed verdicts as answers. The probe now times the verification judge's own
    requests — on the probe's answers, at the run's concurrency — and the time is answers × their cost + verdicts ×
    theirs."""
    from relgate_tui.engine.certification.setup import PROBE_MIN_CALLS, Latency, task_choices
    from relgate_tui.engine.transport import probe as probe_module

    sent: list[tuple[str, bool, str]] = []
    real = probe_module.complete

    async def recording(client, cfg, messages, **kw):
        completions = await real(client, cfg, messages, **kw)
        sent.append((cfg.model, bool(cfg.logprobs), messages[-1]["content"]))
        return completions

    monkeypatch.setattr(probe_module, "complete", recording)
    noref = next(t for t in task_choices() if not t.has_references)
    with DemoServer(latency_ms=30, slots=1) as server:
        setup = RunSetup(base_url=server.base_url, model="sim-mid", task=noref.name, concurrency=1, limit=40,
                         verify_judge_model="sim-judge")
        latency = asyncio.run(probe_latency(setup))
        assert len(server.chat_requests) == 2 * (1 + PROBE_MIN_CALLS)  # answers and verdicts, each after a warm-up
    answers = [text for model, _, text in sent if model == "sim-mid"]
    verdicts = [(logprobs, text) for model, logprobs, text in sent if model == "sim-judge"]
    assert len(answers) == len(verdicts) == 1 + PROBE_MIN_CALLS
    assert all(logprobs for logprobs, _ in verdicts)  # the judge pass's request: log-probabilities asked
    assert sum("correct" in text.lower() for _, text in verdicts) == len(verdicts)  # the verification prompt
    assert isinstance(latency, Latency) and latency.judge_seconds is not None
    assert latency.judge_seconds >= 0.030  # one slot: each verdict waits its turn behind the server's own sleep
    pf = preflight(setup, noref, Latency(0.5, 20.0, 5.0, 0.9))
    assert pf.judge_calls == 40
    assert pf.seconds == pytest.approx(pf.expected_calls * 0.5 + 40 * 0.9)
    low, high = pf.seconds_range
    assert low == pytest.approx(pf.calls_range[0] * 0.5 + 40 * 0.9)
    assert high == pytest.approx(pf.calls_range[1] * 0.5 + 40 * 0.9)


def test_a_judge_that_does_not_answer_the_probe_leaves_its_verdicts_timed_as_answers():
    """The answers are measured; the verdicts of a judge model the server does not serve cannot be: the estimate
    says so (verdicts timed as answers) instead of failing the whole probe."""
    from relgate_tui.engine.certification.setup import task_choices
    from relgate_tui.tui.preflight_text import preflight_text

    noref = next(t for t in task_choices() if not t.has_references)
    with DemoServer() as server:
        setup = RunSetup(base_url=server.base_url, model="sim-mid", task=noref.name, concurrency=2, limit=40,
                         verify_judge_model="no-such-model")
        latency = asyncio.run(probe_latency(setup))
    assert latency.seconds > 0 and latency.judge_seconds is None
    pf = preflight(setup, noref, latency)
    assert pf.seconds == pytest.approx((pf.expected_calls + pf.judge_calls) * latency.seconds)
    assert "verdicts timed as answers" in preflight_text(pf, setup, latency, 2, "").plain


def test_a_judge_with_nothing_to_verify_is_not_probed():
    """A verification judge on a task whose every item has a reference (verification "auto") is asked nothing by
    the run, so the probe spends no call on it."""
    with DemoServer() as server:
        setup = RunSetup(base_url=server.base_url, model="sim-mid", task=TASK, concurrency=2, limit=40,
                         verify_judge_model="sim-judge")
        latency = asyncio.run(probe_latency(setup))
        assert {r.model for r in server.chat_requests} == {"sim-mid"} and latency.judge_seconds is None
