"""Issue 29 N10, N12, N16: a received ``certify --config`` file.

* N10: the outputs it names (``json``, ``run-dir``) are relative to the config's folder and confined to it — a
  received config cannot overwrite ``victim/precious.txt`` beside the user's working directory nor escape with
  ``../../``; a path the user gives on the command line still goes anywhere (through the output guard).
* N12: the file is read through the one bounded regular-file read (a sparse 3 GB file is refused after 1 MiB).
* N16: 5000-deep TOML, a FIFO, ``/dev/zero`` and ``timeout = 1e308`` are one-line errors naming the file (and field).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from relgate_tui.cli import main
from relgate_tui.engine.certification.run_config import config_argv, load_run_config
from relgate_tui.errors import UserError


def _cfg(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "run.toml"
    p.write_text('task = "t.jsonl"\nendpoint = "http://127.0.0.1:9/v1"\nmodel = "m"\n' + text)
    return p


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_a_config_output_is_relative_to_the_config_and_cannot_reach_the_working_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    work = tmp_path / "work"
    (work / "victim").mkdir(parents=True)
    precious = work / "victim" / "precious.txt"
    precious.write_text("keep me")
    monkeypatch.chdir(work)
    cfg = _cfg(work / "received", 'json = "victim/precious.txt"\n')
    values = load_run_config(cfg)
    assert Path(values["json"]) == (work / "received" / "victim" / "precious.txt").resolve()
    monkeypatch.setenv("RELGATE_HOME", str(tmp_path / "home"))
    assert main(["certify", "--config", str(cfg), "--quiet"]) == 2  # the endpoint is down; nothing written
    capsys.readouterr()
    assert precious.read_text() == "keep me"


@pytest.mark.parametrize("value", ["../../../../tmp/x.json", "/tmp/x.json", "../precious.txt", "sub/../../x.json"])
def test_a_config_output_escaping_its_folder_is_refused(tmp_path: Path, value: str, capsys) -> None:
    cfg = _cfg(tmp_path / "received", f'json = "{value}"\n')
    with pytest.raises(UserError, match="outside the config's folder") as exc:
        load_run_config(cfg)
    assert str(cfg) in str(exc.value) and "json" in str(exc.value) and "\n" not in str(exc.value)
    assert main(["certify", "--config", str(cfg)]) == 2
    assert "outside the config's folder" in _one_line(capsys)
    cfg = _cfg(tmp_path / "received", f'run-dir = "{value}"\n')
    with pytest.raises(UserError, match="run-dir"):
        load_run_config(cfg)


def test_a_config_output_through_a_symlink_out_of_its_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "received").mkdir()
    (tmp_path / "received" / "out").symlink_to(tmp_path)
    cfg = _cfg(tmp_path / "received", 'json = "out/x.json"\n')
    with pytest.raises(UserError, match="outside"):
        load_run_config(cfg)


def test_the_command_line_output_wins_and_may_go_anywhere(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path / "received", 'json = "result.json"\n')
    argv = config_argv(load_run_config(cfg))
    assert argv[argv.index("--json") + 1] == str((tmp_path / "received" / "result.json").resolve())
    assert load_run_config(_cfg(tmp_path / "r2", 'json = "-"\n'))["json"] == "-"


def test_a_sparse_huge_config_is_refused_after_reading_one_mib(tmp_path: Path, capsys) -> None:
    p = tmp_path / "huge.toml"
    with p.open("wb") as f:
        f.truncate(3 << 30)  # 3 GB of holes: reading it whole would need 3 GB
    with pytest.raises(UserError, match="larger than 1 MB") as exc:
        load_run_config(p)
    assert str(p) in str(exc.value)


def test_a_fifo_and_dev_zero_are_not_regular_files(tmp_path: Path, capsys) -> None:
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    for p in (fifo, Path("/dev/zero")):
        assert main(["certify", "--config", str(p)]) == 2
        line = _one_line(capsys)
        assert str(p) in line and "not a regular file" in line and "no such file" not in line
    assert main(["certify", "--config", str(tmp_path / "missing.toml")]) == 2
    assert "no such file" in _one_line(capsys)


def test_deeply_nested_toml_is_one_line(tmp_path: Path, capsys) -> None:
    p = tmp_path / "deep.toml"
    p.write_text("task = " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["certify", "--config", str(p)]) == 2
    line = _one_line(capsys)
    assert str(p) in line and "unexpected" not in line and "Recursion" not in line


@pytest.mark.parametrize(("text", "field"), [("timeout = 1e308", "timeout"), ("timeout = inf", "timeout"),
                                              ("timeout = nan", "timeout"), ("k-max = 99999999999999999", "k-max"),
                                              ("seed = 1" + "0" * 40, "seed"), ("concurrency = -4", "concurrency"),
                                              ("json = 5", "json")])
def test_out_of_range_numbers_name_file_and_field(tmp_path: Path, text: str, field: str, capsys) -> None:
    cfg = _cfg(tmp_path, text + "\n")
    assert main(["certify", "--config", str(cfg)]) == 2
    line = _one_line(capsys)
    assert str(cfg) in line and field in line and "unexpected" not in line
    assert len(line) < 400


def test_a_command_line_timeout_of_1e308_is_refused_in_one_line(incli, tmp_path) -> None:
    """Issue 29 N16, the flag as well as the config key: a per-request timeout of 1e308 s is no deadline at all."""
    result = incli(tmp_path, "certify", "--task", "gsm8k", "--model", "sim-mid", "--endpoint", "http://127.0.0.1:9/v1",
                   "--timeout", "1e308")
    assert result.returncode == 2
    assert "timeout must be between 0.001 and 86400 seconds, got 1e+308" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
