"""The documented PostgreSQL recipes, followed verbatim on fresh servers. They are found by their marker lines
(``<!-- recipe: NAME -->`` before a ``bash`` block) in README.md and every markdown file under docs/ and
docs-incoming/, so the test follows them wherever the documentation moves.

* ``postgres-user`` / ``postgres-root`` (step 1, at least one of each): every such block starts PostgreSQL, run by
  ``bash`` (a root test run runs the user recipe as the ``postgres`` system user), with only the data directory
  (``~/relgate-pg`` or ``/var/lib/relgate-pg`` → a new one in the temporary directory), the port (``5433`` → a free
  one) and the binaries' directory (``/usr/lib/postgresql/15/bin`` → the installed one) replaced and the superuser's
  password typed at ``--pwprompt``. A password-less superuser login must then be refused, over the socket and over
  TCP, for another OS user (issue 39: a recipe without ``--auth-local`` leaves the superuser open to every local
  user).
* ``postgres`` (steps 2–4): every line as written, with only the port, the run and the session filled in and the
  passwords in a ``.pgpass`` file, on the server of the step-1 recipe that fits the test run. ``psql``/``createdb``
  lines run in ``bash``; a ``relgate`` line that is plain words (no quoting, expansion or operator: ``bash`` would
  run exactly these words) runs as ``relgate``'s ``main`` with those words in the test's process (the ``incli``
  fixture: exit code and what reaches file descriptors 1 and 2, as of a process of its own) — a new interpreter per
  command was a second of imports each; any other ``relgate`` line runs in ``bash`` too."""

from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import InProcessCli
from tests.engine.review.conftest import import_run, write_labels
from tests.engine.review.pgserver import _free_port, find_bin

ROOT = Path(__file__).resolve().parents[3]
SERVER_RECIPES = ("postgres-user", "postgres-root")


def _documents() -> list[Path]:
    """Where the recipes live: README.md and every markdown file under docs/ and docs-incoming/."""
    found = [ROOT / "README.md"] if (ROOT / "README.md").is_file() else []
    for folder in ("docs", "docs-incoming"):
        found += sorted((ROOT / folder).rglob("*.md")) if (ROOT / folder).is_dir() else []
    return found


