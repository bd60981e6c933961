"""Fork a world at a world time: a new world id that inherits its history up to then ("what if", save
slots), in constant time (migration 0132)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar, cast

from psycopg import AsyncConnection, errors

from npcworld.contracts import ClockChanged, Envelope, EventPayload, WorldForked
from npcworld.contracts.players import PlayerForgotten
from npcworld.errors import ConflictError, NotFoundError
from npcworld.eventstore import EventFilter, EventStore, UnitOfWork
from npcworld.eventstore.store import WORLD_IS
from npcworld.forgetting import players_forgotten_in

__all__ = ["fork_intake", "fork_world", "inherited_events", "world_id_taken", "world_stream"]

D = TypeVar("D")
_Handler = Callable[[Envelope, UnitOfWork, D], Awaitable[None]]


def world_id_taken(world_id: str) -> str:
    """What a caller is told when a world id is taken: the same whoever took it (no owner, no history)."""
    return f"world id {world_id!r} is already taken; choose another"


def world_stream(world_id: str) -> str:
    """The stream of world-level events (lifecycle, NPCs, clock) of one world."""
    return f"world-{world_id}"


async def fork_world(
    conn: AsyncConnection[Any], *, tenant_id: str, source_world_id: str, at: datetime, new_world_id: str
) -> int:
    """Make ``new_world_id`` a fork of the source world at world time ``at``: it inherits every event of the
    source with ``world_time <= at`` (and what the source inherits up to then), without copying any.

    Writes the fork's lineage (migration 0132) and a ``WorldForked`` event naming the source, the fork point
    and the last sequence number inherited, followed by a ``ClockChanged`` pausing the clock when the fork
    inherits a running one (a save does not move until it is loaded: resuming its clock is), and a
    ``PlayerForgotten`` for each forgotten player who talked in the inherited history (the source may have
    been told after ``at``). Constant work whatever the history's length; runs in the caller's transaction.

    Readers see the inherited events as a copy would have been: under the fork's world id, in the fork's
    streams, with ids of their own and ``forked_from`` naming the original. Each service folds them into its
    read model when the fork's ``WorldForked`` reaches it (``npcworld.projection``); reactions never see them,
    so a fork repeats no model call.

    Safe on a live source world: the fork waits for every transaction appending to the source to commit
    (and holds later ones back until it commits), so what it inherits is settled: no event of the source up
    to the fork's sequence number can appear later. A fork into a world id that has any event is refused.

    Returns:
        The source's last sequence number the fork inherits.

    Raises:
        NotFoundError: the tenant has no such source world, or it did not exist yet at ``at``.
        ConflictError: ``new_world_id`` is already taken.
    """
    await conn.execute("SELECT pg_advisory_xact_lock(world_key(%s, %s))", (tenant_id, source_world_id))
    cur = await conn.execute(_SOURCE, {"t": tenant_id, "w": source_world_id, "at": at})
    row = await cur.fetchone()
    if row is None or row[0] is None:
        raise NotFoundError(f"world {source_world_id!r} not found")
    until_seq = int(row[0])
    cur = await conn.execute(f"SELECT 1 FROM events WHERE {WORLD_IS} LIMIT 1", (tenant_id, new_world_id))
    if await cur.fetchone() is not None:
        raise ConflictError(world_id_taken(new_world_id), field="new_world_id")
    try:
        async with conn.transaction():
            await conn.execute(_LINEAGE, {"t": tenant_id, "w": new_world_id, "source": source_world_id,
                                          "at": at, "until": until_seq})
    except errors.UniqueViolation as exc:  # a fork into the same id committed meanwhile
        raise ConflictError(world_id_taken(new_world_id), field="new_world_id") from exc
    uow = UnitOfWork(conn, EventStore())
    forked = uow.new_event(
        WorldForked(source_world_id=source_world_id, at_world_time=at, copied_events=0,
                    inherited_until_seq=until_seq),
        tenant_id=tenant_id, world_id=new_world_id, world_time=at,
    )
    clock = await _clock_at_fork(conn, tenant_id, new_world_id)
    paused = [uow.new_event(clock.model_copy(update={"paused": True}), tenant_id=tenant_id,
                            world_id=new_world_id, world_time=at)] if clock and not clock.paused else []
    forgotten = [uow.new_event(PlayerForgotten(player_id=p), tenant_id=tenant_id, world_id=new_world_id,
                               world_time=at)
                 for p in await players_forgotten_in(conn, tenant_id, new_world_id)]
    await uow.append(world_stream(new_world_id), [forked, *paused, *forgotten], expected_version=None)
    return until_seq


async def _clock_at_fork(conn: AsyncConnection[Any], tenant_id: str, world_id: str) -> ClockChanged | None:
    """The clock settings the fork inherits (the last ClockChanged of its history), if any."""
    cur = await conn.execute("SELECT payload FROM world_events(%s, %s) AS events WHERE type = 'ClockChanged'"
                             " ORDER BY seq DESC LIMIT 1", (tenant_id, world_id))
    row = await cur.fetchone()
    return ClockChanged.model_validate(row[0]) if row else None


# The source's last sequence number, once it is known to have been created by ``at`` and not deleted.
_SOURCE = """
SELECT (SELECT max(seq) FROM events WHERE in_world(tenant_id, world_id, %(t)s, %(w)s))
 WHERE EXISTS (SELECT 1 FROM world_events(%(t)s, %(w)s) AS c
                WHERE c.type IN ('WorldCreated', 'WorldForked') AND c.world_time <= %(at)s)
   AND NOT EXISTS (SELECT 1 FROM events d WHERE in_world(d.tenant_id, d.world_id, %(t)s, %(w)s)
                    AND d.type = 'WorldDeleted')
