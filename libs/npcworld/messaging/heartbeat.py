"""Service heartbeats: which processes are alive and which event types each one still owes processing.

Stepped world clocks read ``consumer_heartbeats`` to wait until every live consumer has digested a step
(services/world_state/quiescence.py); the simulation runner waits for every launched service's first beat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from collections.abc import Iterable

from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from npcworld.eventstore.claims import watermark
from npcworld.telemetry import instruments

__all__ = ["LIVE_SECONDS", "Heartbeat", "owed_sql"]

logger = logging.getLogger(__name__)

# A consumer that has not beaten for this long is taken for dead and owes nothing.
LIVE_SECONDS = 15.0


def owed_sql() -> str:
    """CTEs ``live`` and ``owed``: each live consumer's unclaimed, not dead-lettered events of its types
    with ``%(since)s < seq <= %(until)s`` (parameters ``since``, ``until`` and ``alive``, in seconds)."""
    return f"""live AS (
    SELECT DISTINCT h.consumer, h.types, {watermark("h.consumer")} AS mark FROM consumer_heartbeats h
     WHERE seen_at > now() - make_interval(secs => %(alive)s)
), owed AS (
    SELECT live.consumer, e.event_id
      FROM events e JOIN live ON e.type = ANY (live.types) AND e.seq > live.mark
     WHERE e.seq > %(since)s AND e.seq <= %(until)s
       AND NOT EXISTS (SELECT 1 FROM processed_events p
                        WHERE p.consumer = live.consumer AND p.event_id = e.event_id)
       AND NOT EXISTS (SELECT 1 FROM dead_letters d
                        WHERE d.consumer = live.consumer AND d.event_id = e.event_id)
)"""


def instance_id() -> str:
    """This process's row among its service's instances: its static group-member id when it has one
    (KAFKA_GROUP_INSTANCE_ID, so a restarted instance takes its row back), else one of its own."""
    return os.environ.get("KAFKA_GROUP_INSTANCE_ID") or f"pid-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class Heartbeat:
    """Upserts ``(name, instance, types, generation, parked, seen_at = now())`` at ``start`` and then every
    ``seconds``; each instance of a service beats on a row of its own (``instance_id``).

    ``generation`` is the broker generation the owner consumes from (``parked``: it has stopped its Kafka
    consumer and waits for that generation's broker). Each beat also reads the newest generation into
    ``current`` (and whether its broker is up into ``ready``) and sets ``rotated`` when it differs from
    ``generation``: the owner then parks and, once ready, starts a fresh Kafka consumer.
    """

    def __init__(
        self, pool: AsyncConnectionPool, name: str, types: Iterable[str], *, seconds: float = 2.0,
        paces_steps: bool = True,
    ) -> None:
        self.pool, self.name, self.types, self.seconds = pool, name, sorted(set(types)), seconds
        # False: a stepped clock does not wait for this consumer (it keeps a read model nobody's cognition
        # reads); rotation checkpoints and the console still count what it owes.
        self.paces_steps = paces_steps
        self.instance = instance_id()
        self.generation = 0
        self.parked = False
        self.current = 0
        self.ready = True
        self.rotated = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def beat(self) -> None:
        # The process's model-provider breakers ride along: the console shows their state per process.
        breakers = sorted((b.snapshot() for b in list(instruments().breakers)), key=lambda b: b["provider"])
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "INSERT INTO consumer_heartbeats"
                " (consumer, instance, types, generation, parked, llm_breakers, paces_steps)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (consumer, instance) DO UPDATE SET types = EXCLUDED.types,"
                " paces_steps = EXCLUDED.paces_steps,"
                " generation = EXCLUDED.generation, parked = EXCLUDED.parked,"
                " llm_breakers = EXCLUDED.llm_breakers, seen_at = now()"
                " RETURNING (SELECT generation FROM broker_generations ORDER BY generation DESC LIMIT 1),"
                " (SELECT ready_at IS NOT NULL FROM broker_generations ORDER BY generation DESC LIMIT 1)",
                (self.name, self.instance, self.types, self.generation, self.parked, Jsonb(breakers),
                 self.paces_steps),
            )
            row = await cur.fetchone()
        self.current = int(row[0]) if row and row[0] is not None else 0
        self.ready = bool(row[1]) if row and row[1] is not None else True
        if self.current != self.generation:
            self.rotated.set()

    async def park(self, stop: asyncio.Event, poll: float = 0.1) -> int:
        """Say the owner has stopped consuming and wait until the newest generation's broker is up (or
        ``stop``); returns that generation. Beats every ``poll`` seconds meanwhile."""
        self.generation, self.parked = self.current, True
        while True:
            await self.beat()
            if self.ready or stop.is_set():
                return self.current
            self.generation = self.current
            await asyncio.sleep(poll)

    async def adopt(self, generation: int) -> None:
        """The owner now consumes from ``generation``: say so at once."""
        self.generation, self.parked = generation, False
        self.rotated.clear()
        await self.beat()

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
                await conn.execute("DELETE FROM consumer_heartbeats WHERE consumer = %s AND instance = %s",
                                   (self.name, self.instance))
        except Exception as exc:
            logger.warning("%s: could not withdraw its heartbeat: %r", self.name, exc)

    async def _run(self) -> None:
        failing = False
        while True:
            await asyncio.sleep(self.seconds)
            try:
                await self.beat()
            except Exception as exc:
                # A missed beat is the truth: a process that cannot reach Postgres is not digesting events,
                # and after LIVE_SECONDS stepped clocks and `status` stop counting on it. Said once.
                if not failing:
                    logger.warning("%s: heartbeat failed (retried every %g s): %r", self.name,
                                   self.seconds, exc)
                failing = True
                continue
            if failing:
                logger.info("%s: heartbeat written again", self.name)
            failing = False
