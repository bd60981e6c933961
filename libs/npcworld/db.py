"""PostgreSQL access: connection pools and the migrations applied at start."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import psycopg
from psycopg_pool import AsyncConnectionPool

from npcworld.errors import InfraError

__all__ = ["MIGRATIONS_DIR", "apply_migrations", "database_reachable", "open_pool"]

logger = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(
    os.environ.get("NPCWORLD_MIGRATIONS_DIR", Path(__file__).resolve().parents[2] / "infra" / "migrations")
)
# Any constant works; it only has to be the same for every process applying migrations.
_MIGRATION_LOCK = 0x6E7063776F726C64


def apply_migrations(database_url: str, directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Apply every ``NNNN_*.sql`` file not applied yet, in order, each in its own transaction.

    An advisory lock makes concurrent starts (several services at once) apply each file once.

    Returns:
        The names of the files applied by this call.
    """
    files = sorted(directory.glob("[0-9][0-9][0-9][0-9]_*.sql"))
    if not files:
        raise InfraError(f"no migrations found in {directory}")
    applied: list[str] = []
    try:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
            for path in files:
                if path.name in done:
                    continue
                with conn.transaction():
                    conn.execute(path.read_text())
                    conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (path.name,))
                logger.info("applied migration %s", path.name)
                applied.append(path.name)
            conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))
    except psycopg.OperationalError as exc:
        raise InfraError(f"cannot reach PostgreSQL to migrate: {exc}") from exc
    return applied


async def open_pool(
    database_url: str, *, min_size: int = 1, max_size: int = 10, name: str = "npcworld", timeout: float = 30.0
) -> AsyncConnectionPool:
    """Open an async connection pool and wait until it has a working connection.

    The pool outlives a restart of the server: a connection found broken when it is given back is
    replaced in the background (retried with backoff). ``timeout`` is how long a caller waits for a
    connection before ``psycopg_pool.PoolTimeout`` (an ``OperationalError``, so an outage for the callers).
    """
    pool = AsyncConnectionPool(database_url, min_size=min_size, max_size=max_size, name=name, open=False,
                               timeout=timeout)
    try:
        await pool.open(wait=True, timeout=30)
    except Exception as exc:
        await pool.close()
        raise InfraError(f"cannot connect to PostgreSQL: {exc}") from exc
    return pool


async def database_reachable(pool: AsyncConnectionPool, timeout: float = 2.0) -> bool:
    """Whether a pooled connection answers within ``timeout`` seconds (for readiness endpoints)."""
    try:
        async with pool.connection(timeout=timeout) as conn:
            await conn.execute("SELECT 1")
    except Exception:
        return False
    return True
