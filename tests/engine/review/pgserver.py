"""A real PostgreSQL server for the tests and the benchmark (issue 21 §6): ``initdb`` and ``pg_ctl`` from the
Debian ``postgresql`` package in a temporary directory, on a free loopback port, stopped at the end. ``initdb``
refuses to run as root, so as root every server command runs as the package's ``postgres`` system user
(``runuser -u postgres``). Passwords are random; TCP connections must give them (scram-sha-256)."""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

__all__ = ["PgServer", "find_bin"]


def find_bin(name: str) -> str | None:
    """The Debian package's binary (its bin directory has every tool: psql, pg_ctl…), else one on PATH."""
    hits = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return hits[-1] if hits else shutil.which(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """``start()`` / ``stop()`` / ``restart()`` one cluster; ``url(role, password)`` names a database URL."""

    def __init__(self, *, fsync: bool = False) -> None:
        initdb = find_bin("initdb")
        if initdb is None:
            raise RuntimeError("PostgreSQL's initdb was not found (apt-get install postgresql)")
        self.bin = Path(initdb).parent
        self.root = Path(tempfile.mkdtemp(prefix="relgate-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.password = secrets.token_hex(12)
        self.fsync = fsync
        self._as: list[str] = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]
        os.chmod(self.root, 0o700)
        atexit.register(self.destroy)  # a test run that dies early still stops its server

    def _run(self, *cmd: str) -> None:
        out = subprocess.run([*self._as, *cmd], capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed: {out.stderr.strip()[-500:]}")

    def start(self) -> PgServer:
        if not self.data.exists():
            pwfile = self.root / "pw"
            pwfile.write_text(self.password + "\n")
            if self._as:
                pw = pwd.getpwnam("postgres")
                os.chown(pwfile, pw.pw_uid, pw.pw_gid)
            try:
                self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "-E", "UTF8",
                          "--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={pwfile}", "--no-sync")
            finally:
                pwfile.unlink()
        opts = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=100"
                + ("" if self.fsync else " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"))
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(self.root / "log"),
                  "-w", "-t", "60", "start")
        return self

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def psql(self, sql: str, db: str = "postgres") -> str:
        out = subprocess.run([*self._as, str(self.bin / "psql"), "-h", str(self.root), "-p", str(self.port), "-U",
                              "postgres", "-d", db, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql],
                             capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"psql failed: {out.stderr.strip()[-500:]}")
        return out.stdout

    def url(self, role: str = "postgres", password: str | None = None, db: str = "postgres") -> str:
        return f"postgresql://{role}:{password or self.password}@127.0.0.1:{self.port}/{db}"

    def create_db(self, name: str) -> str:
        self.psql(f'CREATE DATABASE "{name}"')
        return name

    def create_login(self, role: str, password: str) -> None:
        self.psql(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'")

    def destroy(self) -> None:
        if not self.root.exists():
            return
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
