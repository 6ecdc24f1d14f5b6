"""The judge setup's direct-score fields (issue 12 §1): top log-probs, the prompt (score-only / G-Eval) and the scale
K reach the audit's config exactly as ``relgate judge-audit --top-logprobs --prompt --scale`` do (same spec, same
audit id, the CLI's ``--max-tokens`` rule); bad values are one-line errors under the fields; the model paraphrase is
refused off the 1–5 score-only prompt as the CLI refuses it; a G-Eval 1–10 audit run in the app stores its prompt,
scale and log-probs, and ``i`` on its results opens paper 001's Intervals view."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from textual.widgets import Button, Checkbox, Input, Select

from relgate_tui.commands import judge_audit
from relgate_tui.engine.judging import geval
from relgate_tui.engine.judging.audit_run import JudgeAuditConfig
from relgate_tui.engine.judging.store import audit_id
from relgate_tui.errors import UserError
from relgate_tui.tui.app import make_app
from relgate_tui.tui.home import HomeScreen
from relgate_tui.tui.judge import audit_studies
from relgate_tui.tui.studies.intervals import IntervalsView
from tests.tui.test_flow import wait_until
from tests.tui.test_judge import fill, open_judge, run_audit, text_of

SIZE = (120, 40)


def cli_config(*argv: str) -> JudgeAuditConfig:
    """The config ``relgate judge-audit ARGV`` would run (the CLI's own parser and ``_config``)."""
    parser = argparse.ArgumentParser()
    judge_audit.add_arguments(parser)
    return judge_audit._config(parser.parse_args(list(argv)))


def cli_argv(screen, *extra: str) -> list[str]:
    return ["--data", "hanna", "--criterion", "Coherence", "--endpoint", screen.app.demo.base_url, "--model",
            "sim-judge", "--reps", "3", "--inputs", "8", "--candidates", "6", "--seed", "1", "--alpha", "0.1", *extra]


async def test_the_fields_give_the_clis_spec_and_audit_id(services) -> None:
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        await fill(screen, pilot, "direct")
        assert screen.query_one("#direct-fields").display
        cfg, _ = screen.collect()  # the defaults: log-probs for paper 001, score-only 1–5
        assert (cfg.top_logprobs, cfg.prompt, cfg.scale, cfg.max_tokens) == (5, "score-only", 5, 16)
        same = cli_config(*cli_argv(screen, "--protocol", "direct", "--top-logprobs", "5"))
        assert cfg.to_spec().identity() == same.to_spec().identity()
        assert audit_id(cfg.to_spec()) == audit_id(same.to_spec())

        screen.query_one("#prompt", Select).value = "geval"
        screen.query_one("#var-typo", Checkbox).value = True  # perturbs the G-Eval 1–10 template, as --perturb does
        await fill(screen, pilot, "both", **{"top-logprobs": "10", "scale": "10"})
        cfg, _ = screen.collect()
        assert (cfg.top_logprobs, cfg.prompt, cfg.scale, cfg.max_tokens) == (10, "geval", 10, 400)
        same = cli_config(*cli_argv(screen, "--protocol", "both", "--top-logprobs", "10", "--prompt", "geval",
                                    "--scale", "10", "--perturb", "typo"))
        assert same.max_tokens == 400 and cfg.to_spec().identity() == same.to_spec().identity()
        assert audit_id(cfg.to_spec()) == audit_id(same.to_spec())
        assert audit_id(cfg.to_spec()) != audit_id(cli_config(*cli_argv(screen, "--protocol", "both",
                                                                          "--top-logprobs", "10", "--perturb",
                                                                          "typo")).to_spec())

        await fill(screen, pilot, "pairwise")  # no direct scores: fields hidden, the CLI's defaults
        assert not screen.query_one("#direct-fields").display
        cfg, _ = screen.collect()
        assert (cfg.top_logprobs, cfg.prompt, cfg.scale, cfg.max_tokens) == (0, "score-only", 5, 16)
        same = cli_config(*cli_argv(screen, "--protocol", "pairwise", "--perturb", "typo"))
        assert audit_id(cfg.to_spec()) == audit_id(same.to_spec())


async def test_bad_values_are_inline_errors_and_the_paraphrase_is_refused_off_score_only(services) -> None:
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        for wid, value, message in (("top-logprobs", "21", "top log-probs must be ≤ 20"),
                                    ("top-logprobs", "-1", "top log-probs must be ≥ 0"),
                                    ("top-logprobs", "many", "top log-probs: 'many' is not an integer"),
                                    ("top-logprobs", "", "top log-probs: a value is needed"),
                                    ("scale", "1", "scale K must be ≥ 2"), ("scale", "11", "scale K must be ≤ 10")):
            await fill(screen, pilot, "direct", **{"top-logprobs": "5", "scale": "5", wid: value})
            inline = text_of(screen, "#direct-error")
            assert message in inline and "\n" not in inline.strip()
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert screen.state == "setup" and message in text_of(screen, "#judge-error")
        await fill(screen, pilot, "direct", **{"top-logprobs": "0", "scale": "5"})
        assert text_of(screen, "#direct-error") == "" and screen.collect()[0].top_logprobs == 0

        # the model paraphrase rewrites the score-only 1–5 prompt: refused with G-Eval or another K, as by the CLI
        screen.query_one("#var-paraphrase", Checkbox).value = True
        screen.query_one("#prompt", Select).value = "geval"
        await pilot.pause()
        error = text_of(screen, "#judge-error")
        assert "paraphrase" in error and "score-only 1-5" in error and "template file" in error
        assert "\n" not in error.strip()
        try:
            cli_config(*cli_argv(screen, "--protocol", "direct", "--prompt", "geval", "--perturb", "paraphrase"))
        except UserError as exc:
            assert "score-only 1-5 prompt" in str(exc)
        else:
            raise AssertionError("the CLI accepted the paraphrase with --prompt geval")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert screen.state == "setup"
        screen.query_one("#para-generate", Button).press()  # nor is a paraphrase written for it
        await pilot.pause()
        assert "score-only 1-5" in text_of(screen, "#para-error")
        screen.query_one("#prompt", Select).value = "score-only"
        await fill(screen, pilot, "direct", scale="7")
        assert "score-only 1-5" in text_of(screen, "#judge-error")
        await fill(screen, pilot, "pairwise", scale="7")  # pairwise templates only: the paraphrase is allowed
        assert "score-only 1-5" not in text_of(screen, "#judge-error")
        assert len(app.demo.chat_requests) == 0


async def test_a_geval_1_to_10_audit_stores_its_settings_and_opens_the_intervals(services, monkeypatch) -> None:
    monkeypatch.setattr(audit_studies, "SEEDS", 3)
    monkeypatch.setattr(audit_studies, "METHODS", ("cqr", "ordinal-aps"))  # fast ones, for the test's time
    app = make_app(services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_judge(app, pilot)
        screen.query_one("#prompt", Select).value = "geval"
        await pilot.pause()
        screen = await run_audit(app, pilot, "direct", reps="1", scale="10", **{"n-inputs": "8", "n-candidates": "5",
                                                                                "seed": "2"})
        path = audit_studies.stored_audit(screen)
        spec = json.loads((Path(path) / "manifest.json").read_text(encoding="utf-8"))["spec"]
        assert (spec["prompt"], spec["scale"], spec["protocol"]) == ("geval", 10, "direct")
        assert [(j["top_logprobs"], j["max_tokens"]) for j in spec["judges"]] == [(5, 400)]
        answers = [json.loads(x) for x in (Path(path) / "answers.jsonl").read_text().splitlines()]
        assert len(answers) == 40 and all(a["text"].startswith("Step 1:") for a in answers)

        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, IntervalsView), what="the intervals view")
        view = app.screen
        assert isinstance(view, IntervalsView)
        assert view.result.labels["audit"] == path.name and view.result.seeds == (1, 2, 3)
        assert [m.name for m in view.result.methods] == ["cqr", "ordinal-aps"]
        assert view.result.n_items >= 38 and tuple(view.result.scale) == tuple(range(1, 11))

        for _ in range(3):  # the view → the results → the setup → Home; the next visit restores the fields
            await pilot.press("escape")
            await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        again = await open_judge(app, pilot)
        assert again is not screen and str(again.query_one("#prompt", Select).value) == "geval"
        assert (again.query_one("#top-logprobs", Input).value, again.query_one("#scale", Input).value) == ("5", "10")
        assert again.collect()[0] == screen.config  # the same audit again


def test_the_default_prompt_settings_are_the_engines() -> None:
    from relgate_tui.tui.judge.direct_fields import DirectSettings

    d = DirectSettings()
    assert (d.prompt, d.scale) == (geval.DEFAULT_PROMPT, geval.DEFAULT_SCALE)
    assert JudgeAuditConfig("d", "c", "e", "m").max_tokens == d.max_tokens
    assert DirectSettings.of(3, geval.GEVAL, 7).max_tokens == 400
