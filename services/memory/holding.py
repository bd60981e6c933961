"""Stepped worlds: a step's memory writes wait for its StepCompleted and are then applied in a fixed order.

During a step several services retrieve memories while the memory service records that same step's
observations, utterances and plans; which retrieval saw which new memory used to depend on consumer timing.
Holding the writes until the step's barrier makes every retrieval of a step see exactly the memories of
the earlier steps, so the same seed gives the same simulation. Worlds on a real-time clock (or none) are
written at once, as before.

A step of a large world holds thousands of writes. They are released before the StepCompleted's own
transaction, a few at a time (``release_in_chunks``, the gather step of the StepCompleted and ClockChanged
routes): each chunk's ratings and embeddings are computed with no transaction open, then its rows are deleted
and its handlers run in one short transaction, so no transaction waits on a model or holds a step's other
services back for long. The events the chunks append are parked in ``memory_unpublished`` and moved to the
outbox together at the end, so other services (reflection reads an NPC's stream when its MemoryRecorded
events add up) see a step's memories all at once, as before. The
StepCompleted is claimed, with whatever is left (normally nothing), in its own transaction afterwards, so the
step barrier waits for the whole release, and a crash in between resumes it on redelivery: each held row is
removed in the transaction that applies it.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence

from psycopg_pool import AsyncConnectionPool

from npcworld.cause import handling
from npcworld.contracts import ClockChanged, Envelope, StepCompleted
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.lanes import is_player_traffic
from npcworld.messaging import TRANSIENT_ERRORS
from npcworld.stepping import steps
from services.memory.batching import prefetch_embeddings
from services.memory.deps import MemoryDeps
from services.memory.gathering import gather_slow_calls, prefetching
from services.memory.queuing import queue_for_streams
from services.memory.repository import HeldRelease

__all__ = ["held_in_stepped_worlds", "release_held", "release_in_chunks", "whole_npcs"]

Handler = Callable[[Envelope, UnitOfWork, MemoryDeps], Awaitable[None]]

logger = logging.getLogger(__name__)

_RELEASE = HeldRelease()
CHUNK = 64  # held writes read (and their slow calls made) at a time
BUDGET_SECONDS = 0.5  # a chunk's transaction commits once it has been open this long
_ATTEMPTS = 3  # tries of a chunk's transaction


def held_in_stepped_worlds(handler: Handler) -> Handler:
    """``handler`` as is in other worlds; in a stepped world the event waits for the step's end, unless it
    is player traffic (``npcworld.lanes``): a step never waits for that, so it is written at once."""

    async def hold_or_handle(event: Envelope, uow: UnitOfWork, deps: MemoryDeps) -> None:
        if not is_player_traffic() and await deps.repository.is_stepped(uow.conn, event.tenant_id,
                                                                         event.world_id):
            await deps.repository.hold(uow.conn, event)
        else:
            await handler(event, uow, deps)

    hold_or_handle.__doc__ = handler.__doc__
    return hold_or_handle


def _release_bound(event: Envelope) -> tuple[bool, uuid.UUID | None]:
    """Whether ``event`` releases held writes, and the event they must have been stored before (None: all).

    A StepCompleted releases what was stored before it; a clock that stops stepping releases everything."""
    if isinstance(event.payload, StepCompleted):
        return True, event.event_id
    if isinstance(event.payload, ClockChanged):
        return not steps(event.payload), None
    return False, None


async def release_held(
    event: Envelope, uow: UnitOfWork, deps: MemoryDeps, handlers: Mapping[str, Handler]
) -> int:
    """Run the world's held events through their handlers (one embedding call for all); returns how many.

    Called for StepCompleted, and for a ClockChanged that stops the stepping, in the transaction that claims
    it; ``release_in_chunks`` has normally released them already. Each held event stays the cause of what
    its handler writes."""
    releases, before = _release_bound(event)
    if not releases:
        return 0
    await _RELEASE.publish_parked(uow.conn, event.tenant_id, event.world_id)  # normally done already
    held = await _RELEASE.take_all(uow.conn, event.tenant_id, event.world_id, before=before)
    if not held:
        return 0
    await prefetch_embeddings(held, deps)
    await queue_for_streams(uow.conn, held)
    for original in held:
        caused = UnitOfWork(uow.conn, uow.store, cause=original)
        with handling(original.event_id, original.correlation_id):
            await handlers[original.type](original, caused, deps)
        uow.appended.extend(caused.appended)
    return len(held)


async def release_in_chunks(
    events: Sequence[Envelope],
    deps: MemoryDeps,
    pool: AsyncConnectionPool,
    handlers: Mapping[str, Handler],
    *,
    chunk: int = CHUNK,
) -> int:
    """Release the held writes of each releasing event in ``events`` in short transactions (module
    docstring), in the same order ``release_held`` would apply them; returns how many were applied."""
    released = 0
    for event in events:
        releases, before = _release_bound(event)
        if not releases:
            continue
        try:
            released += await _release_world(event, before, deps, pool, handlers, chunk)
        finally:
            # The step's memories become visible together (also after a failure: nothing may stay parked).
            async with pool.connection() as conn:
                await _RELEASE.publish_parked(conn, event.tenant_id, event.world_id)
    return released


async def _release_world(
    event: Envelope, before: uuid.UUID | None, deps: MemoryDeps, pool: AsyncConnectionPool,
    handlers: Mapping[str, Handler], chunk: int,
) -> int:
    released = 0
    # Caches of this release's own (the poll's prefetched embeddings stay for the poll's handlers); a chunk
    # cut short by the time budget leaves rows whose slow calls are made already.
    local = prefetching(deps)
    gathered: set[uuid.UUID] = set()
    while True:
        async with pool.connection() as conn:
            rows = await _RELEASE.peek(conn, event.tenant_id, event.world_id, before=before, limit=chunk)
        if not rows:
            return released
        rows = whole_npcs(rows, full=len(rows) == chunk)
        fresh = [e for _, e in rows if e.event_id not in gathered]
        await gather_slow_calls(fresh, local, pool, handlers)
        gathered.update(e.event_id for _, e in rows)
        released += await _apply_retrying(event, rows, local, pool, handlers)


def whole_npcs(rows: list[tuple[int, Envelope]], *, full: bool) -> list[tuple[int, Envelope]]:
    """A full chunk without its last NPC's writes of the last moment when others come before them: they start
    the next chunk, so one NPC's step is rated in one call (the release order keeps an NPC's writes of a
    moment together)."""
    if not full:
        return rows
    last = rows[-1][1]
    keep = [r for r in rows if (r[1].world_time, r[1].npc_id) != (last.world_time, last.npc_id)]
    return keep if keep and len(keep) == _prefix(rows, last) else rows


def _prefix(rows: Sequence[tuple[int, Envelope]], last: Envelope) -> int:
    """How many rows come before the first of ``last``'s NPC and moment."""
    for i, (_, e) in enumerate(rows):
        if (e.world_time, e.npc_id) == (last.world_time, last.npc_id):
            return i
    return len(rows)


