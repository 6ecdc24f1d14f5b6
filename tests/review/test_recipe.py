"""The README's PostgreSQL recipe (issue 31 item 6), followed verbatim on a fresh server: PostgreSQL started by the
lines of step 1 (as root: its ``runuser -u postgres`` block), run by ``bash`` with only the directory (a new one in
the temporary directory), the port (a free one) and the binaries' directory filled in, the superuser's password
typed at ``--pwprompt``; then every line of the recipe's block as written, with only the port, the run and the
session filled in, and the passwords in a ``.pgpass`` file."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.review.conftest import import_run, write_labels
from tests.review.pgserver import _free_port, find_bin

ROOT = Path(__file__).resolve().parents[2]


def recipe_lines(name: str = "postgres") -> list[str]:
    """The command lines of the README block after ``<!-- recipe:NAME -->`` (comments dropped)."""
    text = (ROOT / "docs" / "team-review.md").read_text(encoding="utf-8")
    block = text.split(f"<!-- recipe:{name} -->", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [ln for ln in block.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


class RecipeServer:
    """PostgreSQL started by step 1's lines (see the module docstring); ``stop()`` stops it and removes it."""

    def __init__(self) -> None:
        initdb = find_bin("initdb")
        assert initdb is not None, "PostgreSQL's initdb was not found (apt-get install postgresql)"
        self.bin = str(Path(initdb).parent)
        self.port = _free_port()
        self.password = secrets.token_hex(12)
        self.root = Path(tempfile.mkdtemp(prefix="relgate-recipe-"))
        self.as_root = os.geteuid() == 0
        self.dir = self.root / "pg"  # created by the recipe's own lines
        if self.as_root:
            os.chmod(self.root, 0o755)  # the postgres system user reaches the directory the recipe makes in it
        self.data = self.dir / "data" if self.as_root else self.dir

    def fill(self, line: str) -> str:
        line = line.replace("/usr/lib/postgresql/15/bin", self.bin).replace("5433", str(self.port))
        return line.replace("/var/lib/relgate-pg", str(self.dir)).replace("~/relgate-pg", str(self.dir))

    def start(self) -> None:
        lines = recipe_lines("postgres-server-as-root" if self.as_root else "postgres-server")
        assert any("initdb" in ln for ln in lines) and any("pg_ctl" in ln for ln in lines)
        # one script (the PATH export carries over); no controlling terminal, so --pwprompt reads the password
        # from the standard input
        script = "set -e\n" + "\n".join(self.fill(ln) for ln in lines)
        proc = subprocess.run(["bash", "-c", script], input=f"{self.password}\n{self.password}\n",
                              capture_output=True, text=True, timeout=300, cwd=self.root, start_new_session=True)
        assert proc.returncode == 0, proc.stderr[-2000:]

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            cmd = [f"{self.bin}/pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop"]
            subprocess.run((["runuser", "-u", "postgres", "--"] if self.as_root else []) + cmd,
                           capture_output=True, timeout=120)
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.mark.slow
def test_the_readme_postgres_recipe_works_on_a_fresh_server(tmp_path: Path, monkeypatch) -> None:
    lines = recipe_lines()
    assert any(ln.startswith("relgate review pull") for ln in lines)
    home = tmp_path / "home"
    monkeypatch.setenv("RELGATE_HOME", str(home))
    run = import_run(tmp_path, 8)
    items = [f"q{i:03d}" for i in range(8)]
    write_labels(tmp_path / "alice.jsonl", dict.fromkeys(items, "1"))
    write_labels(tmp_path / "bob.jsonl", {i: ("2" if n % 2 else "1") for n, i in enumerate(items)})
    pg = RecipeServer()
    try:
        pg.start()
        pgpass = tmp_path / "pgpass"
        # the passwords the recipe sets, and the superuser's (initdb --pwprompt)
        pws = dict(re.findall(r"CREATE ROLE (\w+) LOGIN[^']*PASSWORD '([^']+)'", "\n".join(lines)))
        pws["postgres"] = pg.password
        pgpass.write_text("".join(f"127.0.0.1:{pg.port}:*:{role}:{pw}\n" for role, pw in pws.items()))
        pgpass.chmod(0o600)
        env = {**os.environ, "PGPASSFILE": str(pgpass), "RELGATE_HOME": str(home), "PYTHONPATH": str(ROOT),
               "PATH": f"{pg.bin}:{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
        env.pop("RELGATE_DB", None)
        env.pop("PGPASSWORD", None)
        session = ""
        outputs = []
        for line in lines:
            cmd = line.replace("5433", str(pg.port)).replace(" RUN ", f" {run} ").replace(" SESSION ", f" {session} ")
            if cmd.startswith("relgate "):
                cmd = f"{sys.executable} -m relgate_tui.cli {cmd[len('relgate '):]}"
            proc = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=300)
            assert proc.returncode == 0, (line, proc.stderr[-2000:])
            outputs.append(proc.stdout + proc.stderr)
            if line.startswith("relgate review publish"):
                session = proc.stdout.strip().splitlines()[-1]
                assert re.fullmatch(r"[0-9a-f]{12}", session), proc.stdout
        found = re.search(r"(\d+) disputed items? to adjudicate", "".join(outputs))
        assert found is not None and int(found.group(1)) >= 1  # judy sees the disputes
        assert "pulled" in outputs[-1] and "disputed item" in outputs[-1]
        reviews = list((home / "runs").rglob("review.json"))
        assert len(reviews) == 1 and json.loads(reviews[0].read_text())["session"] == session
        for text in outputs:
            for pw in pws.values():
                assert pw not in text
        # a reviewer may not publish or pull: refused, one line
        url = f"postgresql://alice@127.0.0.1:{pg.port}/relgate"
        for args in (f"review publish {run} --db {url}", f"review pull {session} --db {url}"):
            proc = subprocess.run([sys.executable, "-m", "relgate_tui.cli", *args.split()], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    finally:
        pg.stop()