"""
# The fork inherits the source's events up to the fork point, and what the source inherits, each up to the
# tighter of the two points (flattened: a read never recurses).
_LINEAGE = """
INSERT INTO world_lineage (tenant_id, world_id, depth, ancestor, until_seq, until_time)
SELECT %(t)s, %(w)s, 1, %(source)s, %(until)s, %(at)s
UNION ALL
SELECT %(t)s, %(w)s, depth + 1, ancestor, least(until_seq, %(until)s), least(until_time, %(at)s)
  FROM world_lineage WHERE tenant_id = %(t)s AND world_id = %(source)s
"""


async def inherited_events(
    conn: AsyncConnection[Any], forked: Envelope[WorldForked], types: tuple[str, ...]
) -> list[Envelope]:
    """What the fork of ``forked`` (its WorldForked) inherits of ``types``, in store order, as the fork sees
    it (an older fork's copies of them, for a fork made by copying)."""
    store, out, after = EventStore(), [], 0
    copied = forked.payload.inherited_until_seq is None
    where = EventFilter(tenant_id=forked.tenant_id, world_id=forked.world_id, types=types,
                        history="own" if copied else "inherited")
    while batch := await store.read_all(conn, after, 1000, where):
        out += [s.envelope for s in batch if not copied or s.envelope.forked_from is not None]
        after = batch[-1].seq
    return out


def fork_intake(handlers: Mapping[type[EventPayload], Callable[..., Awaitable[None]]]) -> _Handler[D]:
    """A WorldForked handler for a service whose working state its reactions keep (not a projection): it
    hands the events the fork inherits of the handlers' types to those handlers, in store order, so the fork's
    NPCs are known there as in the source (reactions never see inherited events otherwise). Each handler is
    the route's own (``handler(event, uow, deps)``, typed to its payload) and must only keep state, never call
    a model."""
    by_type = {payload.event_type: handler for payload, handler in handlers.items()}

    async def take_in(event: Envelope, uow: UnitOfWork, deps: D) -> None:
        if not isinstance(event.payload, WorldForked):
            return
        forked = cast(Envelope[WorldForked], event)
        for inherited in await inherited_events(uow.conn, forked, tuple(by_type)):
            await by_type[inherited.type](inherited, uow, deps)

    return take_in
