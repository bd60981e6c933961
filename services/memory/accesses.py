"""Last accesses without an event per retrieval: retrievals note what they returned; the memory service
turns each NPC's noted accesses into one ``MemoriesAccessed`` and folds it at once.

A stepped world's accesses become events when its step completes (``on_step_released``), so every
retrieval of a step ranks by the recency the earlier steps left, whatever order the services retrieved in
(the same seed gives the same simulation). Other worlds' are turned into events about once a second
(``flush_accesses_forever``), and so are those of retrievals made for player traffic in a stepped world
(``npcworld.lanes``: a chat, a posted perception and what they cause arrive when players act, so they never
held a step's outcome to a seed; held for the step, they made every step under steady traffic wait for the
whole pipeline twice); until then a retrieval sees the last accesses as of the previous flush, a
second of world time at most, which recency (decaying per game hour) does not notice. A replay folds the
events, so a rebuilt ``memory_access`` equals the live one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import defaultdict
from collections.abc import Collection, Sequence
from datetime import datetime

from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import AccessCause, Envelope, MemoriesAccessed
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.messaging.reconnect import DEPENDENCY_ERRORS
from npcworld.messaging.retry import TRANSIENT_ERRORS
from services.memory.deps import MemoryDeps
from services.memory.domain import NpcRef, access_stream_id
from services.memory.projection import apply_accessed, claim_own
from services.memory.repository import NotedAccess

__all__ = ["FLUSH_SECONDS", "accessed_events", "flush_accesses", "flush_accesses_forever"]

logger = logging.getLogger(__name__)
FLUSH_SECONDS = 1.0


def accessed_events(
    noted: Sequence[NotedAccess], players: Collection[uuid.UUID] = ()
) -> dict[str, MemoriesAccessed]:
    """One MemoriesAccessed per NPC: every memory it retrieved, the latest time, and what each retrieval
    returned, best first (``noted`` in the order ``take_accesses`` returns, which does not depend on the
    order the retrievals were made in). The query of a retrieval caused by one of ``players``' lines (a
    PlayerSpoke) is left out: it is the player's words."""
    by_npc: dict[str, list[NotedAccess]] = defaultdict(list)
    for n in noted:
        by_npc[n.npc_id].append(n)
    out: dict[str, MemoriesAccessed] = {}
    for npc_id in sorted(by_npc):
        rows = by_npc[npc_id]
        made: dict[tuple[uuid.UUID | None, str], list[str]] = defaultdict(list)
        for n in rows:
            made[(n.cause, n.query)].append(n.memory_id)
        out[npc_id] = MemoriesAccessed(
            memory_ids=tuple(sorted({n.memory_id for n in rows})),
            accessed_at=max(n.accessed_at for n in rows),
            retrievals=tuple(AccessCause(cause=cause, query=None if cause in players else query,
                                         memory_ids=tuple(ids))
                             for (cause, query), ids in made.items()),
        )
    return out


async def flush_accesses(
    uow: UnitOfWork, deps: MemoryDeps, tenant: str, world: str, *, until: datetime | None = None,
    unheld_only: bool = False,
) -> list[Envelope[MemoriesAccessed]]:
    """Turn the world's noted accesses (with ``until``: those at or before that world time; with
    ``unheld_only``: only those no step waits for) into one MemoriesAccessed per NPC, appended and folded in
    the caller's transaction; returns the events."""
    noted = await deps.repository.take_accesses(uow.conn, tenant, world, until=until, unheld_only=unheld_only)
    players = await deps.repository.causes_by_players(uow.conn, list({n.cause for n in noted if n.cause}))
    events: list[Envelope[MemoriesAccessed]] = []
    for npc_id, payload in accessed_events(noted, players).items():
        npc = NpcRef(tenant, world, npc_id)
        event = uow.new_event(payload, tenant_id=tenant, world_id=world, npc_id=npc_id,
                              world_time=payload.accessed_at)
        await uow.append(access_stream_id(npc), [event])
        await apply_accessed(uow.conn, deps, event)
        events.append(event)
    await claim_own(uow.conn, deps, events)
    return events


async def flush_accesses_forever(
    pool: AsyncConnectionPool, deps: MemoryDeps, stop: asyncio.Event, *, every: float = FLUSH_SECONDS
) -> None:
    """Until ``stop``: every ``every`` seconds, turn the noted accesses of worlds that do not step, and of
    player traffic in worlds that do, into events (one short transaction per world). A lost database is
    waited out."""
    while not stop.is_set():
        try:
            async with pool.connection() as conn:
                async with conn.transaction():  # its own: each world's flush below is a transaction too
                    worlds = await deps.repository.worlds_with_accesses(conn)
                for tenant, world, stepped in worlds:
                    async with conn.transaction():
                        await flush_accesses(UnitOfWork(conn, EventStore()), deps, tenant, world,
                                             unheld_only=stepped)
        except (*DEPENDENCY_ERRORS, *TRANSIENT_ERRORS) as exc:
            logger.warning("memory: turning noted accesses into events failed, retrying: %r", exc)
        except Exception:  # a bug must not end the flushing for good: say it, and try again later
            logger.exception("memory: turning noted accesses into events failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=every)
