"""A throwaway PostgreSQL cluster: `initdb` into a temporary folder, `pg_ctl` on a free loopback port.

Used by the tests (a fixture starts one per test run) and by
`scripts/bench_service.py` (which restarts it mid-run).  The binaries are
found on PATH or under Debian's /usr/lib/postgresql/*/bin.  PostgreSQL
refuses to run as root, so as root the cluster is run as the `postgres`
user (Debian's package creates it), else `nobody`.  Durability is traded for
speed (fsync off): the data only has to outlive a server restart, not a
machine crash.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

SETTINGS = ("-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200")


def find_bin(name: str) -> str | None:
    """Path of a PostgreSQL program: on PATH, else the newest /usr/lib/postgresql/<version>/bin."""
    found = shutil.which(name)
    if found:
        return found
    candidates = glob.glob(f"/usr/lib/postgresql/*/bin/{name}")
    candidates.sort(key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    return candidates[-1] if candidates else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgCluster:
    """One cluster: `start()`, `url(database)`, `stop()`, `restart()`, `remove()`."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.initdb, self.pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
        if self.initdb is None or self.pg_ctl is None:
            raise FileNotFoundError("PostgreSQL's initdb/pg_ctl not found (Debian: apt-get install postgresql)")
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix="techjam-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.user: str | None = None
        if os.geteuid() == 0:
            self.user = "postgres" if _has_user("postgres") else "nobody"
            uid = pwd.getpwnam(self.user).pw_uid
            os.chown(self.root, uid, -1)
        self._run(self.initdb, "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-locale", "--no-sync")

    def _run(self, *cmd: str) -> None:
        kwargs = {"user": self.user} if self.user else {}
        done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
        if done.returncode != 0:
            raise RuntimeError(f"{Path(cmd[0]).name} failed: {(done.stderr or done.stdout).strip()[-500:]}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> PgCluster:
        self._run(self.pg_ctl, "-D", str(self.data), "-l", str(self.root / "server.log"), "-w", "-t", "30",
                  "-o", f"-p {self.port} -k {self.root} {SETTINGS}", "start")
        return self

    def stop(self, mode: str = "fast") -> None:
        self._run(self.pg_ctl, "-D", str(self.data), "-m", mode, "-w", "-t", "30", "stop")

    def restart(self, mode: str = "fast") -> None:
        self.stop(mode)
        self.start()

    def running(self) -> bool:
        kwargs = {"user": self.user} if self.user else {}
        return subprocess.run([self.pg_ctl, "-D", str(self.data), "status"], capture_output=True,
                              **kwargs).returncode == 0

    def create_database(self, name: str) -> str:
        import psycopg
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def remove(self) -> None:
        """Stop the server (if it runs) and delete the folder."""
        if self.data.is_dir() and self.running():
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
