"""A run in one file (issue 24 §8): ``relgate certify --config run.toml``, as lm-eval's task YAML or promptfoo's
config make a run reproducible from one file.

Every key of the file is a ``certify`` flag without its dashes (``k-max = 20``; ``k_max`` is accepted too); a flag
given on the command line wins over the file. :func:`config_argv` turns a file into those flags (argparse then checks
each value exactly as it checks a typed flag); :func:`run_config_text` writes the file of a
:class:`~relgate_tui.engine.certification.certify.CertifyConfig` (the TUI's "Save config"): running it headless gives the same run
id as the run the TUI would start, since the run id is a hash of the same identity fields — the verification mode
and the verification judge included (issue 31 item 2), so the file and the TUI tell one story.
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from relgate_tui.engine.certification.options import CertifyConfig, options
from relgate_tui.errors import UserError

__all__ = ["CONFIG_KEYS", "config_argv", "load_run_config", "run_config_text", "save_run_config"]

def _config_keys() -> dict[str, str | None]:
    """TOML key (= the certify flag without its dashes) → CertifyConfig field, from the option table
    (:mod:`relgate_tui.engine.certification.options`); None: a flag with no config field — the outputs (``json``,
    ``quiet``) and ``batch`` / ``batch-price`` (together :attr:`CertifyConfig.batch`, the price factor with
    ``--batch``, else None; issue 32)."""
    keys: dict[str, str | None] = {}
    for name, opt, _ in options():
        if opt.toml is not None:
            keys[opt.toml] = name
        if name == "confidence":
            keys["json"] = None
        elif name == "timeout_s":
            keys["quiet"] = None
    return {**keys, "batch": None, "batch-price": None}


CONFIG_KEYS: dict[str, str | None] = _config_keys()
_BOOLEAN_KEYS = ("quiet", "batch")
_DEFAULT_BATCH_PRICE = 0.5  # certify's --batch-price default
_MAX_CONFIG_BYTES = 1 << 20
# the outputs a config may name: resolved against the config's folder and confined to it (issue 29 N10)
OUTPUT_KEYS = ("json", "run-dir")
# numbers a config may hold: finite and within these bounds (inclusive; a timeout of 1e308 s is no timeout)
_NUMBER_BOUNDS: dict[str, tuple[float, float]] = {
    "timeout": (1e-3, 86_400.0), "temperature": (0.0, 100.0), "max-tokens": (1, 10_000_000),
    "k-max": (1, 1_000_000), "concurrency": (1, 10_000), "n-cal": (1, 100_000_000), "limit": (1, 100_000_000),
    "seed": (-(2**63), 2**63 - 1), "pairwise-judge-reps": (1, 1001), "price-in": (0.0, 1e9),
    "price-out": (0.0, 1e9), "batch-price": (0.0, 1.0),
}
_ANY_NUMBER = (-1e12, 1e12)


def _check_value(p: Path, flag: str, value: Any) -> None:
    """One line naming the file and the field for a value no certify flag could take."""
    boolean = flag in _BOOLEAN_KEYS
    if isinstance(value, bool) != boolean or not isinstance(value, (str, int, float, bool)):
        want = "true or false" if boolean else "a string or a number"
        raise UserError(f"--config {p}: {flag} must be {want}")
    if flag in OUTPUT_KEYS and not isinstance(value, str):
        raise UserError(f"--config {p}: {flag} must be a path (a string)")
    if isinstance(value, str) and ("\x00" in value or len(value) > 4096):
        raise UserError(f"--config {p}: {flag} must be a string of at most 4096 characters, without NUL")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        lo, hi = _NUMBER_BOUNDS.get(flag, _ANY_NUMBER)
        if not math.isfinite(value) or not lo <= value <= hi:
            shown = f"{value:.6g}" if isinstance(value, float) or abs(value) < 10**12 else f"a {len(str(value))}-digit number"
            raise UserError(f"--config {p}: {flag} = {shown} is out of range (from {lo:g} to {hi:g})")


def _confined_output(p: Path, flag: str, value: str) -> str:
    """An output named by the config ``p``: relative to the config's folder and inside it (symlinks resolved), so
    a received config cannot write over files elsewhere. ``-`` (stdout) stays as it is."""
    if flag == "json" and value == "-":
        return value
    base = p.parent.resolve()
    target = (base / Path(value).expanduser()).resolve()
    if target != base and base not in target.parents:
        raise UserError(f"--config {p}: {flag} = {value[:200]!r} lies outside the config's folder {base}; a config's "
                        f"outputs stay beside it (pass --{flag} on the command line to write elsewhere)")
    return str(target)


def load_run_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The file's keys (dashed, as the flags) and values; a one-line :class:`UserError` naming the file (and the
    field) for a missing or special file (a FIFO, ``/dev/zero``: read through the one bounded regular-file read), a
    file over 1 MiB, a TOML error (nesting too deep included), an unknown key, a value that is no string, number or
    boolean or out of range, or an output outside the config's folder. The outputs (``json``, ``run-dir``) come back
    as absolute paths inside the config's folder."""
    from relgate_tui.engine.runs.inputs import InputError, read_regular

    p = Path(path).expanduser()
    try:
        data = read_regular(p, _MAX_CONFIG_BYTES, what="a run config")
    except FileNotFoundError:
        raise UserError(f"--config {p}: no such file") from None
    except InputError as exc:
        raise UserError(f"--config {exc}") from None
    except OSError as exc:
        raise UserError(f"--config {p}: {exc.strerror or exc}") from None
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"--config {p}: not valid TOML ({str(exc).splitlines()[0][:200]})") from None
    except RecursionError:
        raise UserError(f"--config {p}: not a run config (nested too deeply)") from None
    out: dict[str, Any] = {}
    for key, value in raw.items():
        flag = key.replace("_", "-")
        if flag not in CONFIG_KEYS:
            raise UserError(f"--config {p}: unknown key {key[:60]!r} (keys are the certify flags: "
                            f"{', '.join(CONFIG_KEYS)})")
        _check_value(p, flag, value)
        out[flag] = _confined_output(p, flag, value) if flag in OUTPUT_KEYS and isinstance(value, str) else value
    return out


def config_argv(values: Mapping[str, Any]) -> list[str]:
    """The certify flags a loaded config stands for (placed before the command line's own flags, which win)."""
    argv: list[str] = []
    for flag, value in values.items():
        if flag in _BOOLEAN_KEYS:
            argv += [f"--{flag}"] if value else []
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
    if cfg.batch is not None:  # sampled through the Batch API, at this price factor
        lines.append("batch = true")
        if cfg.batch != _DEFAULT_BATCH_PRICE:
            lines.append(f"batch-price = {_toml_value(float(cfg.batch))}")
    return "\n".join(lines) + "\n"


def save_run_config(cfg: CertifyConfig, path: str | os.PathLike[str], *, header: str = "") -> Path:
    """Write :func:`run_config_text` of ``cfg`` to ``path`` (atomically; its folder is created)."""
    from relgate_tui.engine.runs.files import atomic_write_bytes

    p = Path(path).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(p, run_config_text(cfg, header=header).encode("utf-8"))
    return p
