"""The one table of a run's options (issue 37 §5): :class:`CertifyConfig`, whose every field carries its
:class:`Option` — the ``relgate certify`` flag, its help, choices and argparse default, its key in a run config
(TOML) and its field in the TUI's Setup form. ``relgate certify``'s parser (``commands/certify.py``), the run
config's keys (:data:`~relgate_tui.engine.certification.run_config.CONFIG_KEYS`) and Setup's form are generated from
it, so an option added here reaches the command line, the config file and the TUI at once. A field that is not in
all three says why (``not_in_setup`` / ``not_a_flag``); ``tests/engine/test_options.py`` checks every field.

Re-exported by :mod:`relgate_tui.engine.certification.certify` (``from …certify import CertifyConfig`` keeps working).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterator
from dataclasses import MISSING as _MISSING
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from relgate_tui.core.certification.gate_names import ASSISTED_GATES, GATE_ON_CHOICES, GateOn, check_gate_on
from relgate_tui.core.redact import public_url
from relgate_tui.engine.certification.identity import VERIFICATION_MODES
from relgate_tui.errors import CertifyError

__all__ = ["CertifyConfig", "Option", "SetupField", "STOPPING_CHOICES", "flag_default", "gate_on_flag", "is_required",
           "option", "options",
           "setup_fields"]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
STOPPING_CHOICES = ("anytime", "paper", "none")
_NO_DEFAULT = object()


@dataclass(frozen=True)
class SetupField:
    """A field of Setup's generated form: its ``label``, an Input of ``kind`` "integer" / "number" (checked within
    [``lo``, ``hi``], an open end with ``lo_open``; empty = None when ``optional``, shown as ``placeholder``) or a
    Select of ``choices`` ((label, value) pairs; the value ``auto`` stands for None); ``section``: the form's section
    it belongs to, ``order`` its place there; ``name``: how an error names it (default: the label)."""

    label: str
    kind: Literal["integer", "number", "select"] = "number"
    section: str = "sampling"
    placeholder: str = ""
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    optional: bool = False
    choices: tuple[tuple[str, str], ...] = ()
    order: int = 0
    name: str = ""
    auto: str = ""

    @property
    def error_name(self) -> str:
        """How an error message names the field."""
        return self.name or self.label


@dataclass(frozen=True)
class Option:
    """One option's metadata. ``flag``: the ``relgate certify`` flag (None: ``not_a_flag`` says why); ``toml``: its
    key in a run config (the flag without its dashes; None: not in a config); ``setup``: its field in Setup's
    generated form, or the id of a field Setup builds itself (``setup_id``); ``not_in_setup``: why it is not in
    Setup. ``cli_default``: argparse's default when it differs from the field's (``--gate-on``: None = by the judge)."""

    flag: str | None
    help: str | None = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    type: Callable[[str], Any] | None = None
    group: str = ""
    cli_default: Any = _NO_DEFAULT
    setup: SetupField | None = None
    setup_id: str | None = None
    not_in_setup: str = ""
    not_a_flag: str = ""

    @property
    def toml(self) -> str | None:
        return None if self.flag is None else self.flag[2:]


def option(default: Any = _NO_DEFAULT, **meta: Any) -> Any:
    """A :class:`CertifyConfig` field with its :class:`Option`."""
    if default is _NO_DEFAULT:
        return field(metadata={"option": Option(**meta)})
    return field(default=default, metadata={"option": Option(**meta)})


def gate_on_flag(text: str) -> str:
    """``--gate-on``'s value: a name of :data:`GATE_ON_CHOICES`, an old name (``best``) read as the gate it is now."""
    try:
        return check_gate_on(text)
    except ValueError:
        return text  # argparse then names the choices


PAIRWISE = "pairwise judge (optional): a second ranking of each item's answers by an LLM judge"
VERIFY = ("verification judge (optional): checks every item's top answer; the judge-assisted bound needs fewer human "
          "labels when the judge is good")
SETUP_BUILT = "a field Setup builds itself"


