"""The paraphrase variant written by a paraphraser model (issue 13 §1), over the demo server on loopback: asked once
and cached, validated (retries with other seeds, then one line), stored with the audit and reused on resume (never
asked again), overridable by an edited file; and the stored audit's write lock."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from relgate_tui.cli import main
from relgate_tui.demo import DemoServer
from relgate_tui.engine.judging import AuditSpec, AuditStore, Judge, PromptVariant, audit_id, plan_audit
from relgate_tui.engine.judging import paraphrase as para
from relgate_tui.engine.judging.variants import DIRECT_TEMPLATE, PAIRWISE_TEMPLATE, VariantOrigin
from relgate_tui.engine.transport.cache import SampleCache
from relgate_tui.errors import DataError, EndpointError, UserError
from tests.engine.logprob_server import LogprobJudge

ROOT = Path(__file__).resolve().parents[3]


def _paraphraser_calls(demo: DemoServer) -> int:
    return sum(1 for r in demo.requests if r.model == "sim-paraphraser")


def _argv(demo: DemoServer, *more: str, protocol: str = "direct") -> list[str]:
    return ["judge", "audit", "--data", "hanna", "--criterion", "Coherence", "--endpoint", demo.base_url,
            "--model", "sim-judge-sensitive", "--protocol", protocol, "--inputs", "3", "--candidates", "3",
            "--reps", "1", "--perturb", "typo,newline,paraphrase", "--paraphraser", "model=sim-paraphraser", *more]


def _stored(home: Path) -> list[Path]:
    return sorted((home / "audits").iterdir())


# ------------------------------------------------------------------------------------------------ pure parts
def test_clean_strips_controls_and_one_fence_and_problem_bounds_the_size() -> None:
    dirty = "```text\n\x1b[31mRate\u202e the {{criterion}}\x07\n```"
    assert para.clean(dirty) == "Rate the {{criterion}}"
    assert para.clean('"""\n  Judge {{response}}\n"""') == "Judge {{response}}"
    assert para.clean("  plain\n") == "plain"
    assert para.problem("direct", DIRECT_TEMPLATE.replace("Rate", "Score")) is None
    assert "placeholders" in para.problem("direct", DIRECT_TEMPLATE.replace("{{response}}", "{response}"))
    assert "numbers" in para.problem("direct", DIRECT_TEMPLATE.replace("1-5", "1-10"))
    long = DIRECT_TEMPLATE + " padding" * 2000
    assert "characters long" in para.problem("direct", long)
    assert para.problem("pairwise", PAIRWISE_TEMPLATE.replace("Which", "What")) is None


def test_edited_variant_keeps_the_origin_marks_edits_and_refuses_a_broken_edit() -> None:
    origin = VariantOrigin("m", "http://h/v1", None, 0.0, 7)
    written = PromptVariant("paraphrase", direct=DIRECT_TEMPLATE.replace("Rate", "Score"), origin=origin)
    same = para.edited_variant({"direct": written.direct or ""}, written)
    assert same == written and same.identity() == {"name": "paraphrase", "origin": origin.identity()}
    edited = para.edited_variant({"direct": DIRECT_TEMPLATE.replace("Rate", "Grade")}, written)
    assert edited.origin is not None and edited.origin.edited and edited.identity()["direct"].startswith("You are")
    with pytest.raises(UserError, match="^the direct paraphrase changed the placeholders$"):
        para.edited_variant({"direct": DIRECT_TEMPLATE.replace("{{input}}", "the input")}, written)


def test_the_printed_paraphrase_has_no_control_characters() -> None:
    origin = VariantOrigin("m\x1b[2J", "http://h/v1", None, 0.0, 1, 1)
    variant = PromptVariant("paraphrase", direct="Rate\u202e {{response}}\x1b]0;t\x07 now", origin=origin)
    done = para.Paraphrased(variant, "stored", para.AskCalls())
    lines = done.lines()
    assert lines[0] == "paraphrase by m at http://h/v1, seed 2 (stored with the audit: not asked again):"
    assert lines[1:] == ["  --- direct template ---", "  Rate {{response}} now"]


def test_a_variant_without_origin_keeps_the_audit_id_it_had_before_origins() -> None:
    spec = AuditSpec("hanna", "Coherence", (Judge("http://127.0.0.1:9/v1", "m"),),
                     (PromptVariant("original"), PromptVariant("x", direct="R {{response}}")))
    old = spec.to_json()
    old.pop("concurrency")
    old.pop("max_down_s")
    digest = hashlib.sha256(json.dumps(old, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:12]
    assert audit_id(spec).endswith(digest)
    pending = para.pending(para.paraphraser("http://u:secret@127.0.0.1:9/v1", "p"), 0)
    assert pending.pending and pending.origin is not None and "secret" not in json.dumps(pending.to_json())
    with pytest.raises(UserError, match="has not been written yet"):
        plan_audit(AuditSpec("hanna", "Coherence", spec.judges, (PromptVariant("original"), pending)))


# ------------------------------------------------------------------------------------------------ asking
def test_the_paraphrase_is_asked_once_cached_validated_and_carries_its_origin(tmp_path: Path) -> None:
    with DemoServer() as demo, SampleCache(tmp_path / "cache") as cache:
        judge = para.paraphraser(demo.base_url, "sim-paraphraser")
        first = asyncio.run(para.write_paraphrase(judge, protocol="both", seed=5, cache=cache))
        assert _paraphraser_calls(demo) == 2 and first.calls.made == 2 and first.source == "asked"
        again = asyncio.run(para.write_paraphrase(judge, protocol="both", seed=5, cache=cache))
        assert _paraphraser_calls(demo) == 2 and again.calls.cached == 2 and again.calls.made == 0
        other = asyncio.run(para.write_paraphrase(judge, protocol="both", seed=6, cache=cache))
        assert _paraphraser_calls(demo) == 4
        bodies = [r for r in demo.requests if r.model == "sim-paraphraser"]
    assert again.variant == first.variant and other.variant != first.variant
    v = first.variant
    assert v.name == "paraphrase" and v.pairwise != PAIRWISE_TEMPLATE and v.direct != DIRECT_TEMPLATE
    assert para.problem("pairwise", v.pairwise or "") is None and para.problem("direct", v.direct or "") is None
    assert v.origin == VariantOrigin("sim-paraphraser", demo.base_url.rstrip("/"), None, 0.0, 5, 0, False)
    assert all(isinstance(b.sample_seed, int) for b in bodies)  # seeded requests


class ScriptedParaphraser(LogprobJudge):
    """Replies with ``script`` in turn (the last one from then on)."""

    def __init__(self, script: list[str]) -> None:
        super().__init__()
        self.script = script

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        text = self.script[min(len(self.bodies) - 1, len(self.script) - 1)]
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}


def test_a_rejected_paraphrase_is_asked_again_with_the_next_seed_at_a_sampling_temperature() -> None:
    good = DIRECT_TEMPLATE.replace("evaluating", "assessing")
    with ScriptedParaphraser([DIRECT_TEMPLATE.replace("{{response}}", "the reply"), f"```\n{good}\n```"]) as server:
        judge = para.paraphraser(server.base_url, "p")
        done = asyncio.run(para.write_paraphrase(judge, protocol="direct", seed=3))
        seeds = [b["seed"] for b in server.bodies]
        temps = [b["temperature"] for b in server.bodies]
    assert done.variant.direct == good and done.variant.origin is not None and done.variant.origin.attempt == 1
    assert done.rejected == ("the direct paraphrase changed the placeholders",)
    assert len(seeds) == 2 and seeds[0] != seeds[1] and temps == [0.0, para.RETRY_TEMPERATURE]


def test_no_usable_paraphrase_after_the_attempts_is_one_line_naming_why() -> None:
    with ScriptedParaphraser(["4"]) as server:
        with pytest.raises(UserError) as info:
            asyncio.run(para.write_paraphrase(para.paraphraser(server.base_url, "p"), protocol="direct", seed=0))
        assert len(server.bodies) == para.ATTEMPTS
    message = str(info.value)
    assert "\n" not in message and "3 attempts" in message and "changed the placeholders" in message
    with pytest.raises(EndpointError, match="paraphraser p: cannot reach"):
        asyncio.run(para.write_paraphrase(para.paraphraser("http://127.0.0.1:9/v1", "p"), protocol="direct"))


# ------------------------------------------------------------------------------------------------ the CLI
def test_cli_prints_stores_and_reuses_the_paraphrase_on_resume(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with DemoServer() as demo:
        assert main(_argv(demo, "--json", str(tmp_path / "a.json"))) == 0
        assert _paraphraser_calls(demo) == 1
        err = capsys.readouterr().err
        (audit,) = _stored(tmp_path)
        manifest = json.loads((audit / "manifest.json").read_text())
        (stored,) = [v for v in manifest["spec"]["variants"] if v["name"] == "paraphrase"]
        assert stored["direct"] and stored["origin"]["model"] == "sim-paraphraser" and stored["origin"]["seed"] == 0
        assert "relgate: paraphrase by sim-paraphraser" in err
        assert all(f"relgate:   {line}" in err for line in stored["direct"].split("\n") if line)
        # resumed without the cache: the stored text is used, the paraphraser is never asked again
        answers = (audit / "answers.jsonl").read_text().splitlines()
        (audit / "answers.jsonl").write_text("\n".join(answers[: len(answers) // 2]) + "\n")
        (audit / "results.json").unlink()
        assert main(_argv(demo, "--no-cache", "--json", str(tmp_path / "b.json"))) == 0
        assert _paraphraser_calls(demo) == 1 and _stored(tmp_path) == [audit]
        assert "stored with the audit: not asked again" in capsys.readouterr().err
    doc = json.loads((tmp_path / "b.json").read_text())
    assert doc["variants"] == ["original", "typo", "newline", "paraphrase"]
    assert len((audit / "answers.jsonl").read_text().splitlines()) == len(answers)


def test_cli_paraphrase_out_edit_and_pass_back(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    out = tmp_path / "p.json"
    with DemoServer() as demo:
        assert main(_argv(demo, "--paraphrase-out", str(out), protocol="both")) == 0
        assert _paraphraser_calls(demo) == 2 and not (tmp_path / "audits").exists()  # no audit was run
        assert sum(1 for r in demo.requests if r.model == "sim-judge-sensitive") == 0
        written = json.loads(out.read_text())
        assert set(written) == {"pairwise", "direct"}
        edited = {**written, "direct": written["direct"].replace("{{criterion}}", "{{criterion}} (as edited)", 1)}
        out.write_text(json.dumps(edited))
        argv = [a for a in _argv(demo, protocol="both") if a not in ("--paraphraser", "model=sim-paraphraser")]
        assert main([*argv, "--variant", f"paraphrase={out}", "--json", str(tmp_path / "a.json")]) == 0
        assert _paraphraser_calls(demo) == 2  # the file replaces the model's paraphrase
        (audit,) = _stored(tmp_path)
        (stored,) = [v for v in json.loads((audit / "manifest.json").read_text())["spec"]["variants"]
                     if v["name"] == "paraphrase"]
        assert stored["direct"] == edited["direct"] and "(as edited)" in stored["direct"]
        capsys.readouterr()
        broken = tmp_path / "broken.txt"
        broken.write_text(DIRECT_TEMPLATE.replace("1-5", "1-10"))
        assert main([*argv, "--protocol", "direct", "--variant", f"paraphrase={broken}"]) == 2
        err = capsys.readouterr().err.strip()
        assert err == ("relgate: error: --variant paraphrase: the direct paraphrase changed the numbers of the "
                       "rating scale")
        assert main([*argv[:-1], "typo", "--paraphraser", "model=x"]) == 2
        assert "--paraphraser needs --perturb" in capsys.readouterr().err
        assert main([*argv[:-1], "typo,synonyms"]) == 2
        assert capsys.readouterr().err.strip() == ("relgate: error: --perturb: unknown perturbation 'synonyms' "
                                                   "(choose from typo, newline, paraphrase)")


def test_the_default_paraphraser_is_the_judge_and_a_judge_is_no_paraphraser(tmp_path: Path, monkeypatch,
                                                                             capsys) -> None:
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path))
    with DemoServer() as demo:
        argv = [a for a in _argv(demo) if a not in ("--paraphraser", "model=sim-paraphraser")]
        assert main(argv) == 2
        assert sum(1 for r in demo.requests if r.model == "sim-judge-sensitive") == para.ATTEMPTS
    err = capsys.readouterr().err.strip()
    assert err.startswith("relgate: error: paraphraser sim-judge-sensitive wrote no usable paraphrase in 3 attempts")
    assert len(err.splitlines()) == 1


# ------------------------------------------------------------------------------------------------ the write lock
def _spec(tmp_path: Path) -> AuditSpec:
    data = tmp_path / "set.jsonl"
    line = {"id": "p", "input": "in", "criteria": {"X": "x"},
            "candidates": [{"id": "a", "text": "a", "human": {"X": 1}}, {"id": "b", "text": "b", "human": {"X": 2}}]}
    data.write_text(json.dumps(line) + "\n")
    return AuditSpec(str(data), "X", (Judge("http://127.0.0.1:9/v1", "m"),))


def test_a_second_writer_of_an_audit_gets_a_one_line_error_and_viewing_takes_no_lock(tmp_path: Path) -> None:
    from relgate_tui.engine.judging.ask import Answer

    plan = plan_audit(_spec(tmp_path))
    root = tmp_path / "audits"
    first = AuditStore.create_or_open(plan, root)
    with pytest.raises(DataError, match=r"^audit audit-\S+ is in use by another relgate process"):
        AuditStore.create_or_open(plan, root)
    viewer = AuditStore.open(first.path)  # viewing: no lock, sees what the writer wrote
    first.append(Answer("m", ("direct", "original", "p", "a"), 0, "3"))
    assert [a.text for a in viewer.answers()] == ["3"]
    with pytest.raises(DataError, match="in use by another relgate process"):
        viewer.append(Answer("m", ("direct", "original", "p", "b"), 0, "4"))  # a write through a view takes it
    first.close()
    second = AuditStore.create_or_open(plan, root)  # released on close
    second.append(Answer("m", ("direct", "original", "p", "b"), 0, "4"))
    second.close()
    assert [a.text for a in AuditStore.open(first.path).answers()] == ["3", "4"]


def test_a_second_process_resuming_the_same_audit_is_refused(tmp_path: Path) -> None:
    plan = plan_audit(_spec(tmp_path))
    root = tmp_path / "audits"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "from relgate_tui.engine.judging import AuditSpec, AuditStore, plan_audit\n"
         "import json, pathlib\n"
         f"spec = AuditSpec.from_json(json.loads({json.dumps(json.dumps(plan.spec.to_json()))}))\n"
         f"store = AuditStore.create_or_open(plan_audit(spec), pathlib.Path({str(root)!r}))\n"
         "print('locked', flush=True)\n"
         "sys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=str(ROOT), env={"PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(DataError, match="in use by another relgate process"):
            AuditStore.create_or_open(plan, root)
    finally:
        holder.communicate("")
    assert holder.returncode == 0
    AuditStore.create_or_open(plan, root).close()  # the kernel released it with the process
