"""A run in one file (issue 24 §8): ``relgate certify --config run.toml``, as lm-eval's task YAML or promptfoo's
config make a run reproducible from one file.

Every key of the file is a ``certify`` flag without its dashes (``k-max = 20``; ``k_max`` is accepted too); a flag
given on the command line wins over the file. :func:`config_argv` turns a file into those flags (argparse then checks
each value exactly as it checks a typed flag); :func:`run_config_text` writes the file of a
:class:`~relgate_tui.engine.certification.certify.CertifyConfig` (the TUI's "Save config"): running it headless gives the same run
id as the run the TUI would start, since the run id is a hash of the same identity fields.
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from relgate_tui.engine.certification.certify import CertifyConfig
from relgate_tui.errors import UserError

__all__ = ["CONFIG_KEYS", "config_argv", "load_run_config", "run_config_text", "save_run_config"]

# TOML key (= the certify flag) -> CertifyConfig field; None: a flag with no config field (output options)
CONFIG_KEYS: dict[str, str | None] = {
    "task": "task", "endpoint": "endpoint", "model": "model", "api-key-env": "api_key_env", "canon": "canon",
    "system": "system", "temperature": "temperature", "max-tokens": "max_tokens", "k-max": "k_max",
    "delta": "delta", "stopping": "stopping", "alpha": "alpha", "n-cal": "n_cal", "seed": "seed",
    "concurrency": "concurrency", "labels": "labels", "min-reliability": "min_reliability", "gate-on": "gate_on",
    "one-look": "one_look", "population": "population",
    "confidence": "confidence", "json": None, "run-dir": "run_dir", "price-in": "price_in",
    "price-out": "price_out", "limit": "limit", "timeout": "timeout_s", "quiet": None,
    "pairwise-judge-endpoint": "pairwise_judge_endpoint", "pairwise-judge-model": "pairwise_judge_model",
    "pairwise-judge-api-key-env": "pairwise_judge_api_key_env", "pairwise-judge-reps": "pairwise_judge_reps",
}
_MAX_CONFIG_BYTES = 1 << 20


def load_run_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The file's keys (dashed, as the flags) and values; a one-line :class:`UserError` for an unreadable file, a
    TOML error, an unknown key or a value that is no string, number or boolean."""
    p = Path(path).expanduser()
    try:
        if not p.is_file():
            raise UserError(f"--config {p}: no such file")
        data = p.read_bytes()[: _MAX_CONFIG_BYTES + 1]
    except OSError as exc:
        raise UserError(f"--config {p}: {exc.strerror or exc}") from None
    if len(data) > _MAX_CONFIG_BYTES:
        raise UserError(f"--config {p}: larger than 1 MiB — not a run config")
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"--config {p}: not valid TOML ({str(exc).splitlines()[0]})") from None
    out: dict[str, Any] = {}
    for key, value in raw.items():
        flag = key.replace("_", "-")
        if flag not in CONFIG_KEYS:
            raise UserError(f"--config {p}: unknown key {key[:60]!r} (keys are the certify flags: "
                            f"{', '.join(CONFIG_KEYS)})")
        if isinstance(value, bool) != (flag == "quiet") or not isinstance(value, (str, int, float, bool)):
            raise UserError(f"--config {p}: {flag} must be {'true or false' if flag == 'quiet' else 'a string or a number'}")
        out[flag] = value
    return out


def config_argv(values: Mapping[str, Any]) -> list[str]:
    """The certify flags a loaded config stands for (placed before the command line's own flags, which win)."""
    argv: list[str] = []
    for flag, value in values.items():
        if flag == "quiet":
            argv += ["--quiet"] if value else []
        else:
            argv += [f"--{flag}", str(value)]
    return argv


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"a run config holds finite numbers only, got {value!r}")
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a TOML basic string


def run_config_text(cfg: CertifyConfig, *, header: str = "") -> str:
    """The TOML of ``cfg``: every field that differs from ``relgate certify``'s default, as its flag (the run
    directory and cache are left to the data dir). Reading it back with ``--config`` gives the same config."""
    defaults = CertifyConfig(task="", endpoint="", model="")
    lines = [f"# {line}" for line in header.splitlines()]
    lines.append("# relgate certify --config THIS_FILE  (every key is a certify flag; a flag on the command line wins)")
    for flag, field in CONFIG_KEYS.items():
        if field is None or field == "run_dir":
            continue
        value = getattr(cfg, field)
        if value is None or (field not in ("task", "endpoint", "model") and value == getattr(defaults, field)):
            continue
        lines.append(f"{flag} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def save_run_config(cfg: CertifyConfig, path: str | os.PathLike[str], *, header: str = "") -> Path:
    """Write :func:`run_config_text` of ``cfg`` to ``path`` (atomically; its folder is created)."""
    from relgate_tui.engine.runs.files import atomic_write_bytes

    p = Path(path).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(p, run_config_text(cfg, header=header).encode("utf-8"))
    return p