def recipe_blocks(name: str) -> list[tuple[str, list[str]]]:
    """Every ``bash`` block right after a ``<!-- recipe: NAME -->`` marker line, as (where, its command lines with
    comments dropped)."""
    marker = re.compile(r"^<!--\s*recipe:\s*" + re.escape(name) + r"\s*-->\s*\n```bash\n(.*?)^```", re.M | re.S)
    out = []
    for doc in _documents():
        for n, m in enumerate(marker.finditer(doc.read_text(encoding="utf-8"))):
            lines = [ln for ln in m.group(1).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
            out.append((f"{doc.relative_to(ROOT)}#{name}[{n}]", lines))
    return out


def recipe_lines(name: str = "postgres") -> list[str]:
    """The first block of recipe ``name`` (see :func:`recipe_blocks`); at least one must exist."""
    blocks = recipe_blocks(name)
    assert blocks, f"no <!-- recipe: {name} --> block in README.md, docs/ or docs-incoming/"
    return blocks[0][1]


class RecipeServer:
    """PostgreSQL started by a step-1 recipe's lines (see the module docstring); ``stop()`` stops it and removes
    it. ``postgres-root`` runs as root (its own lines switch to the ``postgres`` system user);
    ``postgres-user`` runs as an ordinary user — under a root test run, as the ``postgres`` system user."""

    def __init__(self, lines: list[str], root_recipe: bool) -> None:
        initdb = find_bin("initdb")
        assert initdb is not None, "PostgreSQL's initdb was not found (apt-get install postgresql)"
        self.lines = lines
        self.bin = str(Path(initdb).parent)
        self.port = _free_port()
        self.password = secrets.token_hex(12)
        self.root = Path(tempfile.mkdtemp(prefix="relgate-recipe-"))
        self.root_recipe = root_recipe
        self.runner = (["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 and not root_recipe else [])
        if os.geteuid() == 0:
            os.chmod(self.root, 0o755)  # the postgres system user reaches the directory the recipe makes in it
            if self.runner:
                pw = pwd.getpwnam("postgres")
                os.chown(self.root, pw.pw_uid, pw.pw_gid)
        self.dir = self.root / "pg"  # created by the recipe's own lines
        self.data = self.dir / "data" if root_recipe else self.dir
        self.server_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def fill(self, line: str) -> str:
        line = line.replace("/usr/lib/postgresql/15/bin", self.bin).replace("5433", str(self.port))
        return line.replace("/var/lib/relgate-pg", str(self.dir)).replace("~/relgate-pg", str(self.dir))

    def start(self) -> None:
        assert any("initdb" in ln for ln in self.lines) and any("pg_ctl" in ln for ln in self.lines)
        # one script (the PATH export carries over); no controlling terminal, so --pwprompt reads the password
        # from the standard input
        script = "set -e\n" + "\n".join(self.fill(ln) for ln in self.lines)
        proc = subprocess.run([*self.runner, "bash", "-c", script], input=f"{self.password}\n{self.password}\n",
                              capture_output=True, text=True, timeout=300, cwd=self.root, start_new_session=True)
        assert proc.returncode == 0, proc.stderr[-2000:]

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            cmd = [f"{self.bin}/pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop"]
            subprocess.run(self.server_user + cmd, capture_output=True, timeout=120)
        shutil.rmtree(self.root, ignore_errors=True)


def _server_recipe() -> RecipeServer:
    """The server of the first step-1 recipe that fits this test run: as root the root one, else the user one."""
    root = os.geteuid() == 0
    return RecipeServer(recipe_lines("postgres-root" if root else "postgres-user"), root)


def _passwordless_superuser(pg: RecipeServer) -> list[str]:
    """Each way a password-less superuser login got in (empty: none did): over the socket directory and over TCP,
    as an OS user other than the server's (root's tests: ``nobody``), without a password file or $PGPASSWORD."""
    as_other = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PGPASSFILE"] = "/nonexistent"
    got = []
    for host in ("/tmp", "127.0.0.1"):
        proc = subprocess.run([*as_other, f"{pg.bin}/psql", "-h", host, "-p", str(pg.port), "-U", "postgres", "-d",
                               "postgres", "-w", "-At", "-c", "SELECT 1"], capture_output=True, text=True,
                              timeout=60, env=env, cwd="/")
        if proc.returncode == 0 or proc.stdout.strip() == "1":
            got.append(host)
        else:  # refused by the server for want of a password or a matching OS user, not unreachable
            assert "authentication failed" in proc.stderr or "no password supplied" in proc.stderr, proc.stderr
    return got


def test_every_server_recipe_refuses_a_passwordless_superuser() -> None:
    blocks = {name: recipe_blocks(name) for name in SERVER_RECIPES}
    assert all(blocks.values()), {n: len(b) for n, b in blocks.items()}  # at least one of each
    for name, found in blocks.items():
        for where, lines in found:
            pg = RecipeServer(lines, name == "postgres-root")
            try:
                pg.start()
                assert _passwordless_superuser(pg) == [], where
                # the superuser still logs in with the password typed at --pwprompt
                env = {**os.environ, "PGPASSWORD": pg.password}
                proc = subprocess.run([f"{pg.bin}/psql", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres",
                                       "-d", "postgres", "-w", "-At", "-c", "SELECT 1"], capture_output=True,
                                      text=True, timeout=60, env=env)
                assert proc.stdout.strip() == "1", (where, proc.stderr)
            finally:
                pg.stop()


_PLAIN_WORD = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")


def _plain_words(line: str) -> list[str] | None:
    """The words ``bash`` runs for ``line`` when it is only plain words (see :data:`_PLAIN_WORD`), else None."""
    words = line.split()
    return words if all(_PLAIN_WORD.fullmatch(w) for w in words) and shlex.split(line) == words else None


def test_plain_words_are_only_what_bash_leaves_as_they_are() -> None:
    assert _plain_words("relgate review pull abc --db postgresql://judy@127.0.0.1:5433/relgate") == [
        "relgate", "review", "pull", "abc", "--db", "postgresql://judy@127.0.0.1:5433/relgate"]
    for shell in ("relgate x > out", "relgate x | cat", "relgate x; ls", "relgate $X", "relgate 'a b'", "relgate ~/x",
                  "relgate x*", "relgate `id`", "relgate x && y", "relgate a\\ b", "relgate {a,b}", "relgate !x"):
        assert _plain_words(shell) is None, shell


@pytest.mark.slow
def test_the_readme_postgres_recipe_works_on_a_fresh_server(tmp_path: Path, monkeypatch,
                                                            incli: InProcessCli) -> None:
    lines = recipe_lines()
    assert any(ln.startswith("relgate review pull") for ln in lines)
    home = tmp_path / "home"
    monkeypatch.setenv("RELGATE_HOME", str(home))
    run = import_run(tmp_path, 8)
    items = [f"q{i:03d}" for i in range(8)]
    write_labels(tmp_path / "alice.jsonl", dict.fromkeys(items, "1"))
    write_labels(tmp_path / "bob.jsonl", {i: ("2" if n % 2 else "1") for n, i in enumerate(items)})
    pg = _server_recipe()
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
        monkeypatch.delenv("PGPASSWORD", raising=False)  # the in-process commands' environment: env's PG variables
        session = ""
        outputs = []
        for line in lines:
            cmd = line.replace("5433", str(pg.port)).replace(" RUN ", f" {run} ").replace(" SESSION ", f" {session} ")
            words = _plain_words(cmd) if cmd.startswith("relgate ") else None
            if words is not None:
                proc = incli(home, *words[1:], cwd=tmp_path, env={"PGPASSFILE": str(pgpass)})
            else:
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
            proc = incli(home, *args.split(), cwd=tmp_path, env={"PGPASSFILE": str(pgpass)})
            assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    finally:
        pg.stop()
