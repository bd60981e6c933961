"""Service heartbeats: which processes are alive and which event types each one still owes processing.

Stepped world clocks read ``consumer_heartbeats`` to wait until every live consumer has digested a step
(services/world_state/quiescence.py); the simulation runner waits for every launched service's first beat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable

from psycopg_pool import AsyncConnectionPool

__all__ = ["Heartbeat"]

logger = logging.getLogger(__name__)


class Heartbeat:
    """Upserts ``(name, types, seen_at = now())`` once at ``start`` and then every ``seconds``."""

    def __init__(
        self, pool: AsyncConnectionPool, name: str, types: Iterable[str], *, seconds: float = 2.0
    ) -> None:
        self.pool, self.name, self.types, self.seconds = pool, name, sorted(set(types)), seconds
        self._task: asyncio.Task[None] | None = None

    async def beat(self) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(
                "INSERT INTO consumer_heartbeats (consumer, types) VALUES (%s, %s) ON CONFLICT (consumer)"
                " DO UPDATE SET types = EXCLUDED.types, seen_at = now()",
                (self.name, self.types),
            )

    async def start(self) -> None:
        """First beat now (errors propagate: the table must exist), then in the background."""
        await self.beat()
        self._task = asyncio.create_task(self._run(), name=f"{self.name}-heartbeat")

    async def stop(self) -> None:
        """Stop beating and withdraw: a cleanly stopped service owes nothing (a crashed one times out)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        try:
            async with self.pool.connection() as conn:
                await conn.execute("DELETE FROM consumer_heartbeats WHERE consumer = %s", (self.name,))
        except Exception as exc:
            logger.warning("%s: could not withdraw its heartbeat: %r", self.name, exc)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.seconds)
            try:
                await self.beat()
            except Exception as exc:  # a missed beat only means stepped clocks may stop waiting for us
                logger.warning("%s: heartbeat failed: %r", self.name, exc)