async def _apply_retrying(
    event: Envelope, chunk: Sequence[tuple[int, Envelope]], deps: MemoryDeps, pool: AsyncConnectionPool,
    handlers: Mapping[str, Handler],
) -> int:
    """``_apply``, again after a transient failure (a lost race, a deadlock): the chunk's transaction rolled
    back whole, and giving up would leave the rest of the release to the StepCompleted's own transaction,
    which rates what it finds inside it."""
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            return await _apply(event, chunk, deps, pool, handlers)
        except TRANSIENT_ERRORS as exc:
            if attempt == _ATTEMPTS:
                raise
            logger.info("releasing held memories: transient failure (attempt %d), retrying: %r", attempt, exc)
            await asyncio.sleep(0.05 * attempt)
    raise AssertionError("unreachable")


async def _apply(
    event: Envelope, chunk: Sequence[tuple[int, Envelope]], deps: MemoryDeps, pool: AsyncConnectionPool,
    handlers: Mapping[str, Handler],
) -> int:
    """Remove and apply held rows in order in one transaction, until the chunk or the time budget ends; the
    events they append are parked until the release ends."""
    applied, store, started = 0, EventStore(), time.monotonic()
    async with pool.connection() as conn, conn.transaction():
        appended: list[uuid.UUID] = []
        await queue_for_streams(conn, [original for _, original in chunk])
        for held_id, original in chunk:
            if not await _RELEASE.take(conn, held_id):
                continue  # released meanwhile by another instance of the service
            uow = UnitOfWork(conn, store, cause=original)
            with handling(original.event_id, original.correlation_id):
                await handlers[original.type](original, uow, deps)
            appended += [e.event_id for e in uow.appended]
            applied += 1
            if time.monotonic() - started > BUDGET_SECONDS:
                break
        await _RELEASE.park(conn, event.tenant_id, event.world_id, appended)
    return applied

