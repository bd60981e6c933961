"""Fork a world at a world time: copy its history up to then into a new world id ("what if")."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from npcworld.contracts import Envelope, WorldDeleted, WorldForked
from npcworld.contracts.players import PlayerForgotten
from npcworld.errors import ConflictError, NotFoundError
from npcworld.eventstore import EventFilter, EventStore, UnitOfWork
from npcworld.forgetting import players_forgotten_in
from npcworld.ids import uuid7

__all__ = ["fork_world", "world_id_taken", "world_stream"]

_ALL = 2**62


def world_id_taken(world_id: str) -> str:
    """What a caller is told when a world id is taken: the same whoever took it (no owner, no history)."""
    return f"world id {world_id!r} is already taken; choose another"


def world_stream(world_id: str) -> str:
    """The stream of world-level events (lifecycle, NPCs, clock) of one world."""
    return f"world-{world_id}"


async def fork_world(
    conn: AsyncConnection[Any], *, tenant_id: str, source_world_id: str, at: datetime, new_world_id: str
) -> int:
    """Copy every event of the source world with ``world_time <= at`` into ``new_world_id``.

    Copies keep their payloads and stream order, get fresh ids and name the original in
    ``forked_from`` (projections apply them, reactions skip them, so no LLM call is repeated).
    A ``WorldForked`` event closes the copy, followed by a ``PlayerForgotten`` for each forgotten player who
    talked in the copied history (the source may have been told after ``at``). Runs in the caller's
    transaction.

    Safe on a live source world: the history is one database snapshot, and the copies are new events
    that every consumer folds (claims of the source world are untouched, so nothing there is owed or
    reacted to twice). A fork into a world id that has any event is refused.

    Returns:
        The number of events copied.

    Raises:
        NotFoundError: the tenant has no such source world.
        ConflictError: ``new_world_id`` is already taken.
    """
    store = EventStore()
    history = await _history(conn, store, tenant_id, source_world_id, at)
    if not history or history[0][1].type != "WorldCreated":
        raise NotFoundError(f"world {source_world_id!r} not found")
    if await store.read_all(conn, 0, 1, EventFilter(tenant_id=tenant_id, world_id=new_world_id)):
        raise ConflictError(world_id_taken(new_world_id), field="new_world_id")
    streams: dict[str, list[Envelope]] = defaultdict(list)
    for stream_id, original in history:
        copy = original.model_copy(update={
            "event_id": uuid7(), "world_id": new_world_id, "causation_id": original.event_id,
            "forked_from": original.event_id,
        })
        streams[_renamed(stream_id, source_world_id, new_world_id)].append(copy)
    for stream_id, events in streams.items():
        await store.append(conn, stream_id, events, expected_version=0)
    uow = UnitOfWork(conn, store)
    forked = uow.new_event(
        WorldForked(source_world_id=source_world_id, at_world_time=at, copied_events=len(history)),
        tenant_id=tenant_id, world_id=new_world_id, world_time=at,
    )
    forgotten = [uow.new_event(PlayerForgotten(player_id=p), tenant_id=tenant_id, world_id=new_world_id,
                               world_time=at)
                 for p in await players_forgotten_in(conn, tenant_id, new_world_id)]
    await uow.append(world_stream(new_world_id), [forked, *forgotten])
    return len(history)


async def _history(
    conn: AsyncConnection[Any], store: EventStore, tenant_id: str, world_id: str, at: datetime
) -> list[tuple[str, Envelope]]:
    """The source world's history up to ``at``, read in one statement: one snapshot of a world that may be
    live. (Reading it in pages could miss an event whose transaction committed between two pages with a
    lower sequence number than the page boundary; in one snapshot every event that is there has its causes
    there too.)"""
    where = EventFilter(tenant_id=tenant_id, world_id=world_id, until_world_time=at)
    history = await store.read_all(conn, 0, _ALL, where)
    return [(s.stream_id, s.envelope) for s in history if s.envelope.type != WorldDeleted.event_type]


def _renamed(stream_id: str, source: str, target: str) -> str:
    return stream_id.replace(source, target) if source in stream_id else f"{stream_id}@{target}"
