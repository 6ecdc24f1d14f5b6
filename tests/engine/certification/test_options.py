"""Issue 37 §5: one option table. Every field of ``CertifyConfig`` carries its metadata; ``relgate certify``'s parser,
the run config's keys and Setup's form are generated from it — every option is in all three, or says why not."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from relgate_tui.cli import build_parser
from relgate_tui.commands.certify import config_of
from relgate_tui.engine.certification.certify import CertifyConfig as FromCertify
from relgate_tui.engine.certification.options import CertifyConfig, Option, options, setup_fields
from relgate_tui.engine.certification.run_config import CONFIG_KEYS
from relgate_tui.engine.certification.setup import RunSetup

SETUP_BUILT = {"task", "endpoint", "model", "api-key-env", "canon", "system", "verification", "judge-model",
               "judge-reps", "verify-judge-model", "settings: audit fraction"}
"""The ids of the fields Setup builds itself (endpoint and task pickers, the judges) and the Settings' field."""


def _certify_actions() -> dict[str, argparse.Action]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: a for a in sub.choices["certify"]._actions}


def test_certify_config_is_one_class_with_its_metadata() -> None:
    assert FromCertify is CertifyConfig  # re-exported: imports keep working
    for f in dataclasses.fields(CertifyConfig):
        assert isinstance(f.metadata.get("option"), Option), f.name


def test_every_option_is_a_flag_a_config_key_and_a_setup_field_or_says_why_not() -> None:
    actions = _certify_actions()
    generated = {name for name, _, _ in setup_fields("sampling")} | {name for name, _, _ in setup_fields("gate")}
    setup_names = {f.name for f in dataclasses.fields(RunSetup)}
    gaps = []
    for name, opt, default in options():
        if opt.flag is None:
            assert opt.not_a_flag, f"{name}: no flag and no reason"
            assert name not in CONFIG_KEYS.values()
        else:
            action = actions.get(name)
            assert action is not None and action.option_strings == [opt.flag], name
            assert action.help == opt.help and action.choices == opt.choices
            assert CONFIG_KEYS[opt.flag[2:]] == name  # the run config's key is the flag
        if opt.setup is not None:
            assert name in generated and name in setup_names, name  # a generated field fills RunSetup's field
        elif opt.setup_id is not None:
            assert opt.setup_id in SETUP_BUILT, (name, opt.setup_id)
        elif not opt.not_in_setup:
            gaps.append(name)
    assert not gaps, f"options in neither Setup nor marked not-in-Setup with a reason: {gaps}"


def test_config_keys_are_the_flags_and_only_the_flags() -> None:
    """Every key of a run config is a certify flag; the flags without an option field are the outputs and --batch."""
    actions = _certify_actions()
    flags = {s[2:] for a in actions.values() for s in a.option_strings if s.startswith("--")} - {"help", "config"}
    assert set(CONFIG_KEYS) == flags
    assert {k for k, v in CONFIG_KEYS.items() if v is None} == {"json", "quiet", "batch", "batch-price"}


@pytest.mark.parametrize("argv, field, value", [
    ([], "gate_on", "bound"),
    (["--verify-judge-model", "j"], "gate_on", "assisted"),  # the default with a verification judge
    (["--gate-on", "best"], "gate_on", "assisted"),  # an old config's name, read as the gate it is now
    (["--gate-on", "level"], "gate_on", "level"),
    (["--batch"], "batch", 0.5),
    (["--batch", "--batch-price", "0.25"], "batch", 0.25),
    (["--timeout", "5"], "timeout_s", 5.0),
    (["--one-look", "30", "--population", "items"], "population", "items"),
])
def test_the_generated_parser_builds_the_config(argv: list[str], field: str, value: object) -> None:
    args = build_parser().parse_args(["certify", "--task", "t", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m",
                                      *argv])
    assert getattr(config_of(args), field) == value


def test_a_new_option_reaches_the_cli_the_config_and_setup_at_once(monkeypatch) -> None:
    """Add one field to the table: ``relgate certify`` has its flag, a run config its key, Setup its field."""
    from relgate_tui.engine.certification import options as table
    from relgate_tui.engine.certification import run_config
    from relgate_tui.engine.certification.options import SetupField, option

    @dataclasses.dataclass(frozen=True)
    class Wider(CertifyConfig):
        top_p: float | None = option(None, flag="--top-p", type=float, help="nucleus sampling",
                                   setup=SetupField("top p", optional=True, order=99))

    monkeypatch.setattr(table, "CertifyConfig", Wider)
    args = build_parser().parse_args(["certify", "--task", "t", "--endpoint", "http://x/v1", "--model", "m",
                                      "--top-p", "0.9"])
    assert args.top_p == 0.9
    assert run_config._config_keys()["top-p"] == "top_p"
    assert ("top_p", "top-p") in [(name, wid) for name, wid, _ in table.setup_fields("sampling")]
