"""The README's PostgreSQL recipe (issue 31 item 6), followed verbatim on a fresh server: PostgreSQL started the way
step 1 says (``initdb`` and ``pg_ctl``, as the ``postgres`` system user via ``runuser`` when root, in a temporary
directory, on a free port — :class:`.pgserver.PgServer`), then every line of the recipe's block run by ``bash`` as
written, with only the port, the run and the session filled in, and the passwords in a ``.pgpass`` file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.review.conftest import import_run, write_labels
from tests.review.pgserver import PgServer

ROOT = Path(__file__).resolve().parents[2]


def recipe_lines() -> list[str]:
    """The command lines of the README block after ``<!-- recipe:postgres -->`` (comments dropped)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- recipe:postgres -->", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [ln for ln in block.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def test_the_readme_postgres_recipe_works_on_a_fresh_server(tmp_path: Path, monkeypatch) -> None:
    lines = recipe_lines()
    assert any(ln.startswith("relgate review pull") for ln in lines)
    home = tmp_path / "home"
    monkeypatch.setenv("RELGATE_HOME", str(home))
    run = import_run(tmp_path, 8)
    items = [f"q{i:03d}" for i in range(8)]
    write_labels(tmp_path / "alice.jsonl", dict.fromkeys(items, "1"))
    write_labels(tmp_path / "bob.jsonl", {i: ("2" if n % 2 else "1") for n, i in enumerate(items)})
    pg = PgServer().start()
    try:
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
        pg.destroy()
