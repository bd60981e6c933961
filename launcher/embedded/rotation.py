"""Broker rotation: replace the embedded broker with an empty one without losing or reordering an event.

Tansu's memory storage keeps every record batch it was sent and has no DeleteRecords, and its fetches
cost more the more batches a partition holds (measured: about 2 µs per stored batch per fetch, so a
partition of 20,000 batches costs ~30 ms of broker CPU per message where an empty one costs 0.6 ms).
A long run therefore slows down, and its memory grows, for no benefit: every event is in PostgreSQL.

A rotation:

1. stops the outbox relay, so nothing new reaches the broker;
2. waits for a checkpoint: a snapshot in which no other transaction is writing and every live consumer
   has processed (or dead-lettered) every event up to ``S``, the last sequence number before the oldest
   unpublished outbox row; it is recorded as a new row of ``broker_generations``;
3. waits until every live consumer loop has stopped its Kafka consumer and parked on the new generation
   (each loop reads the newest generation in its heartbeat), so no consumer carries a position or a group
   membership over to the new broker;
4. replaces the broker with an empty one and creates the catalogue's topics;
5. starts the relay, which finds a fresh broker, marks the generation ready (the parked loops then start
   fresh consumers, reading from the start) and republishes the events after ``S`` in order.

Consumers skip anything republished that they had processed, so a rotation changes no outcome.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from psycopg_pool import AsyncConnectionPool

from npcworld.messaging.heartbeat import LIVE_SECONDS, owed_sql
from npcworld.messaging.kafka import ensure_topics

__all__ = [
    "PROGRESS_SQL",
    "BrokerRotation",
    "RotationResult",
    "consumers_not_parked",
    "rotate_broker",
    "rotation_due",
]

logger = logging.getLogger(__name__)

_CHECKPOINT = f"""
WITH {owed_sql()}
SELECT count(*) FROM owed
"""


# Events stored so far, and the sequence number of the last checkpoint (0 before the first rotation).
PROGRESS_SQL = (
    "SELECT (SELECT coalesce(max(seq), 0) FROM events),"
    " coalesce((SELECT checkpoint_seq FROM broker_generations ORDER BY generation DESC LIMIT 1), 0)"
)


def rotation_due(stored: int, checkpoint: int, every_events: int) -> bool:
    """Whether ``every_events`` events (0: never) were stored since the last checkpoint."""
    return every_events > 0 and stored - checkpoint >= every_events


@dataclass(frozen=True)
class RotationResult:
    generation: int
    checkpoint_seq: int
    seconds: float


async def _checkpoint(pool: AsyncConnectionPool, since: int) -> int | None:
    """``S`` if this is a clean moment (see the module docstring); None when something is still in flight."""
    async with pool.connection() as conn, conn.transaction():
        row = await (await conn.execute(
            "SELECT pg_snapshot_xmin(pg_current_snapshot()) = pg_current_xact_id(),"
            " coalesce((SELECT min(seq) - 1 FROM outbox), (SELECT max(seq) FROM events), 0)"
        )).fetchone()
        assert row is not None
        alone, until = bool(row[0]), int(row[1])
        if not alone:  # a writer still open could commit an event below ``until`` later
            return None
        cur = await conn.execute(_CHECKPOINT, {"since": since, "until": until, "alive": LIVE_SECONDS})
        owed = await cur.fetchone()
    return until if owed is not None and int(owed[0]) == 0 else None


async def _record(pool: AsyncConnectionPool, checkpoint: int) -> int:
    async with pool.connection() as conn:
        gen = await (await conn.execute(
            "INSERT INTO broker_generations (generation, checkpoint_seq)"
            " SELECT coalesce(max(generation), 0) + 1, %s FROM broker_generations RETURNING generation",
            (checkpoint,),
        )).fetchone()
    assert gen is not None
    return int(gen[0])


async def _latest(pool: AsyncConnectionPool) -> tuple[int, int]:
    async with pool.connection() as conn:
        row = await (await conn.execute(
            "SELECT generation, checkpoint_seq FROM broker_generations ORDER BY generation DESC LIMIT 1"
        )).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


async def consumers_not_parked(pool: AsyncConnectionPool, generation: int) -> list[str]:
    """Live services (any instance of them) that have not yet parked on ``generation``."""
    async with pool.connection() as conn:
        rows = await (await conn.execute(
            "SELECT DISTINCT consumer FROM consumer_heartbeats"
            " WHERE seen_at > now() - make_interval(secs => %s) AND NOT (generation = %s AND parked)"
            " AND cardinality(types) > 0 ORDER BY consumer",  # no types: reads no Kafka (webhooks)
            (LIVE_SECONDS, generation),
        )).fetchall()
    return [r[0] for r in rows]


async def _poll(what: str, check: Callable[[], Awaitable[Any]], timeout: float, interval: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = await check()
        if result is not None and result is not False:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"broker rotation: {what} took over {timeout:.0f} s")
        await asyncio.sleep(interval)


async def rotate_broker(
    pool: AsyncConnectionPool,
    bootstrap: str,
    *,
    stop_relay: Callable[[], Awaitable[None]],
    restart_broker: Callable[[], Awaitable[None]],
    start_relay: Callable[[], Awaitable[None]],
    timeout: float = 300.0,
) -> RotationResult:
    """One rotation (see the module docstring); the three callables act on the processes."""
    began = time.monotonic()
    _, since = await _latest(pool)
    await stop_relay()
    try:
        until = await _poll("waiting for a checkpoint", lambda: _checkpoint(pool, since), timeout, 0.01)
        generation = await _record(pool, until)

        async def all_parked() -> bool:
            return not await consumers_not_parked(pool, generation)

        await _poll(f"consumers parking on generation {generation}", all_parked, timeout, 0.02)
        await restart_broker()
        await ensure_topics(bootstrap)
    finally:
        await start_relay()
    result = RotationResult(generation, until, time.monotonic() - began)
    logger.info("broker rotated to generation %d (checkpoint seq %d) in %.1f s",
                result.generation, result.checkpoint_seq, result.seconds)
    return result


class BrokerRotation:
    """Rotates when ``every_events`` events were stored since the last checkpoint (0: never)."""

    def __init__(self, every_events: int) -> None:
        self.every_events = every_events
        self.rotations: list[RotationResult] = []

    async def due(self, pool: AsyncConnectionPool) -> bool:
        if self.every_events <= 0:
            return False
        async with pool.connection() as conn:
            row = await (await conn.execute(PROGRESS_SQL)).fetchone()
        return row is not None and rotation_due(int(row[0]), int(row[1]), self.every_events)
