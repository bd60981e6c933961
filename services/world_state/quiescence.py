"""Has the pipeline digested the last step? Stepped clocks wait for this before the next tick.

The pipeline is judged idle when, over a short quiet window, the event store gains nothing, the outbox
is empty (everything stored reached Kafka) and no other session of this database is inside a transaction
(every consumer loop handles its batch inside one, LLM calls included). The window covers the gap between
the relay publishing an event and a consumer fetching it; a step that starts early only means cognition
lags one step, never that an event is lost or reordered.
"""

from __future__ import annotations

import asyncio
import time

from psycopg_pool import AsyncConnectionPool

__all__ = ["PipelineProbe"]

_SNAPSHOT = """
SELECT (SELECT coalesce(max(seq), 0) FROM events),
       (SELECT count(*) FROM outbox),
       (SELECT count(*) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
           AND (state LIKE 'idle in transaction%%' OR (state = 'active' AND query NOT LIKE 'LISTEN%%')))
"""


class PipelineProbe:
    """Polls the database until the pipeline is quiet for ``quiet_checks`` consecutive snapshots."""

    def __init__(self, pool: AsyncConnectionPool, *, interval: float = 0.008, quiet_checks: int = 3) -> None:
        self.pool = pool
        self.interval = interval
        self.quiet_checks = quiet_checks

    async def snapshot(self) -> tuple[int, int, int]:
        async with self.pool.connection() as conn:
            row = await (await conn.execute(_SNAPSHOT)).fetchone()
        assert row is not None
        return int(row[0]), int(row[1]), int(row[2])

    async def wait_idle(self, timeout: float) -> bool:
        """True once quiet; False if ``timeout`` seconds pass first (the caller ticks anyway)."""
        deadline = time.monotonic() + timeout
        last: tuple[int, int, int] | None = None
        quiet = 0
        while time.monotonic() < deadline:
            snap = await self.snapshot()
            quiet = quiet + 1 if snap == last and snap[1] == 0 and snap[2] == 0 else 0
            if quiet >= self.quiet_checks:
                return True
            last = snap
            await asyncio.sleep(self.interval)
        return False