# ------------------------------------------------------------------------------------------------------------ config
@dataclass(frozen=True)
class CertifyConfig:
    """Everything ``relgate certify`` takes (issue 5 item 7). ``canon`` None = the task's suggested canonicalizer;
    ``n_cal`` None = half the items (rounded down); ``limit`` None = every item (else the first ``limit`` items of
    the task file); ``max_tokens`` None = the server's default; ``min_reliability`` None = no gate; prices are per
    million tokens. ``api_key_env`` is the NAME of an environment variable, never the key. ``gate_on`` "best" (an
    old config's) is read as "assisted"."""

    task: str = option(flag="--task", metavar="NAME_OR_PATH", help="bundled task name or .jsonl/.csv file",
                     setup_id="task")
    endpoint: str = option(flag="--endpoint", metavar="URL",
                         help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1", setup_id="endpoint")
    model: str = option(flag="--model", metavar="NAME", setup_id="model")
    api_key_env: str | None = option(None, flag="--api-key-env", metavar="VAR",
                                   help="NAME of the environment variable holding the API key", setup_id="api-key-env")
    canon: str | None = option(None, flag="--canon", metavar="SPEC",
                             help="numeric | mcq | text | math | regex:PATTERN (default: the task's)", setup_id="canon")
    system: str | None = option(None, flag="--system", metavar="PROMPT", help="system prompt", setup_id="system")
    temperature: float = option(0.7, flag="--temperature", type=float,
                              setup=SetupField("temperature", lo=0, hi=2, order=4))
    max_tokens: int | None = option(None, flag="--max-tokens", type=int, metavar="N",
                                  not_in_setup="the server's default is what a quick vetting wants; a config file "
                                               "or the command line sets it")
    k_max: int = option(20, flag="--k-max", type=int, metavar="K", help="samples per item at most (default 20)",
                      setup=SetupField("K_max", "integer", lo=1, hi=1000, order=0))
    delta: float = option(0.05, flag="--delta", type=float, help="stopping-rule error level (default 0.05)",
                        setup=SetupField("δ (stopping)", lo=0, hi=0.5, lo_open=True, order=2, name="δ"))
    stopping: str = option("anytime", flag="--stopping", choices=STOPPING_CHOICES,
                         setup=SetupField("stopping rule", "select", choices=(
                             ("anytime (valid, default)", "anytime"), ("paper eq. 9.1", "paper"),
                             ("none (always K_max)", "none")), order=1))
    alpha: float = option(0.10, flag="--alpha", type=float, help="conformal miscoverage level (default 0.10)",
                        setup=SetupField("α", lo=0, hi=0.5, lo_open=True, order=3))
    n_cal: int | None = option(None, flag="--n-cal", type=int, metavar="N", help="calibration items (default: half)",
                             setup=SetupField("calibration n", "integer", placeholder="half", lo=1, optional=True,
                                              order=6, name="calibration items"))
    seed: int = option(0, flag="--seed", type=int, setup=SetupField("seed", "integer", lo=0, order=10))
    concurrency: int = option(8, flag="--concurrency", type=int, setup=SetupField("concurrency", "integer", lo=1, hi=256,
                                                                                 order=5))
    labels: str | None = option(None, flag="--labels", metavar="FILE",
                              help='JSONL verdicts: {"id", "rank": r} | {"id", "none": true} | {"id", "skip": true}',
                              not_in_setup="the TUI's labels are the spot-check's keys (Runs → resume)")
    min_reliability: float | None = option(
        None, flag="--min-reliability", type=float, metavar="R",
        help="gate: exit 1 when the reliability (see --gate-on) is below R",
        setup=SetupField("gate threshold", section="gate", placeholder="(no gate)", lo=0, hi=1, optional=True,
                         order=0))
    gate_on: GateOn = option(
        "bound", flag="--gate-on", type=gate_on_flag, choices=GATE_ON_CHOICES, cli_default=None,
        help="gate on the lower confidence bound (default: a model at R passes <= 1 - confidence of the time; "
             "Clopper-Pearson when every verdict is a reference answer, the anytime bound when a person labelled "
             "items), on the point estimate (passes such a model about half the time), or on the judge-assisted "
             "bound at the full confidence (assisted: the default with --verify-judge-model; the former name best "
             "is read as assisted)",
        setup=SetupField("gate on", "select", section="gate", order=1, auto="auto", choices=(
            ("auto", "auto"), ("lower bound", "bound"), ("level 1−α*", "level"),
            ("judge-assisted", "assisted"))))
    one_look: int | None = option(
        None, flag="--one-look", type=int, metavar="N",
        help="decide the human-only gate once, at exactly N labels fixed now, before labelling (exact "
             "Clopper-Pearson; nothing is decided before N labels). Part of the run id.",
        setup=SetupField("one-look at", "integer", section="gate", placeholder="(watched)", lo=1, optional=True,
                         order=3, name="one-look labels"))
    population: str = option(
        "task", flag="--population", choices=("task", "items"),
        help="what the judge-assisted bound is about: the task (default; a Clopper-Pearson step from the N judged "
             "items) or the N judged items themselves (no step). Part of the run id.",
        setup=SetupField("bound about", "select", section="gate", order=4, choices=(
            ("the task", "task"), ("the judged items", "items"))))
    confidence: float = option(0.95, flag="--confidence", type=float, metavar="C",
                             help="confidence of the lower bound (default 0.95)",
                             setup=SetupField("confidence", section="gate", lo=0.5, hi=0.999, order=2))
    run_dir: str | None = option(None, flag="--run-dir", metavar="DIR",
                               help="directory holding runs (default: the data dir's runs/)",
                               not_in_setup="the TUI keeps its runs in the data dir (RELGATE_HOME)")
    price_in: float | None = option(None, flag="--price-in", type=float, metavar="X",
                                  help="price per million input tokens",
                                  setup=SetupField("price in $/Mtok", placeholder="(free)", lo=0, optional=True,
                                                   order=8, name="price in"))
    price_out: float | None = option(None, flag="--price-out", type=float, metavar="Y",
                                   help="price per million output tokens",
                                   setup=SetupField("price out $/Mtok", placeholder="(free)", lo=0, optional=True,
                                                    order=9, name="price out"))
    limit: int | None = option(None, flag="--limit", type=int, metavar="N",
                             help="use only the first N items of the task file",
                             setup=SetupField("use items", "integer", placeholder="all", lo=2, optional=True,
                                              order=7))
    timeout_s: float = option(60.0, flag="--timeout", type=float, metavar="S", help="per-request timeout in seconds",
                            not_in_setup="a quick vetting keeps the default; a config file or the command line sets it")
    max_down_s: float = option(120.0, flag=None, not_a_flag="the endpoint-down wait is the pipeline's, not the user's",
                             not_in_setup="not an option")
    cache_dir: str | None = option(None, flag=None, not_a_flag="the sample cache's place is the data dir's layout",
                                 not_in_setup="not an option")
    pairwise_judge_endpoint: str | None = option(None, flag="--pairwise-judge-endpoint", metavar="URL", group=PAIRWISE,
                                               help="the judge's OpenAI-compatible base URL",
                                               setup_id="judge-model")  # Setup: the answering endpoint's judge
    pairwise_judge_model: str | None = option(None, flag="--pairwise-judge-model", metavar="NAME", group=PAIRWISE,
                                            help="the judge model", setup_id="judge-model")
    pairwise_judge_api_key_env: str | None = option(None, flag="--pairwise-judge-api-key-env", metavar="VAR",
                                                  group=PAIRWISE, help="NAME of the variable holding the judge's key",
                                                  setup_id="api-key-env")  # Setup: the endpoint's key
    pairwise_judge_reps: int = option(3, flag="--pairwise-judge-reps", type=int, metavar="K", group=PAIRWISE,
                                    help="odd number of verdicts per pair, random orders (default 3)",
                                    setup_id="judge-reps")
    verify_judge_model: str | None = option(None, flag="--verify-judge-model", metavar="NAME", group=VERIFY,
                                          help="the verification judge model", setup_id="verify-judge-model")
    verify_judge_endpoint: str | None = option(None, flag="--verify-judge-endpoint", metavar="URL", group=VERIFY,
                                             help="its OpenAI-compatible base URL (default: --endpoint)",
                                             not_in_setup="Setup's verification judge is one of the answering "
                                                          "endpoint's models")
    verify_judge_api_key_env: str | None = option(None, flag="--verify-judge-api-key-env", metavar="VAR", group=VERIFY,
                                                help="NAME of the variable holding its key",
                                                setup_id="api-key-env")  # Setup: the endpoint's key
    verification: str = option(
        "auto", flag="--verification", choices=VERIFICATION_MODES,
        help="auto: references verify; human: a person verifies every calibration item (the spot-check); audit: "
             "auto, and a person re-checks --audit-fraction of the reference verdicts", setup_id="verification")
    audit_fraction: float = option(0.2, flag="--audit-fraction", type=float, metavar="F",
                                 help="audit: the share re-checked (0.2)", setup_id="settings: audit fraction")
    batch: float | None = option(None, flag=None, not_a_flag="--batch with --batch-price FACTOR (the price factor)",
                               setup=SetupField("batch price ×", placeholder="(direct calls)", lo=0, hi=1,
                                                optional=True, order=11, name="batch price"))
    batch_max_mb: float = option(190.0, flag="--batch-max-mb", type=float, metavar="MB",
                                 help="largest batch request file, in MiB (default 190; a round over it is several "
                                      "batches)", not_in_setup="a provider's file limit: a config file or the "
                                                               "command line sets it")
    batch_deadline_h: float = option(25.0, flag="--batch-deadline", type=float, metavar="HOURS",
                                     help="stop when a batch has run this long, its id kept for a rerun (default 25: "
                                          "the 24 h window + 1)", not_in_setup="a provider's completion window: a "
                                                                              "config file or the command line sets it")

    def __post_init__(self) -> None:
        if isinstance(self.gate_on, str) and self.gate_on not in GATE_ON_CHOICES:
            try:  # an old config's name ("best"): read as the gate it is now
                object.__setattr__(self, "gate_on", check_gate_on(self.gate_on))
            except ValueError:
                pass  # validate() says what is wrong

    @property
    def uses_pairwise_judge(self) -> bool:
        return self.pairwise_judge_endpoint is not None or self.pairwise_judge_model is not None

    def pairwise_judge_config(self) -> Any:
        """The :class:`~relgate_tui.engine.judging.certify_judge.PairwiseJudgeConfig` of the optional pairwise judge
        (None without one). It shares the run's seed, timeout, concurrency, endpoint-down wait and sample cache."""
        if not self.uses_pairwise_judge:
            return None
        from relgate_tui.engine.judging.certify_judge import PairwiseJudgeConfig

        return PairwiseJudgeConfig(
            endpoint=self.pairwise_judge_endpoint or "", model=self.pairwise_judge_model or "",
            api_key_env=self.pairwise_judge_api_key_env, reps=self.pairwise_judge_reps, timeout_s=self.timeout_s,
            concurrency=self.concurrency, seed=self.seed, max_down_s=self.max_down_s, cache_dir=self.cache_dir)

    def endpoint_config(self) -> Any:
        """The sampler's :class:`~relgate_tui.engine.transport.endpoints.EndpointConfig` (OpenAI-compatible chat)."""
        from relgate_tui.engine.transport.endpoints import EndpointConfig

        return EndpointConfig(
            base_url=self.endpoint,
            model=self.model,
            kind="openai",
            api_key_env=self.api_key_env,
            system=self.system,
            temperature=float(self.temperature),
            max_tokens=self.max_tokens,
            timeout_s=float(self.timeout_s),
        )

    def validate(self) -> CertifyConfig:
        """Raise :class:`CertifyError` (one line) for an option value that cannot work; return self."""

        def bad(msg: str) -> None:
            raise CertifyError(msg)

        if not self.task or not str(self.task).strip():
            bad("--task is required (a bundled task name or a .jsonl/.csv file; `relgate tasks` lists them)")
        if not self.endpoint or not re.match(r"^https?://", self.endpoint):
            bad(f"--endpoint must be an http(s) URL such as http://127.0.0.1:8080/v1, got {self.endpoint!r}")
        if not self.model or not self.model.strip():
            bad("--model is required")
        if self.api_key_env is not None and not _ENV_NAME.match(self.api_key_env):
            bad("--api-key-env takes the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself")
        if not (_is_number(self.temperature) and 0.0 <= self.temperature <= 2.0):
            bad(f"--temperature must be in [0, 2], got {self.temperature!r}")
        if self.max_tokens is not None and not (_is_int(self.max_tokens) and self.max_tokens >= 1):
            bad(f"--max-tokens must be a positive integer, got {self.max_tokens!r}")
        if not (_is_int(self.k_max) and 1 <= self.k_max <= 1000):
            bad(f"--k-max must be an integer in [1, 1000], got {self.k_max!r}")
        if not (_is_number(self.delta) and 0.0 < self.delta < 1.0):
            bad(f"--delta must be in (0, 1), got {self.delta!r}")
        if self.stopping not in STOPPING_CHOICES:
            bad(f"--stopping must be one of {', '.join(STOPPING_CHOICES)}, got {self.stopping!r}")
        if not (_is_number(self.alpha) and 0.0 < self.alpha < 1.0):
            bad(f"--alpha must be in (0, 1), got {self.alpha!r}")
        if self.n_cal is not None and not (_is_int(self.n_cal) and self.n_cal >= 0):
            bad(f"--n-cal must be a non-negative integer, got {self.n_cal!r}")
        if not _is_int(self.seed) or self.seed < 0:
            bad(f"--seed must be a non-negative integer, got {self.seed!r}")
        if not (_is_int(self.concurrency) and 1 <= self.concurrency <= 1024):
            bad(f"--concurrency must be an integer in [1, 1024], got {self.concurrency!r}")
        if self.min_reliability is not None and not (
            _is_number(self.min_reliability) and 0.0 <= self.min_reliability <= 1.0
        ):
            bad(f"--min-reliability must be in [0, 1], got {self.min_reliability!r}")
        if (self.one_look is not None and not (_is_int(self.one_look) and self.one_look >= 1)) or \
                self.population not in ("task", "items"):
            bad(f"--one-look must be a positive integer, --population task or items: got {self.one_look!r}, "
                f"{self.population!r}")
        if self.gate_on not in GATE_ON_CHOICES:
            bad(f"--gate-on must be one of {', '.join(GATE_ON_CHOICES)}, got {self.gate_on!r}")
        for name, price in (("--price-in", self.price_in), ("--price-out", self.price_out)):
            if price is not None and not (_is_number(price) and price >= 0 and math.isfinite(price)):
                bad(f"{name} must be a non-negative number (price per million tokens), got {price!r}")
        if (self.price_in is None) != (self.price_out is None):
            bad("give both --price-in and --price-out (prices per million input/output tokens)")
        if self.limit is not None and not (_is_int(self.limit) and self.limit >= 1):
            bad(f"--limit must be a positive integer, got {self.limit!r}")
        if not (_is_number(self.confidence) and 0.0 < self.confidence < 1.0):
            bad(f"the confidence level must be in (0, 1), got {self.confidence!r}")
        if not (_is_number(self.timeout_s) and 1e-3 <= self.timeout_s <= 86_400):  # 1e308 s would be no deadline
            bad(f"the request timeout must be between 0.001 and 86400 seconds, got {self.timeout_s!r}")
        if not (_is_number(self.max_down_s) and self.max_down_s >= 0):
            bad(f"the endpoint-down wait must be non-negative, got {self.max_down_s!r}")
        if not (_is_number(self.batch_max_mb) and 0 < self.batch_max_mb <= 200) or \
                not (_is_number(self.batch_deadline_h) and 0 < self.batch_deadline_h <= 24 * 365):
            bad(f"--batch-max-mb must be in (0, 200] (the provider's file limit) and --batch-deadline a positive "
                f"number of hours, got {self.batch_max_mb!r}, {self.batch_deadline_h!r}")
        if self.uses_pairwise_judge:
            if not self.pairwise_judge_endpoint:
                bad("--pairwise-judge-model needs --pairwise-judge-endpoint (the judge's base URL)")
            if not self.pairwise_judge_model or not self.pairwise_judge_model.strip():
                bad("--pairwise-judge-endpoint needs --pairwise-judge-model (the judge model's name)")
            from relgate_tui.engine.judging.certify_judge import JudgeCertifyError

            try:
                self.pairwise_judge_config().validate()
            except JudgeCertifyError as exc:
                raise CertifyError(str(exc)) from None
        if self.verification not in VERIFICATION_MODES:
            bad(f"--verification must be one of {', '.join(VERIFICATION_MODES)}, got {self.verification!r}")
        if not (_is_number(self.audit_fraction) and 0.0 < self.audit_fraction <= 1.0):
            bad(f"the audit fraction must be in (0, 1], got {self.audit_fraction!r}")
        if self.verify_judge_model is not None or self.verify_judge_endpoint is not None or \
                self.verify_judge_api_key_env is not None or self.gate_on in ASSISTED_GATES:
            # the verification judge's options and the gates that need it; a run without one never imports the
            # judge modules (~0.14 s of every run's start-up)
            from relgate_tui.engine.judging.verify_judge import check_options

            check_options(self)
        return self

    def public_dict(self) -> dict[str, Any]:
        """The config as stored in the run manifest (no secret: only the key's variable name; endpoint URLs without
        userinfo or credential-looking query parameters, :func:`relgate_tui.core.redact.public_url`)."""
        out = asdict(self)
        for name in ("endpoint", "pairwise_judge_endpoint", "verify_judge_endpoint"):
            if isinstance(out.get(name), str):
                out[name] = public_url(out[name])
        return out


def _is_int(x: Any) -> bool:
    """An int or a numpy integer, never a bool (numpy is not imported for this: its scalar types are recognised by
    their module, so parsing a run's options does not load it)."""
    return not isinstance(x, bool) and (isinstance(x, int) or (isinstance(x, numbers.Integral) and _numpy_scalar(x)))


def _is_number(x: Any) -> bool:
    """A finite int, float, numpy integer or numpy float, never a bool (nor a Fraction or Decimal: not JSON)."""
    return (not isinstance(x, bool) and (isinstance(x, (int, float)) or (isinstance(x, numbers.Real) and _numpy_scalar(x)))
            and math.isfinite(x))


def _numpy_scalar(x: Any) -> bool:
    return type(x).__module__ == "numpy"


def options() -> Iterator[tuple[str, Option, Any]]:
    """Every :class:`CertifyConfig` field in order: (its name, its :class:`Option`, its default — ``_NO_DEFAULT``
    stands for a required field: see :func:`is_required`)."""
    for f in fields(CertifyConfig):
        yield f.name, f.metadata["option"], f.default


def is_required(default: Any) -> bool:
    """True for a field without a default (``--task``, ``--endpoint``, ``--model``)."""
    return default is _NO_DEFAULT or default is _MISSING


def flag_default(opt: Option, default: Any) -> Any:
    """The flag's argparse default: the field's, unless the option has its own (``cli_default``)."""
    return default if opt.cli_default is _NO_DEFAULT else opt.cli_default


def setup_fields(section: str) -> list[tuple[str, str, SetupField]]:
    """The generated fields of one of Setup's form sections ("sampling", "gate") in their order: (field name, widget
    id — the flag without its dashes —, :class:`SetupField`)."""
    found = [(name, opt.toml or name.replace("_", "-"), opt.setup) for name, opt, _ in options()
             if opt.setup is not None and opt.setup.section == section]
    return sorted(found, key=lambda f: f[2].order)
