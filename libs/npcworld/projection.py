"""Projections: read models folded from events, and their rebuild from the event store (replay)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection, sql
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import EVENT_TYPES, Envelope
from npcworld.eventstore import EventFilter, EventStore

__all__ = ["Applier", "Projection", "rebuild"]

logger = logging.getLogger(__name__)

Applier = Callable[[Envelope, AsyncConnection[Any]], Awaitable[None]]


@dataclass(frozen=True)
class Projection:
    """A service's read model: the tables it owns and one pure state-writing applier per event type.

    Appliers only write the service's own tables (no LLM calls, no new events), so replaying the
    event store through them reproduces the read model exactly and costs nothing.
    """

    consumer: str
    tables: tuple[str, ...]
    appliers: Mapping[str, Applier]
    # Runs in the rebuild's transaction before the tables are emptied (e.g. to keep derived data).
    prepare: Callable[[AsyncConnection[Any]], Awaitable[None]] | None = None

    def __post_init__(self) -> None:
        unknown = set(self.appliers) - set(EVENT_TYPES)
        if unknown:
            raise ValueError(f"{self.consumer}: appliers for unknown event types {sorted(unknown)}")


async def rebuild(
    pool: AsyncConnectionPool,
    projection: Projection,
    *,
    batch_size: int = 2000,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Empty the projection's tables and fold the whole event store through its appliers.

    Runs in one transaction, so readers see the old read model until the new one is complete.
    The consumer's processed-event records are rewritten too, so the live consumer does not
    apply the replayed events a second time.

    Returns:
        The number of events applied.
    """
    store, applied, after = EventStore(), 0, 0
    types = tuple(projection.appliers)
    async with pool.connection() as conn, conn.transaction():
        total_row = await (await conn.execute("SELECT coalesce(max(seq), 0) FROM events")).fetchone()
        total = int(total_row[0]) if total_row else 0
        if projection.prepare is not None:
            await projection.prepare(conn)
        await conn.execute(
            sql.SQL("TRUNCATE {} ").format(sql.SQL(", ").join(sql.Identifier(t) for t in projection.tables))
        )
        await conn.execute("DELETE FROM processed_events WHERE consumer = %s", (projection.consumer,))
        while True:
            events = await store.read_all(conn, after, batch_size, EventFilter(types=types))
            if not events:
                break
            for stored in events:
                await projection.appliers[stored.envelope.type](stored.envelope, conn)
            await conn.execute(
                "INSERT INTO processed_events (consumer, event_id) SELECT %s, unnest(%s::uuid[])"
                " ON CONFLICT DO NOTHING",
                (projection.consumer, [s.envelope.event_id for s in events]),
            )
            applied += len(events)
            after = events[-1].seq
            if progress:
                progress(after, total)
    logger.info("rebuilt %s from %d events", projection.consumer, applied)
    return applied
