"""A throw-away embedded stack for a benchmark run, and per-process CPU accounting from /proc."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import psycopg

from launcher.embedded.broker import start_broker, stop_broker
from launcher.embedded.postgres import postgres_pid, start_postgres, stop_postgres
from launcher.private_ports import free_port
from npcworld.db import apply_migrations

_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class BenchStack:
    """Embedded Postgres (commit timestamps on) and a Tansu broker, both in a temporary directory."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="npcworld-bench-")))
    database_url: str = ""
    bootstrap: str = ""
    postgres_version: str = ""

    @property
    def pgdata(self) -> Path:
        return self.root / "pgdata"

    @property
    def broker_pid_file(self) -> Path:
        return self.root / "tansu.pid"

    def __enter__(self) -> BenchStack:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _start(self) -> None:
        # The embedded server handle is cached per process, so the restart that turns commit
        # timestamps on happens in a child process; the server we then start here has them.
        subprocess.run([sys.executable, "-m", "bench._stack", str(self.pgdata)], check=True)
        self.database_url = start_postgres(self.pgdata)
        apply_migrations(self.database_url)
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            self.postgres_version = str(row[0]) if row else "?"
        port = free_port()
        start_broker(port, self.root / "tansu.log", self.broker_pid_file)
        self.bootstrap = f"127.0.0.1:{port}"

    def close(self) -> None:
        stop_broker(self.broker_pid_file)
        stop_postgres(self.pgdata)
        shutil.rmtree(self.root, ignore_errors=True)

    def postgres_pids(self) -> list[int]:
        """The postmaster and every process it forked (backends, WAL writer, checkpointer...)."""
        master = postgres_pid(self.pgdata)
        return [] if master is None else [master, *children(master)]

    def broker_pid(self) -> int | None:
        try:
            return int(self.broker_pid_file.read_text())
        except (FileNotFoundError, ValueError):
            return None


def _initialise(pgdata: Path) -> None:
    """Create the cluster with commit timestamps on, so latency can end at the consumer's commit."""
    url = start_postgres(pgdata)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET track_commit_timestamp = on")
    stop_postgres(pgdata)


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time used so far by these processes (gone ones count as 0)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / _TICKS


def children(parent: int) -> list[int]:
    """Pids of the live processes whose parent is ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue
        if ppid == parent:
            found.append(int(entry.name))
    return found


if __name__ == "__main__":
    _initialise(Path(sys.argv[1]))


def unwind_on_term() -> None:
    """SIGTERM and SIGHUP unwind the bench like Ctrl-C, so the stack it started (in a session of its own,
    out of reach of the signal) is stopped by its ``with`` block instead of being left running."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)
